package udp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/rules"
)

// errLSN: the virtual's lsn pool gave the flow no translation;
// errPickEnded: the flow's rule ended it in SA_PICKED.
var (
	errLSN       = errors.New("lsn translation failed")
	errPickEnded = errors.New("the flow ended in SA_PICKED")
)

// lsnChoice is the lsn pool a new server side of the flow is translated
// through, nil for none, and the rule's wishes for its translation: the
// virtual's pool, or the one LSN::pool named, unless a rule chose a
// snat or snatpool or disabled the translation (LSN::disable). A flow
// whose virtual has no lsn pool and whose rules used no LSN:: command
// pays a nil check and an atomic load.
func (f *flow) lsnChoice() (*lsn.Pool, *lsn.Want) {
	lp, rs := f.snap.LSN, f.rs
	if rs == nil {
		return lp, nil
	}
	if lp == nil && !rs.lsnUsed.Load() {
		return nil, nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.SNAT.Set {
		return nil, nil
	}
	lp, w, _ := rs.lsnRule.Choose(lp)
	if lp == nil {
		return nil, nil
	}
	return lp, w
}

// lsnSet changes the flow's LSN:: choice; the LSN:: commands run inside
// an event, under rs.mu.
func (f *flow) lsnSet(set func(l *lsn.Steer)) {
	set(&f.rs.lsnRule)
	f.rs.lsnUsed.Store(true)
}

var _ rules.LSNConn = (*flow)(nil)

// LSNDisable implements rules.LSNConn.
func (f *flow) LSNDisable() { f.lsnSet((*lsn.Steer).Disable) }

// LSNPool implements rules.LSNConn.
func (f *flow) LSNPool(name string) error {
	p := f.l.e.env.LSN.Lookup(name)
	if p == nil {
		return fmt.Errorf("LSN::pool: no lsn pool %s", name)
	}
	f.lsnSet(func(l *lsn.Steer) { l.SetPool(p) })
	return nil
}

// LSNAddress implements rules.LSNConn.
func (f *flow) LSNAddress(a netip.Addr) error {
	f.lsnSet(func(l *lsn.Steer) { l.SetAddr(a) })
	return nil
}

// LSNPort implements rules.LSNConn.
func (f *flow) LSNPort(port uint16) error {
	f.lsnSet(func(l *lsn.Steer) { l.SetPort(port) })
	return nil
}

// LSNPersistence implements rules.LSNConn.
func (f *flow) LSNPersistence(mode string, timeout time.Duration) error {
	f.lsnSet(func(l *lsn.Steer) { l.SetPersistence(mode, timeout) })
	return nil
}

// LSNInbound implements rules.LSNConn.
func (f *flow) LSNInbound(enable bool) error {
	f.lsnSet(func(l *lsn.Steer) { l.SetInbound(enable) })
	return nil
}

// LSNTranslation implements rules.LSNConn: the translation SA_PICKED
// runs over, else that of the server side the flow's datagrams follow
// (of the event's leg on the server side).
func (f *flow) LSNTranslation() (netip.AddrPort, bool) {
	if t := f.picked.Load(); t != nil {
		return t.Addr, true
	}
	if lg := f.curLeg(); lg != nil {
		if t := f.translationAt(lg.rec.Client); t != nil {
			return t.Addr, true
		}
	}
	return netip.AddrPort{}, false
}

// dialLSN opens a server side to dst from a translation of lp (see
// dataplane/lsn) as the rule wants it (nil: as the pool gives it), kept
// until the flow ends; the pool counts a failure. listen makes it a TFTP
// leg's unconnected socket (tftp.go) on the translation, which takes the
// member's answers from the transfer's port: the translation then opens
// no inbound socket of the pool's, whatever inbound-connections or
// LSN::inbound say, since an unconnected socket sharing the port would
// share the member's datagrams with it [M].
func (f *flow) dialLSN(lp *lsn.Pool, dst netip.AddrPort, want *lsn.Want, listen bool) (*net.UDPConn, error) {
	if listen {
		w := lsn.Want{Inbound: "disabled"}
		if want != nil {
			w = *want
			w.Inbound = "disabled"
		}
		want = &w
	}
	t, err := lp.Translate(f.Client, dst, true, want)
	if err != nil {
		return nil, errLSN
	}
	if f.rs != nil && f.handles(config.EventSAPicked) { // XLAT::src_addr and src_port read it there (xlat.go)
		f.picked.Store(t)
		_, fwd, _, ok := f.run(config.EventSAPicked, nil, nil)
		f.picked.Store(nil)
		if !ok || !fwd { // reject, drop or a Tcl error: the flow ends, the translation goes back
			t.Release()
			if ok {
				f.end()
			}
			return nil, errPickEnded
		}
	}
	for i := 0; ; i++ {
		var c *net.UDPConn
		if listen {
			c, err = lsn.ListenUDPShared(t.Addr)
		} else {
			c, err = dialReuse(t.Addr, dst)
		}
		if err == nil {
			f.mu.Lock()
			f.lsn = append(f.lsn, t)
			f.mu.Unlock()
			t.Attach(c) // zombie-timeout closes it
			return c, nil
		}
		if i < 4 && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, err
	}
}

// releaseLSN ends the flow's translations.
func (f *flow) releaseLSN() {
	f.mu.Lock()
	ts := f.lsn
	f.lsn = nil
	f.mu.Unlock()
	for _, t := range ts {
		t.Release()
	}
}

// dialReuse is a UDP socket from src to dst shared with the
// translation's inbound socket (lsn.ReusePort): the host gives it the
// datagrams of dst, the inbound socket the others'.
func dialReuse(src, dst netip.AddrPort) (*net.UDPConn, error) {
	d := net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(src), Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = lsn.ReusePort(int(fd)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	c, err := d.Dial("udp", dst.String())
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}
