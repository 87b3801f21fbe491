// Package snatobj is the `ltm snat` objects as the data paths consult
// them: a table of the objects' origins, looked up by a client's address
// for the most specific origin that holds it, and the counters that
// `show ltm snat` and `show ltm snat-translation` print. A table is built
// once per commit and never changed; the counters live in a Registry
// that outlives commits, so a commit keeps them.
package snatobj

import (
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Counters are one SNAT's, or one translation address's, statistics:
// the server connections given its address.
type Counters struct {
	Conns atomic.Uint64
}

// Entry is one SNAT object of a table.
type Entry struct {
	Name string
	// Automap: the source is chosen as source-address-translation
	// automap chooses it (the caller's), not from Addrs.
	Automap bool
	// ChangePort: source-port change, the connection takes any port.
	ChangePort bool
	addrs      []netip.Addr
	addrStats  []*Counters
	stats      *Counters
	next       atomic.Uint32
}

// Pick is the entry's next translation address of the family (v4 or
// not), in turn over the snatpool's addresses, counted with the entry's
// and the address's connections; invalid when it has none of that
// family. Not for an Automap entry (see Counted). count false leaves
// the counters alone (a source asked for no connection).
func (e *Entry) Pick(v4, count bool) netip.Addr {
	n := len(e.addrs)
	start := int(e.next.Add(1))
	for i := 0; i < n; i++ {
		k := (start + i) % n
		if a := e.addrs[k]; a.Is4() == v4 {
			if count {
				e.stats.Conns.Add(1)
				e.addrStats[k].Conns.Add(1)
			}
			return a
		}
	}
	return netip.Addr{}
}

// Counted counts a connection given an address by automap.
func (e *Entry) Counted() { e.stats.Conns.Add(1) }

// Table is the SNAT objects of one commit by origin.
type Table struct {
	byOrigin map[netip.Prefix]*Entry
	// lens4 and lens6 are the origins' prefix lengths of each family,
	// longest first: the lookup tries them in that order.
	lens4, lens6 []int
}

// Lookup is the SNAT whose origin is the most specific one holding a
// (an IPv4-mapped IPv6 address is taken as IPv4); nil for none. It does
// not allocate.
func (t *Table) Lookup(a netip.Addr) *Entry {
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
		if e := t.byOrigin[p]; e != nil {
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
}

// Build makes the table of objs for a commit, keeping the counters of
// the SNATs and addresses still configured and dropping the others;
// nil when objs is empty, so that the data paths test one pointer. Two
// objects with one origin are the daemon's to refuse: the later one
// is not entered. pools are the snatpools virtuals use: each gets the
// counters of its addresses, in order (byPool), which a virtual's
// snatpool translation counts too. keep are addresses whose counters
// stay though nothing gives them out now (a disabled ltm
// snat-translation's).
func (r *Registry) Build(objs []config.SNATObject, pools map[string][]netip.Addr, keep []netip.Addr) (t *Table, byPool map[string][]*Counters) {
	r.mu.Lock()
	defer r.mu.Unlock()
	snats, addrs := map[string]*Counters{}, map[netip.Addr]*Counters{}
	counters := func(m map[netip.Addr]*Counters, a netip.Addr) *Counters {
		if c := m[a]; c != nil {
			return c
		}
		if c := r.addrs[a]; c != nil {
			m[a] = c
			return c
		}
		c := new(Counters)
		m[a] = c
		return c
	}
	for _, a := range keep {
		counters(addrs, a)
	}
	byPool = map[string][]*Counters{}
	for name, as := range pools {
		cs := make([]*Counters, len(as))
		for i, a := range as {
			cs[i] = counters(addrs, a)
		}
		byPool[name] = cs
	}
	if len(objs) == 0 {
		r.snats, r.addrs = snats, addrs
		return nil, byPool
	}
	t = &Table{byOrigin: map[netip.Prefix]*Entry{}}
	for _, o := range objs {
		st := r.snats[o.Name]
		if st == nil {
			st = new(Counters)
		}
		snats[o.Name] = st
		e := &Entry{Name: o.Name, Automap: o.Automap, ChangePort: o.ChangePort, addrs: o.Addrs, stats: st}
		for _, a := range o.Addrs {
			e.addrStats = append(e.addrStats, counters(addrs, a))
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
	r.snats, r.addrs = snats, addrs
	return t, byPool
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
