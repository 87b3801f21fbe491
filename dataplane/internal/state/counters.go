package state

import "sync/atomic"

// Counters are one object's live statistics. Shows read them without locks.
type Counters struct {
	BytesIn, BytesOut, PktsIn, PktsOut atomic.Uint64
	Cur, Max                           atomic.Int64
	Tot, Requests                      atomic.Uint64
}

// Durations keeps a virtual's closed-connection Durations.
type Durations struct {
	Min, Max, Sum, N atomic.Uint64 // milliseconds
}

// Note adds one closed connection of ms milliseconds.
func (d *Durations) Note(ms uint64) {
	d.Sum.Add(ms)
	if d.N.Add(1) == 1 {
		d.Min.Store(ms)
	}
	for {
		m := d.Min.Load()
		if ms >= m || d.Min.CompareAndSwap(m, ms) {
			break
		}
	}
	for {
		m := d.Max.Load()
		if ms <= m || d.Max.CompareAndSwap(m, ms) {
			break
		}
	}
}

// Reset forgets every closed connection (reset-stats).
func (d *Durations) Reset() {
	d.Min.Store(0)
	d.Max.Store(0)
	d.Sum.Store(0)
	d.N.Store(0)
}

// TryOpen counts a new connection unless limit (>0) is reached.
func (c *Counters) TryOpen(limit int) bool {
	for {
		n := c.Cur.Load()
		if limit > 0 && n >= int64(limit) {
			return false
		}
		if c.Cur.CompareAndSwap(n, n+1) {
			c.noteMax(n + 1)
			c.Tot.Add(1)
			return true
		}
	}
}

func (c *Counters) noteMax(n int64) {
	for {
		m := c.Max.Load()
		if n <= m || c.Max.CompareAndSwap(m, n) {
			return
		}
	}
}

// Close counts a connection that ended.
func (c *Counters) Close() { c.Cur.Add(-1) }

// Reset zeroes the counters; current connections stay (they are state, not
// history) and become the new maximum.
func (c *Counters) Reset() {
	c.BytesIn.Store(0)
	c.BytesOut.Store(0)
	c.PktsIn.Store(0)
	c.PktsOut.Store(0)
	c.Tot.Store(0)
	c.Requests.Store(0)
	c.Max.Store(c.Cur.Load())
}

// Packets estimates how many segments carried n bytes; the proxy sees reads,
// not Packets, so counts are approximate (one per MSS-sized piece).
func Packets(n int) uint64 { return uint64((n + 1447) / 1448) }

// In counts n bytes in pk packets received.
func (c *Counters) In(n int, pk uint64) {
	c.BytesIn.Add(uint64(n))
	c.PktsIn.Add(pk)
}

// Out counts n bytes in pk packets sent.
func (c *Counters) Out(n int, pk uint64) {
	c.BytesOut.Add(uint64(n))
	c.PktsOut.Add(pk)
}
