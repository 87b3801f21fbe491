// Package persist is the persistence table: which member a client (a
// source address, a key an iRule computed) was last sent to, so that its
// next connections or messages go there too. It knows nothing of members'
// states; the dataplane decides whether a record's member may still be
// used. Records are keyed by mode and key and scoped to the virtual server
// and pool that made them; lookups can reach across services, virtual
// servers or pools as the persistence profile's match-across settings ask
// (reference §7.1). Every record expires its timeout after its last use,
// and the table holds a bounded number of records.
package persist

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is a persistence method as `show ltm persistence persist-records`
// names it; records of different modes never match each other.
type Mode uint8

// The modes the table keeps records for. Cookie records exist only for the
// cookie hash method; cookie insert, rewrite and passive keep no records.
const (
	SourceAddress Mode = iota + 1
	DestAddress
	Universal
	Cookie
	Hash
	SSLSessionID
	MSRDP
	// SIP records a SIP dialog's Call-ID (sip_info persistence).
	SIP
	// Host records an HTTP request's Host header (host persistence), so
	// that every client asking for one site reaches one member.
	Host
)

var modeNames = [...]string{"", "source-address", "dest-address", "universal", "cookie", "hash", "ssl-session-id", "msrdp", "sip", "host"}

// String is the mode as BIG-IP prints it in persist-records.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// ParseMode reads a mode as tmsh filters and iRules write it
// (source-address or source_addr, universal or uie, ...).
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "source-address", "source_addr", "source-addr", "simple", "sticky":
		return SourceAddress, true
	case "dest-address", "dest_addr", "dest-addr":
		return DestAddress, true
	case "universal", "uie":
		return Universal, true
	case "cookie":
		return Cookie, true
	case "hash", "carp":
		return Hash, true
	case "ssl-session-id", "ssl":
		return SSLSessionID, true
	case "msrdp":
		return MSRDP, true
	case "sip", "sip_info", "sip-info":
		return SIP, true
	case "host":
		return Host, true
	}
	return 0, false
}

// Key identifies a record's subject: an address for the address modes
// (kept as an address, so that building a key allocates nothing), a string
// otherwise.
type Key struct {
	Mode Mode
	Addr netip.Addr
	Str  string
}

// String is the key as persist-records prints it.
func (k Key) String() string {
	if k.Addr.IsValid() {
		return k.Addr.String()
	}
	return k.Str
}

// AddrKey is the key of an address mode, with mask applied (an invalid
// mask or one of the other family keeps the whole address), as
// source-addr's `mask 255.255.255.0` groups a subnet under one record.
func AddrKey(m Mode, a netip.Addr, mask netip.Addr) Key {
	a = a.Unmap()
	if mask.IsValid() && mask.Is4() == a.Is4() {
		a = applyMask(a, mask)
	}
	return Key{Mode: m, Addr: a}
}

// StringKey is the key of a string mode (universal, hash).
func StringKey(m Mode, s string) Key { return Key{Mode: m, Str: s} }

func applyMask(a, mask netip.Addr) netip.Addr {
	if a.Is4() {
		x, y := a.As4(), mask.As4()
		for i := range x {
			x[i] &= y[i]
		}
		return netip.AddrFrom4(x)
	}
	x, y := a.As16(), mask.As16()
	for i := range x {
		x[i] &= y[i]
	}
	return netip.AddrFrom16(x)
}

// Scope is where a record is made and how far a lookup reaches: by default
// a record only serves the virtual server and pool that made it.
type Scope struct {
	// Virtual is the virtual server's full path.
	Virtual string
	// VirtualAddr is the virtual's destination (port 0: any), printed in
	// persist-records and compared by match-across-services.
	VirtualAddr netip.AddrPort
	// Pool is the pool's full path.
	Pool string
	// AcrossServices lets a lookup use records of any virtual server on
	// the same address (other ports), whatever their pool: they name a
	// node.
	AcrossServices bool
	// AcrossVirtuals lets a lookup use records of any virtual server.
	AcrossVirtuals bool
	// AcrossPools lets a lookup use records naming another pool, to be
	// sent to that pool.
	AcrossPools bool
}

// matches reports whether a record made in e's scope serves a lookup in s.
// A record of another virtual server (allowed by match-across-services or
// -virtuals) serves whatever its pool: it persists to a node, which the
// caller finds in its own pool. A record of the same virtual serves only
// its pool, unless match-across-pools.
func (s *Scope) matches(e *entry) bool {
	same := e.virtual == s.Virtual
	switch {
	case same, s.AcrossVirtuals:
	case s.AcrossServices && e.vaddr.Addr() == s.VirtualAddr.Addr():
	default:
		return false
	}
	return !same || s.AcrossPools || e.pool == s.Pool
}

// Record is one persistence record, as lookups, walks and shows see it (a
// copy: changing it changes nothing in the table).
type Record struct {
	Key
	// Virtual, VirtualAddr and Pool are the scope the record was made in.
	Virtual     string
	VirtualAddr netip.AddrPort
	Pool        string
	// Member is the pool member the key persists to.
	Member netip.AddrPort
	// Client is the client address of the connection that last made or
	// refreshed the record.
	Client netip.Addr
	// Timeout is how long the record lives after its last use; 0 is
	// indefinite.
	Timeout time.Duration
	// Expires is when it goes if not used again (zero: never).
	Expires time.Time
	// Used is when it was last made or used: its age in a show (set by
	// Walk, not by Lookup).
	Used time.Time
}

// entry is a stored record.
type entry struct {
	virtual string
	vaddr   netip.AddrPort
	pool    string
	member  netip.AddrPort
	client  netip.Addr
	timeout time.Duration
	expires int64 // unix nanoseconds; 0: never
	used    int64 // unix nanoseconds of the last use
}

func (e *entry) expired(now int64) bool { return e.expires != 0 && now >= e.expires }

func (e *entry) record(k Key) Record {
	r := Record{Key: k, Virtual: e.virtual, VirtualAddr: e.vaddr, Pool: e.pool, Member: e.member,
		Client: e.client, Timeout: e.timeout}
	if e.expires != 0 {
		r.Expires = time.Unix(0, e.expires)
	}
	return r
}

// DefaultMax is how many records a Table keeps when Max is 0: about
// 128 MiB at some 256 bytes a record.
const DefaultMax = 1 << 19

// sweepEvery is how often a shard drops its expired records when records
// are added to it (lookups and walks skip expired records at once).
const sweepEvery = 5 * time.Second

const numShards = 64

// evictSample is how many records a full shard looks at to find one to
// evict (the one that would expire first).
const evictSample = 16

type shard struct {
	mu        sync.Mutex
	m         map[Key][]*entry
	n         int
	nextSweep int64
}

// Table is the persistence table. The zero value is ready to use; all
// methods are safe for concurrent use.
type Table struct {
	// Max bounds the records kept (0: DefaultMax). When a shard is full, a
	// new record replaces the one, among a few, closest to expiring.
	Max int
	// Now is the clock (nil: time.Now); tests inject one to expire
	// records without waiting.
	Now func() time.Time

	seed    maphash.Seed
	once    sync.Once
	shards  [numShards]shard
	count   atomic.Int64
	evicted atomic.Uint64
}

func (t *Table) init() {
	t.once.Do(func() { t.seed = maphash.MakeSeed() })
}

func (t *Table) now() int64 {
	if t.Now != nil {
		return t.Now().UnixNano()
	}
	return time.Now().UnixNano()
}

func (t *Table) shard(k Key) *shard {
	t.init()
	return &t.shards[maphash.Comparable(t.seed, k)%numShards]
}

func (t *Table) shardMax() int {
	m := t.Max
	if m <= 0 {
		m = DefaultMax
	}
	return max(1, (m+numShards-1)/numShards)
}

// Len is the number of records held, expired ones not yet swept included.
func (t *Table) Len() int { return int(t.count.Load()) }

// Evicted counts records dropped before their time because the table was
// full.
func (t *Table) Evicted() uint64 { return t.evicted.Load() }

// Lookup returns the record for k that serves scope s: the most recently
// used one when match-across settings let several match. It does not
// refresh the record; Add does, once the connection is made.
func (t *Table) Lookup(k Key, s Scope) (Record, bool) {
	sh := t.shard(k)
	now := t.now()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var best *entry
	for _, e := range sh.m[k] {
		if e.expired(now) || !s.matches(e) {
			continue
		}
		if best == nil || e.used >= best.used { // ties: the later record
			best = e
		}
	}
	if best == nil {
		return Record{}, false
	}
	return best.record(k), true
}

// Add creates or refreshes the record for k in scope s (its virtual and
// pool) pointing at member: it lives timeout (0: indefinitely) from now.
// client is the connection's client address, for shows.
func (t *Table) Add(k Key, s Scope, member netip.AddrPort, client netip.Addr, timeout time.Duration) {
	sh := t.shard(k)
	now := t.now()
	exp := int64(0)
	if timeout > 0 {
		exp = now + int64(timeout)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil {
		sh.m = map[Key][]*entry{}
	}
	if now >= sh.nextSweep {
		t.sweep(sh, now)
		sh.nextSweep = now + int64(sweepEvery)
	}
	list := sh.m[k]
	for _, e := range list {
		if e.virtual == s.Virtual && e.pool == s.Pool {
			e.vaddr, e.member, e.client, e.timeout, e.expires, e.used = s.VirtualAddr, member, client, timeout, exp, now
			return
		}
	}
	if sh.n >= t.shardMax() {
		t.sweep(sh, now)
		if sh.n >= t.shardMax() {
			t.evictOne(sh)
		}
		list = sh.m[k]
	}
	e := &entry{virtual: s.Virtual, vaddr: s.VirtualAddr, pool: s.Pool, member: member, client: client,
		timeout: timeout, expires: exp, used: now}
	sh.m[k] = append(list, e)
	sh.n++
	t.count.Add(1)
}

// Touch refreshes the record for k made in s's virtual and pool, if it
// still exists; the dataplane calls it when a persisted connection ends,
// so that a record outlives the connections that use it by its timeout.
func (t *Table) Touch(k Key, s Scope) {
	sh := t.shard(k)
	now := t.now()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, e := range sh.m[k] {
		if e.virtual == s.Virtual && e.pool == s.Pool && !e.expired(now) {
			if e.timeout > 0 {
				e.expires = now + int64(e.timeout)
			}
			e.used = now
		}
	}
}

// Delete removes the records for k that serve scope s (as Lookup would
// find them) and returns how many went.
func (t *Table) Delete(k Key, s Scope) int {
	sh := t.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return t.removeWhere(sh, k, func(e *entry) bool { return s.matches(e) })
}

// removeWhere drops k's entries for which drop is true; sh must be locked.
func (t *Table) removeWhere(sh *shard, k Key, drop func(*entry) bool) int {
	list := sh.m[k]
	out := list[:0]
	n := 0
	for _, e := range list {
		if drop(e) {
			n++
			continue
		}
		out = append(out, e)
	}
	clear(list[len(out):])
	if len(out) == 0 {
		delete(sh.m, k)
	} else {
		sh.m[k] = out
	}
	sh.n -= n
	t.count.Add(int64(-n))
	return n
}

// sweep drops a shard's expired records; sh must be locked.
func (t *Table) sweep(sh *shard, now int64) {
	for k := range sh.m {
		t.removeWhere(sh, k, func(e *entry) bool { return e.expired(now) })
	}
}

// evictOne drops, among a few records of a full shard (map order is
// random), the one closest to expiring; sh must be locked.
func (t *Table) evictOne(sh *shard) {
	var victim *entry
	var vkey Key
	seen := 0
	for k, list := range sh.m {
		for _, e := range list {
			if victim == nil || expiresBefore(e, victim) {
				victim, vkey = e, k
			}
		}
		if seen++; seen >= evictSample {
			break
		}
	}
	if victim != nil {
		t.removeWhere(sh, vkey, func(e *entry) bool { return e == victim })
		t.evicted.Add(1)
	}
}

// expiresBefore orders records by expiry; records that never expire come
// last, least recently used first.
func expiresBefore(a, b *entry) bool {
	switch {
	case a.expires == 0 && b.expires == 0:
		return a.used < b.used
	case a.expires == 0:
		return false
	case b.expires == 0:
		return true
	}
	return a.expires < b.expires
}

// Filter selects records for shows and deletes, like the options of
// `show ltm persistence persist-records`; zero fields match anything.
type Filter struct {
	Mode Mode
	// Key matches the key as printed (an address or the string).
	Key string
	// ClientAddr matches the record's client, or its key for the address
	// modes.
	ClientAddr netip.Addr
	NodeAddr   netip.Addr
	NodePort   uint16
	Pool       string
	Virtual    string
}

// Match reports whether r passes the filter.
func (f *Filter) Match(r *Record) bool {
	switch {
	case f.Mode != 0 && r.Mode != f.Mode,
		f.Key != "" && r.Key.String() != f.Key,
		f.NodeAddr.IsValid() && r.Member.Addr() != f.NodeAddr.Unmap(),
		f.NodePort != 0 && r.Member.Port() != f.NodePort,
		f.Pool != "" && r.Pool != f.Pool,
		f.Virtual != "" && r.Virtual != f.Virtual:
		return false
	}
	if f.ClientAddr.IsValid() {
		c := f.ClientAddr.Unmap()
		if r.Client != c && r.Addr != c {
			return false
		}
	}
	return true
}

// Walk calls fn for every live record that passes f, shard by shard,
// without holding a shard's lock while fn runs (so a slow reader does not
// stall connections); fn returns false to stop. Records added or removed
// during the walk may or may not be seen. It returns the number of records
// fn was given.
func (t *Table) Walk(f Filter, fn func(*Record) bool) int {
	t.init()
	now := t.now()
	n := 0
	var batch []Record
	for i := range t.shards {
		sh := &t.shards[i]
		batch = batch[:0]
		sh.mu.Lock()
		for k, list := range sh.m {
			for _, e := range list {
				if e.expired(now) {
					continue
				}
				r := e.record(k)
				if f.Match(&r) {
					// Only a walk (a show) reports the age: a lookup,
					// once per connection, need not make it.
					r.Used = time.Unix(0, e.used)
					batch = append(batch, r)
				}
			}
		}
		sh.mu.Unlock()
		for j := range batch {
			n++
			if !fn(&batch[j]) {
				return n
			}
		}
	}
	return n
}

// DeleteMatching removes every record that passes f (`delete ltm
// persistence persist-records ...`) and returns how many went.
func (t *Table) DeleteMatching(f Filter) int {
	t.init()
	now := t.now()
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for k := range sh.m {
			t.removeWhere(sh, k, func(e *entry) bool {
				if e.expired(now) {
					return true
				}
				r := e.record(k)
				if f.Match(&r) {
					n++
					return true
				}
				return false
			})
		}
		sh.mu.Unlock()
	}
	return n
}

// Sweep drops every expired record now, for callers that want the memory
// back without waiting for the next additions.
func (t *Table) Sweep() {
	t.init()
	now := t.now()
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		t.sweep(sh, now)
		sh.mu.Unlock()
	}
}
