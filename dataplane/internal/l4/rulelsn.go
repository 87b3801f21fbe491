package l4

import (
	"github.com/openltm/openltm/dataplane/lsn"
)

// lsnChoice is the lsn pool and translation wishes of the flow's rules
// (LSN:: commands) over the virtual's pool lp; off when a rule
// disabled the translation (LSN::disable).
func (rs *ruleState) lsnChoice(lp *lsn.Pool) (_ *lsn.Pool, want *lsn.Want, off bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	l := &rs.lsnRule
	if l.disabled {
		return nil, nil, true
	}
	if l.pool != nil {
		lp = l.pool
	}
	if l.want != (lsn.Want{}) {
		w := l.want
		want = &w
	}
	return lp, want, false
}

// lsnRule is what the LSN:: commands set for a flow.
type lsnRule struct {
	disabled bool
	pool     *lsn.Pool
	want     lsn.Want
}
