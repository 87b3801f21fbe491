package daemon

import (
	"math/bits"
	"net/netip"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// virtualIPForward is the ip-forward type flag: a forwarding (IP)
// virtual server, which sends each connection on to the address and port
// the client asked for.
var virtualIPForward = ltmVirtual.MustProp("ip-forward")

// anyPort admits a virtual on every port of its address (`destination
// ADDR:any`, no traffic-matching-criteria port ranges) where the plane
// can steer every port here (a BPF sk_lookup program: Linux 5.9 and
// later, as root), and a network virtual on every port or on one port
// (the same program hands it every address of its network), and keeps
// with a warning, saying why, one it cannot:
// the kernel or the privileges refuse, or the virtual is of a kind the
// plane serves on given ports only (dataplane.AnyPortUnsupported). It
// also keeps an ip-forward virtual on a given port, which would forward
// to its own listener here.
func (t *translator) anyPort(o *objects.Object, v *dataplane.Virtual) bool {
	if why := dataplane.AnyPortUnsupported(v); why != "" {
		if v.AnyPort() {
			t.keep(o, "destination %s listens on every port: %s", virtualDestination.Str(o), why)
		} else {
			t.keep(o, "%s", why)
		}
		return false
	}
	if !v.AnyPort() && !v.Network.IsValid() {
		return true
	}
	if err := dataplane.AnyPortSupport(); err != nil {
		if v.AnyPort() {
			t.keep(o, "destination %s listens on every port, which openltm cannot do here: %v", virtualDestination.Str(o), err)
		} else {
			t.keep(o, "destination %s mask %s takes every address of its network, which openltm cannot do here: %v", virtualDestination.Str(o), virtualMask.Str(o), err)
		}
		return false
	}
	return true
}

// wildcard admits a wildcard virtual (a destination on the unspecified
// address: `0.0.0.0:any mask any`, `0.0.0.0:80 mask any`, the `::`
// forms) where ltmd owns its network namespace (Options.OwnNamespace,
// ltmd --own-namespace): it is the network 0.0.0.0/0 (::/0) to the
// plane, taken after every more specific virtual; a host mask or none is
// read as any [M: BIG-IP sets mask any on a wildcard destination].
// Without the opt-in it is kept with a warning naming it: in a namespace
// shared with other programs it would take their connections too.
func (t *translator) wildcard(o *objects.Object, v *dataplane.Virtual) bool {
	if t.rules == nil || t.rules.e == nil || !t.rules.e.opts.OwnNamespace {
		t.keep(o, "destination %s has no address to listen on (a wildcard virtual server takes every connection of ltmd's network namespace: it is served only by an ltmd started with --own-namespace, in a namespace of its own)", virtualDestination.Str(o))
		return false
	}
	switch virtualMask.Str(o) {
	case "", "none", "255.255.255.255", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff":
		v.Network = netip.PrefixFrom(v.Destination.Addr(), 0)
	}
	return true
}

// virtualNetwork reads a virtual's mask: a host mask (the default
// 255.255.255.255, an IPv6 destination's all-ones mask, none) leaves it a
// host virtual; a shorter one makes it a network virtual (v.Network,
// `destination 10.0.0.0:any mask 255.0.0.0`, `destination 10.0.0.0:443
// mask 255.0.0.0`), which the plane serves on every port or on its port
// (dataplane.AnyPortUnsupported says what else). A mask that
// is not one (not contiguous, of the other family) or a destination with
// host bits set under it is refused, as BIG-IP refuses them [M: the
// words are ours]. It reports whether the virtual goes on.
func (t *translator) virtualNetwork(o *objects.Object, v *dataplane.Virtual) bool {
	m := virtualMask.Str(o)
	a := v.Destination.Addr()
	if v.Network.IsValid() { // a wildcard's (wildcard)
		return true
	}
	if m == "" || m == "none" || m == "255.255.255.255" || !a.IsValid() {
		return true
	}
	n := 0
	if m != "any" && m != "any6" {
		ma, err := netip.ParseAddr(m)
		if err != nil || !isMask(ma) || ma.Is4() != a.Is4() { // translate_persist.go
			return t.refuse("%s", about(o, "mask %s is not a network mask for destination %s", m, virtualDestination.Str(o)))
		}
		for _, b := range ma.AsSlice() {
			n += bits.OnesCount8(b)
		}
	}
	if n == a.BitLen() {
		return true
	}
	p := netip.PrefixFrom(a, n)
	if p.Masked().Addr() != a {
		return t.refuse("%s", about(o, "destination %s has host bits set under mask %s (a network virtual's address is its network's, %s)", virtualDestination.Str(o), m, p.Masked().Addr()))
	}
	v.Network = p
	return true
}
