package dataplane

import (
	"net/netip"
	"strings"

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
// HTTP virtual (SERVER_INIT's snatpool): a full path, or a bare name in
// /Common.
func (p *Plane) snatPoolNamed(name string) ([]netip.Addr, bool) {
	cfg := p.running.Load()
	if cfg == nil {
		return nil, false
	}
	for _, n := range []string{name, "/Common/" + name} {
		if a, ok := cfg.SnatPools[n]; ok {
			return a, true
		}
		if strings.HasPrefix(name, "/") {
			break
		}
	}
	return nil, false
}
