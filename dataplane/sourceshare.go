package dataplane

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// Virtuals told apart by source. BIG-IP lets two virtuals share a
// destination (address, mask and port) when their source differs, and
// gives a connection to the one whose source holds the client, the
// longest first (its precedence: destination, then source, then port)
// [M: f5.md records only host > network > wildcard and port-specific >
// any; the source's place is BIG-IP's documented precedence, not
// verified].
// openltm does this for TCP virtuals on every port or on a network (a
// standard and an ip-forward wildcard on every port, for clients of
// different networks): they share one listener, whose owner (VS) is the
// virtual with the shortest source and whose other virtuals (Alts) are
// picked per accepted connection (l4.Pick), the longest source first.
// The listener's socket options are its owner's [M: the others' client
// tcp profile options that act on the listening socket are not
// applied]. Not shared, and refused as "already used" by Check:
// UDP virtuals, host virtuals on a port, virtuals with a vlans list (the
// listener's VLAN binding is one virtual's), two virtuals of one source
// [M].

// sourceOf is v's source as a prefix: the zero Prefix (any) as /0.
func sourceOf(v *Virtual) netip.Prefix {
	if v.Source.IsValid() {
		return v.Source.Masked()
	}
	if v.Destination.Addr().Unmap().Is4() {
		return netip.PrefixFrom(netip.IPv4Unspecified(), 0)
	}
	return netip.PrefixFrom(netip.IPv6Unspecified(), 0)
}

// sharesListener reports whether a and b, on one listener address, may
// share it (above), and why not when they may not.
func sharesListener(a, b *Virtual) (bool, string) {
	switch {
	case a.IsUDP() || b.IsUDP():
		return false, "udp virtuals of one destination are not told apart by source yet"
	case !(a.AnyPort() || a.Network.IsValid()) || !(b.AnyPort() || b.Network.IsValid()):
		return false, "only virtuals on every port or on a network share a destination, told apart by source"
	case a.Network != b.Network:
		return false, "their masks differ"
	case a.VLANs != nil || b.VLANs != nil:
		return false, "virtuals with a vlans list are not told apart on one destination yet"
	case a.HTTP3 != nil || b.HTTP3 != nil:
		return false, "http3 virtuals do not share a destination"
	case sourceOf(a) == sourceOf(b):
		return false, "their source is the same"
	}
	return true, ""
}

// ownerFirst orders two virtuals sharing a listener: the shortest
// source first (the listener's owner), then by name.
func ownerFirst(a, b *Virtual) int {
	return cmp.Or(cmp.Compare(sourceOf(a).Bits(), sourceOf(b).Bits()), cmp.Compare(a.Name, b.Name))
}

// shareListener records virtual name on listener ap, which owner (in
// want) holds already: the shortest source keeps the listener, the
// other goes to shared[ap], kept longest source first.
func shareListener(cfg *Config, want map[netip.AddrPort]string, shared map[netip.AddrPort][]string, ap netip.AddrPort, name string) {
	owner := want[ap]
	if ownerFirst(cfg.Virtuals[name], cfg.Virtuals[owner]) < 0 {
		want[ap], name = name, owner
	}
	shared[ap] = append(shared[ap], name)
	slices.SortFunc(shared[ap], func(x, y string) int { return -ownerFirst(cfg.Virtuals[x], cfg.Virtuals[y]) })
}

// setAlts gives each running TCP listener the other virtuals of its
// destination (b.shared), nil where it has none. The caller holds p.mu,
// at the swap, before the fresh listeners start.
func (p *Plane) setAlts(b *generation) {
	for ap, l := range p.listeners {
		names := b.shared[ap]
		if len(names) == 0 {
			if l.Alts.Load() != nil {
				l.Alts.Store(nil)
			}
			continue
		}
		alts := make([]*state.Virtual, 0, len(names))
		for _, n := range names {
			if v := b.virtuals[n]; v != nil {
				alts = append(alts, v)
			}
		}
		l.Alts.Store(&alts)
	}
}
