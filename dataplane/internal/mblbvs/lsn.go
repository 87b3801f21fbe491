package mblbvs

import (
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// lsnTries bounds the ports one member connection tries when the host
// refuses the translation's port (another program holds it).
const lsnTries = 4

// dialLSN opens a member connection from a translation of the
// virtual's lsn pool (source-address-translation type lsn), as the L4
// proxy does: the subscriber's client address gets a translation
// address and port, bound exactly (shared with an inbound listener,
// lsn.ReusePort) and held until the connection closes (legClosed). A
// connection shared by OneConnect keeps the translation of the client
// that opened it. A client the pool has no translation for gets no
// member connection.
func (mv *VS) dialLSN(snap *state.VirtualSnap, client netip.AddrPort, m mblb.Member) (*net.TCPConn, error) {
	t, err := snap.LSN.Translate(client, m.Addr, false, nil)
	if err != nil {
		return nil, err
	}
	if v, ok := mv.lsnClients.Load(client); ok && !v.(*mblbFlow).rr.saPicked(t) {
		t.Release()
		return nil, errPickEnded
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
		c, err := d.Dial("tcp", m.Addr.String())
		if err == nil {
			tc := c.(*net.TCPConn)
			snap.Cfg.ServerTCP.ApplyConn(tc)
			mv.lsnLegs.Store(t.Addr, t)
			mv.lsnHeld.Add(1)
			t.Attach(tc) // zombie-timeout closes it
			return tc, nil
		}
		if i < lsnTries && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, err
	}
}

// errPickEnded: the client's rule ended it in SA_PICKED.
var errPickEnded = errors.New("the client ended in SA_PICKED")

// trackLSN makes f findable by its client's address while it runs, when
// the virtual has an lsn pool and its rules handle SA_PICKED, so that a
// member connection dialled for it runs the event; the returned
// function forgets it. Without an lsn pool: a nil check.
func (mv *VS) trackLSN(f *mblbFlow, snap *state.VirtualSnap) func() {
	if snap.LSN == nil || f.rr == nil || !f.rr.rules.Handles(config.EventSAPicked) {
		return func() {}
	}
	mv.lsnClients.Store(f.Client, f)
	return func() { mv.lsnClients.CompareAndDelete(f.Client, f) }
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

// XLATConfig implements rules.XLATConn: the virtual's lsn pool, else
// its source-address-translation (a rule does not change them on an
// http virtual).
func (r *mblbRules) XLATConfig() (typ, object string) {
	if r.snap.LSN != nil {
		return "LSN", r.snap.LSN.Name
	}
	return rules.SNATXLATConfig(r.SNATDecision())
}

// XLATValidRanges implements rules.XLATConn.
func (r *mblbRules) XLATValidRanges() ([]rules.XLATRange, bool, bool) {
	if r.snap.LSN == nil {
		return nil, false, false
	}
	t := r.picked
	if t == nil && r.local.IsValid() {
		if v, ok := r.f.mv.lsnLegs.Load(r.local); ok {
			t = v.(*lsn.Translation)
		}
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
