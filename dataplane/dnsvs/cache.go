package dnsvs

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/recursor"
	"github.com/openltm/openltm/dataplane/rpz"
)

// DefaultMsgCacheSize is msg-cache-size's default in bytes [M].
const DefaultMsgCacheSize = 1 << 20

// Cache keeps the answers a virtual's pool gave, by question and DO bit,
// for the smallest TTL of their records (a negative answer for its SOA's
// TTL and minimum, RFC 2308), within msg-cache-size bytes: a full cache
// drops its oldest answers first.
type Cache struct {
	cfg config.DNSCache
	max int
	now func() time.Time
	res *recursor.Resolver // local zones and recursion; nil for neither
	rpz *rpz.Policies      // response-policy-zones; nil for none

	// upUDP and upTCP count a transparent cache's queries to the pool
	// not yet answered, against max-concurrent-udp/tcp (pool.go).
	upUDP, upTCP atomic.Int64

	mu     sync.Mutex
	m      map[cacheKey]*entry
	order  []cacheKey // insertion order, for eviction
	size   int
	rrSize int        // the records' bytes, against rrset-cache-size
	st     CacheStats // counted under mu, which every count already holds
}

// CacheStats are a cache's counters, what show ltm dns cache reads to
// tell how well a cache serves (hits against misses) and whether
// msg-cache-size is too small (evictions).
type CacheStats struct {
	// Hits and Misses count the look-ups that found a live answer and
	// those that did not (an expired one is a miss).
	Hits, Misses uint64
	// Inserts counts the answers kept; Evictions those dropped for
	// msg-cache-size, Expired those dropped when found expired.
	Inserts, Evictions, Expired uint64
	// Overflows counts the queries answered SERVFAIL because a
	// transparent cache's max-concurrent-udp/tcp queries were already
	// out to the pool.
	Overflows uint64
	// Entries and Bytes are what the cache holds now, MaxBytes its
	// msg-cache-size.
	Entries, Bytes, MaxBytes uint64
	// Resolving says the cache resolves from root hints: the counters
	// below are its resolver's, to tell how often it went out and how
	// well its rrset and nameserver caches serve.
	Resolving bool
	// Sent are the queries sent to name servers, SentTCP those over
	// TCP; Referrals the delegations followed; Mismatches the answers
	// dropped for not echoing the query's name (0x20); Failures the
	// resolutions answered SERVFAIL.
	Sent, SentTCP, Referrals, Mismatches, Failures uint64
	// RRsetHits are record sets answered from the rrset cache; RRsets
	// and RRsetBytes what it holds; Zones and Nameservers the
	// delegations and name server addresses kept.
	RRsetHits, RRsets, RRsetBytes, Zones, Nameservers uint64
	// Validating says the resolver validates DNSSEC: Secure, Insecure
	// and Bogus count its answers by what validation made of them, Keys
	// and KeyBytes are what its key cache holds.
	Validating                              bool
	Secure, Insecure, Bogus, Keys, KeyBytes uint64
	// AggressiveNXDOMAIN and AggressiveNODATA are the answers made from
	// validated NSEC ranges without asking (RFC 8198); NSEC3Limited the
	// proofs past the NSEC3 iteration limits (RFC 9276), whose answers
	// are insecure or bogus.
	AggressiveNXDOMAIN, AggressiveNODATA, NSEC3Limited uint64
	// RPZ says the cache has response-policy-zones: the queries their
	// triggers answered, by the policy applied (passthru: let through).
	RPZ                                                                         bool
	RPZNXDOMAIN, RPZNODATA, RPZLocalData, RPZWalledGarden, RPZPassthru, RPZDrop uint64
	// RPZTCPOnly counts the UDP queries an rpz-tcp-only trigger sent
	// back over TCP.
	RPZTCPOnly uint64
	// RPZClientIP, RPZQNAME, RPZIP, RPZNSDNAME and RPZNSIP count the
	// same hits by the trigger that matched.
	RPZClientIP, RPZQNAME, RPZIP, RPZNSDNAME, RPZNSIP uint64
}

type cacheKey struct {
	name         string // lower case
	qtype, class uint16
	do           bool
	ad, cd       bool // a validating resolver's answer depends on them
}

type entry struct {
	wire    []byte
	rrBytes int // its records' wire size (rrset-cache-size)
	stored  time.Time
	expires time.Time
}

func newCache(c *config.DNSCache) *Cache {
	max := c.MsgCacheSize
	if max <= 0 {
		max = DefaultMsgCacheSize
	}
	cache := &Cache{cfg: *c, max: max, now: time.Now, m: map[cacheKey]*entry{}}
	if c.Resolver != nil {
		cache.res = recursor.New(*c.Resolver)
	}
	if len(c.RPZ) > 0 {
		cache.rpz = rpz.New(c.RPZ)
	}
	return cache
}

// same reports whether c keeps what a cache configured as d would.
func (c *Cache) same(d *config.DNSCache) bool {
	if c.cfg.Name != d.Name || c.cfg.Kind != d.Kind || c.cfg.MsgCacheSize != d.MsgCacheSize || len(c.cfg.Forward) != len(d.Forward) ||
		c.cfg.MaxUDP != d.MaxUDP || c.cfg.MaxTCP != d.MaxTCP || c.cfg.RRsetBytes != d.RRsetBytes || c.cfg.Rotate != d.Rotate ||
		c.cfg.Recurse != d.Recurse || c.cfg.Hinted != d.Hinted || !reflect.DeepEqual(c.cfg.Resolver, d.Resolver) ||
		!reflect.DeepEqual(c.cfg.RPZ, d.RPZ) {
		return false
	}
	for z, ns := range d.Forward {
		old := c.cfg.Forward[z]
		if len(old) != len(ns) {
			return false
		}
		for i := range ns {
			if old[i] != ns[i] {
				return false
			}
		}
	}
	return true
}

func (c *Cache) keyOf(r *dns.Msg) cacheKey {
	q := r.Question[0]
	k := cacheKey{name: strings.ToLower(q.Name), qtype: q.Qtype, class: q.Qclass}
	if o := r.IsEdns0(); o != nil {
		k.do = o.Do()
	}
	if c.res != nil && c.cfg.Resolver.Validate { // AD answered to AD, the unvalidated answer to CD
		k.ad, k.cd = r.AuthenticatedData, r.CheckingDisabled
	}
	return k
}

// Get is the kept answer to r, its TTLs lowered by the time it was kept
// and its ID and question r's; nil when none is kept or it expired.
func (c *Cache) Get(r *dns.Msg) *dns.Msg {
	k := c.keyOf(r)
	now := c.now()
	c.mu.Lock()
	e := c.m[k]
	if e != nil && !now.Before(e.expires) {
		delete(c.m, k)
		c.size -= len(e.wire)
		c.rrSize -= e.rrBytes
		c.st.Expired++
		e = nil
	}
	if e == nil {
		c.st.Misses++
	} else {
		c.st.Hits++
	}
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	m := new(dns.Msg)
	if m.Unpack(e.wire) != nil {
		return nil
	}
	age := uint32(now.Sub(e.stored) / time.Second)
	for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range sec {
			if h := rr.Header(); h.Rrtype != dns.TypeOPT {
				h.Ttl -= min(age, h.Ttl)
			}
		}
	}
	m.Id = r.Id
	m.Question = r.Question
	if c.cfg.Rotate {
		rotate(m.Answer, r.Id)
	}
	return m
}

// rotate turns each record set of an answer section (the records of one
// owner and type, in a row) round by id, as rrset-rotate query-id
// answers a kept set: record id mod n comes first.
func rotate(rrs []dns.RR, id uint16) {
	for i := 0; i < len(rrs); {
		h := rrs[i].Header()
		j := i + 1
		for j < len(rrs) && rrs[j].Header().Rrtype == h.Rrtype && strings.EqualFold(rrs[j].Header().Name, h.Name) {
			j++
		}
		if n := j - i; n > 1 {
			set := rrs[i:j]
			k := int(id) % n
			tmp := make([]dns.RR, n)
			copy(tmp, set[k:])
			copy(tmp[n-k:], set[:k])
			copy(set, tmp)
		}
		i = j
	}
}

// Put keeps m, the pool's answer to r, when it may be kept: a NOERROR or
// NXDOMAIN answer, not truncated, whose records all live a second or
// more.
func (c *Cache) Put(r, m *dns.Msg) {
	if m.Truncated || (m.Rcode != dns.RcodeSuccess && m.Rcode != dns.RcodeNameError) {
		return
	}
	ttl, ok := ttlOf(m)
	if !ok || ttl == 0 {
		return
	}
	if len(m.Answer) == 0 {
		// A negative answer's SOA lives for its minimum (RFC 2308).
		m = m.Copy()
		for _, rr := range m.Ns {
			if soa, ok := rr.(*dns.SOA); ok {
				soa.Hdr.Ttl = min(soa.Hdr.Ttl, soa.Minttl)
			}
		}
	}
	wire, err := m.Pack()
	if err != nil || len(wire) > c.max {
		return
	}
	rrBytes := 0
	if c.cfg.RRsetBytes > 0 {
		for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
			for _, rr := range sec {
				if rr.Header().Rrtype != dns.TypeOPT {
					rrBytes += dns.Len(rr)
				}
			}
		}
		if rrBytes > c.cfg.RRsetBytes {
			return
		}
	}
	k := c.keyOf(r)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[k]; old != nil {
		c.size -= len(old.wire)
		c.rrSize -= old.rrBytes
	} else {
		c.order = append(c.order, k)
	}
	c.m[k] = &entry{wire: wire, rrBytes: rrBytes, stored: now, expires: now.Add(time.Duration(ttl) * time.Second)}
	c.size += len(wire)
	c.rrSize += rrBytes
	c.st.Inserts++
	for (c.size > c.max || (c.cfg.RRsetBytes > 0 && c.rrSize > c.cfg.RRsetBytes)) && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		if old == k { // the newest answer stays
			c.order = append(c.order, k)
			continue
		}
		if e := c.m[old]; e != nil {
			delete(c.m, old)
			c.size -= len(e.wire)
			c.rrSize -= e.rrBytes
			c.st.Evictions++
		}
	}
	if len(c.order) > 2*len(c.m)+16 { // keys of expired entries: compact
		live := c.order[:0]
		for _, o := range c.order {
			if c.m[o] != nil {
				live = append(live, o)
			}
		}
		c.order = live
	}
}

// ttlOf is how long m may be kept: the smallest TTL of its records, and
// for an answer without any (NODATA, NXDOMAIN) its SOA's, within the SOA
// minimum. ok is false when nothing says (no record at all).
func ttlOf(m *dns.Msg) (uint32, bool) {
	ttl, ok := uint32(0), false
	see := func(t uint32) {
		if !ok || t < ttl {
			ttl, ok = t, true
		}
	}
	for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range sec {
			h := rr.Header()
			if h.Rrtype == dns.TypeOPT {
				continue
			}
			see(h.Ttl)
			if soa, isSOA := rr.(*dns.SOA); isSOA && len(m.Answer) == 0 {
				see(soa.Minttl)
			}
		}
	}
	return ttl, ok
}

// Len is how many answers are kept (expired ones until looked up).
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Stats are the cache's counters and what it holds now.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	st.Entries, st.Bytes, st.MaxBytes = uint64(len(c.m)), uint64(c.size), uint64(c.max)
	st.RRsetBytes = uint64(c.rrSize)
	if c.res != nil && c.cfg.Recurse {
		rs := c.res.Stats()
		st.Resolving = true
		st.Sent, st.SentTCP, st.Referrals = rs.Queries.Load(), rs.TCP.Load(), rs.Referrals.Load()
		st.Mismatches, st.Failures, st.RRsetHits = rs.Mismatches.Load(), rs.Failures.Load(), rs.RRsetHits.Load()
		rrsets, rrBytes, zones, ns := c.res.CacheSizes()
		st.RRsets, st.RRsetBytes, st.Zones, st.Nameservers = uint64(rrsets), uint64(rrBytes), uint64(zones), uint64(ns)
		if c.cfg.Resolver.Validate {
			keys, keyBytes := c.res.KeyCacheSizes()
			st.Validating, st.Keys, st.KeyBytes = true, uint64(keys), uint64(keyBytes)
			st.Secure, st.Insecure, st.Bogus = rs.Secure.Load(), rs.Insecure.Load(), rs.Bogus.Load()
			st.AggressiveNXDOMAIN, st.AggressiveNODATA = rs.AggressiveNXDOMAIN.Load(), rs.AggressiveNODATA.Load()
			st.NSEC3Limited = rs.NSEC3Limited.Load()
		}
	}
	if c.rpz != nil {
		ps := c.rpz.Stats()
		st.RPZ = true
		st.RPZNXDOMAIN, st.RPZNODATA, st.RPZLocalData = ps.NXDOMAIN.Load(), ps.NODATA.Load(), ps.LocalData.Load()
		st.RPZWalledGarden, st.RPZPassthru, st.RPZDrop = ps.WalledGarden.Load(), ps.Passthru.Load(), ps.Drop.Load()
		st.RPZClientIP, st.RPZQNAME, st.RPZIP = ps.ClientIP.Load(), ps.QNAME.Load(), ps.IP.Load()
		st.RPZNSDNAME, st.RPZNSIP = ps.NSDNAME.Load(), ps.NSIP.Load()
		st.RPZTCPOnly = ps.TCPOnly.Load()
	}
	return st
}

// ResetStats zeroes the counters (reset-stats ltm dns cache); what the
// cache holds stays.
func (c *Cache) ResetStats() {
	c.mu.Lock()
	c.st = CacheStats{}
	c.mu.Unlock()
	if c.res != nil {
		c.res.Stats().Reset()
	}
	if c.rpz != nil {
		c.rpz.Stats().Reset()
	}
}

// Flush drops every answer the cache keeps (delete ltm dns cache
// records), and what its resolver learnt, so that the next query of
// each name goes out again.
func (c *Cache) Flush() int {
	if c.res != nil {
		c.res.Flush()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.m)
	clear(c.m)
	c.order, c.size, c.rrSize = nil, 0, 0
	return n
}

// Record is one answer a cache keeps, as show ltm dns cache records
// lists it.
type Record struct {
	Name        string // the question's name, lower case
	Type, Class string
	DO          bool   // kept for queries with the DNSSEC OK bit
	TTL         uint32 // seconds left
	Bytes       int    // the answer's size on the wire
	Rcode       string
}

// upstream takes one of a transparent cache's max-concurrent-udp (udp)
// or max-concurrent-tcp slots for a query to the pool: ok is false when
// all are taken, and the query is answered SERVFAIL rather than queued
// [M]; n, when not nil, is given the slot back with Add(-1).
func (c *Cache) upstream(udp bool) (n *atomic.Int64, ok bool) {
	n, max := &c.upTCP, c.cfg.MaxTCP
	if udp {
		n, max = &c.upUDP, c.cfg.MaxUDP
	}
	if max <= 0 {
		return nil, true
	}
	if n.Add(1) > int64(max) {
		n.Add(-1)
		c.mu.Lock()
		c.st.Overflows++
		c.mu.Unlock()
		return nil, false
	}
	return n, true
}

// RecurseTimeout bounds one resolution from the root hints, all its
// referrals and name server look-ups together [M].
var RecurseTimeout = 5 * time.Second

// answerOwn is the answer the cache gives r itself, before any forward
// zone or pool: a local zone's (local-zones, answer-default-zones) and,
// when it resolves from the root hints (a resolver with root-hints, or
// any resolver when the virtual has no pool), the resolution's:
// SERVFAIL when none could be had. ok is false when the cache does not
// answer; m is nil when nothing is to be sent (a deny zone). fwd says
// whether a forward zone holds the name, which recursion leaves alone.
func (c *Cache) answerOwn(r *dns.Msg, pooled, fwd bool, w *waitingQuery) (m *dns.Msg, ok bool) {
	if m, ok := c.res.Local(r); ok {
		return withOPT(r, m), true
	}
	if !c.cfg.Recurse || fwd || (pooled && !c.cfg.Hinted) {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), RecurseTimeout)
	defer cancel()
	if w != nil { // delete sys connection cancels the resolution
		if !w.holdResolution(cancel) {
			return nil, true
		}
		defer w.holdResolution(nil)
	}
	m, err := c.res.Resolve(ctx, r)
	if err == recursor.ErrDrop {
		return nil, true
	}
	if err != nil {
		m = reply(r, dns.RcodeServerFailure)
		m.RecursionAvailable = true
	}
	return withOPT(r, m), true
}

// withOPT gives m the OPT record r's client asked for with its own.
func withOPT(r, m *dns.Msg) *dns.Msg {
	if m == nil || m.IsEdns0() != nil {
		return m
	}
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(1232, o.Do())
	}
	return m
}

// nameServers appends to dst the zone cuts the cache's resolver knows
// above r's name and each CNAME target of m, its answer: the name
// servers the answer came from (or would come from), which NSDNAME and
// NSIP triggers match.
func (c *Cache) nameServers(dst []rpz.NameServers, r, m *dns.Msg) []rpz.NameServers {
	if c.res == nil || len(r.Question) != 1 {
		return dst
	}
	var buf [8]recursor.Delegation
	add := func(name string) {
		for _, d := range c.res.Delegations(buf[:0], strings.ToLower(dns.Fqdn(name))) {
			dst = append(dst, rpz.NameServers{Zone: d.Zone, Names: d.Names, Addrs: d.Addrs})
		}
	}
	add(r.Question[0].Name)
	if m != nil {
		for _, rr := range m.Answer {
			if cn, ok := rr.(*dns.CNAME); ok {
				add(cn.Target)
			}
		}
	}
	return dst
}

// Resolver is the cache's resolver (its recursion and local zones), nil
// when it has none: show ltm dns cache reads its counters.
func (c *Cache) Resolver() *recursor.Resolver { return c.res }
