// Package evict is BIG-IP's flow eviction (ltm eviction-policy) for a
// virtual server: when the virtual's connections reach the policy's
// high-water mark (a percentage of its connection-limit), the
// connections its strategies choose are reset until the low-water mark
// is left, so that a new client is admitted instead of refused.
//
// F5 describes the strategies as biases weighed together, not applied in
// an order ("Selected algorithms are processed at the same time as a
// combined strategy", BIG-IP Network Firewall: Policies and
// Implementations 14.1, "Eviction policy strategy algorithms",
// https://techdocs.f5.com/kb/en-us/products/big-ip-afm/manuals/product/big-ip-network-firewall-policies-and-implementations-14-1-0/17.html).
// openltm weighs them by rank: each enabled strategy ranks the candidate
// connections, the ranks are added, and the highest sums go first [M].
//
// A policy acts in three contexts, as BIG-IP's: a virtual server's
// (flow-eviction-policy, against its connection-limit), a route
// domain's (net route-domain flow-eviction-policy, against the route
// domain's connection-limit, over the connections of its virtuals) and
// the global one (ltm global-settings connection
// global-flow-eviction-policy, over every connection). slow-flow
// (SlowCheck) is checked apart from the water marks, once a second, by
// the plane.
//
// Nothing here runs unless a context has a policy and reaches its
// high-water mark, or a policy has slow-flow: the selection walks the
// connection table once per eviction round, never on the per-byte path.
package evict

import (
	"net/netip"
	"sort"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
)

// Policy is one ltm eviction-policy as the dataplane acts on it; the
// daemon fills it from the object, the plane shares it between the
// virtuals that name it.
type Policy struct {
	// Name is the policy's full path, for logs and shows.
	Name string
	// High and Low are high-water and low-water, in percent of the
	// virtual's connection-limit (BIG-IP's 50 to 100, Low <= High).
	High, Low int
	// BiasIdle, BiasOldest and BiasBytes are the strategies openltm
	// acts on: the longest idle, the oldest, and the fewest bytes (for
	// connections older than BytesDelay) go first.
	BiasIdle, BiasOldest, BiasBytes bool
	BytesDelay                      time.Duration
	// LowPorts are low-priority-port's entries: connections that
	// reached one of these ports go before the others (a virtual on
	// many ports, from a traffic-matching-criteria).
	LowPorts []LowPort
	// LowGeo is low-priority-geographies: connections from a client
	// it places in one of its countries go before the others; nil for
	// none.
	LowGeo Matcher
	// BiasFast and BiasSlow rank by rate (bytes a second over the last
	// RateWindow, or the connection's life when younger [M]): the
	// fastest, or the slowest, go first,
	// sparing connections younger than FastDelay or SlowDelay.
	BiasFast, BiasSlow   bool
	FastDelay, SlowDelay time.Duration
	// LowVirtuals are the virtual servers (full paths) that
	// low-priority-virtual-server names, and those of the route domains
	// low-priority-route-domain names: at a route-domain or global
	// context their connections go before the others; nil for none.
	LowVirtuals map[string]bool
	// Slow is slow-flow when enabled; nil otherwise.
	Slow *SlowFlow
}

// SlowFlow is a policy's slow-flow: a connection older than Grace whose
// rate (over the last RateWindow [M]) is under Threshold bytes a second
// is a slow flow. Slow flows go
// before the others when a round evicts [M]; with Throttle, those above
// Max (a count, or with Percent a percentage of the context's
// connections) are reset on every check, whether or not the high-water
// mark is reached, the slowest first [M: F5 documents the properties, not
// the order].
type SlowFlow struct {
	Threshold uint64
	Grace     time.Duration
	Throttle  bool
	Max       int
	Percent   bool
}

// slow reports whether a connection of age and rate is a slow flow.
func (s *SlowFlow) slow(age time.Duration, rate float64) bool {
	return s != nil && age >= s.Grace && rate < float64(s.Threshold)
}

// NeedsRates reports whether p ranks or judges connections by their
// rate (bias-fast, bias-slow, slow-flow): the plane then samples the
// connections' byte counts once a second (Rates).
func (p *Policy) NeedsRates() bool {
	return p != nil && (p.BiasFast || p.BiasSlow || p.Slow != nil)
}

// LowPort is one low-priority-port entry: a port, and the protocol
// ("tcp", "udp", or "any") it is low priority for.
type LowPort struct {
	Port  uint16
	Proto string
}

// Matcher says whether a client address is in a set (the plane's
// geolocation match, config.GeoMatch).
type Matcher interface{ Admits(a netip.Addr) bool }

// low reports whether a low-priority strategy names f.
func (p *Policy) low(f *flows.Flow) bool {
	if p.LowVirtuals[f.Virtual] {
		return true
	}
	for _, lp := range p.LowPorts {
		if f.Local.Port() == lp.Port && (lp.Proto == "any" || lp.Proto == f.Protocol) {
			return true
		}
	}
	return p.LowGeo != nil && p.LowGeo.Admits(f.Client.Addr().Unmap())
}

// Marks are the connection counts at which a virtual with limit
// connections starts evicting (high) and down to which it evicts (low).
// [M] high is rounded up and low down, so that a high-water of 95 on a
// limit of 4 still admits the fourth client; high is at least 1 and at
// most limit, low at most high-1, so that an eviction always frees a
// place.
func (p *Policy) Marks(limit int) (high, low int) {
	if limit <= 0 {
		return 0, 0
	}
	high = (limit*p.High + 99) / 100
	high = min(max(high, 1), limit)
	low = limit * p.Low / 100
	low = min(max(low, 0), high-1)
	return high, low
}

// Candidate is one connection that may be evicted, as the selection
// sees it.
type Candidate struct {
	// Idle and Age are how long the connection has been idle and open.
	Idle, Age time.Duration
	// Bytes are the bytes it carried, both sides, both ways.
	Bytes uint64
	// Low is set when a low-priority strategy (port, geography, virtual
	// server, route domain) names the connection, or slow-flow finds it
	// slow: it goes before every connection that is not.
	Low bool
	// Rate, when HasRate, is its bytes a second over the last
	// RateWindow (Rates); without, rate is Bytes over Age.
	Rate    float64
	HasRate bool
}

// rate is the candidate's bytes a second: its recent rate when measured
// (Rates), else over its life.
func (c *Candidate) rate() float64 {
	if c.HasRate {
		return c.Rate
	}
	if c.Age <= 0 {
		return 0
	}
	return float64(c.Bytes) / c.Age.Seconds()
}

// Choose returns the indexes of the n candidates to evict, most
// evictable first. Low-priority candidates go first [M: F5 weighs them
// with the biases; openltm puts them ahead]; then each enabled strategy gives every candidate its rank
// (0 for the least evictable, len-1 for the most), and the sums decide;
// ties go to the longest idle, then the oldest. With no strategy
// enabled, the longest idle go first [M: BIG-IP's choice then is not
// documented].
func (p *Policy) Choose(c []Candidate, n int) []int {
	if n <= 0 || len(c) == 0 {
		return nil
	}
	n = min(n, len(c))
	score := make([]int, len(c))
	idx := make([]int, len(c))
	rank := func(less func(a, b int) bool) {
		for i := range idx {
			idx[i] = i
		}
		// less sorts the least evictable first, so position is rank.
		sort.SliceStable(idx, func(i, j int) bool { return less(idx[i], idx[j]) })
		for r, i := range idx {
			score[i] += r
		}
	}
	any := false
	if p.BiasIdle {
		any = true
		rank(func(a, b int) bool { return c[a].Idle < c[b].Idle })
	}
	if p.BiasOldest {
		any = true
		rank(func(a, b int) bool { return c[a].Age < c[b].Age })
	}
	if p.BiasBytes {
		any = true
		// Connections younger than the delay are spared: they rank
		// below every older one, as if they had carried the most.
		spared := func(i int) bool { return c[i].Age < p.BytesDelay }
		rank(func(a, b int) bool {
			sa, sb := spared(a), spared(b)
			if sa != sb {
				return sa
			}
			return c[a].Bytes > c[b].Bytes
		})
	}
	// byRate ranks by rate, sparing those younger than delay; fast
	// ranks the fastest as the most evictable.
	byRate := func(delay time.Duration, fast bool) {
		spared := func(i int) bool { return c[i].Age < delay }
		rank(func(a, b int) bool {
			sa, sb := spared(a), spared(b)
			if sa != sb {
				return sa
			}
			if fast {
				return c[a].rate() < c[b].rate()
			}
			return c[a].rate() > c[b].rate()
		})
	}
	if p.BiasFast {
		any = true
		byRate(p.FastDelay, true)
	}
	if p.BiasSlow {
		any = true
		byRate(p.SlowDelay, false)
	}
	if !any {
		rank(func(a, b int) bool { return c[a].Idle < c[b].Idle })
	}
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := idx[i], idx[j]
		if c[a].Low != c[b].Low {
			return c[a].Low
		}
		if score[a] != score[b] {
			return score[a] > score[b]
		}
		if c[a].Idle != c[b].Idle {
			return c[a].Idle > c[b].Idle
		}
		return c[a].Age > c[b].Age
	})
	return idx[:n]
}

// Sweep is one eviction round for a context at its high-water mark
// (a virtual server's, a route domain's, the global one): it walks the
// connection table for the flows in it (in reports which) not yet
// evicted (live), resets (RST both sides) the ones the policy chooses
// until low remain, and returns how many it saw and the ones it reset.
// [M] It evicts at least one when live has reached high, so that the
// client that found the context full is admitted. One walk evicts a
// batch down to low; new clients are then admitted without a walk until
// high is reached again, which is what the two marks are for. r, when
// not nil, gives the connections' recent rates (bias-fast, bias-slow,
// slow-flow); without, their rates are over their lives.
func (p *Policy) Sweep(t *flows.Table, r *Rates, in func(*flows.Flow) bool, high, low int) (live int, evicted []*flows.Flow) {
	fl, cands := p.gather(t, r, in)
	live = len(fl)
	need := live - low
	if live < high {
		need = 0
	}
	for _, i := range p.Choose(cands, need) {
		if fl[i].MarkEvicted() {
			fl[i].Abort()
			evicted = append(evicted, fl[i])
		}
	}
	return live, evicted
}

// gather is the flows in the context not yet evicted, and what the
// strategies see of each (their recent rates from r, when the policy
// ranks or judges by rate and r is not nil).
func (p *Policy) gather(t *flows.Table, r *Rates, in func(*flows.Flow) bool) ([]*flows.Flow, []Candidate) {
	var fl []*flows.Flow
	var cands []Candidate
	now := time.Now().UnixNano()
	if r != nil && p.NeedsRates() {
		r.mu.Lock()
		defer r.mu.Unlock()
	} else {
		r = nil
	}
	t.Each(func(f *flows.Flow) bool {
		if f.Evicted() || !in(f) {
			return true
		}
		created := f.Created().UnixNano()
		c := Candidate{Idle: time.Duration(now - f.LastActive()), Age: time.Duration(now - created), Low: p.low(f)}
		c.Bytes = flowBytes(f)
		if r != nil {
			c.Rate, c.HasRate = r.rateLocked(f, c.Bytes, created, now), true
		}
		if p.Slow.slow(c.Age, c.rate()) {
			c.Low = true
		}
		fl = append(fl, f)
		cands = append(cands, c)
		return true
	})
	return fl, cands
}

// SlowCheck is one slow-flow check of a context: how many of its live
// connections are slow flows, and, with throttling, the slow flows above
// the maximum it reset, the slowest first (the longest idle among equal
// rates). Nothing is done without slow-flow. r, when not nil, gives the
// connections' recent rates.
func (p *Policy) SlowCheck(t *flows.Table, r *Rates, in func(*flows.Flow) bool) (slow int, reset []*flows.Flow) {
	s := p.Slow
	if s == nil {
		return 0, nil
	}
	fl, cands := p.gather(t, r, in)
	slow, idx := s.pick(cands)
	for _, i := range idx {
		if fl[i].MarkEvicted() {
			fl[i].Abort()
			reset = append(reset, fl[i])
		}
	}
	return slow, reset
}

// pick counts the slow flows among cands and returns the indexes of
// those throttling resets, the slowest first.
func (s *SlowFlow) pick(cands []Candidate) (slow int, reset []int) {
	var idx []int
	for i := range cands {
		if s.slow(cands[i].Age, cands[i].rate()) {
			idx = append(idx, i)
		}
	}
	slow = len(idx)
	if !s.Throttle {
		return slow, nil
	}
	max := s.Max
	if s.Percent {
		max = len(cands) * s.Max / 100
	}
	if slow <= max {
		return slow, nil
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := &cands[idx[i]], &cands[idx[j]]
		if ra, rb := a.rate(), b.rate(); ra != rb {
			return ra < rb
		}
		return a.Idle > b.Idle
	})
	return slow, idx[:slow-max]
}
