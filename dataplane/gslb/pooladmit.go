package gslb

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Pool admission: manual-resume and min-members-up, the settings that
// keep a pool's members (or the whole pool) out of the answers beyond
// what their checks say at this moment.

const (
	reasonManualResume = "Pool member has been disabled by a monitor, manual resume"
	reasonPoolMinUp    = "The pool has fewer members available than min-members-up"
)

// checkMinUp refuses a min-members-up setting BIG-IP refuses.
func checkMinUp(pc *Pool) error {
	switch pc.MinUpMode {
	case "", MinUpOff:
	case MinUpAtLeast:
		if pc.MinUpValue < 0 {
			return fmt.Errorf("min-members-up-value %d is negative", pc.MinUpValue)
		}
	case MinUpPercent:
		if pc.MinUpValue < 0 || pc.MinUpValue > 100 {
			return fmt.Errorf("min-members-up-value %d is not a percentage (0 to 100)", pc.MinUpValue)
		}
	default:
		return fmt.Errorf("min-members-up-mode %q is not one of off, at-least, percent", pc.MinUpMode)
	}
	return nil
}

// minUpOf is how many of a pool's n members must be available: the value
// itself (at-least), or that share of n rounded up (percent), so 50
// percent of 3 members is 2.
func minUpOf(pc *Pool, n int) int {
	switch pc.MinUpMode {
	case MinUpAtLeast:
		return pc.MinUpValue
	case MinUpPercent:
		return (pc.MinUpValue*n + 99) / 100
	}
	return 0
}

// downSum is every down a member's availability has seen: its own
// monitor's, its virtual server's and its server's.
func (m *member) downSum() uint64 {
	return m.rt.downs.Load() + m.vs.rt.downs.Load() + m.vs.host.rt.downs.Load()
}

// held reports whether manual-resume holds the member: it went down since
// it was last resumed.
func (m *member) held() bool {
	return m.downSum() != m.rt.resumed.Load()
}

// resumeHolds resumes, once p is bound, the members that start afresh
// under manual-resume: members new to the pool, members of a pool that
// did not have manual-resume in old, and members old had disabled that p
// enables (the operator's re-enable). A held member that stays as it was
// stays held.
func (p *plan) resumeHolds(old *plan) {
	for _, pl := range p.poolList {
		if !pl.cfg.ManualResume || pl.typ.named() {
			continue
		}
		var was *pool
		if old != nil {
			was = old.pools[pl.name]
		}
		for _, m := range pl.members {
			var prev *member
			if was != nil && was.cfg.ManualResume {
				for _, x := range was.members {
					if x.name == m.name {
						prev = x
						break
					}
				}
			}
			if prev == nil || prev.rt != m.rt || (prev.cfg.Disabled && !m.cfg.Disabled) {
				m.rt.resumed.Store(m.downSum())
			}
		}
	}
}

// wentDown counts a transition to down in downs.
func wentDown(prev, next Status, downs *atomic.Uint64) {
	if next == StatusDown && prev != StatusDown && downs != nil {
		downs.Add(1)
	}
}

// ratioPick is dynamic-ratio's choice: member i gets a share of the
// answers in proportion to w[i] (0: none). The pool's rotation counter
// walks a golden-ratio sequence over the total, so successive queries
// spread in proportion without a random source and without state beyond
// the rotation every method shares. -1 when no weight is positive.
func ratioPick(pl *pool, w []float64) int {
	total := 0.0
	for _, x := range w {
		total += x
	}
	if total <= 0 {
		return -1
	}
	n := pl.rt.rr.Add(1) - 1
	x := math.Mod(float64(n)*0.6180339887498949, 1) * total
	last := -1
	for i, v := range w {
		if v <= 0 {
			continue
		}
		if x < v {
			return i
		}
		x -= v
		last = i
	}
	return last // rounding at the very end of the total
}

// dynWeight is a candidate's dynamic-ratio weight for a metric whose best
// value is best: best/x where lower is better (a metric of 0, nothing at
// all, weighs as 1 more than each value so it does not take every answer),
// x/best where higher is. x < 0 is not measured: weight 0.
func dynWeight(x, best float64, lower bool) float64 {
	switch {
	case x < 0:
		return 0
	case lower:
		return (best + 1) / (x + 1)
	case best <= 0:
		return 0
	default:
		return x / best
	}
}

// memberMethod reports whether a mode picks a member (rather than
// answering with fallback-ip, returning to DNS, dropping or skipping).
func memberMethod(m Mode) bool {
	switch m {
	case None, ReturnToDNS, DropPacket, FallbackIP:
		return false
	}
	return true
}

// enabled fills rq.cands with the pool's members nothing the operator did
// keeps out (disabled member, virtual server, server, datacenter or link;
// a manual-resume hold), whatever their monitors and metrics say: what a
// fallback method picks from when respect-fallback-dependency is no and
// no member is available.
func (rq *request) enabled(pl *pool) []*member {
	out := rq.cands[:0]
	for _, m := range pl.members {
		v := m.vs
		if m.cfg.Disabled || v.cfg.Disabled || v.host.cfg.Disabled || v.host.dc.cfg.Disabled ||
			(v.link != nil && v.link.cfg.Disabled) || (pl.cfg.ManualResume && m.held()) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// hopsFrom estimates the hops a reply crossed from the TTL it arrived
// with: the sender started from the smallest of the usual initial TTLs
// (64, 128, 255) not below it. -1 when the TTL is unknown.
func hopsFrom(ttl int) int {
	switch {
	case ttl <= 0 || ttl > 255:
		return -1
	case ttl <= 64:
		return 64 - ttl
	case ttl <= 128:
		return 128 - ttl
	}
	return 255 - ttl
}
