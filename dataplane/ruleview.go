package dataplane

import (
	"net/netip"
	"strings"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// What the rules of the L4 flows ask of the plane beyond the pool index
// (state.Pools answers pool names, LB::status and active_members).

// rulePools is the running commit's pool index (state.Pools), read per flow.
func (p *Plane) rulePools() state.Pools { return *p.poolIndex.Load() }

// snatPoolNamed resolves a snatpool name: a full path, or a bare name in
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
