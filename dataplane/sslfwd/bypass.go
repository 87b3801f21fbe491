package sslfwd

import (
	"net/netip"
	"strings"
)

// Bypass is client-ssl's ssl-forward-proxy-bypass: which connections
// pass through untouched instead of being intercepted. The blacklists
// are BIG-IP's intercept lists and the whitelists its bypass lists [M:
// the GUI's names since 12.x]; each names a data group.
type Bypass struct {
	// Default is forward-proxy-bypass-default-action bypass: what no
	// list names passes through; false (intercept, BIG-IP's default) is
	// intercepted.
	Default bool
	// DstIntercept, DstBypass, SrcIntercept and SrcBypass are the
	// destination-ip- and source-ip-blacklist and -whitelist networks.
	DstIntercept, DstBypass, SrcIntercept, SrcBypass []netip.Prefix
	// HostIntercept and HostBypass are hostname-blacklist and
	// -whitelist: a name matches the hello's server name when equal to
	// it or a domain it is in ("example.com" and "*.example.com" take
	// www.example.com; the first also example.com itself) [M].
	HostIntercept, HostBypass []string
}

// Decide reports whether a connection from src to dst whose hello names
// sni passes through. The lists are searched in the order BIG-IP
// documents, the first match deciding: destination, then source, then
// host name, each with the list of the default action first (intercept
// lists first under intercept, bypass lists first under bypass), so that
// an intercept list can take back a destination from a source or host
// bypass list. A hello without a server name matches no host list.
func (b *Bypass) Decide(src, dst netip.Addr, sni string) bool {
	if b == nil {
		return false
	}
	src, dst = src.Unmap(), dst.Unmap()
	type step struct {
		nets   []netip.Prefix
		addr   netip.Addr
		hosts  []string
		bypass bool
	}
	first, second := false, true // intercept lists first
	if b.Default {
		first, second = true, false
	}
	pick := func(bypass bool, in, by []netip.Prefix) []netip.Prefix {
		if bypass {
			return by
		}
		return in
	}
	pickHosts := func(bypass bool) []string {
		if bypass {
			return b.HostBypass
		}
		return b.HostIntercept
	}
	steps := [6]step{
		{nets: pick(first, b.DstIntercept, b.DstBypass), addr: dst, bypass: first},
		{nets: pick(second, b.DstIntercept, b.DstBypass), addr: dst, bypass: second},
		{nets: pick(first, b.SrcIntercept, b.SrcBypass), addr: src, bypass: first},
		{nets: pick(second, b.SrcIntercept, b.SrcBypass), addr: src, bypass: second},
		{hosts: pickHosts(first), bypass: first},
		{hosts: pickHosts(second), bypass: second},
	}
	name := strings.TrimSuffix(strings.ToLower(sni), ".")
	for _, s := range steps {
		if s.addr.IsValid() && inNets(s.nets, s.addr) {
			return s.bypass
		}
		if name != "" && inHosts(s.hosts, name) {
			return s.bypass
		}
	}
	return b.Default
}

func inNets(nets []netip.Prefix, a netip.Addr) bool {
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// inHosts reports whether name is one of hosts or in a domain of them;
// hosts are lower case, without a trailing dot.
func inHosts(hosts []string, name string) bool {
	for _, h := range hosts {
		if d, ok := strings.CutPrefix(h, "*."); ok {
			if strings.HasSuffix(name, "."+d) {
				return true
			}
			continue
		}
		if name == h || strings.HasSuffix(name, "."+h) {
			return true
		}
	}
	return false
}

// NormalHost is a hostname list entry as Decide compares it.
func NormalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}
