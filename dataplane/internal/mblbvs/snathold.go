package mblbvs

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// The ltm snat-translation connection-limit on the server connections
// of HTTP and the other message-based virtuals: an engine leg dialled
// from an ltm snat object's (or the virtual's snatpool's) translation
// address holds it (state.SNATSourceHeld) for as long as the connection
// lives, a OneConnect connection resting in the pool included, and
// gives it back when the engine closes it (legClosed). An address at its
// limit is passed over; when every one is, the dial fails with
// snatobj.ErrFull, which the engine handles as a member that refused
// the connection (another member, else the client is reset), without
// blaming the member (memberFailed).

// legKey names one engine leg by its two ends, as the engine's Leg
// shows them.
type legKey struct{ local, remote netip.AddrPort }

// sourceHeld is the source of an engine leg to m for client:
// translate-address's (ruleSource, not held), else SERVER_INIT's snat
// or snatpool decision, else the virtual's, with its translation address
// held. Its Hold is what the connection gives back (holdSNAT); Err is
// snatobj.ErrFull when every address is at its limit. The client's
// arrival interface decides VLAN-limited SNATs and NATs (arrival).
// Automap starts from the address the client reached where the engine
// gives it (m.Via: a network or every port, mblb.ClientOptions.ViaLocal),
// else from the virtual's Destination: one validity test.
func (mv *VS) sourceHeld(snap *state.VirtualSnap, client netip.AddrPort, m mblb.Member) state.SNATHeld {
	src, init, rule := mv.ruleSource(snap, client, m)
	switch {
	case init != nil:
		return state.SNATSourceHeld(mv.vs, snap, client, init.local, m.Addr, &init.snat, poolOf(m))
	case rule:
		return state.SNATHeld{Src: src}
	}
	local := snap.Cfg.Destination
	if m.Via.IsValid() {
		local = netip.AddrPortFrom(m.Via, local.Port())
	}
	return state.SNATSourceHeldOn(mv.vs, snap, client, local, m.Addr, nil, poolOf(m), mv.arrival(snap, client))
}

// errSNATPort fails a server connection whose SNAT says source-port
// preserve-strict when the client's port is in use on the translation
// address: the connection is not made, as BIG-IP does, and the member is
// not blamed (memberFailed).
var errSNATPort = errors.New("SNAT source port in use (preserve-strict)")

// refusedFull and refusedPort are ErrFull and errSNATPort as the engine
// is given them (mblb.SourceRefused): with no member left the client is
// reset with the cause SNATLimit or SNATPort, as on standard virtuals,
// not NoServer. Made once: a refusal allocates nothing.
var (
	refusedFull = &mblb.SourceRefused{Cause: rstcause.SNATLimit, Err: snatobj.ErrFull}
	refusedPort = &mblb.SourceRefused{Cause: rstcause.SNATPort, Err: errSNATPort}
)

// refused is err as the engine's Dial returns it: ErrFull and
// errSNATPort become refusedFull and refusedPort, anything else stays.
// Only on the failure path.
func refused(err error) error {
	switch {
	case errors.Is(err, snatobj.ErrFull):
		return refusedFull
	case errors.Is(err, errSNATPort):
		return refusedPort
	}
	return err
}

// snatIdle gives the new server connection l the tcp-idle-timeout of
// the translation address it holds (Leg.SetIdleTimeout), from legOpened:
// one atomic load on a virtual whose connections hold none, a sync.Map
// load when some do (a limit or an idle timeout set). d is the timeout
// given (0: none).
func (mv *VS) snatIdle(l *mblb.Leg) (d time.Duration) {
	if mv.snatHeld.Load() == 0 {
		return 0
	}
	if v, ok := mv.snatLegs.Load(legKey{l.Local, l.Remote}); ok {
		if d, ok := v.(*snatobj.Addr).TCPIdle(); ok {
			l.SetIdleTimeout(d)
			return d
		}
	}
	return 0
}

// dialFrom connects to dst from h's source (mv.dialSide), from exactly
// its port when h.Strict (source-port preserve-strict: Env.DialExact),
// errSNATPort when that port is taken. Without preserve-strict: one
// boolean test.
func (mv *VS) dialFrom(snap *state.VirtualSnap, h state.SNATHeld, dst netip.AddrPort) (*net.TCPConn, error) {
	if !h.Strict || mv.env.DialExact == nil {
		return mv.dialSide(snap, h.Src, dst) // tcpopts.go
	}
	c, err := mv.env.DialExact(h.Src, dst, snap.Cfg.ServerTCP)
	if errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL) {
		return nil, errSNATPort
	}
	return c, err
}

// holdSNAT keeps h, held by the new server connection from local to
// remote, until legClosed gives it back; nothing for a nil h.
func (mv *VS) holdSNAT(local, remote netip.AddrPort, h *snatobj.Addr) {
	if h == nil {
		return
	}
	mv.snatLegs.Store(legKey{local, remote}, h)
	mv.snatHeld.Add(1)
}

// releaseSNAT gives back the translation address the server connection
// from local to remote holds, if any: one atomic load on a virtual
// whose connections hold none.
func (mv *VS) releaseSNAT(local, remote netip.AddrPort) {
	if mv.snatHeld.Load() == 0 {
		return
	}
	if v, ok := mv.snatLegs.LoadAndDelete(legKey{local, remote}); ok {
		mv.snatHeld.Add(-1)
		v.(*snatobj.Addr).Release()
	}
}

// dialHeld connects to dst for client, not a pool member's engine leg
// (a forward proxy's origin, the SSL forward proxy's probe or bypassed
// client), from the virtual's source with its translation address held:
// hold (nil: none) is what the connection gives back when it closes.
// to is the pool whose allow-snat decides (nil: none).
func (mv *VS) dialHeld(snap *state.VirtualSnap, client, dst netip.AddrPort, to *state.Pool) (_ *net.TCPConn, hold *snatobj.Addr, _ error) {
	h := state.SNATSourceHeldOn(mv.vs, snap, client, snap.Cfg.Destination, dst, nil, to, mv.arrival(snap, client))
	if h.Err != nil {
		return nil, nil, h.Err
	}
	c, err := mv.dialFrom(snap, h, dst)
	if err != nil {
		if h.Hold != nil {
			h.Hold.Release()
		}
		return nil, nil, err
	}
	return c, h.Hold, nil
}

// snatTCPConn is a TCP connection that is not an engine leg and holds
// an ltm snat-translation address, given back once, at its first Close.
// It keeps *net.TCPConn's methods (CloseWrite, SetLinger, ReadFrom for
// splice).
type snatTCPConn struct {
	*net.TCPConn
	hold *snatobj.Addr
	once sync.Once
}

func (c *snatTCPConn) Close() error {
	err := c.TCPConn.Close()
	c.once.Do(c.hold.Release)
	return err
}
