package l4

import (
	"net/netip"
	"strings"
)

// snatPoolNamed resolves a snatpool name: a full path, or a bare name in
// /Common.
func (e *Engine) snatPoolNamed(name string) ([]netip.Addr, bool) {
	cfg := e.env.Running()
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
