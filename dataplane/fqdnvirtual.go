package dataplane

import (
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/fqdn"
)

// Names in a virtual's destination address list (Virtual.FQDNs): the
// plane follows each as an FQDN node is followed (ipv4, asked again at
// the answer's TTL, every 5 s while the server fails, every address in
// service) and listens on the addresses they resolve to,
// beside the list's own, within MaxAddressesPerVirtual. A change of the
// answer applies the running configuration again, which opens the
// listeners of new addresses and closes those of addresses gone; flows
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

// vsFQDNKey names the watch of one name of one virtual.
func vsFQDNKey(virtual, name string) string { return virtual + "\x00" + name }

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
		for _, name := range v.FQDNs {
			spec := fqdn.Spec{Name: name, Family: fqdn.IPv4, Interval: fqdnVirtualInterval, DownInterval: fqdn.DefaultDownInterval, Autopopulate: true}
			want[vsFQDNKey(vname, name)] = fqdnWant{spec: spec, key: rkey}
		}
	}
	p.reconcileWatches(p.vsFQDNs, want, res)
}

// expandVirtualFQDN is cfg with each virtual's names replaced by the
// addresses in service now, joined to its own. A resolved address whose
// listener another virtual holds, or past MaxAddressesPerVirtual, is left
// out (and logged); a virtual left with no address at all is not run
// until a name resolves. A configuration without names is returned as it
// is. The caller holds p.mu.
func (p *Plane) expandVirtualFQDN(cfg *Config) *Config {
	has := false
	for _, v := range cfg.Virtuals {
		if v != nil && len(v.FQDNs) > 0 {
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
		if v == nil || len(v.FQDNs) == 0 {
			out.Virtuals[name] = v
			continue
		}
		nv := *v
		addrs := slices.Clone(v.Addresses)
		if len(addrs) == 0 && v.Destination.Addr().IsValid() {
			addrs = append(addrs, v.Destination.Addr())
		}
		for _, n := range v.FQDNs {
			fn := p.vsFQDNs[vsFQDNKey(name, n)]
			if fn == nil {
				continue
			}
			for _, a := range fn.addrs() {
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
			nv = *v
		}
		out.Virtuals[name] = &nv
	}
	return &out
}
