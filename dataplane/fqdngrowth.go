package dataplane

import (
	"net/netip"
	"slices"

	"github.com/openltm/openltm/dataplane/internal/sklookup"
)

// Names' growth past the steering's bound. Check counts what the
// steering passes over (checkSteer) without the addresses names resolve
// to (FQDN nodes' members, virtuals' address-list names, the plane's own
// destinations written as names): it sees the names. When an answer
// brings addresses that would take the entries passed over past
// sklookup.MaxSpecific, the apply refuses the growth: every name's new
// addresses stay out of service (no ephemeral member, listener or
// passed destination for them), the addresses already in service that
// the answers still give stay, an address the answers no longer give
// goes, and the plane logs it once, with the counts, until an apply fits
// again with every answer (logged too) [M: BIG-IP has no such bound; a
// user would expect what runs to go on running, and a member the
// steering could not pass over would take the plane's own connections
// to it to a virtual]. Before, the steering's update failed and was
// logged at each apply, while the new members were in service and
// their connections steered to the virtual.

// inService is the addresses fn's name puts in service in the apply
// under way: its answer's, or under fqdnHold only those of them already
// in service. The caller holds p.mu.
func (p *Plane) inService(fn *fqdnNode) []netip.Addr {
	a := fn.addrs()
	if p.fqdnHold {
		a = slices.DeleteFunc(slices.Clone(a), func(x netip.Addr) bool { return !slices.Contains(fn.applied, x) })
	}
	fn.pending = a
	return a
}

// namesApplied records the addresses the apply that bound its
// listeners put in service. The caller holds p.mu.
func (p *Plane) namesApplied() {
	for _, m := range []map[string]*fqdnNode{p.fqdns, p.vsFQDNs, p.ownFQDNs} {
		for _, fn := range m {
			fn.applied = fn.pending
		}
	}
}

// expandNames is c with every name expanded to the addresses in service
// (expandFQDN, expandVirtualFQDN, expandOwnFQDN), their growth refused
// where it would pass the steering's bound (above). A configuration
// without names is returned as it is. The caller holds p.mu.
func (p *Plane) expandNames(c *Config) *Config {
	expand := func() *Config { return p.expandOwnFQDN(p.expandVirtualFQDN(p.expandFQDN(c))) }
	p.fqdnHold = false
	cfg := expand()
	if cfg == c {
		p.fqdnHeld = false // no names: nothing is held
		return cfg
	}
	n := steerSpecificCount(cfg)
	if n <= sklookup.MaxSpecific {
		if p.fqdnHeld {
			p.fqdnHeld = false
			p.log.Info("names resolved: their new addresses are taken into service", "passed_over", n, "limit", sklookup.MaxSpecific)
		}
		return cfg
	}
	p.fqdnHold = true
	held := expand()
	p.fqdnHold = false
	if !p.fqdnHeld {
		p.fqdnHeld = true
		refused := 0
		for _, m := range []map[string]*fqdnNode{p.fqdns, p.vsFQDNs, p.ownFQDNs} {
			for _, fn := range m {
				refused += len(fn.addrs()) - len(fn.pending)
			}
		}
		p.log.Warn("names resolved to more addresses than the steering of virtuals on every port and network virtuals can pass over: the new addresses are not taken into service, those in service stay",
			"refused_addresses", refused, "passed_over_wanted", n, "passed_over_kept", steerSpecificCount(held), "limit", sklookup.MaxSpecific)
	}
	return held
}

// steerSpecificCount is how many entries the steering would pass over
// for cfg (steerPlan), its listeners counted as Check counts them.
func steerSpecificCount(cfg *Config) int {
	tcp, udp := map[netip.AddrPort]string{}, map[netip.AddrPort]string{}
	for name, v := range cfg.Virtuals {
		if v == nil || !v.Destination.Addr().IsValid() {
			continue
		}
		aps, err := v.Listeners()
		if err != nil {
			continue
		}
		m := tcp
		if v.IsUDP() {
			m = udp
		}
		for _, ap := range aps {
			if _, ok := m[ap]; !ok {
				m[ap] = name
			}
		}
	}
	_, specific := steerPlan(cfg, tcp, udp, func(netip.AddrPort, bool) int { return -1 })
	return len(specific)
}
