package dataplane

import (
	"crypto/tls"
	"sort"

	"github.com/openltm/openltm/dataplane/dnsvs"
	"github.com/openltm/openltm/dataplane/doh"
	"github.com/openltm/openltm/dataplane/internal/config"
)

// The glue between the plane and dataplane/doh: a virtual with a
// doh-server or doh-proxy profile gets a DoH service where a dns
// profile's would be, which its TCP listener hands every connection to.

// DoH is a virtual's doh profile.
type DoH = config.DoH

// prepareDoH gives the doh profiles of cfg's virtuals their counters.
// The caller holds p.mu.
func (p *Plane) prepareDoH(cfg *Config) map[string]*doh.Stats {
	var names []string
	for _, v := range cfg.Virtuals {
		if v.DoH != nil {
			names = append(names, v.DoH.Profile)
		}
	}
	sort.Strings(names)
	return p.doh.Keep(names)
}

// dohService is the DoH service of vc, which has a doh profile; its dns
// profile's service answers when it has one.
func (p *Plane) dohService(vc *config.Virtual, dns map[*config.DNSProfile]*dnsvs.Service, stats map[string]*doh.Stats) *doh.Service {
	mode := doh.Server
	if vc.DoH.Proxy {
		mode = doh.Proxy
	}
	var svc *dnsvs.Service
	if vc.DNS != nil {
		svc = dns[vc.DNS]
	}
	var client, server *tls.Config
	if vc.TLS != nil {
		client = vc.TLS.Client
		if vc.TLS.Server != nil {
			server = vc.TLS.Server.Config // doh-proxy: the members are DoH servers
		}
	}
	return doh.New(mode, svc, stats[vc.DoH.Profile], client, server, vc.DoH.ALPN, vc.DoH.H2C)
}

// DoHStats are the named doh profile's counters, zero when no virtual
// uses it.
func (p *Plane) DoHStats(name string) doh.Counts {
	if st := p.doh.Stats(name); st != nil {
		return st.Counts()
	}
	return doh.Counts{}
}

// ResetDoHStats zeroes the named doh profile's counters.
func (p *Plane) ResetDoHStats(name string) {
	if st := p.doh.Stats(name); st != nil {
		st.Reset()
	}
}
