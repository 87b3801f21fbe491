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
	BytesIn, BytesOut, PktsIn, PktsOut atomic.Uint64
	Cur, Max                           atomic.Int64
	Tot, Requests                      atomic.Uint64
}

// durations keeps a virtual's closed-connection durations.
type durations struct {
	Min, Max, Sum, N atomic.Uint64 // milliseconds
}

func (d *durations) Note(ms uint64) {
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

func (d *durations) Reset() {
	d.Min.Store(0)
	d.Max.Store(0)
	d.Sum.Store(0)
	d.N.Store(0)
}

// TryOpen counts a new connection unless limit (>0) is reached.
func (c *counters) TryOpen(limit int) bool {
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

func (c *counters) noteMax(n int64) {
	for {
		m := c.Max.Load()
		if n <= m || c.Max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (c *counters) Close() { c.Cur.Add(-1) }

func (c *counters) traffic() Traffic {
	cur := c.Cur.Load()
	if cur < 0 {
		cur = 0
	}
	return Traffic{
		BitsIn: c.BytesIn.Load() * 8, BitsOut: c.BytesOut.Load() * 8,
		PktsIn: c.PktsIn.Load(), PktsOut: c.PktsOut.Load(),
		CurConns: uint64(cur), MaxConns: uint64(max(c.Max.Load(), 0)), TotConns: c.Tot.Load(),
	}
}

// Reset zeroes the counters; current connections stay (they are state, not
// history) and become the new maximum.
func (c *counters) Reset() {
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

func (c *counters) In(n int, pk uint64) {
	c.BytesIn.Add(uint64(n))
	c.PktsIn.Add(pk)
}

func (c *counters) Out(n int, pk uint64) {
	c.BytesOut.Add(uint64(n))
	c.PktsOut.Add(pk)
}
