package dataplane

import (
	"sort"

	"github.com/openltm/openltm/dataplane/dnsvs"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/recursor"
)

// The glue between the plane and dataplane/dnsvs: the virtuals with a
// dns profile get a service in their snapshot, which their UDP and TCP
// listeners hand every query to.

type (
	DNSProfile = config.DNSProfile
	DNSCache   = config.DNSCache
	DNSLog     = config.DNSLog
)

// prepareDNS makes the services of cfg's dns profiles, one per virtual
// that has one. The caller holds p.mu.
func (p *Plane) prepareDNS(cfg *Config) map[*config.DNSProfile]*dnsvs.Service {
	var profs []*config.DNSProfile
	names := make([]string, 0, len(cfg.Virtuals))
	for name, v := range cfg.Virtuals {
		if v.DNS != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names) // a cache two virtuals share takes the first one's settings
	for _, name := range names {
		profs = append(profs, cfg.Virtuals[name].DNS)
	}
	return p.dns.Prepare(profs)
}

// SetDNSAnswerer lets the GSLB answer the wide IPs (enable-gtm) and
// static zones (enable-dns-express) of every virtual with a dns profile,
// as it answers its own listeners.
func (p *Plane) SetDNSAnswerer(a dnsvs.Answerer) { p.dns.SetAnswerer(a) }

// SetDNSExpress hands the NOTIFYs that come to virtuals with a dns
// profile (enable-dns-express) to DNS Express; nil takes it away.
func (p *Plane) SetDNSExpress(x gslb.Express) { p.dns.SetExpress(x) }

// SetDNSLogSender lets the dns profiles' logging profiles send their
// lines through the running configuration's log publishers; nil drops
// them.
func (p *Plane) SetDNSLogSender(send func(publisher string, line []byte) bool) {
	p.dns.SetLogSender(send)
}

// DNSQueryLog is the logging profile l as a gtm listener logs through it
// (gslb.Listener.Log): the lines of a dns-profile virtual, through the
// same publishers; nil when it logs nothing.
func (p *Plane) DNSQueryLog(l *DNSLog) gslb.QueryLog { return p.dns.QueryLog(l) }

// DNSListenerSteps gives each gtm listener's dns profile (its place in
// profiles) the cache and unhandled-query-action steps a virtual with
// that profile has (gslb.Listener.Steps); nil for one that needs none.
func (p *Plane) DNSListenerSteps(profiles []*DNSProfile) []gslb.ProfileSteps {
	return p.dns.PrepareListeners(profiles)
}

// DNSCacheLen is how many answers the named DNS cache keeps; -1 when no
// virtual uses it.
func (p *Plane) DNSCacheLen(name string) int {
	if c := p.dns.Cache(name); c != nil {
		return c.Len()
	}
	return -1
}

// DNSCacheStats are the named DNS cache's counters; ok is false when no
// virtual uses it (BIG-IP shows a cache no profile names as all zero).
func (p *Plane) DNSCacheStats(name string) (st dnsvs.CacheStats, ok bool) {
	if c := p.dns.Cache(name); c != nil {
		return c.Stats(), true
	}
	return st, false
}

// ResetDNSCacheStats zeroes the named cache's counters.
func (p *Plane) ResetDNSCacheStats(name string) {
	if c := p.dns.Cache(name); c != nil {
		c.ResetStats()
	}
}

// FlushDNSCache drops what the named cache keeps; it returns how many
// answers went.
func (p *Plane) FlushDNSCache(name string) int {
	if c := p.dns.Cache(name); c != nil {
		return c.Flush()
	}
	return 0
}

// DNSCacheKeys are the zones the named validating cache keeps keys for
// (nil for another cache).
func (p *Plane) DNSCacheKeys(name string) []recursor.KeyRecord {
	if c := p.dns.Cache(name); c != nil && c.Resolver() != nil {
		return c.Resolver().KeyRecords()
	}
	return nil
}

// FlushDNSCacheKeys drops the keys the named validating cache keeps; it
// returns how many zones went.
func (p *Plane) FlushDNSCacheKeys(name string) int {
	if c := p.dns.Cache(name); c != nil && c.Resolver() != nil {
		return c.Resolver().FlushKeys()
	}
	return 0
}

// DNSCacheMessages calls fn with each answer the named cache keeps
// whose question passes f, until fn returns false (show ltm dns cache
// records msg); nothing when no virtual uses the cache.
func (p *Plane) DNSCacheMessages(name string, f recursor.Filter, fn func(dnsvs.Record) bool) {
	if c := p.dns.Cache(name); c != nil {
		c.Messages(f, fn)
	}
}

// DNSCacheRRsets calls fn with each record set the named cache keeps
// passing f, until fn returns false (show ltm dns cache records rrset).
func (p *Plane) DNSCacheRRsets(name string, f recursor.Filter, fn func(recursor.RRset) bool) {
	if c := p.dns.Cache(name); c != nil {
		c.RRsets(f, fn)
	}
}

// DNSCacheNameservers calls fn with each delegation the named resolver
// cache keeps for zone f.Name (every one when ""), until fn returns
// false (show ltm dns cache records nameserver); a transparent cache
// keeps none.
func (p *Plane) DNSCacheNameservers(name string, f recursor.Filter, fn func(recursor.Nameserver) bool) {
	if c := p.dns.Cache(name); c != nil && c.Resolver() != nil {
		c.Resolver().Nameservers(f, fn)
	}
}

// DeleteDNSCacheRecords drops what the named cache keeps of one kind
// (msg, rrset, nameserver, key) passing f and returns how many entries
// went, so that the next query for them goes out again.
func (p *Plane) DeleteDNSCacheRecords(name, kind string, f recursor.Filter) int {
	c := p.dns.Cache(name)
	if c == nil {
		return 0
	}
	switch kind {
	case "msg":
		return c.DeleteMessages(f)
	case "rrset":
		return c.DeleteRRsets(f)
	case "nameserver":
		if c.Resolver() != nil {
			return c.Resolver().DeleteNameservers(f)
		}
	case "key":
		if c.Resolver() != nil {
			return c.Resolver().DeleteKeys(f)
		}
	}
	return 0
}

// DNSProfileStats are the named dns profile's counters, zero when no
// virtual uses it.
func (p *Plane) DNSProfileStats(name string) dnsvs.ProfileCounts {
	if st := p.dns.ProfileStats(name); st != nil {
		return st.Counts()
	}
	return dnsvs.ProfileCounts{}
}

// ResetDNSProfileStats zeroes the named dns profile's counters.
func (p *Plane) ResetDNSProfileStats(name string) {
	if st := p.dns.ProfileStats(name); st != nil {
		st.Reset()
	}
}
