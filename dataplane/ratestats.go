package dataplane

import "github.com/openltm/openltm/dataplane/bwc"

// RateClassStats are a running rate class's counters (show net
// rate-shaping class), with its rates in bits per second; ok is false
// when no class of that name runs.
func (p *Plane) RateClassStats(name string) (st bwc.ClassStats, rate, ceiling uint64, ok bool) {
	c := p.bwc.Class(name)
	if c == nil {
		return st, 0, 0, false
	}
	r, cl := c.ClassRates()
	return c.ClassStats(), r, cl, true
}

// ResetRateClassStats zeroes a running class's counters (reset-stats net
// rate-shaping class); its buckets and flows go on.
func (p *Plane) ResetRateClassStats(name string) {
	if c := p.bwc.Class(name); c != nil {
		c.ResetClassStats()
	}
}
