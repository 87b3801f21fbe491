package dataplane

import (
	"net"
	"net/netip"
	"slices"
	"strconv"

	"github.com/openltm/openltm/dataplane/fqdn"
)

// Own destinations written as host names (Config.OwnDestNames: an auth
// profile's servers named by host name; and sys dns name-servers
// written as names, which resolve FQDN nodes): the plane follows each
// name as it follows a virtual's address-list names (fqdnvirtual.go:
// asked again at the answer's TTL, every 5 s while the server fails,
// A and AAAA both, each query bounded by fqdn's QueryTimeout, 5 s), and
// the addresses in service join Config.OwnDests at each apply, so a
// wildcard, network or every-port virtual passes them over (ownDests,
// steerPlan) as it passes the destinations written as addresses. A
// change of an answer applies the running configuration again
// (reconcileWatches), which syncs the steering with the new addresses.
// Until a name's first answer, nothing is passed over for it [M: the
// commit does not wait for the resolver, as it does not for FQDN nodes].

// ownFQDNKey names the watch of one own destination's name in one
// family.
func ownFQDNKey(name string, fam fqdn.Family) string {
	return name + "\x00" + fam.String()
}

// ownDestNames are cfg's own destinations written as names: OwnDestNames,
// and sys dns name-servers that are host names (port 53, or NAME:PORT).
func ownDestNames(cfg *Config) []NamedDest {
	out := slices.Clone(cfg.OwnDestNames)
	for _, ns := range cfg.NameServers {
		if _, ok := nameServerDest(ns); ok {
			continue // an address: ownDests has it
		}
		if d, ok := nameServerName(ns); ok {
			out = append(out, d)
		}
	}
	return out
}

// nameServerName reads a name-servers entry written as a host name
// (NAME, port 53, or NAME:PORT); false for an empty one or a port that
// is not a number.
func nameServerName(s string) (NamedDest, bool) {
	if s == "" {
		return NamedDest{}, false
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return NamedDest{Name: s, Port: 53}, true
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || host == "" {
		return NamedDest{}, false
	}
	return NamedDest{Name: host, Port: uint16(n)}, true
}

// reconcileOwnFQDN starts following the own destinations' names of cfg
// that are new and stops those cfg no longer names. The names are asked
// of the resolver FQDN nodes use; a name-servers entry's own name is
// asked of the system's resolver (it cannot be asked of itself) unless
// the plane's options give a resolver. The caller holds p.mu.
func (p *Plane) reconcileOwnFQDN(cfg *Config) {
	res, rkey := p.resolverFor(cfg)
	sys, skey := fqdn.Resolver(&fqdn.System{}), "system"
	if p.opts.FQDNResolver != nil {
		sys, skey = res, rkey
	}
	isNS := map[string]bool{}
	for _, ns := range cfg.NameServers {
		if _, addr := nameServerDest(ns); !addr {
			if d, ok := nameServerName(ns); ok {
				isNS[d.Name] = true
			}
		}
	}
	want := map[string]fqdnWant{}
	for _, d := range ownDestNames(cfg) {
		for _, fam := range vsFamilies {
			spec := fqdn.Spec{Name: d.Name, Family: fam, Interval: fqdnVirtualInterval, DownInterval: fqdn.DefaultDownInterval, Autopopulate: true}
			wt := fqdnWant{spec: spec, key: rkey}
			if isNS[d.Name] {
				wt.key, wt.res = "ns "+skey, sys
			}
			want[ownFQDNKey(d.Name, fam)] = wt
		}
	}
	p.reconcileWatches(p.ownFQDNs, want, res)
}

// expandOwnFQDN is cfg with the addresses in service of its own
// destinations' names joined to OwnDests, at each name's port. A
// configuration naming none is returned as it is. The caller holds p.mu.
func (p *Plane) expandOwnFQDN(cfg *Config) *Config {
	names := ownDestNames(cfg)
	if len(names) == 0 {
		return cfg
	}
	out := *cfg
	out.OwnDests = slices.Clone(cfg.OwnDests)
	for _, d := range names {
		for _, fam := range vsFamilies {
			fn := p.ownFQDNs[ownFQDNKey(d.Name, fam)]
			if fn == nil {
				continue
			}
			for _, a := range p.inService(fn) {
				out.OwnDests = append(out.OwnDests, netip.AddrPortFrom(a, d.Port))
			}
		}
	}
	return &out
}
