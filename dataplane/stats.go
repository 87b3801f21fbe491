package dataplane

import (
	"net/netip"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/flows"
)

// Availability is BIG-IP's availability state (the icon's shape).
type Availability string

// The availability states (reference §3.3).
const (
	Available   Availability = "available"
	Offline     Availability = "offline"
	Unknown     Availability = "unknown"
	Unavailable Availability = "unavailable"
)

// Status is an object's availability, enabled state and reason, as `show`
// prints them.
type Status struct {
	Availability Availability
	// State is enabled, disabled or disabled-by-parent.
	State  string
	Reason string
}

// Traffic is one side's counters as shows print them (bits, not bytes).
type Traffic struct {
	BitsIn, BitsOut, PktsIn, PktsOut uint64
	CurConns, MaxConns, TotConns     uint64
}

// VirtualStats is `show ltm virtual` for one virtual server.
type VirtualStats struct {
	Name string
	// Destination is address:port with a numeric port, as show prints it.
	Destination string
	Status      Status
	ClientSide  Traffic
	TotRequests uint64
	// Connection durations in milliseconds over the closed connections.
	MinConnDuration, MaxConnDuration, MeanConnDuration uint64
}

// PoolStats is `show ltm pool` for one pool, with its members.
type PoolStats struct {
	Name             string
	Status           Status
	Monitor          string // the monitor rule, "" for none
	MinActiveMembers int
	CurActiveMembers int
	AvailableMembers int
	TotalMembers     int
	TotRequests      uint64
	CurSessions      uint64
	ServerSide       Traffic
	Members          []MemberStats
}

// MemberStats is one `| Ltm::Pool Member:` block.
type MemberStats struct {
	Pool string
	// Name is the member's full name, /Common/10.1.20.11:80.
	Name string
	Addr netip.AddrPort
	Node string
	// Status, MonitorStatus (up, down, checking, unchecked, address-down,
	// user-down) and SessionStatus (enabled, user-disabled,
	// monitor-disabled) as BIG-IP reports them.
	Status        Status
	Monitor       string // "/Common/http (pool monitor)", "" for none
	MonitorStatus string
	SessionStatus string
	ServerSide    Traffic
	TotRequests   uint64
	CurSessions   uint64
}

// NodeStats is `show ltm node` for one node.
type NodeStats struct {
	Name          string
	Addr          netip.Addr
	Status        Status
	Monitor       string
	MonitorStatus string
	SessionStatus string
	ServerSide    Traffic
	TotRequests   uint64
	CurSessions   uint64
}

// Connection is one `show sys connection` record.
type Connection = flows.Record

// ConnFilter selects connections like `show/delete sys connection` options.
type ConnFilter = flows.Filter

// counters are one object's live statistics. Shows read them without locks.
type counters struct {
	bytesIn, bytesOut, pktsIn, pktsOut atomic.Uint64
	cur, max                           atomic.Int64
	tot, requests                      atomic.Uint64
}

// durations keeps a virtual's closed-connection durations.
type durations struct {
	min, max, sum, n atomic.Uint64 // milliseconds
}

func (d *durations) note(ms uint64) {
	d.sum.Add(ms)
	if d.n.Add(1) == 1 {
		d.min.Store(ms)
	}
	for {
		m := d.min.Load()
		if ms >= m || d.min.CompareAndSwap(m, ms) {
			break
		}
	}
	for {
		m := d.max.Load()
		if ms <= m || d.max.CompareAndSwap(m, ms) {
			break
		}
	}
}

func (d *durations) reset() {
	d.min.Store(0)
	d.max.Store(0)
	d.sum.Store(0)
	d.n.Store(0)
}

// tryOpen counts a new connection unless limit (>0) is reached.
func (c *counters) tryOpen(limit int) bool {
	for {
		n := c.cur.Load()
		if limit > 0 && n >= int64(limit) {
			return false
		}
		if c.cur.CompareAndSwap(n, n+1) {
			c.noteMax(n + 1)
			c.tot.Add(1)
			return true
		}
	}
}

func (c *counters) noteMax(n int64) {
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (c *counters) close() { c.cur.Add(-1) }

func (c *counters) traffic() Traffic {
	cur := c.cur.Load()
	if cur < 0 {
		cur = 0
	}
	return Traffic{
		BitsIn: c.bytesIn.Load() * 8, BitsOut: c.bytesOut.Load() * 8,
		PktsIn: c.pktsIn.Load(), PktsOut: c.pktsOut.Load(),
		CurConns: uint64(cur), MaxConns: uint64(max(c.max.Load(), 0)), TotConns: c.tot.Load(),
	}
}

// reset zeroes the counters; current connections stay (they are state, not
// history) and become the new maximum.
func (c *counters) reset() {
	c.bytesIn.Store(0)
	c.bytesOut.Store(0)
	c.pktsIn.Store(0)
	c.pktsOut.Store(0)
	c.tot.Store(0)
	c.requests.Store(0)
	c.max.Store(c.cur.Load())
}

// packets estimates how many segments carried n bytes; the proxy sees reads,
// not packets, so counts are approximate (one per MSS-sized piece).
func packets(n int) uint64 { return uint64((n + 1447) / 1448) }

func (c *counters) in(n int, pk uint64) {
	c.bytesIn.Add(uint64(n))
	c.pktsIn.Add(pk)
}

func (c *counters) out(n int, pk uint64) {
	c.bytesOut.Add(uint64(n))
	c.pktsOut.Add(pk)
}
