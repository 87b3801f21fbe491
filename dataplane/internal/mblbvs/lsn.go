package mblbvs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// lsnTries bounds the ports one member connection tries when the host
// refuses the translation's port (another program holds it).
const lsnTries = 4

// dialLSN opens a member connection from a translation of lp (the
// virtual's lsn pool, source-address-translation type lsn, or the one
// the client's rule named with LSN::pool) as the rule wants it (want;
// nil: as the pool gives it), as the L4 proxy does: the subscriber's
// client address gets a translation address and port, bound exactly
// (shared with an inbound listener, lsn.ReusePort) and held until the
// connection closes (legClosed). A connection shared by OneConnect
// keeps the translation of the client that opened it. A client the pool
// has no translation for gets no member connection.
func (mv *VS) dialLSN(snap *state.VirtualSnap, lp *lsn.Pool, want *lsn.Want, client netip.AddrPort, m mblb.Member) (*net.TCPConn, error) {
	tc, t, err := mv.dialTranslated(context.Background(), snap, lp, want, client, m)
	if err != nil {
		return nil, err
	}
	mv.lsnLegs.Store(t.Addr, t)
	mv.lsnHeld.Add(1)
	return tc, nil
}

// dialTranslated is dialLSN's connection and translation, which the
// caller keeps until the connection closes: the engine's legs in
// lsnLegs, an HTTP/2 member connection in its own wrapper (h2member.go).
// SA_PICKED runs over the translation first.
func (mv *VS) dialTranslated(ctx context.Context, snap *state.VirtualSnap, lp *lsn.Pool, want *lsn.Want, client netip.AddrPort, m mblb.Member) (*net.TCPConn, *lsn.Translation, error) {
	t, err := lp.Translate(client, m.Addr, false, want)
	if err != nil {
		return nil, nil, err
	}
	if v, ok := mv.lsnClients.Load(client); ok && !v.(*mblbFlow).rr.saPicked(t) {
		t.Release()
		return nil, nil, errPickEnded
	}
	for i := 0; ; i++ {
		d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(t.Addr), KeepAlive: -1,
			Control: func(_, _ string, rc syscall.RawConn) error {
				var err error
				if cerr := rc.Control(func(fd uintptr) { err = lsn.ReusePort(int(fd)) }); cerr != nil {
					return cerr
				}
				return err
			}}
		d.Timeout = snap.Cfg.ServerTCP.Timeout(mv.env.ConnectTimeout)
		c, err := d.DialContext(ctx, "tcp", m.Addr.String())
		if err == nil {
			tc := c.(*net.TCPConn)
			snap.Cfg.ServerTCP.ApplyConn(tc)
			t.Attach(tc) // zombie-timeout closes it
			return tc, t, nil
		}
		if i < lsnTries && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, nil, err
	}
}

// dialOrigin opens an explicit forward proxy's connection to an origin
// (dst: what the request named, no pool member) from a translation of
// lp, held until the proxy closes the connection. The proxy's rules have
// no LSN:: commands (fwdrules.go): the virtual's pool translates.
func (mv *VS) dialOrigin(ctx context.Context, snap *state.VirtualSnap, lp *lsn.Pool, want *lsn.Want, client, dst netip.AddrPort) (net.Conn, error) {
	c, t, err := mv.dialTranslated(ctx, snap, lp, want, client, mblb.Member{Addr: dst})
	if err != nil {
		return nil, err
	}
	mv.lsnShared.Store(t.Addr, t)
	return &lsnTCPConn{TCPConn: c, lsnHold: lsnHold{mv: mv, t: t}}, nil
}

// dialOwn opens a connection of the virtual's own to dst for client
// (the SSL forward proxy's probe of an origin's certificate, a bypassed
// client's connection): from a translation of the lsn pool when the
// virtual has one, which done gives back once the connection is
// closed; else as source-address-translation says, done giving back
// the ltm snat-translation address the connection holds (nothing when
// it holds none).
func (mv *VS) dialOwn(snap *state.VirtualSnap, client, dst netip.AddrPort) (_ *net.TCPConn, done func(), _ error) {
	if lp, want := mv.lsnChoice(snap, client); lp != nil {
		c, t, err := mv.dialTranslated(context.Background(), snap, lp, want, client, mblb.Member{Addr: dst})
		if err != nil {
			return nil, nil, err
		}
		return c, t.Release, nil
	}
	c, hold, err := mv.dialHeld(snap, client, dst, snap.Pool) // snathold.go
	if hold == nil {
		return c, func() {}, err
	}
	var once sync.Once
	return c, func() { once.Do(hold.Release) }, nil
}

// lsnTCPConn is a TCP connection made from an lsn translation that is
// not an engine leg, which gives it back when it closes. It keeps
// *net.TCPConn's methods (CloseWrite, SetLinger, ReadFrom for splice).
type lsnTCPConn struct {
	*net.TCPConn
	lsnHold
}

func (c *lsnTCPConn) Close() error {
	err := c.TCPConn.Close()
	c.release()
	return err
}

// lsnHold is the translation a connection that is not an engine leg
// holds: given back, and forgotten by the virtual's table of shared
// translations, once, at its first Close.
type lsnHold struct {
	mv   *VS
	t    *lsn.Translation
	once sync.Once
}

func (h *lsnHold) release() {
	h.once.Do(func() {
		h.mv.lsnShared.CompareAndDelete(h.t.Addr, h.t)
		h.t.Release()
	})
}

// lsnLeg is the translation of the member connection from local: an
// engine leg's, else a shared HTTP/2 member connection's.
func (mv *VS) lsnLeg(local netip.AddrPort) (*lsn.Translation, bool) {
	if v, ok := mv.lsnLegs.Load(local); ok {
		return v.(*lsn.Translation), true
	}
	if v, ok := mv.lsnShared.Load(local); ok {
		return v.(*lsn.Translation), true
	}
	return nil, false
}

// errPickEnded: the client's rule ended it in SA_PICKED.
var errPickEnded = errors.New("the client ended in SA_PICKED")

// trackLSN makes f findable by its client's address while it runs, when
// the virtual has an lsn pool and its rules handle SA_PICKED, or its
// rules have LSN:: steering commands, so that a member connection
// dialled for it runs the event and follows the client's choice; the
// returned function forgets it. A client without rules: a nil check.
func (mv *VS) trackLSN(f *mblbFlow, snap *state.VirtualSnap) func() {
	if f.rr == nil || !(snap.LSN != nil && f.rr.rules.Handles(config.EventSAPicked) || irules.Program(snap.Cfg.Rules).SteersLSN()) {
		return func() {}
	}
	mv.lsnClients.Store(f.Client, f)
	return func() { mv.lsnClients.CompareAndDelete(f.Client, f) }
}

// lsnChoice is the lsn pool a member connection for client is
// translated through, nil for none, and the rule's wishes for its
// translation: the virtual's pool unless the client's rule chose
// another (LSN::pool) or none (LSN::disable). A virtual whose rules
// have no LSN:: steering command answers its pool: a type assertion.
// With translate-address disabled on a virtual of every port (or many
// addresses) none: the connection leaves from the client's destination,
// an address of this host (ruleSource), whatever the lsn pool [M].
func (mv *VS) lsnChoice(snap *state.VirtualSnap, client netip.AddrPort) (*lsn.Pool, *lsn.Want) {
	lp, want := mv.lsnChosen(snap, client)
	if lp != nil && !snap.Cfg.TranslateAddress && reachesMany(snap.Cfg) {
		return nil, nil
	}
	return lp, want
}

// lsnChosen is lsnChoice's pool and wishes.
func (mv *VS) lsnChosen(snap *state.VirtualSnap, client netip.AddrPort) (*lsn.Pool, *lsn.Want) {
	lp := snap.LSN
	if snap.Cfg.Rules == nil || !irules.Program(snap.Cfg.Rules).SteersLSN() {
		return lp, nil
	}
	v, ok := mv.lsnClients.Load(client)
	if !ok {
		return lp, nil
	}
	return v.(*mblbFlow).rr.lsnChoice(lp)
}

// lsnChoice applies the client's LSN:: choice to the virtual's pool lp.
func (r *mblbRules) lsnChoice(lp *lsn.Pool) (*lsn.Pool, *lsn.Want) {
	r.lsnMu.Lock()
	defer r.lsnMu.Unlock()
	lp, w, _ := r.lsn.Choose(lp)
	if lp == nil {
		return nil, nil
	}
	return lp, w
}

// lsnSet changes the client's LSN:: choice (lsnMu, not mu: a member
// connection may be dialled while an event runs).
func (r *mblbRules) lsnSet(set func(l *lsn.Steer)) {
	r.lsnMu.Lock()
	set(&r.lsn)
	r.lsnMu.Unlock()
}

var _ rules.LSNConn = (*mblbRules)(nil)

// LSNDisable implements rules.LSNConn.
func (r *mblbRules) LSNDisable() { r.lsnSet((*lsn.Steer).Disable) }

// LSNPool implements rules.LSNConn.
func (r *mblbRules) LSNPool(name string) error {
	p := r.f.mv.env.LSN.Lookup(name)
	if p == nil {
		return fmt.Errorf("LSN::pool: no lsn pool %s", name)
	}
	r.lsnSet(func(l *lsn.Steer) { l.SetPool(p) })
	return nil
}

// LSNAddress implements rules.LSNConn.
func (r *mblbRules) LSNAddress(a netip.Addr) error {
	r.lsnSet(func(l *lsn.Steer) { l.SetAddr(a) })
	return nil
}

// LSNPort implements rules.LSNConn.
func (r *mblbRules) LSNPort(port uint16) error {
	r.lsnSet(func(l *lsn.Steer) { l.SetPort(port) })
	return nil
}

// LSNPersistence implements rules.LSNConn.
func (r *mblbRules) LSNPersistence(mode string, timeout time.Duration) error {
	r.lsnSet(func(l *lsn.Steer) { l.SetPersistence(mode, timeout) })
	return nil
}

// LSNInbound implements rules.LSNConn.
func (r *mblbRules) LSNInbound(enable bool) error {
	r.lsnSet(func(l *lsn.Steer) { l.SetInbound(enable) })
	return nil
}

// LSNTranslation implements rules.LSNConn: the translation SA_PICKED
// runs over, else that of the member connection of a SERVER_CONNECTED.
func (r *mblbRules) LSNTranslation() (netip.AddrPort, bool) {
	if t := r.picked; t != nil {
		return t.Addr, true
	}
	if r.local.IsValid() {
		if _, ok := r.f.mv.lsnLeg(r.local); ok {
			return r.local, true
		}
	}
	return netip.AddrPort{}, false
}

// saPicked runs SA_PICKED over t, the translation of a member
// connection about to be dialled for the client; false when the rule
// ended the client (reject, drop, a Tcl error), which gives t back.
func (r *mblbRules) saPicked(t *lsn.Translation) bool {
	r.mu.Lock()
	r.picked = t
	err := r.run(config.EventSAPicked, nil)
	v := r.verdict
	r.picked = nil
	r.mu.Unlock()
	return r.goOn(err, v)
}

var _ rules.XLATConn = (*mblbRules)(nil)

// XLATSource implements rules.XLATConn: the translation SA_PICKED runs
// over, else the member connection of a SERVER_CONNECTED; between
// member connections (an HTTP request's events) the source is not
// picked [M: each request may take another member connection].
func (r *mblbRules) XLATSource() (netip.AddrPort, bool) {
	if t := r.picked; t != nil {
		return t.Addr, true
	}
	if r.local.IsValid() {
		return r.local, true
	}
	return netip.AddrPort{}, false
}

// XLATConfig implements rules.XLATConn: the virtual's lsn pool, or the
// one the client's LSN::pool named (none after LSN::disable), else its
// source-address-translation (a rule's snat does not change it on an
// http virtual).
func (r *mblbRules) XLATConfig() (typ, object string) {
	if lp, _ := r.lsnChoice(r.snap.LSN); lp != nil {
		return "LSN", lp.Name
	}
	return rules.SNATXLATConfig(r.SNATDecision())
}

// XLATValidRanges implements rules.XLATConn.
func (r *mblbRules) XLATValidRanges() ([]rules.XLATRange, bool, bool) {
	if lp, _ := r.lsnChoice(r.snap.LSN); lp == nil {
		return nil, false, false
	}
	t := r.picked
	if t == nil && r.local.IsValid() {
		t, _ = r.f.mv.lsnLeg(r.local)
	}
	if t == nil {
		return nil, true, false
	}
	vr := t.ValidRanges()
	out := make([]rules.XLATRange, len(vr))
	for i, x := range vr {
		out[i] = rules.XLATRange{Addr: x.Addr, Low: x.Low, High: x.High}
	}
	return out, true, true
}

// releaseLSN gives back the translation of the server connection from
// local, if it was made from one.
func (mv *VS) releaseLSN(local netip.AddrPort) {
	if mv.lsnHeld.Load() == 0 {
		return
	}
	if t, ok := mv.lsnLegs.LoadAndDelete(local); ok {
		mv.lsnHeld.Add(-1)
		t.(*lsn.Translation).Release()
	}
}
