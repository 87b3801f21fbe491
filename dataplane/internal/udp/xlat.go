package udp

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/rules"
)

// The XLAT:: commands on a UDP flow (rules.XLATConn): the source a
// server side leaves from is the lsn translation SA_PICKED runs over,
// else the leg of the event (or the one the flow follows), whose local
// address is its translation's, its SNAT's or the host's. Rules run
// under rs.mu, so the rule's snat is read without it.

var _ rules.XLATConn = (*flow)(nil)

// XLATSource implements rules.XLATConn.
func (f *flow) XLATSource() (src netip.AddrPort, ok bool) {
	if t := f.picked.Load(); t != nil {
		return t.Addr, true
	}
	if lg := f.curLeg(); lg != nil {
		return lg.rec.Client, true
	}
	return src, false
}

// XLATConfig implements rules.XLATConn: the virtual's lsn pool, or the
// one LSN::pool named, unless a rule chose a snat or disabled the
// translation; else the snat decision (as the L4 proxy answers). It
// runs inside an event, under rs.mu.
func (f *flow) XLATConfig() (typ, object string) {
	lp := f.snap.LSN
	if rs := f.rs; rs != nil {
		if p := rs.lsnRule.Named(); p != nil {
			lp = p
		}
		if rs.SNAT.Set || rs.lsnRule.Disabled() {
			lp = nil
		}
	}
	if lp != nil {
		return "LSN", lp.Name
	}
	return rules.SNATXLATConfig(f.SNATDecision())
}

// XLATValidRanges implements rules.XLATConn.
func (f *flow) XLATValidRanges() ([]rules.XLATRange, bool, bool) {
	if typ, _ := f.XLATConfig(); typ != "LSN" {
		return nil, false, false
	}
	t := f.picked.Load()
	if t == nil {
		if src, ok := f.XLATSource(); ok {
			t = f.translationAt(src)
		}
	}
	if t == nil {
		return nil, true, false
	}
	vr := t.ValidRanges()
	out := make([]rules.XLATRange, len(vr))
	for i, r := range vr {
		out[i] = rules.XLATRange{Addr: r.Addr, Low: r.Low, High: r.High}
	}
	return out, true, true
}

// translationAt is the flow's translation to src, nil for none.
func (f *flow) translationAt(src netip.AddrPort) *lsn.Translation {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.lsn {
		if t.Addr == src {
			return t
		}
	}
	return nil
}
