// Package lb chooses a pool member among the available ones, the way each
// BIG-IP load-balancing mode does (reference §4.2–4.4). It is pure
// arithmetic over a candidate list the caller builds, so every algorithm is
// tested without sockets; the caller decides what "available" means and
// whether member or node figures feed a mode.
package lb

import (
	"math/rand/v2"
	"sync"
)

// Algorithm is the arithmetic behind one or two tmsh modes (the -member and
// -node variants differ only in which figures the caller passes).
type Algorithm int

// The algorithms.
const (
	RoundRobin         Algorithm = iota
	Ratio                        // ratio-member, ratio-node
	LeastConns                   // least-connections-member/-node
	WeightedLeastConns           // weighted-least-connections-member/-node: conns ÷ limit
	RatioLeastConns              // ratio-least-connections-member/-node: conns ÷ ratio
	Observed                     // observed-member: fewest connections over time
	Predictive                   // predictive-member: observed, favouring improving members
	Fastest                      // fastest-node: fewest outstanding requests
	// DynamicRatio is dynamic-ratio-member/-node: Ratio's rotation over
	// the dynamic ratios the caller passes as Ratio (what the members'
	// performance monitors weighed).
	DynamicRatio
)

// Candidate is one available member as the algorithm sees it.
type Candidate struct {
	// Index is the member's stable position in its pool; ratio rotation
	// follows it.
	Index int
	// Ratio is the member's or node's ratio; values below 1 count as 1.
	Ratio int
	// Conns is the member's or node's current connections.
	Conns int64
	// Limit is the connection limit the weighted mode divides by (0:
	// unlimited, then it falls back to plain connection counts).
	Limit int
	// Smoothed is the connection count averaged over time (observed and
	// predictive modes).
	Smoothed float64
	// Outstanding is the number of requests awaiting an answer (fastest).
	Outstanding int64
	// Priority is the member's priority-group.
	Priority int
	// Ramp is the share of its normal load a member in slow ramp takes,
	// in (0,1]; 0 means 1 (not ramping).
	Ramp float64
}

func (c *Candidate) ratio() int {
	if c.Ratio < 1 {
		return 1
	}
	return c.Ratio
}

func (c *Candidate) ramping() bool { return c.Ramp > 0 && c.Ramp < 1 }

// Balancer is one pool's rotation state. It survives configuration commits
// so a commit does not restart the rotation.
type Balancer struct {
	mu    sync.Mutex
	rr    uint64
	round int // ratio: current round (1-based)
	pos   int // ratio: Index of the last pick in this round
}

// ActiveGroup keeps only the candidates of the highest priority groups that
// together hold at least minActive members (reference §4.3); members in slow
// ramp do not count toward the minimum. minActive 0 turns groups off. The
// result reuses buf.
func ActiveGroup(cands []Candidate, minActive int, buf []Candidate) []Candidate {
	if minActive <= 0 || len(cands) == 0 {
		return cands
	}
	// Walk priorities from the highest down until enough members count.
	threshold := int(^uint(0) >> 1)
	counted := 0
	for counted < minActive {
		next := -int(^uint(0)>>1) - 1
		for i := range cands {
			if p := cands[i].Priority; p < threshold && p > next {
				next = p
			}
		}
		if next == -int(^uint(0)>>1)-1 {
			break // no lower group left: use everything
		}
		threshold = next
		counted = 0
		for i := range cands {
			if cands[i].Priority >= threshold && !cands[i].ramping() {
				counted++
			}
		}
	}
	buf = buf[:0]
	for _, c := range cands {
		if c.Priority >= threshold {
			buf = append(buf, c)
		}
	}
	return buf
}

// Pick returns the position in cands of the chosen candidate, or -1 when
// cands is empty. cands must be in Index order.
func (b *Balancer) Pick(alg Algorithm, cands []Candidate) int {
	switch len(cands) {
	case 0:
		return -1
	case 1:
		return 0
	}
	switch alg {
	case Ratio, DynamicRatio:
		return b.pickRatio(cands)
	case LeastConns, WeightedLeastConns, RatioLeastConns, Observed, Predictive, Fastest:
		return b.pickLeast(alg, cands)
	default:
		return b.pickRoundRobin(cands)
	}
}

// rampSkip reports whether a ramping member sits this pick out, so that over
// many picks it receives Ramp of its normal share.
func rampSkip(c *Candidate) bool {
	return c.ramping() && rand.Float64() >= c.Ramp
}

func (b *Balancer) pickRoundRobin(cands []Candidate) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := uint64(len(cands))
	for tries := uint64(0); tries < 2*n; tries++ {
		i := int(b.rr % n)
		b.rr++
		if tries < n && rampSkip(&cands[i]) {
			continue
		}
		return i
	}
	return int(b.rr % n)
}

// pickRatio gives every candidate one pick per round while its ratio is at
// least the round number: with ratios 3 and 1 the order is A B A A, then
// again (the rotation BIG-IP is observed to use).
func (b *Balancer) pickRatio(cands []Candidate) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	maxR := 1
	for i := range cands {
		maxR = max(maxR, cands[i].ratio())
	}
	if b.round < 1 || b.round > maxR {
		b.round, b.pos = 1, -1
	}
	skipped := 0
	for guard := 0; guard < 4*len(cands)+2*maxR+4; guard++ {
		found := -1
		for i := range cands {
			if cands[i].Index > b.pos && cands[i].ratio() >= b.round {
				found = i
				break
			}
		}
		if found < 0 {
			b.round++
			b.pos = -1
			if b.round > maxR {
				b.round = 1
			}
			continue
		}
		b.pos = cands[found].Index
		if skipped < len(cands) && rampSkip(&cands[found]) {
			skipped++
			continue
		}
		return found
	}
	return 0
}

func score(alg Algorithm, c *Candidate) float64 {
	var s float64
	switch alg {
	case WeightedLeastConns:
		s = float64(c.Conns)
		if c.Limit > 0 {
			s /= float64(c.Limit)
		}
	case RatioLeastConns:
		s = float64(c.Conns) / float64(c.ratio())
	case Observed:
		s = c.Smoothed
	case Predictive:
		// Extrapolate the trend: a member whose load falls below its
		// average is improving and scores better than its average says.
		s = 2*float64(c.Conns) - c.Smoothed
		if s < 0 {
			s = 0
		}
	case Fastest:
		s = float64(c.Outstanding)
	default:
		s = float64(c.Conns)
	}
	if c.ramping() {
		// A ramping member looks busier in proportion to its missing share.
		s = (s + 1) / c.Ramp
	}
	return s
}

// pickLeast takes the lowest score; ties go round robin among the tied.
func (b *Balancer) pickLeast(alg Algorithm, cands []Candidate) int {
	best, ties := 0.0, 0
	for i := range cands {
		s := score(alg, &cands[i])
		switch {
		case i == 0 || s < best:
			best, ties = s, 1
		case s == best:
			ties++
		}
	}
	b.mu.Lock()
	k := int(b.rr % uint64(ties))
	b.rr++
	b.mu.Unlock()
	for i := range cands {
		if score(alg, &cands[i]) == best {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return 0
}
