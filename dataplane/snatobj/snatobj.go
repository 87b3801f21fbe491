// Package snatobj is the `ltm snat` objects as the data paths consult
// them: a table of the objects' origins, looked up by a client's address
// for the most specific origin that holds it, and the counters that
// `show ltm snat` and `show ltm snat-translation` print. A table is built
// once per commit and never changed; the counters live in a Registry
// that outlives commits, so a commit keeps them.
//
// A translation address whose ltm snat-translation sets a
// connection-limit or an idle timeout is held by each server connection
// given it (Pick, PickPool return it as the hold) and given back when
// that connection ends (Addr.Release): the limit counts the holds. An
// address with neither is not held (the hold is nil), so a data path
// pays one nil test at its connection's end.
package snatobj

import (
	"errors"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// ErrFull: every translation address the SNAT or snatpool has of the
// server's family holds its connection-limit of connections; the
// connection is refused.
var ErrFull = errors.New("every SNAT translation address is at its connection limit")

// Counters are one SNAT's, or one translation address's, statistics:
// the server connections given its address, and for an address with a
// connection limit those holding it now and at most.
type Counters struct {
	Conns    atomic.Uint64
	cur, max atomic.Int64
	// refused counts the connections refused while the address (and
	// every other of its SNAT's or snatpool's) was at its limit.
	refused atomic.Uint64
}

// Addr is one translation address as a commit gives it out: its
// counters and its ltm snat-translation's settings.
type Addr struct {
	Addr netip.Addr
	C    *Counters
	// limit is connection-limit (0: none); tcpIdle and udpIdle the idle
	// timeouts (0: the profile's).
	limit            int64
	tcpIdle, udpIdle time.Duration
	// held: a connection given the address holds it (a limit or an idle
	// timeout is set).
	held bool
}

// take counts a connection given the address: false when it holds its
// connection limit already (nothing counted then).
func (a *Addr) take() bool {
	if a.limit > 0 {
		for {
			n := a.C.cur.Load()
			if n >= a.limit {
				return false
			}
			if a.C.cur.CompareAndSwap(n, n+1) {
				for m := a.C.max.Load(); n+1 > m && !a.C.max.CompareAndSwap(m, n+1); m = a.C.max.Load() {
				}
				break
			}
		}
	}
	a.C.Conns.Add(1)
	return true
}

// hold is what a connection given a holds: a itself when it has a limit
// or an idle timeout, else nil.
func (a *Addr) hold() *Addr {
	if a.held {
		return a
	}
	return nil
}

// Release gives back the address a server connection held, once, when
// the connection ends (or its connect failed). The commit the Addr is of
// decides: a connection counted under a limit is uncounted, whatever
// limit a later commit set.
func (a *Addr) Release() {
	if a.limit > 0 {
		a.C.cur.Add(-1)
	}
}

// TCPIdle is the idle timeout a TCP flow whose server side has the
// address takes instead of its profile's; false: not set.
func (a *Addr) TCPIdle() (time.Duration, bool) { return a.tcpIdle, a.tcpIdle > 0 }

// UDPIdle is TCPIdle for a UDP flow.
func (a *Addr) UDPIdle() (time.Duration, bool) { return a.udpIdle, a.udpIdle > 0 }

// Entry is one SNAT object of a table.
type Entry struct {
	Name string
	// Automap: the source is chosen as source-address-translation
	// automap chooses it (the caller's), not from Addrs.
	Automap bool
	// ChangePort: source-port change, the connection takes any port.
	ChangePort bool
	// Strict: source-port preserve-strict, the connection keeps the
	// client's port or fails.
	Strict bool
	addrs  []*Addr
	stats  *Counters
	next   atomic.Uint32
	// vlans is the SNAT's VLAN list (nil: every VLAN).
	vlans *config.VLANFilter
	// rd is the SNAT's route domain id (config.SNATObject.RouteDomain).
	rd int
}

// Pick is the entry's next translation address of the family (v4 or
// not), in turn over the snatpool's addresses, passing over those at
// their connection limit, counted with the entry's and the address's
// connections; invalid when it has none of that family, ErrFull when
// all of them are at their limit. hold is what the connection must give
// back when it ends (nil: nothing). Not for an Automap entry (see
// Counted). count false leaves the counters and limits alone (a source
// asked for no connection); hold false counts the connection without
// holding the address, for a data path that does not give it back
// (the limit is not enforced there).
func (e *Entry) Pick(v4, count, hold bool) (a netip.Addr, h *Addr, err error) {
	a, h, err = PickPool(e.addrs, &e.next, v4, count, hold)
	if a.IsValid() && count {
		e.stats.Conns.Add(1)
	}
	return a, h, err
}

// PickPool is Pick over a snatpool's addresses as a virtual's
// source-address-translation gives them, next its turn.
func PickPool(addrs []*Addr, next *atomic.Uint32, v4, count, hold bool) (netip.Addr, *Addr, error) {
	n := len(addrs)
	start := int(next.Add(1))
	full := false
	for i := 0; i < n; i++ {
		x := addrs[(start+i)%n]
		if x.Addr.Is4() != v4 {
			continue
		}
		if h, ok := x.give(count, hold); ok {
			return x.Addr, h, nil
		}
		full = true
	}
	if full {
		for _, x := range addrs {
			if x.Addr.Is4() == v4 {
				x.C.refused.Add(1)
			}
		}
		return netip.Addr{}, nil, ErrFull
	}
	return netip.Addr{}, nil, nil
}

// give gives x to a connection as PickPool does: false when it holds its
// connection limit (only when count and hold); h is what the connection
// holds.
func (x *Addr) give(count, hold bool) (h *Addr, ok bool) {
	switch {
	case !count:
		return nil, true
	case !hold:
		x.C.Conns.Add(1)
		return nil, true
	case !x.take():
		return nil, false
	}
	return x.hold(), true
}

// Give counts a connection given a and holds it (a data path that
// takes the address itself, as a message routing transport-config's
// snatpool does): h is what the connection gives back when it ends
// (nil: nothing held); false when a holds its connection limit (nothing
// counted then; Refuse counts the refusal). It does not allocate.
func (a *Addr) Give() (h *Addr, ok bool) { return a.give(true, true) }

// Refuse counts a connection refused while a held its connection limit.
func (a *Addr) Refuse() { a.C.refused.Add(1) }

// Index is one commit's translation addresses that have an ltm
// snat-translation (configured, or made by the daemon for a SNAT's,
// snatpool's or nat's address) or whose ltm snat-translation sets a
// connection-limit or an idle timeout, by address. The choices that name
// addresses rather than a SNAT object or a virtual's snatpool (a rule's
// snat or snatpool decision, automap's self IP or virtual address)
// count them through it, and hold those with a setting, as a virtual's
// snatpool does; an address without an ltm snat-translation is given
// uncounted (show ltm snat-translation does not list it). Build makes
// it nil when there is no ltm snat-translation, so that those choices
// pay one nil test.
type Index struct{ byAddr map[netip.Addr]*Addr }

// Of is the commit's Addr of a when it has an ltm snat-translation; nil
// otherwise, and for a nil x.
func (x *Index) Of(a netip.Addr) *Addr {
	if x == nil {
		return nil
	}
	return x.byAddr[a.Unmap()]
}

// Take gives the address a to a connection (count, hold as in Pick):
// counted when a has an ltm snat-translation; h is what it holds (nil:
// nothing, a has no limit or idle timeout), ErrFull when a
// holds its connection limit (counted as a refusal). It does not
// allocate.
func (x *Index) Take(a netip.Addr, count, hold bool) (h *Addr, err error) {
	ad := x.Of(a)
	if ad == nil {
		return nil, nil
	}
	return ad.Take(count, hold)
}

// Take is Index.Take for an address already found (its Addr resolved at
// commit, as a virtual's automap address is): counted, held when it has
// a limit or an idle timeout, ErrFull (counted as a refusal) at its
// limit. It does not allocate.
func (a *Addr) Take(count, hold bool) (h *Addr, err error) {
	if h, ok := a.give(count, hold); ok {
		return h, nil
	}
	a.C.refused.Add(1)
	return nil, ErrFull
}

// PickAddrs is PickPool over addresses a rule named (its snat address,
// its snatpool's addresses), next its turn: the next address of the
// family; one with an ltm snat-translation is counted (and held with a
// limit or idle timeout) as PickPool does and passed over when full
// (ErrFull when every one of the family with a setting is full and none
// without is left), one without is given as it is, uncounted. It does
// not allocate.
func (x *Index) PickAddrs(addrs []netip.Addr, next *atomic.Uint32, v4, count, hold bool) (netip.Addr, *Addr, error) {
	n := len(addrs)
	start := int(next.Add(1))
	full := false
	for i := 0; i < n; i++ {
		a := addrs[(start+i)%n]
		if a.Is4() != v4 {
			continue
		}
		ad := x.Of(a)
		if ad == nil {
			return a, nil, nil
		}
		if h, ok := ad.give(count, hold); ok {
			return a, h, nil
		}
		full = true
	}
	if full {
		for _, a := range addrs {
			if ad := x.Of(a); ad != nil && a.Is4() == v4 {
				ad.C.refused.Add(1)
			}
		}
		return netip.Addr{}, nil, ErrFull
	}
	return netip.Addr{}, nil, nil
}

// Counted counts a connection given an address by automap.
func (e *Entry) Counted() { e.stats.Conns.Add(1) }

// Table is the SNAT objects of one commit by origin.
type Table struct {
	byOrigin map[netip.Prefix]*Entry
	// lens4 and lens6 are the origins' prefix lengths of each family,
	// longest first: the lookup tries them in that order.
	lens4, lens6 []int
	// arrival: a SNAT of the table has a VLAN list, so the data paths
	// read each connection's arrival interface for LookupOn.
	arrival bool
}

// Arrival reports whether a SNAT of t has a VLAN list (false for a nil
// t): the connections' arrival interfaces are then needed.
func (t *Table) Arrival() bool { return t != nil && t.arrival }

// LookupOn is Lookup for a connection that arrived on the interface
// ifx (0: not known): a SNAT whose VLAN list does not admit it is passed
// over for the next most specific origin, as BIG-IP's SNAT listens only
// on its VLANs. It does not allocate.
func (t *Table) LookupOn(a netip.Addr, ifx int) *Entry { return t.lookup(a, ifx, false, 0) }

// LookupIn is LookupOn for a client of a virtual in the route domain rd
// (config.Virtual.RouteDomain): a SNAT in another route domain is
// passed over for the next most specific origin (an origin without
// %ID is in route domain 0, as a virtual's destination is). When no
// SNAT of rd holds the address, the route domains of reach
// (config.Virtual.RouteDomainReach: the parents a route domain with
// strict isolation disabled reaches, nearest first) are looked in, in
// turn: a SNAT of rd is taken before a more specific one of its
// parent. Cost over LookupOn: one integer comparison per origin found
// holding the client's address; on a miss, a length test of reach
// (nil unless a route domain has strict disabled), and one more walk of
// the origin lengths per route domain in it. It does not allocate.
func (t *Table) LookupIn(a netip.Addr, ifx, rd int, reach []int) *Entry {
	if e := t.lookup(a, ifx, false, rd); e != nil || len(reach) == 0 {
		return e
	}
	for _, p := range reach {
		if e := t.lookup(a, ifx, false, p); e != nil {
			return e
		}
	}
	return nil
}

// Lookup is the SNAT whose origin is the most specific one holding a
// (an IPv4-mapped IPv6 address is taken as IPv4), whatever its VLAN
// list (see LookupOn); nil for none. It does not allocate.
func (t *Table) Lookup(a netip.Addr) *Entry { return t.lookup(a, 0, true, 0) }

// lookup walks a's prefixes from the longest origin length down; a SNAT
// with a VLAN list takes a only when anyVLAN or the list admits ifx,
// and one in a route domain other than rd not at all (anyVLAN: any
// route domain, for the callers that ask about an address alone).
func (t *Table) lookup(a netip.Addr, ifx int, anyVLAN bool, rd int) *Entry {
	a = a.Unmap()
	lens := t.lens6
	if a.Is4() {
		lens = t.lens4
	}
	for _, l := range lens {
		p, err := a.Prefix(l)
		if err != nil {
			continue
		}
		if e := t.byOrigin[p]; e != nil && (anyVLAN || e.vlans == nil || e.vlans.Admits(ifx)) && (anyVLAN || e.rd == rd) {
			return e
		}
	}
	return nil
}

// Registry keeps the SNATs' and translation addresses' counters across
// commits, by name and by address.
type Registry struct {
	mu    sync.Mutex
	snats map[string]*Counters
	addrs map[netip.Addr]*Counters
	// limited is the addresses with a connection limit in the running
	// commit: show ltm snat-translation prints their current connections.
	limited map[netip.Addr]bool
}

// Build makes the table of objs for a commit, keeping the counters of
// the SNATs and addresses still configured and dropping the others;
// nil when objs is empty, so that the data paths test one pointer. Two
// objects with one origin are the daemon's to refuse: the later one
// is not entered. pools are the snatpools virtuals use: each gets the
// counters of its addresses, in order (byPool), which a virtual's
// snatpool translation counts too. keep are the ltm snat-translations'
// addresses: their counters stay though nothing gives them out now (a
// disabled one's), and a rule's choice of one is counted (idx).
// settings are the ltm snat-translation settings by address
// (connection-limit, idle timeouts): an address's Addr, one per commit,
// carries them to every SNAT and snatpool giving it out, and idx finds
// the Addrs of keep and those with a setting by address (nil: none).
func (r *Registry) Build(objs []config.SNATObject, pools map[string][]netip.Addr, keep []netip.Addr, settings map[netip.Addr]config.SNATTranslation) (t *Table, byPool map[string][]*Addr, idx *Index) {
	r.mu.Lock()
	defer r.mu.Unlock()
	snats, addrs := map[string]*Counters{}, map[netip.Addr]*Counters{}
	limited := map[netip.Addr]bool{}
	counters := func(a netip.Addr) *Counters {
		if c := addrs[a]; c != nil {
			return c
		}
		if c := r.addrs[a]; c != nil {
			addrs[a] = c
			return c
		}
		c := new(Counters)
		addrs[a] = c
		return c
	}
	byAddr := map[netip.Addr]*Addr{}
	addr := func(a netip.Addr) *Addr {
		if x := byAddr[a]; x != nil {
			return x
		}
		st := settings[a]
		x := &Addr{Addr: a, C: counters(a), limit: int64(min(st.ConnLimit, 1<<62)), tcpIdle: st.TCPIdle, udpIdle: st.UDPIdle}
		x.held = x.limit > 0 || x.tcpIdle > 0 || x.udpIdle > 0
		if x.limit > 0 {
			limited[a] = true
		}
		byAddr[a] = x
		return x
	}
	index := func(x *Addr) {
		if idx == nil {
			idx = &Index{byAddr: map[netip.Addr]*Addr{}}
		}
		idx.byAddr[x.Addr] = x
	}
	for _, a := range keep {
		// An ltm snat-translation, held or not: a rule's choice of its
		// address is counted under it (Index).
		index(addr(a.Unmap()))
	}
	for a := range settings {
		if x := addr(a.Unmap()); x.held {
			index(x)
		}
	}
	byPool = map[string][]*Addr{}
	for name, as := range pools {
		xs := make([]*Addr, len(as))
		for i, a := range as {
			xs[i] = addr(a)
		}
		byPool[name] = xs
	}
	if len(objs) == 0 {
		r.snats, r.addrs, r.limited = snats, addrs, limited
		return nil, byPool, idx
	}
	t = &Table{byOrigin: map[netip.Prefix]*Entry{}}
	for _, o := range objs {
		st := r.snats[o.Name]
		if st == nil {
			st = new(Counters)
		}
		snats[o.Name] = st
		e := &Entry{Name: o.Name, Automap: o.Automap, ChangePort: o.ChangePort, Strict: o.StrictPort, stats: st, vlans: o.VLANs, rd: o.RouteDomain}
		t.arrival = t.arrival || o.VLANs != nil
		for _, a := range o.Addrs {
			e.addrs = append(e.addrs, addr(a))
		}
		for _, p := range o.Origins {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p.Addr())).Masked()
			if _, dup := t.byOrigin[p]; dup {
				continue
			}
			t.byOrigin[p] = e
			if p.Addr().Is4() {
				t.lens4 = addLen(t.lens4, p.Bits())
			} else {
				t.lens6 = addLen(t.lens6, p.Bits())
			}
		}
	}
	r.snats, r.addrs, r.limited = snats, addrs, limited
	return t, byPool, idx
}

// unmapBits is what an IPv4-mapped prefix's length loses when unmapped.
func unmapBits(a netip.Addr) int {
	if a.Is4In6() {
		return 96
	}
	return 0
}

func addLen(lens []int, l int) []int {
	if slices.Contains(lens, l) {
		return lens
	}
	lens = append(lens, l)
	slices.SortFunc(lens, func(a, b int) int { return b - a })
	return lens
}

// SNATConns is the connections counted for the SNAT name (false: not
// configured).
func (r *Registry) SNATConns(name string) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.snats[name]
	if c == nil {
		return 0, false
	}
	return c.Conns.Load(), true
}

// AddrConns is the connections counted for the translation address a,
// given by SNAT objects and virtuals' snatpools (false: neither uses
// it).
func (r *Registry) AddrConns(a netip.Addr) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.addrs[a]
	if c == nil {
		return 0, false
	}
	return c.Conns.Load(), true
}

// Limited is a translation address's connection-limit statistics.
type Limited struct {
	// Cur and Max are the server connections holding the address now
	// and at most since it was configured; Refused the connections
	// refused while it was full.
	Cur, Max int64
	Refused  uint64
}

// AddrCurrent is the connection-limit statistics of the translation
// address a, for an address whose connection-limit is set (false: no
// limit, or not used).
func (r *Registry) AddrCurrent(a netip.Addr) (Limited, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.addrs[a]
	if c == nil || !r.limited[a] {
		return Limited{}, false
	}
	return Limited{Cur: c.cur.Load(), Max: c.max.Load(), Refused: c.refused.Load()}, true
}
