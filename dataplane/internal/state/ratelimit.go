package state

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Connection rate limits (rate-limit on virtual servers, pool members and
// nodes) count new connections in fixed one-second windows of a monotonic
// clock: an object takes up to its limit in each whole second and is
// refused (a virtual) or passed over (a member) for the rest of it. A
// burst that straddles the turn of a second may therefore get up to twice
// the limit within less than a second, never more; no token bucket
// carries unused budget over.

// rateClock, when set, replaces the monotonic clock: tests decide when a
// second ends instead of sleeping.
var rateClock atomic.Pointer[func() uint32]

var rateEpoch = time.Now()

// RateNow is the current second of the rate limits' clock.
func RateNow() uint32 {
	if f := rateClock.Load(); f != nil {
		return (*f)()
	}
	return uint32(time.Since(rateEpoch) / time.Second)
}

// SetRateClock makes f the rate limits' clock (nil: the monotonic one
// again), so that tests can keep a burst within one second, or end it,
// without depending on how fast they run.
func SetRateClock(f func() uint32) {
	if f == nil {
		rateClock.Store(nil)
		return
	}
	rateClock.Store(&f)
}

// Rate is one budget of new connections: the second it counts and how
// many it took in it, in one word so that a connection is counted with a
// single compare-and-swap.
type Rate struct{ w atomic.Uint64 }

func unpack(v uint64) (sec, n uint32) { return uint32(v >> 32), uint32(v) }

// Take counts a new connection at second now unless limit connections
// were already counted in it.
func (r *Rate) Take(now, limit uint32) bool {
	for {
		v := r.w.Load()
		sec, n := unpack(v)
		if sec != now {
			n = 0
		}
		if n >= limit {
			return false
		}
		if r.w.CompareAndSwap(v, uint64(now)<<32|uint64(n+1)) {
			return true
		}
	}
}

// Give takes back a connection Take counted at now that did not happen
// (another limit refused it); a second that is over is left alone.
func (r *Rate) Give(now uint32) {
	for {
		v := r.w.Load()
		sec, n := unpack(v)
		if sec != now || n == 0 || r.w.CompareAndSwap(v, v-1) {
			return
		}
	}
}

// Spent reports whether limit connections were counted in second now.
func (r *Rate) Spent(now, limit uint32) bool {
	sec, n := unpack(r.w.Load())
	return sec == now && n >= limit
}

// limit32 is a configured rate limit as Rate counts it.
func limit32(n int) uint32 {
	if n > 1<<31 {
		return 1 << 31
	}
	return uint32(n)
}

// The table of keyed budgets is set-associative: a key hashes to one
// shard (its own lock) and one set of rateWays slots in it. A slot whose
// second is over is free, so the table holds at most the keys seen in the
// current second and never grows: rateShards*rateSets*rateWays slots,
// allocated a shard at a time on first use.
const (
	rateShards = 32
	rateSets   = 16
	rateWays   = 8
	// RateKeys is how many addresses (or pairs) a keyed table tells apart
	// within one second; keys beyond it share one overflow budget.
	RateKeys = rateShards * rateSets * rateWays
)

// rateKey is what one keyed budget counts: the masked addresses, and the
// mode's shape so that modes sharing a table never share a budget.
type rateKey struct {
	src, dst [16]byte
	shape    uint8
}

type rateSlot struct {
	key    rateKey
	sec, n uint32
}

type rateShard struct {
	mu    sync.Mutex
	slots *[rateSets * rateWays]rateSlot
}

// RateTable keeps the budgets of a keyed rate-limit-mode: per source,
// destination or pair, with expiry after their second and a fixed bound.
type RateTable struct {
	shards [rateShards]rateShard
	// overflow is the budget of the keys that found their set full of
	// other keys of the same second (more than RateKeys addresses in one
	// second, or an unlucky set): they share it instead of going
	// uncounted.
	overflow Rate
}

func (k *rateKey) hash() uint64 {
	h := uint64(14695981039346656037) ^ uint64(k.shape)
	for _, b := range k.src {
		h = (h ^ uint64(b)) * 1099511628211
	}
	for _, b := range k.dst {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return h ^ h>>29
}

// take counts a new connection of key k at second now against limit.
func (t *RateTable) take(k *rateKey, now, limit uint32) bool {
	h := k.hash()
	sh := &t.shards[h%rateShards]
	set := int(h/rateShards%rateSets) * rateWays
	sh.mu.Lock()
	if sh.slots == nil {
		sh.slots = new([rateSets * rateWays]rateSlot)
	}
	var free *rateSlot
	for i := set; i < set+rateWays; i++ {
		s := &sh.slots[i]
		live := s.sec == now && s.n > 0
		if live && s.key == *k {
			ok := s.n < limit
			if ok {
				s.n++
			}
			sh.mu.Unlock()
			return ok
		}
		if !live && free == nil {
			free = s
		}
	}
	if free == nil {
		sh.mu.Unlock()
		return t.overflow.Take(now, limit)
	}
	ok := limit > 0
	if ok {
		*free = rateSlot{key: *k, sec: now, n: 1}
	}
	sh.mu.Unlock()
	return ok
}

// live counts the slots still counting second now (tests: the bound).
func (t *RateTable) live(now uint32) int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		if sh.slots != nil {
			for _, s := range sh.slots {
				if s.sec == now && s.n > 0 {
					n++
				}
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// VirtualRate is a virtual server's rate-limit as the snapshot runs it:
// the limit, how budgets are keyed, and the table of keyed ones. The
// table outlives commits that keep the mode and masks.
type VirtualRate struct {
	Limit uint32
	Mode  config.RateLimitMode
	Table *RateTable // nil unless Mode is keyed
}

// RateFor is the rate limiting of cfg on vs, keeping the budgets of the
// running snapshot when the mode and masks are unchanged; shared holds
// the budgets of the modes that are not kept per virtual (source,
// destination, source-destination), common to every virtual. nil when
// the virtual has no rate-limit.
func (vs *Virtual) RateFor(cfg *config.Virtual, shared *RateTable) *VirtualRate {
	if cfg.RateLimit <= 0 {
		return nil
	}
	r := &VirtualRate{Limit: limit32(cfg.RateLimit), Mode: cfg.RateLimitMode}
	switch {
	case !r.Mode.Keyed():
	case !r.Mode.Object:
		r.Table = shared
	default:
		if old := vs.Snap.Load(); old != nil && old.Rate != nil && old.Rate.Mode == r.Mode && old.Rate.Table != nil {
			r.Table = old.Rate.Table
		} else {
			r.Table = new(RateTable)
		}
	}
	return r
}

// cut is a's first bits bits as 16 bytes (bits 0: the whole address).
func cut(a netip.Addr, bits int) [16]byte {
	a = a.Unmap()
	if bits > 0 && bits < a.BitLen() {
		if p, err := a.Prefix(bits); err == nil {
			a = p.Addr()
		}
	}
	return a.As16()
}

// take counts a new connection from client to local on the virtual whose
// object budget is obj.
func (r *VirtualRate) take(obj *Rate, client, local netip.Addr, now uint32) bool {
	m := r.Mode
	if !m.Keyed() || r.Table == nil {
		return obj.Take(now, r.Limit)
	}
	var k rateKey
	if m.BySource {
		k.src, k.shape = cut(client, m.SrcMask), 1
	}
	if m.ByDest {
		k.dst, k.shape = cut(local, m.DstMask), k.shape|2
	}
	return r.Table.take(&k, now, r.Limit)
}

// takeRate counts a new connection on the member and its node within
// their rate limits; it fails, counting nothing, when either is spent.
func (m *Member) takeRate() bool {
	c, nc := m.Cfg.Load(), m.Node.Cfg.Load()
	if c.RateLimit|nc.RateLimit == 0 {
		return true
	}
	now := RateNow()
	if c.RateLimit > 0 && !m.Rate.Take(now, limit32(c.RateLimit)) {
		return false
	}
	if nc.RateLimit > 0 && !m.Node.Rate.Take(now, limit32(nc.RateLimit)) {
		if c.RateLimit > 0 {
			m.Rate.Give(now)
		}
		return false
	}
	return true
}

// giveRate takes back what takeRate counted, for a connection another
// limit refused.
func (m *Member) giveRate() {
	c, nc := m.Cfg.Load(), m.Node.Cfg.Load()
	if c.RateLimit|nc.RateLimit == 0 {
		return
	}
	now := RateNow()
	if c.RateLimit > 0 {
		m.Rate.Give(now)
	}
	if nc.RateLimit > 0 {
		m.Node.Rate.Give(now)
	}
}

// RateLimited says which rate limit keeps the member from new
// connections in the current second: its own, its node's, or neither.
func (m *Member) RateLimited() (member, node bool) {
	c, nc := m.Cfg.Load(), m.Node.Cfg.Load()
	if c.RateLimit|nc.RateLimit == 0 {
		return false, false
	}
	now := RateNow()
	return c.RateLimit > 0 && m.Rate.Spent(now, limit32(c.RateLimit)),
		nc.RateLimit > 0 && m.Node.Rate.Spent(now, limit32(nc.RateLimit))
}

// RateLimited reports whether the node's rate limit is spent for the
// current second.
func (n *Node) RateLimited() bool {
	c := n.Cfg.Load()
	return c.RateLimit > 0 && n.Rate.Spent(RateNow(), limit32(c.RateLimit))
}

// RateLimited reports whether the virtual's whole budget (mode object) is
// spent for the current second; keyed modes refuse some clients only.
func (vs *Virtual) RateLimited(snap *VirtualSnap) bool {
	r := snap.Rate
	return r != nil && !r.Mode.Keyed() && vs.Rate.Spent(RateNow(), r.Limit)
}
