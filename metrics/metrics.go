// Package metrics exports what `show` reports (virtual servers, pools,
// members, nodes, connections, persistence, GSLB, sync and failover state)
// and commit latency to Prometheus, so a fleet of devices can be watched
// from one place.
//
// The daemon hands New a function that returns a Snapshot; each scrape
// calls it once and turns it into metrics, so the dataplane's counters are
// read only when someone asks and nothing is kept twice. Commit latency is
// the one thing measured here, by ObserveCommit.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Traffic is one side's counters, as show prints them (bits, not bytes).
type Traffic struct {
	BitsIn, BitsOut, PktsIn, PktsOut uint64
	CurConns, MaxConns, TotConns     uint64
	TotRequests                      uint64
}

// Status is an object's availability (available, offline, unknown,
// unavailable) and state (enabled, disabled, disabled-by-parent).
type Status struct {
	Availability string
	State        string
}

// Virtual is one `show ltm virtual`; Traffic is its client side.
type Virtual struct {
	Name, Destination string
	Status            Status
	Traffic           Traffic
}

// Pool is one `show ltm pool`; Traffic is its server side.
type Pool struct {
	Name                           string
	Status                         Status
	AvailableMembers, TotalMembers int
	Traffic                        Traffic
}

// Member is one pool member; Name is its full name (/Common/10.1.20.11:80).
type Member struct {
	Pool, Name string
	Status     Status
	Traffic    Traffic
}

// Node is one `show ltm node`.
type Node struct {
	Name    string
	Status  Status
	Traffic Traffic
}

// Persistence counts the records of one persistence profile.
type Persistence struct {
	Profile, Mode string
	Records       uint64
}

// WideIP is one `show gtm wideip`.
type WideIP struct {
	Name, Type string
	Status     Status
	Requests   uint64
	// Resolutions by the load balancing step that chose the answer:
	// preferred, alternate, fallback; ReturnedToDNS were handed to the
	// DNS server, Dropped not answered. Persisted answers came from a
	// persistence record, LastResort from the last resort pool.
	Preferred, Alternate, Fallback, ReturnedToDNS, Dropped uint64
	Persisted, LastResort                                  uint64
}

// GSLBPool is one `show gtm pool`: its availability, its resolutions by
// step, and its members' availability.
type GSLBPool struct {
	Name, Type                                             string
	Status                                                 Status
	Preferred, Alternate, Fallback, ReturnedToDNS, Dropped uint64
	Members                                                []GSLBPoolMember
}

// GSLBPoolMember is a gtm pool member (server:virtual-server, or a name).
type GSLBPoolMember struct {
	Name   string
	Status Status
}

// GSLBServer is one `show gtm server` with its virtual servers.
type GSLBServer struct {
	Name, Datacenter string
	Status           Status
	Picks            uint64
	VirtualServers   []GSLBVirtualServer
}

// GSLBVirtualServer is one virtual server of a gtm server.
type GSLBVirtualServer struct {
	Name, Destination string
	Status            Status
	Picks             uint64
}

// GSLBDNS are the GSLB DNS server's own counters: every query, then by
// outcome (wide IP, static record, NXDOMAIN, refused, dropped, malformed).
type GSLBDNS struct {
	Queries                                               uint64
	WideIP, Static, NXDomain, Refused, Dropped, Malformed uint64
}

// GSLBStatus is the availability of a gtm datacenter or link.
type GSLBStatus struct {
	Name   string
	Status Status
}

// Sync is the device group sync state (`show cm sync-status`).
type Sync struct {
	Group, Status string
	Applied, Head uint64
}

// TrafficGroup is this device's role for one traffic group.
type TrafficGroup struct {
	Name   string
	Active bool
}

// Peer is a device of the group whose network failover heartbeats this
// device hears.
type Peer struct {
	Name string
	Age  time.Duration // since its last heartbeat
	Etcd bool          // it holds its etcd lease
}

// Snapshot is the daemon's state at one moment.
type Snapshot struct {
	Device        string
	Connections   uint64 // current client connections, all virtuals
	Virtuals      []Virtual
	Pools         []Pool
	Members       []Member
	Nodes         []Node
	Persistence   []Persistence
	WideIPs       []WideIP
	GSLBPools     []GSLBPool
	GSLBServers   []GSLBServer
	Datacenters   []GSLBStatus
	Links         []GSLBStatus
	DNS           *GSLBDNS // nil without a GSLB
	Sync          *Sync    // nil when the device is in no group
	TrafficGroups []TrafficGroup
	Peers         []Peer // heard by network failover
	// BusyPollOff: the judge of busy-polling (ltmd --busy-poll auto)
	// has the event loops' polling off now (they hold their threads
	// instead).
	BusyPollOff bool
	// LoopHolds: how many times event loops began to hold their threads.
	LoopHolds uint64
	// BatchedSends: how many writes event loops sent together with
	// others of their batch, in one system call.
	BatchedSends uint64
}

// Availabilities and SyncStatuses are the states exported as state sets:
// one series per state, 1 for the current one, so a query can alert on
// `openltm_pool_status{availability="offline"} == 1`.
var (
	Availabilities = []string{"available", "offline", "unknown", "unavailable"}
	SyncStatuses   = []string{"In Sync", "Changes Pending", "Awaiting Initial Sync", "Disconnected",
		"Sync Failure", "Not All Devices Synced", "Standalone"}
)

// Exporter is the registry with the snapshot collector, the commit-latency
// histogram and Go's and the process's own metrics.
type Exporter struct {
	reg    *prometheus.Registry
	commit *prometheus.HistogramVec
}

// New builds an exporter around the daemon's snapshot function.
func New(snapshot func() Snapshot) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry()}
	e.commit = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "openltm",
		Name:      "commit_duration_seconds",
		Help:      "Time from a configuration commit's start to its being durable: scope local (the device's store) or group (the device group's etcd).",
		Buckets:   []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"scope"})
	e.reg.MustRegister(e.commit, &collector{snapshot: snapshot},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e
}

// ObserveCommit records one commit's duration; group is true for a commit
// to the device group.
func (e *Exporter) ObserveCommit(d time.Duration, group bool) {
	scope := "local"
	if group {
		scope = "group"
	}
	e.commit.WithLabelValues(scope).Observe(d.Seconds())
}

// Registry is the exporter's registry, to add collectors to.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves the metrics (mount it at /metrics).
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
