package l4

import (
	"net/netip"
)

// snatPoolNamed resolves a snatpool name in the running configuration.
func (e *Engine) snatPoolNamed(name string) ([]netip.Addr, bool) {
	return e.env.Running().SnatPool(name)
}
