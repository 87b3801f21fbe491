// Package irules adapts a compiled iRules program to the dataplane's rule
// hook (config.Rules): it answers which proxy events the program handles
// and runs an event on any flow that offers the flow view
// (config.RuleConn), one rules.ConnState per flow. It knows nothing of how
// a flow is proxied: the L4 flows and the message-based clients each
// implement the view, and this is the one place where the proxy's events
// meet the rules engine's.
package irules

import (
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/rules"
)

// hook runs one compiled program (the rules of one virtual, in list
// order).
type hook struct {
	prog *rules.Program
}

// New adapts a compiled program to the rule hook. The daemon builds one
// program per distinct rule list and shares it between virtuals; nil
// gives nil, so that a virtual without rules pays nothing.
func New(p *rules.Program) config.Rules {
	if p == nil {
		return nil
	}
	return &hook{prog: p}
}

// Program returns the program behind a hook made by New, or nil (no
// rules, or another hook, such as a test's).
func Program(r config.Rules) *rules.Program {
	if h, ok := r.(*hook); ok {
		return h.prog
	}
	return nil
}

// Handles implements config.Rules.
func (h *hook) Handles(ev config.Event) bool {
	_, rev, ok := ev.Lookup()
	return ok && h.prog.Handles(rev)
}

// Run implements config.Rules: the flow's session runs every handler of
// ev.
func (h *hook) Run(ev config.Event, c config.RuleConn) error {
	_, rev, _ := ev.Lookup()
	return c.RuleSession(h.prog).Run(rev)
}

// Verdict is how a rule event ended the flow (or a message-balanced
// client), for the data path to carry out after the event.
type Verdict uint8

// The verdicts.
const (
	// GoOn: the flow goes on.
	GoOn Verdict = iota
	// Reject resets the client (`reject`).
	Reject
	// Drop closes the client without an answer (`drop`, `discard`).
	Drop
	// Close closes the client after what is pending for it (`TCP::close`).
	Close
)

// Stats reads one side's traffic counters for IP::stats; every data
// path's flows and legs count into flows.Traffic.
func Stats(t *flows.Traffic, age time.Duration) rules.FlowStats {
	return rules.FlowStats{
		PktsIn: t.PktsIn.Load(), PktsOut: t.PktsOut.Load(),
		BytesIn: t.BytesIn.Load(), BytesOut: t.BytesOut.Load(),
		Age: age,
	}
}
