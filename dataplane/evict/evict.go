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
// Nothing here runs unless a virtual has a policy and reaches its
// high-water mark: the selection walks the connection table once per
// eviction round, never on the per-byte path.
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
	// Low is set when a low-priority strategy (port, geography) names
	// the connection: it goes before every connection that is not.
	Low bool
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

// Sweep is one eviction round for a virtual at its high-water mark: it
// walks the connection table for the virtual's connections not yet
// evicted (live), resets (RST both sides) the ones the policy chooses
// until low remain, and returns how many it saw and how many it reset.
// [M] It evicts at least one when live has reached high, so that the
// client that found the virtual full is admitted.
func (p *Policy) Sweep(t *flows.Table, virtual string, high, low int) (live, evicted int) {
	var fl []*flows.Flow
	var cands []Candidate
	now := time.Now().UnixNano()
	t.Each(func(f *flows.Flow) bool {
		if f.Virtual != virtual || f.Evicted() {
			return true
		}
		c := Candidate{Idle: time.Duration(now - f.LastActive()), Age: time.Duration(now - f.Created().UnixNano()), Low: p.low(f)}
		c.Bytes = f.BytesIn.Load() + f.BytesOut.Load()
		for _, l := range f.Legs() {
			c.Bytes += l.BytesIn.Load() + l.BytesOut.Load()
		}
		fl = append(fl, f)
		cands = append(cands, c)
		return true
	})
	live = len(fl)
	need := live - low
	if live < high {
		need = 0
	}
	for _, i := range p.Choose(cands, need) {
		if fl[i].MarkEvicted() {
			fl[i].Abort()
			evicted++
		}
	}
	return live, evicted
}
