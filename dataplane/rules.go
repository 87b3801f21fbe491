package dataplane

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

// NewRules adapts a compiled iRules program (the rules of one virtual, in
// list order) to the proxy's hook (see dataplane/internal/irules); nil
// gives nil, so that a virtual without rules pays nothing.
func NewRules(p *rules.Program) Rules { return irules.New(p) }

// Program returns the iRules program behind a hook made by NewRules, or nil.
func Program(r Rules) *rules.Program { return irules.Program(r) }

// snatPoolNamed resolves a snatpool a rule names on a message-based or
// HTTP virtual (SERVER_INIT's snatpool) in the running configuration.
func (p *Plane) snatPoolNamed(name string) ([]netip.Addr, bool) {
	return p.running.Load().SnatPool(name)
}
