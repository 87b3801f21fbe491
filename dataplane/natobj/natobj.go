// Package natobj is the `ltm nat` objects (one-to-one static NAT) as
// the data paths consult them on the way out: a table from each enabled
// NAT's originating address to its translation address, which the
// source choice of a server connection (internal/state's SNATSource)
// looks a client's address up in (LookupIn: only the NATs of the
// client's virtual's route domain), and the counters `show ltm nat`
// prints. A table is built once per commit and never changed; the
// counters live in a Registry that outlives commits, so a commit keeps
// them. The way in (connections to a translation address) is a virtual
// on every port of it, which the plane makes (dataplane/nat.go).
package natobj

import (
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Counters are one NAT's outbound statistics: the server connections
// whose source it translated to its translation address.
type Counters struct {
	Out atomic.Uint64
}

// Entry is one enabled NAT of a table.
type Entry struct {
	Name string
	// Xlat is the translation address the originating address's
	// connections leave from.
	Xlat  netip.Addr
	stats *Counters
	// vlans is the NAT's VLAN list (nil: every VLAN).
	vlans *config.VLANFilter
	// rd is the NAT's route domain id (config.NAT.RouteDomain).
	rd int
}

// Counted counts one outbound connection translated by e.
func (e *Entry) Counted() { e.stats.Out.Add(1) }

// Table is the enabled NATs of one commit by originating address.
type Table struct {
	byOrig map[netip.Addr]*Entry
	// arrival: a NAT of the table has a VLAN list (Arrival).
	arrival bool
}

// Arrival reports whether a NAT of t has a VLAN list (false for a nil
// t): the connections' arrival interfaces are then needed.
func (t *Table) Arrival() bool { return t != nil && t.arrival }

// LookupOn is Lookup for a connection that arrived on the interface
// ifx (0: not known): a NAT whose VLAN list does not admit it is none.
// It does not allocate.
func (t *Table) LookupOn(a netip.Addr, ifx int) *Entry {
	e := t.byOrig[a.Unmap()]
	if e != nil && e.vlans != nil && !e.vlans.Admits(ifx) {
		return nil
	}
	return e
}

// LookupIn is LookupOn for a client of a virtual in the route domain
// rd (config.Virtual.RouteDomain): a NAT in another route domain is
// none, as a NAT in route domain 0 is for a virtual in route domain 2
// (an address without %ID is in route domain 0, as a virtual's
// destination is), unless reach (config.Virtual.RouteDomainReach: the
// parents a route domain with strict isolation disabled reaches) holds
// its route domain. One NAT holds an address, so a NAT of rd is always
// the one taken before a parent's. Cost over LookupOn: one integer
// comparison when a NAT holds the client's address; when it is of
// another route domain, a length test of reach, and one comparison per
// route domain in it (none when no route domain has strict disabled).
// It does not allocate.
func (t *Table) LookupIn(a netip.Addr, ifx, rd int, reach []int) *Entry {
	e := t.LookupOn(a, ifx)
	if e != nil && e.rd != rd && !slices.Contains(reach, e.rd) {
		return nil
	}
	return e
}

// Lookup is the NAT whose originating address is a (an IPv4-mapped
// IPv6 address is taken as IPv4), whatever its VLAN list (see
// LookupOn); nil for none. It does not allocate.
func (t *Table) Lookup(a netip.Addr) *Entry {
	return t.byOrig[a.Unmap()]
}

// Registry keeps the NATs' counters across commits, by name.
type Registry struct {
	mu   sync.Mutex
	nats map[string]*Counters
}

// Build makes the table of nats for a commit, keeping the counters of
// the NATs still configured (disabled ones too) and dropping the
// others; nil when no NAT is enabled, so that the data paths test one
// pointer. Two NATs with one originating address are the daemon's to
// refuse: the later one is not entered.
func (r *Registry) Build(nats []config.NAT) *Table {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := make(map[string]*Counters, len(nats))
	var t *Table
	for _, n := range nats {
		c := r.nats[n.Name]
		if c == nil {
			c = new(Counters)
		}
		kept[n.Name] = c
		if n.Disabled || !n.Orig.IsValid() || !n.Xlat.IsValid() {
			continue
		}
		if t == nil {
			t = &Table{byOrig: map[netip.Addr]*Entry{}}
		}
		o := n.Orig.Unmap()
		if _, dup := t.byOrig[o]; dup {
			continue
		}
		t.byOrig[o] = &Entry{Name: n.Name, Xlat: n.Xlat.Unmap(), stats: c, vlans: n.VLANs, rd: n.RouteDomain}
		t.arrival = t.arrival || n.VLANs != nil
	}
	r.nats = kept
	return t
}

// OutConns is the outbound connections counted for the NAT name (false:
// not configured).
func (r *Registry) OutConns(name string) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.nats[name]
	if c == nil {
		return 0, false
	}
	return c.Out.Load(), true
}

// Reset zeroes the NAT name's counters (reset-stats ltm nat); false
// when it is not configured.
func (r *Registry) Reset(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.nats[name]
	if c == nil {
		return false
	}
	c.Out.Store(0)
	return true
}
