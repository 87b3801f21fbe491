package bwc

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// activeWindow is how recently a level must have taken bytes of its
// policy's bucket to count as busy: while another level is busy, a
// level is held to its weight's share; alone, it takes the whole rate.
// A copy loop waits several times a second at any rate a policy shapes,
// so a quarter of a second tells a paused flow from a finished one.
const activeWindow = 250 * time.Millisecond

// shares is a policy's priority group (traffic-priority-map) at work:
// each level's share of max-rate by weight [M: F5 documents the priority
// group's levels but not how they share; openltm gives each busy level
// max-rate × its weight ÷ the weights of the group's listed levels, and
// lets one level alone, or the levels that find the others idle, take
// the rest, so that no rate is left unused]. A level the group does not
// list shares as the nearest listed level below it (or, with none below,
// the lowest listed one).
type shares struct {
	lim [Levels]*rate.Limiter
	// last is when each level last took bytes, in Unix nanoseconds.
	last [Levels]atomic.Int64
}

// newShares is the shares of group g over a policy of maxRate bps; nil
// for no group, or one without levels.
func newShares(g *config.BWCPriorityGroup, maxRate uint64) *shares {
	if g == nil || maxRate == 0 {
		return nil
	}
	w := effectiveWeights(g.Weights)
	sum := 0
	for _, x := range g.Weights {
		sum += x
	}
	if sum == 0 {
		return nil
	}
	s := &shares{}
	for l := range Levels {
		s.lim[l] = limiter(max(maxRate*uint64(w[l])/uint64(sum), 8))
	}
	return s
}

// effectiveWeights gives the levels a group leaves out the weight of the
// nearest listed level below, else of the lowest listed one.
func effectiveWeights(listed [Levels]int) [Levels]int {
	w := listed
	lowest := 0
	for l := range Levels {
		if listed[l] > 0 {
			lowest = listed[l]
			break
		}
	}
	cur := lowest
	for l := range Levels {
		if listed[l] > 0 {
			cur = listed[l]
		}
		w[l] = cur
	}
	return w
}

// wait holds level to its share while another level is busy.
func (s *shares) wait(level, n int, now time.Time) bool {
	ns := now.UnixNano()
	s.last[level].Store(ns)
	for l := range Levels {
		if l != level && ns-s.last[l].Load() < int64(activeWindow) {
			return waitBytes(s.lim[level], n)
		}
	}
	return false
}

// Level reads a level as BWC::priority names it: a number 0 to 7, or
// the name of a level of the policy's priority group.
func (p *Policy) Level(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n >= Levels {
			return 0, fmt.Errorf("level %d is not 0 to %d", n, Levels-1)
		}
		return n, nil
	}
	if g := p.Cfg.Priority; g != nil {
		if n, ok := g.Levels[s]; ok {
			return n, nil
		}
		return 0, fmt.Errorf("priority group %s of bwc policy %s has no level %s", g.Name, p.Cfg.Name, s)
	}
	return 0, fmt.Errorf("%q is not a level from 0 to %d (bwc policy %s has no priority group)", s, Levels-1, p.Cfg.Name)
}
