package dnsvs

import (
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor"
)

// walkBatch is how many answers a walk copies under the cache's lock at
// a time: the lock is never held while the caller writes out [M].
const walkBatch = 64

// Messages calls fn with each live answer whose question passes f (key
// NAME, type T), by name, type and DO bit, until fn returns false: show
// ltm dns cache records msg. The walk copies the keys first and looks
// each answer up again as it goes, so that a show of a large cache
// neither holds the lock while it prints nor builds its lines first.
func (c *Cache) Messages(f recursor.Filter, fn func(Record) bool) {
	keys := c.keys(f)
	var batch []Record
	for len(keys) > 0 {
		n := min(len(keys), walkBatch)
		batch = batch[:0]
		now := c.now()
		c.mu.Lock()
		for _, k := range keys[:n] {
			if e := c.m[k]; e != nil && now.Before(e.expires) {
				batch = append(batch, recordOf(k, e, now))
			}
		}
		c.mu.Unlock()
		keys = keys[n:]
		for _, r := range batch {
			if !fn(r) {
				return
			}
		}
	}
}

// keys are the keys of the answers whose question passes f, sorted.
func (c *Cache) keys(f recursor.Filter) []cacheKey {
	var keys []cacheKey
	c.mu.Lock()
	for k := range c.m {
		if (f.Name == "" || f.Name == k.name) && (f.Type == 0 || f.Type == k.qtype) {
			keys = append(keys, k)
		}
	}
	c.mu.Unlock()
	slices.SortFunc(keys, func(a, b cacheKey) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := strings.Compare(dns.TypeToString[a.qtype], dns.TypeToString[b.qtype]); c != 0 {
			return c
		}
		return boolInt(a.do) - boolInt(b.do)
	})
	return keys
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func recordOf(k cacheKey, e *entry, now time.Time) Record {
	rcode := "NOERROR"
	if len(e.wire) >= 4 {
		rcode = dns.RcodeToString[int(e.wire[3]&0x0f)]
	}
	return Record{Name: k.name, Type: dns.TypeToString[k.qtype], Class: dns.ClassToString[k.class], DO: k.do,
		TTL: uint32(e.expires.Sub(now) / time.Second), Bytes: len(e.wire), Rcode: rcode}
}

// DeleteMessages drops the answers whose question passes f (delete ltm
// dns cache records msg) and returns how many went.
func (c *Cache) DeleteMessages(f recursor.Filter) int {
	return c.deleteIf(func(k cacheKey, _ *entry) bool {
		return (f.Name == "" || f.Name == k.name) && (f.Type == 0 || f.Type == k.qtype)
	})
}

// DeleteRRsets drops the record sets passing f (delete ltm dns cache
// records rrset): the resolver's, and every kept answer that asks for
// them or carries them in its answer section, so that the next question
// for them goes to the name servers, or the pool, again. It returns how
// many record sets and answers went.
func (c *Cache) DeleteRRsets(f recursor.Filter) int {
	n := 0
	if c.res != nil {
		n = c.res.DeleteRRsets(f)
	}
	return n + c.deleteIf(func(k cacheKey, e *entry) bool {
		if (f.Name == "" || f.Name == k.name) && (f.Type == 0 || f.Type == k.qtype) {
			return true
		}
		m := new(dns.Msg)
		if m.Unpack(e.wire) != nil {
			return true // cannot tell: dropped, asked again
		}
		for _, rr := range m.Answer {
			h := rr.Header()
			if (f.Name == "" || strings.EqualFold(f.Name, h.Name)) && (f.Type == 0 || f.Type == h.Rrtype) {
				return true
			}
		}
		return false
	})
}

// deleteIf drops the answers drop picks; it holds the lock throughout,
// as a delete is rare and must not race a Put of what it drops.
func (c *Cache) deleteIf(drop func(cacheKey, *entry) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, e := range c.m {
		if drop(k, e) {
			delete(c.m, k)
			c.size -= len(e.wire)
			c.rrSize -= e.rrBytes
			n++
		}
	}
	return n
}

// RRsets calls fn with each live record set passing f until fn returns
// false: show ltm dns cache records rrset. A resolver's are its rrset
// cache's; a transparent cache keeps whole answers only, and gives the
// record sets of their answer and authority sections, one per answer
// that carries it [M], their TTLs lowered by the answer's age.
func (c *Cache) RRsets(f recursor.Filter, fn func(recursor.RRset) bool) {
	if c.res != nil && c.cfg.Recurse {
		c.res.RRsets(f, fn)
		return
	}
	keys := c.keys(recursor.Filter{})
	for len(keys) > 0 {
		n := min(len(keys), walkBatch)
		var wires [][]byte
		var ages []uint32
		now := c.now()
		c.mu.Lock()
		for _, k := range keys[:n] {
			if e := c.m[k]; e != nil && now.Before(e.expires) {
				wires = append(wires, e.wire) // never changed once kept
				ages = append(ages, uint32(now.Sub(e.stored)/time.Second))
			}
		}
		c.mu.Unlock()
		keys = keys[n:]
		for i, wire := range wires {
			m := new(dns.Msg)
			if m.Unpack(wire) != nil {
				continue
			}
			for _, set := range sets(append(m.Answer, m.Ns...), f) {
				ttl := set[0].Header().Ttl
				for _, rr := range set {
					ttl = min(ttl, rr.Header().Ttl)
				}
				h := set[0].Header()
				if !fn(recursor.RRset{Name: strings.ToLower(h.Name), Type: h.Rrtype, TTL: ttl - min(ages[i], ttl), RRs: set}) {
					return
				}
			}
		}
	}
}

// sets splits rrs into record sets (one owner and type, in a row) passing
// f; an RRSIG goes with the set it covers.
func sets(rrs []dns.RR, f recursor.Filter) [][]dns.RR {
	var out [][]dns.RR
	for i := 0; i < len(rrs); {
		h := rrs[i].Header()
		t := typeOf(rrs[i])
		j := i + 1
		for j < len(rrs) && typeOf(rrs[j]) == t && strings.EqualFold(rrs[j].Header().Name, h.Name) {
			j++
		}
		if (f.Name == "" || strings.EqualFold(f.Name, h.Name)) && (f.Type == 0 || f.Type == t) {
			out = append(out, rrs[i:j])
		}
		i = j
	}
	return out
}

func typeOf(rr dns.RR) uint16 {
	if sig, ok := rr.(*dns.RRSIG); ok {
		return sig.TypeCovered
	}
	return rr.Header().Rrtype
}
