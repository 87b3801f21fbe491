package dnsvs

import (
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/config"
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

	mu    sync.Mutex
	m     map[cacheKey]*entry
	order []cacheKey // insertion order, for eviction
	size  int
}

type cacheKey struct {
	name         string // lower case
	qtype, class uint16
	do           bool
}

type entry struct {
	wire    []byte
	stored  time.Time
	expires time.Time
}

func newCache(c *config.DNSCache) *Cache {
	max := c.MsgCacheSize
	if max <= 0 {
		max = DefaultMsgCacheSize
	}
	return &Cache{cfg: *c, max: max, now: time.Now, m: map[cacheKey]*entry{}}
}

// same reports whether c keeps what a cache configured as d would.
func (c *Cache) same(d *config.DNSCache) bool {
	if c.cfg.Name != d.Name || c.cfg.Kind != d.Kind || c.cfg.MsgCacheSize != d.MsgCacheSize || len(c.cfg.Forward) != len(d.Forward) {
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

func keyOf(r *dns.Msg) cacheKey {
	q := r.Question[0]
	k := cacheKey{name: strings.ToLower(q.Name), qtype: q.Qtype, class: q.Qclass}
	if o := r.IsEdns0(); o != nil {
		k.do = o.Do()
	}
	return k
}

// Get is the kept answer to r, its TTLs lowered by the time it was kept
// and its ID and question r's; nil when none is kept or it expired.
func (c *Cache) Get(r *dns.Msg) *dns.Msg {
	k := keyOf(r)
	now := c.now()
	c.mu.Lock()
	e := c.m[k]
	if e != nil && !now.Before(e.expires) {
		delete(c.m, k)
		c.size -= len(e.wire)
		e = nil
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
	return m
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
	k := keyOf(r)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[k]; old != nil {
		c.size -= len(old.wire)
	} else {
		c.order = append(c.order, k)
	}
	c.m[k] = &entry{wire: wire, stored: now, expires: now.Add(time.Duration(ttl) * time.Second)}
	c.size += len(wire)
	for c.size > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		if old == k { // the newest answer stays
			c.order = append(c.order, k)
			continue
		}
		if e := c.m[old]; e != nil {
			delete(c.m, old)
			c.size -= len(e.wire)
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
