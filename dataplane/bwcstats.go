package dataplane

import "github.com/openltm/openltm/dataplane/bwc"

// BWCStats are a running bandwidth controller's counters (show net bwc
// policy); ok is false when no policy of that name runs.
func (p *Plane) BWCStats(name string) (st bwc.Stats, ok bool) {
	pol := p.bwc.Policy(name)
	if pol == nil {
		return st, false
	}
	return pol.Stats(), true
}

// ResetBWCStats zeroes a running policy's counters (reset-stats net bwc
// policy); its buckets and flows go on.
func (p *Plane) ResetBWCStats(name string) {
	if pol := p.bwc.Policy(name); pol != nil {
		pol.ResetStats()
	}
}

// SetBWCLogSender lets the bandwidth controllers' measurements (measure,
// BWC::measure) reach their log-publisher through the running
// configuration's log publishers.
func (p *Plane) SetBWCLogSender(send func(publisher string, line []byte) bool) {
	p.bwc.SetLogSender(send)
}
