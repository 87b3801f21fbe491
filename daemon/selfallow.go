package daemon

import (
	"net/netip"

	"github.com/openltm/openltm/objects"
)

// Port lockdown (objects/kinds_selfallow.go): a self IP serves openltm's
// own services (iQuery on IQueryPort) only when its allow-service admits
// them, as a BIG-IP's self IP refuses what its port lockdown does not
// allow. A self IP with no allow-service allows none, BIG-IP's default
// for a new self IP (K17333).
var (
	netSelfAllowService  = netSelf.MustProp("allow-service")
	netSelfAllow         = schema.MustKind("net self-allow")
	netSelfAllowDefaults = netSelfAllow.MustProp("defaults")
)

// selfAllows reports whether the self IP o accepts proto on port: its
// allow-service against the net self-allow defaults (BIG-IP's own list
// when the configuration has none).
func selfAllows(cfg *objects.Config, o *objects.Object, proto string, port int) bool {
	defaults := objects.SelfAllowDefaults
	if d := cfg.Get(netSelfAllow, ""); d != nil && netSelfAllowDefaults.Str(d) != "" {
		defaults = netSelfAllowDefaults.Str(d)
	}
	return objects.ServiceAllowed(netSelfAllowService.Str(o), defaults, proto, port)
}

// lockedOut reports whether port lockdown keeps proto:port closed on
// addr: addr is a self IP's address and no self IP of that address
// admits it. An address that is no self IP's (the management address, a
// loopback) is not locked down, as BIG-IP's port lockdown holds for self
// IPs only [M].
func lockedOut(cfg *objects.Config, addr netip.Addr, proto string, port int) bool {
	self := false
	for _, o := range cfg.Of(netSelf) {
		if a, ok := selfAddr(o); !ok || a != addr.Unmap() {
			continue
		}
		if selfAllows(cfg, o, proto, port) {
			return false
		}
		self = true
	}
	return self
}
