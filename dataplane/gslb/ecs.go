package gslb

import (
	"net/netip"

	"github.com/miekg/dns"
)

// ecsClient is the address of a client subnet option's source prefix,
// invalid when the option does not ask to be used: a source prefix of 0
// (the resolver keeps its client private, RFC 7871 7.1.2), an unknown
// family, or a prefix longer than the family's address.
func ecsClient(e *dns.EDNS0_SUBNET) netip.Addr {
	if e.SourceNetmask == 0 {
		return netip.Addr{}
	}
	a, ok := netip.AddrFromSlice(e.Address)
	if !ok {
		return netip.Addr{}
	}
	switch e.Family {
	case 1:
		a = a.Unmap()
		if !a.Is4() || e.SourceNetmask > 32 {
			return netip.Addr{}
		}
	case 2:
		if a.Is4() || e.SourceNetmask > 128 {
			return netip.Addr{}
		}
	default:
		return netip.Addr{}
	}
	pfx, err := a.Prefix(int(e.SourceNetmask))
	if err != nil {
		return netip.Addr{}
	}
	return pfx.Addr()
}
