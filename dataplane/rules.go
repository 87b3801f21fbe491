package dataplane

import (
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

// eventBit is ev's bit in an event mask (0 for an event the proxy does not
// raise).
func eventBit(ev Event) uint16 {
	bit, _, _ := ev.Lookup()
	return bit
}

// NewRules adapts a compiled iRules program (the rules of one virtual, in
// list order) to the proxy's hook (see dataplane/internal/irules); nil
// gives nil, so that a virtual without rules pays nothing.
func NewRules(p *rules.Program) Rules { return irules.New(p) }

// Program returns the iRules program behind a hook made by NewRules, or nil.
func Program(r Rules) *rules.Program { return irules.Program(r) }
