package dataplane

import "github.com/openltm/openltm/dataplane/lsn"

// LSNPool is the running lsn pool of that full path (its counters and
// state, for show ltm lsn-pool and reset-stats); nil for none.
func (p *Plane) LSNPool(name string) *lsn.Pool { return p.lsn.Pool(name) }

// LSNPools is every running lsn pool, by name.
func (p *Plane) LSNPools() []*lsn.Pool { return p.lsn.Pools() }

// SetLSNLogSender lets the lsn pools' translation logs (log-publisher)
// reach the log publishers.
func (p *Plane) SetLSNLogSender(send func(publisher string, line []byte) bool) {
	p.lsn.SetLogSender(send)
}

// LSNSet is the running lsn pools, whose tables a rule writes
// (LSN::inbound-entry, XLAT::listen and the others, through the
// daemon's rules.Env).
func (p *Plane) LSNSet() *lsn.Set { return &p.lsn }
