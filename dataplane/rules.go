package dataplane

import (
	"errors"

	"github.com/openltm/openltm/rules"
)

// eventBit is ev's bit in an event mask (0 for an event the proxy does not
// raise).
func eventBit(ev Event) uint16 {
	bit, _, _ := ev.Lookup()
	return bit
}

// iRules runs a compiled rules.Program on proxied flows: one rules.Session
// per flow, created at the flow's first event and released when it ends.
type iRules struct {
	prog *rules.Program
}

// NewRules adapts a compiled iRules program (the rules of one virtual, in
// list order) to the proxy's hook. The daemon builds one program per
// distinct rule list and shares it between virtuals; nil gives nil, so
// that a virtual without rules pays nothing.
func NewRules(p *rules.Program) Rules {
	if p == nil {
		return nil
	}
	return &iRules{prog: p}
}

// Program returns the iRules program behind a hook made by NewRules, or nil.
func Program(r Rules) *rules.Program {
	if ir, ok := r.(*iRules); ok {
		return ir.prog
	}
	return nil
}

// Handles implements Rules.
func (r *iRules) Handles(ev Event) bool {
	_, rev, ok := ev.Lookup()
	return ok && r.prog.Handles(rev)
}

var errNotProxied = errors.New("iRules run only on proxied flows")

// Run implements Rules.
func (r *iRules) Run(ev Event, c RuleConn) error {
	pr, ok := c.(*proxied)
	if !ok || pr.rs == nil {
		return errNotProxied
	}
	_, rev, _ := ev.Lookup()
	if pr.rs.sess == nil {
		pr.rs.sess = r.prog.NewSession(pr)
	}
	return pr.rs.sess.Run(rev)
}
