// Package httpcache is BIG-IP's web-acceleration profile's RAM cache for
// the HTTP engine: which requests it may answer, which answers it keeps
// and for how long, and the memory that keeps them. It knows HTTP only as
// the bytes of a request's or response's head; the engine
// (dataplane/mblb) finds the requests, de-chunks the bodies and sends
// what the cache answers.
//
// Where BIG-IP's documentation is silent the cache follows RFC 9111 (HTTP
// caching); those choices are marked [M] in the comments.
package httpcache

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// Config is the profile as the daemon reads it. The daemon fills in
// BIG-IP's defaults; a zero here means zero (a cache-size or
// cache-max-entries of 0 keeps nothing, a cache-max-age of 0 keeps
// nothing fresh).
type Config struct {
	// Profile names the profile (for messages).
	Profile string
	// Size is cache-size in bytes (the property is in MB): the most the
	// stored answers, heads and bodies, may take together.
	Size int64
	// MaxEntries is cache-max-entries: the most answers kept.
	MaxEntries int
	// MaxAge is cache-max-age: the longest an answer stays fresh,
	// whatever its member allows.
	MaxAge time.Duration
	// MinObject and MaxObject are cache-object-min-size and
	// cache-object-max-size: the bounds, in bytes, of a kept body
	// (pinned URIs are exempt).
	MinObject, MaxObject int
	// URIInclude, URIExclude and URIPinned are cache-uri-include,
	// cache-uri-exclude and cache-uri-pinned: regular expressions over
	// the request target (path and query, as the client sent it).
	//
	// They are regular expressions, not globs: saved BIG-IP configurations
	// include everything with "cache-uri-include { .* }", and the test
	// declarations of F5's AS3 escape "." and "?" with a backslash. A
	// pattern matches anywhere in the target unless anchored with ^ or $, and
	// case-insensitively, as the http-compression profile's uri-include
	// does [M: F5 does not say; (?-i) in a pattern turns it off]. An
	// empty include list includes every URI. Exclude wins over pinned,
	// pinned over include: BIG-IP's documented order of preference.
	URIInclude, URIExclude, URIPinned []string
	// URIOverride is cache-uri-include-override: regular expressions,
	// read as URIInclude's are, for the URIs whose answers are kept even
	// when their member says not to (Override). Exclude wins over it.
	URIOverride []string
	// AgingRate is cache-aging-rate, 0 to 10: how fast an entry's
	// CACHE::priority wears off while nobody asks for it, so that an
	// answer given a high priority once does not hold its room for good
	// (agingStep).
	AgingRate int
	// InsertAge is cache-insert-age-header: a hit carries an Age field.
	InsertAge bool
	// HonorClient is cache-client-cache-control-mode none or max-age: a
	// client's "Cache-Control: no-cache|no-store" or "Pragma: no-cache"
	// sends its request to a member. BIG-IP's default, all, ignores the
	// clients' Cache-Control (false) [M: a client's max-age is never
	// read, so none acts as max-age].
	HonorClient bool
}

// Cache is one profile's cache, shared by every connection of the
// virtual servers that use the profile: its methods are safe for
// concurrent use. One mutex guards the index and the recency order; a
// hit's bytes are copied out after it is released, since a stored answer
// is never changed, only dropped.
type Cache struct {
	cfg                Config
	inc, exc, pin, ovr []*regexp.Regexp
	// agingStep is how long an unused entry takes to lose one step of
	// priority (0: priorities never wear off).
	agingStep time.Duration

	mu sync.Mutex
	// hosts indexes the entries by Host (lower-cased), then by target:
	// two levels, so that a lookup builds no key.
	hosts map[string]map[string]*entry
	// lru lists the entries that may be evicted, most recently used
	// first; pins lists the pinned ones, which are never evicted. Both
	// are sentinels of circular lists.
	lru, pins          entry
	entries, pinned    int
	bytes, pinnedBytes int64
	hits, misses       uint64
	inserts, evictions uint64
}

// entry is one stored answer. Everything but prev and next is set before
// the entry is indexed and never changed after, so a hit may read it
// without the lock.
type entry struct {
	host, uri string
	// data is the head, status line and fields each ending in CRLF but
	// without the blank line, then the body from headLen on.
	data    []byte
	headLen int
	stored  time.Time
	expires time.Time // stale from this instant on
	// used is when the entry was stored or last answered; under the
	// cache's lock. Priorities age from it (cache-aging-rate).
	used   time.Time
	age    int64 // the member's Age, in seconds
	pinned bool
	// priority is CACHE::priority's (0: none): eviction passes over
	// entries of a higher one (room).
	priority int8
	// hits counts the lookups the entry answered (CACHE::hits); under
	// the cache's lock.
	hits uint64

	prev, next *entry
}

// size is what an entry counts against cache-size: its head and body
// [M: BIG-IP does not say what it counts; the index's own memory is left
// out].
func (e *entry) size() int64 { return int64(len(e.data)) }

// New compiles a profile. A negative size, bounds the wrong way round or
// a pattern that is no regular expression is an error naming the
// property, so the profile is refused when it is made rather than first
// when a request passes.
func New(c Config) (*Cache, error) {
	switch {
	case c.Size < 0:
		return nil, fmt.Errorf("cache-size %s is negative", megabytes(c.Size))
	case c.MaxEntries < 0:
		return nil, fmt.Errorf("cache-max-entries %d is negative", c.MaxEntries)
	case c.MaxAge < 0:
		return nil, fmt.Errorf("cache-max-age %d is negative", int64(c.MaxAge/time.Second))
	case c.MinObject < 0:
		return nil, fmt.Errorf("cache-object-min-size %d is negative", c.MinObject)
	case c.MaxObject < 0:
		return nil, fmt.Errorf("cache-object-max-size %d is negative", c.MaxObject)
	case c.MinObject > c.MaxObject:
		return nil, fmt.Errorf("cache-object-min-size %d is above cache-object-max-size %d", c.MinObject, c.MaxObject)
	case c.AgingRate < 0 || c.AgingRate > 10:
		return nil, fmt.Errorf("cache-aging-rate %d is out of range: 0 to 10", c.AgingRate)
	}
	ca := &Cache{cfg: c, hosts: map[string]map[string]*entry{}, agingStep: agingStep(c.AgingRate)}
	ca.lru.prev, ca.lru.next = &ca.lru, &ca.lru
	ca.pins.prev, ca.pins.next = &ca.pins, &ca.pins
	for _, l := range []struct {
		prop string
		pats []string
		out  *[]*regexp.Regexp
	}{
		{"cache-uri-include", c.URIInclude, &ca.inc},
		{"cache-uri-exclude", c.URIExclude, &ca.exc},
		{"cache-uri-pinned", c.URIPinned, &ca.pin},
		{"cache-uri-include-override", c.URIOverride, &ca.ovr},
	} {
		for _, pat := range l.pats {
			// Compiled first as written, so that the error quotes the
			// user's pattern, not the flag added below.
			if _, err := regexp.Compile(pat); err != nil {
				return nil, fmt.Errorf("%s %q is not a regular expression: %s", l.prop, pat, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			*l.out = append(*l.out, regexp.MustCompile("(?i)"+pat))
		}
	}
	return ca, nil
}

// megabytes writes a cache-size as the user gave it, in MB, when it is a
// whole number of them.
func megabytes(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10)
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// agingStep is how long an unused entry takes to lose one step of
// CACHE::priority at cache-aging-rate rate: 2^(10-rate) tenths of a
// second, so that each step down the scale halves the pace, from 0.1 s
// at 10 to 51.2 s at 1; 0 never ages [M: F5 documents only "0 (slowest)
// to 10 (fastest)"; BIG-IP's default, 9, wears a priority of 10 off in
// two seconds of disuse].
func agingStep(rate int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(1<<(10-rate)) * 100 * time.Millisecond
}

// effective is e's priority at now, worn down by one step for each
// agingStep since it was last used; the caller holds the lock.
func (c *Cache) effective(e *entry, now time.Time) int8 {
	if e.priority <= 0 || c.agingStep == 0 {
		return e.priority
	}
	steps := now.Sub(e.used) / c.agingStep
	if steps >= time.Duration(e.priority) {
		return 0
	}
	return e.priority - int8(steps)
}

// class reads the URI lists for a request target: whether the cache may
// hold its answer at all, whether the answer is pinned, and whether it
// is kept even when its member says not to (override). Exclude wins over
// everything, pinned over include-override, which includes [M: F5 gives
// no order for include-override; it is an include that also overrides].
func (c *Cache) class(uri []byte) (listed, pinned, override bool) {
	for _, re := range c.exc {
		if re.Match(uri) {
			return false, false, false
		}
	}
	for _, re := range c.ovr {
		if re.Match(uri) {
			override = true
			break
		}
	}
	for _, re := range c.pin {
		if re.Match(uri) {
			return true, true, override
		}
	}
	if len(c.inc) == 0 || override {
		return true, false, override
	}
	for _, re := range c.inc {
		if re.Match(uri) {
			return true, false, false
		}
	}
	return false, false, false
}

// Cacheable reports whether a request may be answered from the cache or
// its answer stored: GET or HEAD, no Authorization field, the URI passing
// include/exclude (pinned counts as included), and no
// "Cache-Control: no-cache"/"no-store" or "Pragma: no-cache" from the
// client: a client asking for a fresh copy gets one from the member. head
// is the request's complete header block (request line first, blank line
// included).
//
// BIG-IP caches only GETs by default and lets its include and pin lists
// add other methods; here only GET and HEAD are ever cacheable [M: RFC
// 9111 2 caches GET answers, and a HEAD is answered from them]. A
// request's Cache-Control max-age and the like are not read, as with
// BIG-IP's cache-client-cache-control-mode max-age [M]. A conditional
// request is answered with the whole stored answer, which RFC 9110 13.2.1
// allows a cache [M].
func (c *Cache) Cacheable(head []byte) bool {
	line, rest := nextLine(head)
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return false
	}
	method, target := line[:sp], line[sp+1:]
	if string(method) != "GET" && string(method) != "HEAD" {
		return false
	}
	if sp := bytes.IndexByte(target, ' '); sp >= 0 {
		target = target[:sp]
	}
	for {
		line, rest = nextLine(rest)
		if len(line) == 0 {
			break
		}
		name, value, ok := field(line)
		if !ok {
			return false
		}
		switch {
		case httpx.EqualFold(name, "authorization"):
			return false
		case !c.cfg.HonorClient:
		case httpx.EqualFold(name, "cache-control"):
			if d := directives(value); d.noCache || d.noStore {
				return false
			}
		case httpx.EqualFold(name, "pragma"):
			if hasToken(value, "no-cache") {
				return false
			}
		}
	}
	listed, _, _ := c.class(target)
	return listed
}

// Lookup appends to dst the stored answer for host and uri (the Host
// field's value and the request target), with an Age field when
// InsertAge, and without its body when head (a HEAD request); ok false
// when there is none or it is stale (a stale entry is dropped). It counts
// a hit or a miss. A hit allocates nothing when dst has room, unless host
// is both over 256 bytes and not in lower case.
//
// Age is the whole seconds since the answer was stored, plus the Age the
// member sent (RFC 9111 4.2.3), measured with the now Store and Lookup
// are given.
func (c *Cache) Lookup(dst, host, uri []byte, head bool, now time.Time) ([]byte, bool) {
	dst, _, ok := c.LookupHit(dst, host, uri, head, now)
	return dst, ok
}

// Hit is what a lookup tells of the entry that answered, for the rules'
// CACHE_REQUEST and CACHE_RESPONSE (CACHE::age, CACHE::hits).
type Hit struct {
	// Age is the answer's age in whole seconds, as its Age field gives
	// it (whether or not InsertAge adds that field).
	Age int64
	// Hits counts the lookups the entry answered, this one included.
	Hits uint64
	// HeadLen is the length of the answer's head, blank line included,
	// at the start of what the lookup appended.
	HeadLen int
}

// LookupHit is Lookup that also tells of the entry that answered.
func (c *Cache) LookupHit(dst, host, uri []byte, head bool, now time.Time) ([]byte, Hit, bool) {
	var kb [256]byte
	hk := host
	if hasUpper(host) {
		hk = appendLower(kb[:0], host)
	}
	c.mu.Lock()
	e := c.hosts[string(hk)][string(uri)]
	switch {
	case e == nil:
		c.misses++
		c.mu.Unlock()
		return dst, Hit{}, false
	case !now.Before(e.expires):
		c.remove(e)
		c.misses++
		c.mu.Unlock()
		return dst, Hit{}, false
	}
	c.hits++
	e.hits++
	e.used = now
	hit := Hit{Hits: e.hits, Age: int64(max(now.Sub(e.stored), 0)/time.Second) + e.age}
	if !e.pinned {
		unlink(e)
		pushFront(&c.lru, e)
	}
	c.mu.Unlock()

	start := len(dst)
	dst = append(dst, e.data[:e.headLen]...)
	if c.cfg.InsertAge {
		dst = append(dst, "Age: "...)
		dst = strconv.AppendInt(dst, hit.Age, 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	hit.HeadLen = len(dst) - start
	if !head {
		dst = append(dst, e.data[e.headLen:]...)
	}
	return dst, hit, true
}

// Store keeps the answer to a cacheable request when the answer is
// cacheable, and reports whether it did. respHead is the member's
// complete response header block (status line first, blank line
// included); body is the whole body, already de-chunked. Store copies
// what it keeps: the caller may reuse its buffers. It is not for the
// answer to a HEAD request, which has no body to keep; as a guard, an
// answer whose Content-Length is not the body's length is not stored.
//
// An answer is kept when:
//   - its status is 200, 203, 300, 301 or 410: BIG-IP's documented list
//     without 206, since a part is no answer to a whole GET [M];
//   - it has no Cache-Control no-store, private or no-cache (nor, with no
//     Cache-Control at all, "Pragma: no-cache" [M]), no Set-Cookie, and
//     no Vary other than Accept-Encoding; an answer that varies on
//     Accept-Encoding is kept only when it is not itself encoded, since
//     the cache keeps one answer per URI and an identity body suits
//     every client [M];
//   - its body is within cache-object-min-size and
//     cache-object-max-size, unless its URI is pinned;
//   - it is fresh for a while: its freshness lifetime is s-maxage, else
//     max-age, else Expires minus Date (RFC 9111 4.2.1), else
//     cache-max-age, never more than cache-max-age, less the Age the
//     member sent. A lifetime of 0, an invalid max-age or Expires
//     (RFC 9111 4.2.1, 5.3) or an Age past it is not stored.
//
// An answer to a URI in cache-uri-include-override is kept despite its
// Cache-Control no-store, private or no-cache (or Pragma: no-cache), and
// when its own freshness lifetime is none (max-age=0, an Expires in the
// past) it is fresh for cache-max-age; the status, Set-Cookie, Vary and
// size rules still hold [M: BIG-IP's text says only "cache even if not
// cacheable by RFC"; a Set-Cookie answer shared would hand one client's
// cookie to all].
//
// Pinned answers are never evicted, but they do go stale, as RFC 9111
// 4.2.4 asks [M: third-party accounts of BIG-IP say pinned entries
// ignore expiry; F5's own text was not found].
//
// The stored head keeps the member's fields but for the hop-by-hop ones
// (Connection, Keep-Alive, Transfer-Encoding, Proxy-Connection, TE,
// Trailer, Upgrade and those Connection names), Content-Length, replaced
// by the body's length, and Age when InsertAge (a hit gets its own).
//
// Store first drops what the cache held for host and uri: the member's
// newer answer replaces it, or, when that is not kept, shows it is out of
// date [M]. It then evicts the least recently used entries to stay within
// cache-size and cache-max-entries; an answer that does not fit beside
// the pinned ones is not stored.
func (c *Cache) Store(host, uri, respHead, body []byte, now time.Time) bool {
	return c.StorePriority(host, uri, respHead, body, 0, now)
}

// StorePriority is Store for an answer a rule gave a priority
// (CACHE::priority, 1 to 10; 0 for none): when the cache makes room, an
// entry of a higher priority is evicted after those of a lower one among
// the least recently used (room).
func (c *Cache) StorePriority(host, uri, respHead, body []byte, priority int8, now time.Time) bool {
	listed, pinned, override := c.class(uri)
	hostKey, uriKey := strings.ToLower(string(host)), string(uri)
	var e *entry
	if listed {
		e = c.build(respHead, body, pinned, override, now)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.hosts[hostKey][uriKey]; old != nil {
		c.remove(old)
	}
	if e == nil || !c.room(e.size(), now) {
		return false
	}
	e.host, e.uri, e.priority, e.used = hostKey, uriKey, priority, now
	m := c.hosts[hostKey]
	if m == nil {
		m = map[string]*entry{}
		c.hosts[hostKey] = m
	}
	m[uriKey] = e
	c.entries++
	c.bytes += e.size()
	if e.pinned {
		c.pinned++
		c.pinnedBytes += e.size()
		pushFront(&c.pins, e)
	} else {
		pushFront(&c.lru, e)
	}
	c.inserts++
	return true
}

// room makes room for an entry of size bytes, evicting the least
// recently used unpinned entries; false, and nothing evicted, when the
// pinned entries leave too little. Stale pinned entries are dropped then,
// so that pins nobody asks for again do not hold the cache for good.
func (c *Cache) room(size int64, now time.Time) bool {
	if size > c.cfg.Size || c.cfg.MaxEntries < 1 {
		return false
	}
	if c.pinned >= c.cfg.MaxEntries || c.pinnedBytes+size > c.cfg.Size {
		for e := c.pins.next; e != &c.pins; {
			next := e.next
			if !now.Before(e.expires) {
				c.remove(e)
			}
			e = next
		}
		if c.pinned >= c.cfg.MaxEntries || c.pinnedBytes+size > c.cfg.Size {
			return false
		}
	}
	for c.entries >= c.cfg.MaxEntries || c.bytes+size > c.cfg.Size {
		c.remove(c.victim(now))
		c.evictions++
	}
	return true
}

// victimWindow is how many of the least recently used entries eviction
// weighs by priority: a bounded look, so that making room stays cheap
// however full the cache is [M: BIG-IP's scoring of entries is not
// documented beyond "more likely to be served from the cache"].
const victimWindow = 16

// victim is the entry to evict: the least recently used of the lowest
// priority, as cache-aging-rate has worn it at now, among the
// victimWindow least recently used. The caller holds the lock and knows
// an unpinned entry exists.
func (c *Cache) victim(now time.Time) *entry {
	v := c.lru.prev
	vp := c.effective(v, now)
	for e, n := v.prev, 1; e != &c.lru && n < victimWindow && vp > 0; e, n = e.prev, n+1 {
		if p := c.effective(e, now); p < vp {
			v, vp = e, p
		}
	}
	return v
}

// remove drops an indexed entry. The caller holds the lock.
func (c *Cache) remove(e *entry) {
	m := c.hosts[e.host]
	delete(m, e.uri)
	if len(m) == 0 {
		delete(c.hosts, e.host)
	}
	unlink(e)
	c.entries--
	c.bytes -= e.size()
	if e.pinned {
		c.pinned--
		c.pinnedBytes -= e.size()
	}
}

func unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func pushFront(list, e *entry) {
	e.prev, e.next = list, list.next
	list.next.prev = e
	list.next = e
}

// Stats are the cache's figures for show ltm profile web-acceleration:
// the lookups answered and not (a stale entry found is a miss), the
// answers stored, those evicted to make room (stale entries dropped are
// not evictions), and what the cache holds now.
type Stats struct {
	Hits, Misses, Inserts, Evictions, Entries uint64
	Bytes                                     int64
}

// Stats returns the cache's figures.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Hits: c.hits, Misses: c.misses, Inserts: c.inserts, Evictions: c.evictions,
		Entries: uint64(c.entries), Bytes: c.bytes,
	}
}

// ResetStats zeroes Hits, Misses, Inserts and Evictions (reset-stats);
// Entries and Bytes describe what the cache holds, and stay.
func (c *Cache) ResetStats() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits, c.misses, c.inserts, c.evictions = 0, 0, 0, 0
}

// Purge drops every entry, pinned ones too; the counters stay.
func (c *Cache) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hosts = map[string]map[string]*entry{}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	c.pins.prev, c.pins.next = &c.pins, &c.pins
	c.entries, c.pinned, c.bytes, c.pinnedBytes = 0, 0, 0, 0
}

// Expire drops the answer stored for host and uri, if any (CACHE::expire:
// the next request for it goes to a member, whose answer is stored
// anew).
func (c *Cache) Expire(host, uri []byte) {
	var kb [256]byte
	hk := host
	if hasUpper(host) {
		hk = appendLower(kb[:0], host)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.hosts[string(hk)][string(uri)]; e != nil {
		c.remove(e)
	}
}
