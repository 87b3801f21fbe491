package l4

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/rules"
)

var _ rules.LSNConn = (*proxied)(nil)

// lsnChoice is the lsn pool and translation wishes of the flow's rules
// (LSN:: commands) over the virtual's pool lp; off when a rule
// disabled the translation (LSN::disable).
func (rs *ruleState) lsnChoice(lp *lsn.Pool) (_ *lsn.Pool, want *lsn.Want, off bool) {
	rs.lsnMu.Lock()
	defer rs.lsnMu.Unlock()
	return rs.lsnRule.Choose(lp)
}

func (pr *proxied) lsnSet(f func(l *lsn.Steer)) {
	pr.rs.lsnMu.Lock() // not rs.mu: the rule's event runs under it
	f(&pr.rs.lsnRule)
	pr.rs.lsnMu.Unlock()
	pr.rs.lsnUsed.Store(true)
}

// LSNDisable implements rules.LSNConn.
func (pr *proxied) LSNDisable() { pr.lsnSet((*lsn.Steer).Disable) }

// LSNPool implements rules.LSNConn.
func (pr *proxied) LSNPool(name string) error {
	p := pr.e.env.LSN.Lookup(name)
	if p == nil {
		return fmt.Errorf("LSN::pool: no lsn pool %s", name)
	}
	pr.lsnSet(func(l *lsn.Steer) { l.SetPool(p) })
	return nil
}

// LSNAddress implements rules.LSNConn.
func (pr *proxied) LSNAddress(a netip.Addr) error {
	pr.lsnSet(func(l *lsn.Steer) { l.SetAddr(a) })
	return nil
}

// LSNPort implements rules.LSNConn.
func (pr *proxied) LSNPort(port uint16) error {
	pr.lsnSet(func(l *lsn.Steer) { l.SetPort(port) })
	return nil
}

// LSNPersistence implements rules.LSNConn.
func (pr *proxied) LSNPersistence(mode string, timeout time.Duration) error {
	pr.lsnSet(func(l *lsn.Steer) { l.SetPersistence(mode, timeout) })
	return nil
}

// LSNInbound implements rules.LSNConn.
func (pr *proxied) LSNInbound(enable bool) error {
	pr.lsnSet(func(l *lsn.Steer) { l.SetInbound(enable) })
	return nil
}

// LSNTranslation implements rules.LSNConn.
func (pr *proxied) LSNTranslation() (netip.AddrPort, bool) {
	if t := pr.lsn.Load(); t != nil {
		return t.Addr, true
	}
	return netip.AddrPort{}, false
}

var _ rules.XLATConn = (*proxied)(nil)

// XLATSource implements rules.XLATConn: the lsn translation, else the
// server side's own address and port once it is made.
func (pr *proxied) XLATSource() (netip.AddrPort, bool) {
	if t := pr.lsn.Load(); t != nil {
		return t.Addr, true
	}
	if sc := pr.srv.Load(); sc != nil {
		return sc.leg.Client, true
	}
	return netip.AddrPort{}, false
}

// XLATConfig implements rules.XLATConn: the lsn pool the flow is
// translated through (the virtual's, or LSN::pool's), unless a rule
// disabled it or chose a snat; else the virtual's or the rule's snat.
func (pr *proxied) XLATConfig() (typ, object string) {
	lp := pr.snap.LSN
	if pr.rs.lsnUsed.Load() {
		var off bool
		if lp, _, off = pr.rs.lsnChoice(lp); off {
			lp = nil
		}
	}
	if lp != nil && !pr.rs.SNAT.Set {
		return "LSN", lp.Name
	}
	return rules.SNATXLATConfig(pr.SNATDecision())
}

// XLATValidRanges implements rules.XLATConn.
func (pr *proxied) XLATValidRanges() ([]rules.XLATRange, bool, bool) {
	if t := pr.lsn.Load(); t != nil {
		vr := t.ValidRanges()
		out := make([]rules.XLATRange, len(vr))
		for i, r := range vr {
			out[i] = rules.XLATRange{Addr: r.Addr, Low: r.Low, High: r.High}
		}
		return out, true, true
	}
	if pr.srv.Load() != nil { // made without a translation
		return nil, false, false
	}
	if typ, _ := pr.XLATConfig(); typ == "LSN" {
		return nil, true, false
	}
	return nil, false, false
}
