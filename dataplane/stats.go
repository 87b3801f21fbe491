package dataplane

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/state"

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

// Add adds u's counters to t: the traffic of several objects as one (a
// virtual address's, its virtual servers'). Maximum connections add up
// too, a bound the sum may not have reached at once.
func (t *Traffic) Add(u Traffic) {
	t.BitsIn += u.BitsIn
	t.BitsOut += u.BitsOut
	t.PktsIn += u.PktsIn
	t.PktsOut += u.PktsOut
	t.CurConns += u.CurConns
	t.MaxConns += u.MaxConns
	t.TotConns += u.TotConns
}

// Since is t counted from z, an earlier reading of the same counters
// (reset-stats of an object whose traffic is other objects'): the totals
// less z's, the current connections as they are, the maximum t's if it
// rose after z, else the current count (the highest since is not kept).
// A total below z's means the counters were reset since: t is then all
// counted after z.
func (t Traffic) Since(z Traffic) Traffic {
	if t.BitsIn < z.BitsIn || t.BitsOut < z.BitsOut || t.PktsIn < z.PktsIn || t.PktsOut < z.PktsOut || t.TotConns < z.TotConns {
		return t
	}
	out := Traffic{
		BitsIn: t.BitsIn - z.BitsIn, BitsOut: t.BitsOut - z.BitsOut,
		PktsIn: t.PktsIn - z.PktsIn, PktsOut: t.PktsOut - z.PktsOut,
		CurConns: t.CurConns, MaxConns: t.CurConns, TotConns: t.TotConns - z.TotConns,
	}
	if t.MaxConns > z.MaxConns {
		out.MaxConns = t.MaxConns
	}
	return out
}

// VirtualStats is `show ltm virtual` for one virtual server.
type VirtualStats struct {
	Name string
	// Destination is address:port with a numeric port, as show prints it.
	Destination string
	Status      Status
	ClientSide  Traffic
	// Ephemeral is the flows of the listeners the virtual's connections
	// opened for themselves (a rule's listen relays and connections, FTP
	// and RTSP data channels) [M: what BIG-IP counts there is not
	// documented].
	Ephemeral   Traffic
	TotRequests uint64
	// Connection durations in milliseconds over the closed connections.
	MinConnDuration, MaxConnDuration, MeanConnDuration uint64
	// RateLimit is the virtual's rate-limit (0: none), and RateLimited
	// the new connections it refused: shown only where one is set, so
	// that the block keeps BIG-IP's layout otherwise.
	RateLimit   int
	RateLimited uint64
	// Evicted is the connections the virtual's flow-eviction-policy
	// reset (Evicted Connections).
	Evicted uint64
	// SlowFlows is how many of its connections its policy's slow-flow
	// found slow at its last check (Slow Flows), and SlowKilled those
	// slow-flow throttling reset (Slow Flows Killed) [M: the names].
	SlowFlows, SlowKilled uint64
	// EvictRefused is the clients refused because an eviction context
	// (the virtual's own policy, its route domain's, the global one) was
	// full and a round freed no place.
	EvictRefused uint64
	// Clone is what the virtual's clone pools got; nil (and not shown)
	// for a virtual that never had one.
	Clone *CloneStats
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
	// ConnQueue is the pool's connection queue (connq); Queueing says
	// whether queue-on-connection-limit is enabled.
	ConnQueue ConnQueueStats
	Queueing  bool
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
	// FQDN is set for a node written with an fqdn block: its name's
	// resolution (its traffic is on its ephemeral _auto_ nodes).
	FQDN *FQDNStatus
}

// Connection is one `show sys connection` record.
type Connection = flows.Record

// ConnFilter selects connections like `show/delete sys connection` options.
type ConnFilter = flows.Filter

// trafficOf is one object's counters as shows print them.
func trafficOf(c *state.Counters) Traffic {
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
