package render

import "github.com/openltm/openltm/dataplane"

// connQueue prints a pool's Connection Queue section: what waits now,
// how long connections waited, and how many the queue served. It is
// printed for a pool with queue-on-connection-limit enabled, or whose
// queue has a history, so that the output of pools without queueing
// stays as it was.
func connQueue(p *printer, ps dataplane.PoolStats, o Options) {
	q := ps.ConnQueue
	if !ps.Queueing && q == (dataplane.ConnQueueStats{}) {
		return
	}
	p.line("")
	p.line("Connection Queue")
	for _, r := range []struct {
		label string
		v     uint64
	}{
		{"Depth", q.Depth},
		{"Age of Head (ms)", q.AgeHead},
		{"Maximum Age (ms)", q.AgeMax},
		{"Average Age (ms)", q.AgeEMA},
		{"Decaying Max Age (ms)", q.AgeEDM},
		{"Serviced", q.Serviced},
		// openltm's own rows: what became of the others.
		{"Abandoned", q.Abandoned},
		{"Timed Out", q.Expired},
		{"Dropped", q.Dropped},
	} {
		p.f("%-23s%10s\n", "  "+r.label, o.num(r.v))
	}
}

// connqFields adds the connq.* fields of field-fmt from a queue's
// statistics (members have no queue of their own: theirs are zero).
func (f *fields) connqFields(prefix string, q dataplane.ConnQueueStats, o Options) {
	f.counts(o,
		counter{prefix + ".age-edm", q.AgeEDM},
		counter{prefix + ".age-ema", q.AgeEMA},
		counter{prefix + ".age-head", q.AgeHead},
		counter{prefix + ".age-max", q.AgeMax},
		counter{prefix + ".depth", q.Depth},
		counter{prefix + ".serviced", q.Serviced})
}
