package dataplane

import (
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/fqdn"
)

// Names in a virtual's address lists: the plane follows each name of
// the destination list (Virtual.FQDNs) and of the source list
// (Virtual.SourceFQDNs) as an FQDN node is followed (asked again at the
// answer's TTL, every 5 s while the server fails, every address in
// service), for A and AAAA records both. The virtual listens on the
// destination names' addresses beside the list's own, within
// MaxAddressesPerVirtual, and admits clients from the source names'
// addresses beside the source list's own. A change of an answer applies
// the running configuration again: the listeners of new addresses open
// and those of addresses gone close, the source filter is rebuilt; flows
// on the others go on.

// fqdnVirtualInterval is how often a virtual's names are asked again:
// 0, at the answer's TTL (`interval ttl`), since an address list has no
// interval of its own and a DNS-driven list is expected to follow its
// records.
const fqdnVirtualInterval time.Duration = 0

// bindingKey is a listener: a udp and a tcp virtual may share an
// address and port.
type bindingKey struct {
	udp bool
	ap  netip.AddrPort
}

// vsFQDNKey names the watch of one name of one virtual in one family.
func vsFQDNKey(virtual, name string, fam fqdn.Family) string {
	return virtual + "\x00" + name + "\x00" + fam.String()
}

// vsFamilies are the records a list's name is asked for: an address
// list has no address-family of its own, so both.
var vsFamilies = [...]fqdn.Family{fqdn.IPv4, fqdn.IPv6}

// vsFQDNAddrs are the addresses in service for name of virtual, IPv4
// first. The caller holds p.mu.
func (p *Plane) vsFQDNAddrs(virtual, name string) []netip.Addr {
	var out []netip.Addr
	for _, fam := range vsFamilies {
		if fn := p.vsFQDNs[vsFQDNKey(virtual, name, fam)]; fn != nil {
			out = append(out, p.inService(fn)...)
		}
	}
	return out
}

// reconcileVirtualFQDN starts following the names of cfg's virtuals that
// are new and stops those no virtual names any longer. The caller holds
// p.mu.
func (p *Plane) reconcileVirtualFQDN(cfg *Config) {
	res, rkey := p.resolverFor(cfg)
	want := map[string]fqdnWant{}
	for vname, v := range cfg.Virtuals {
		if v == nil {
			continue
		}
		for _, names := range [][]string{v.FQDNs, v.SourceFQDNs} {
			for _, name := range names {
				for _, fam := range vsFamilies {
					spec := fqdn.Spec{Name: name, Family: fam, Interval: fqdnVirtualInterval, DownInterval: fqdn.DefaultDownInterval, Autopopulate: true}
					want[vsFQDNKey(vname, name, fam)] = fqdnWant{spec: spec, key: rkey}
				}
			}
		}
	}
	p.reconcileWatches(p.vsFQDNs, want, res)
}

// expandVirtualFQDN is cfg with each virtual's names replaced by the
// addresses in service now, joined to its own: destination names'
// addresses as listeners, source names' in the source filter (Match). A
// resolved address whose listener another virtual holds, or past
// MaxAddressesPerVirtual, is left out (and logged); a virtual left with
// no address at all is not run until a name resolves. A configuration without names is returned as it
// is. The caller holds p.mu.
func (p *Plane) expandVirtualFQDN(cfg *Config) *Config {
	has := false
	for _, v := range cfg.Virtuals {
		if v != nil && (len(v.FQDNs) > 0 || len(v.SourceFQDNs) > 0) {
			has = true
			break
		}
	}
	if !has {
		return cfg
	}
	taken := map[bindingKey]string{}
	for name, v := range cfg.Virtuals {
		if v == nil || !v.Destination.Addr().IsValid() {
			continue
		}
		aps, _ := v.Listeners()
		for _, ap := range aps {
			taken[bindingKey{v.IsUDP(), ap}] = name
		}
	}
	out := *cfg
	out.Virtuals = make(map[string]*Virtual, len(cfg.Virtuals))
	for _, name := range sortedKeys(cfg.Virtuals) {
		v := cfg.Virtuals[name]
		if v == nil || len(v.FQDNs) == 0 && len(v.SourceFQDNs) == 0 {
			out.Virtuals[name] = v
			continue
		}
		nv := *v
		if len(v.SourceFQDNs) > 0 {
			nv.Match = p.sourceMatchFQDN(name, v)
		}
		if len(v.FQDNs) == 0 {
			out.Virtuals[name] = &nv
			continue
		}
		addrs := slices.Clone(v.Addresses)
		if len(addrs) == 0 && v.Destination.Addr().IsValid() {
			addrs = append(addrs, v.Destination.Addr())
		}
		for _, n := range v.FQDNs {
			for _, a := range p.vsFQDNAddrs(name, n) {
				a = a.Unmap()
				if slices.Contains(addrs, a) {
					continue
				}
				if len(addrs) == MaxAddressesPerVirtual {
					p.log.Warn("virtual " + name + ": " + n + " resolves to " + a.String() + ", past the " + strconv.Itoa(MaxAddressesPerVirtual) + " addresses a virtual binds; left out")
					continue
				}
				probe := nv
				probe.Destination, probe.Addresses = netip.AddrPortFrom(a, v.Destination.Port()), nil
				aps, _ := probe.Listeners()
				clash := ""
				for _, ap := range aps {
					if other, ok := taken[bindingKey{v.IsUDP(), ap}]; ok && other != name {
						clash = other
						break
					}
				}
				if clash != "" {
					p.log.Warn("virtual " + name + ": " + n + " resolves to " + a.String() + ", where virtual " + clash + " listens; left out")
					continue
				}
				addrs = append(addrs, a)
			}
		}
		if len(addrs) == 0 {
			continue // nothing to listen on yet
		}
		nv.Destination = netip.AddrPortFrom(addrs[0], v.Destination.Port())
		nv.Addresses = nil
		if len(addrs) > 1 {
			nv.Addresses = addrs
		}
		if _, err := nv.Listeners(); err != nil {
			p.log.Warn("virtual " + name + ": the addresses its names resolve to: " + err.Error() + "; not run with them")
			if !v.Destination.Addr().IsValid() {
				continue
			}
			m := nv.Match
			nv = *v
			nv.Match = m
		}
		out.Virtuals[name] = &nv
	}
	return &out
}

// sourceMatchFQDN is v's source filter with the addresses its source
// names resolve to now. The caller holds p.mu.
func (p *Plane) sourceMatchFQDN(name string, v *Virtual) *SourceMatch {
	var addrs []netip.Addr
	for _, n := range v.SourceFQDNs {
		addrs = append(addrs, p.vsFQDNAddrs(name, n)...)
	}
	return withSourceAddrs(v.Match, addrs)
}

// withSourceAddrs is source filter m (nil: none of its own) admitting
// addrs too, one-address ranges merged with m's; with no address at all
// it admits no client, never every client, since it stands for a list of
// names none of which resolves.
func withSourceAddrs(m *SourceMatch, addrs []netip.Addr) *SourceMatch {
	var rs []AddrRange
	var ports []PortRange
	if m != nil {
		rs, ports = slices.Clone(m.Addrs), m.Ports
	}
	for _, a := range addrs {
		rs = append(rs, AddrRange{Low: a.Unmap(), High: a.Unmap()})
	}
	out := NewSourceMatch(rs, ports)
	if out == nil {
		out = &SourceMatch{}
	}
	out.NoAddrs = len(out.Addrs) == 0
	if m != nil {
		out.Geo = m.Geo
	}
	return out
}
