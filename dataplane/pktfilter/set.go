package pktfilter

import (
	"bytes"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// Action is what a filter (or the default) does with what it matches.
type Action uint8

// The actions of net packet-filter and packetfilter.defaultaction.
const (
	// Accept lets the connection or flow go on to its virtual server.
	Accept Action = iota
	// Discard drops it: a UDP datagram unanswered; a TCP client, which
	// the kernel has already accepted, closed with a FIN and not a byte
	// read or written [M: BIG-IP drops the SYN, and the client times out].
	Discard
	// Reject refuses it: a TCP client reset (SO_LINGER 0); a UDP
	// datagram answered with an ICMP port unreachable (dataplane/internal/
	// icmpreject, through a raw socket; dropped without CAP_NET_RAW).
	Reject
	// Continue counts (and logs) the match and goes on to the next filter.
	Continue
)

// ParseAction reads BIG-IP's word for an action.
func ParseAction(s string) (Action, bool) {
	switch s {
	case "accept":
		return Accept, true
	case "discard":
		return Discard, true
	case "reject":
		return Reject, true
	case "continue":
		return Continue, true
	}
	return Accept, false
}

func (a Action) String() string {
	switch a {
	case Discard:
		return "discard"
	case Reject:
		return "reject"
	case Continue:
		return "continue"
	}
	return "accept"
}

// Counter is one filter's matches, kept across commits by name so that
// a change of the filters does not zero show net packet-filter.
type Counter struct {
	Matches atomic.Uint64
}

// Filter is one net packet-filter as the dataplane runs it.
type Filter struct {
	Name    string
	Order   int
	Action  Action
	Expr    *Expr
	Logging bool
	// RateClass is the full path of the filter's rate-class (empty:
	// none): the connections and flows it lets in are shaped by that
	// class. F5: "any traffic allowed by the rule will also be rate
	// limited according to the behavior of the specified rate class"
	// (https://clouddocs.f5.com/api/icontrol-soap/Networking__PacketFilter__get_rate_class.html).
	RateClass string
	// VLAN is the interfaces (indexes) of the filter's vlan: the filter
	// matches only traffic that arrived on one of them. nil: every VLAN;
	// empty but not nil (a VLAN with no interface): nothing.
	VLAN  []int
	count *Counter
}

// Set is the packet filtering in force: the filters by order, the
// default action, and the trusted client addresses exempt from
// filtering. A Set is immutable once stored in a Holder.
type Set struct {
	Filters []*Filter
	Default Action
	// Trusted are the addresses of net packet-filter-trusted
	// ip-addresses: their connections are never filtered.
	Trusted []netip.Prefix
	// TrustedIf are the interfaces (indexes) of net packet-filter-trusted
	// vlans: what arrives on them is never filtered.
	TrustedIf []int
	// TrustedMAC are net packet-filter-trusted mac-addresses: a client
	// whose address the neighbour table maps to one of them is never
	// filtered (looked up per new connection only while this is not
	// empty; a loopback client has no MAC).
	TrustedMAC []net.HardwareAddr
	// Neighbour looks a client's MAC up (nil: the kernel's neighbour
	// table, Neighbour); tests give their own.
	Neighbour func(netip.Addr) net.HardwareAddr
	// Established is sys db packetfilter.established enable: the
	// connections and flows open when the Set is put in force are matched
	// again (Holder.Recheck).
	Established bool
	// Log takes a line for each match of a filter with logging enabled.
	Log func(line string)
	// classes is whether a filter has a rate class (Store); arrival
	// whether a filter or the trusted list names a VLAN (Arrival).
	classes, arrival bool
}

// Holder is the plane's packet filtering: nil Set while sys db
// packetfilter is disabled, so that a connection pays one atomic load.
type Holder struct {
	set atomic.Pointer[Set]

	mu       sync.Mutex
	counters map[string]*Counter
	deflt    Counter // connections no filter decided
	trusted  Counter // connections exempt as trusted
}

// Load is the Set in force, nil when packet filtering is off.
func (h *Holder) Load() *Set {
	if h == nil {
		return nil
	}
	return h.set.Load()
}

// Store puts s in force (nil turns filtering off). Its filters are sorted
// by order and given their counters, kept by name from earlier Sets.
func (h *Holder) Store(s *Set) {
	if s != nil {
		sort.SliceStable(s.Filters, func(i, j int) bool { return s.Filters[i].Order < s.Filters[j].Order })
		h.mu.Lock()
		if h.counters == nil {
			h.counters = map[string]*Counter{}
		}
		for _, f := range s.Filters {
			c := h.counters[f.Name]
			if c == nil {
				c = new(Counter)
				h.counters[f.Name] = c
			}
			f.count = c
			s.classes = s.classes || f.RateClass != ""
			s.arrival = s.arrival || f.VLAN != nil
		}
		s.arrival = s.arrival || len(s.TrustedIf) > 0
		h.mu.Unlock()
	}
	h.set.Store(s)
}

// Forget drops the counters of filters no longer configured.
func (h *Holder) Forget(keep func(name string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for n := range h.counters {
		if !keep(n) {
			delete(h.counters, n)
		}
	}
}

// Acts reports whether the filter named is in force (filtering on, its
// rule one this package acts on).
func (h *Holder) Acts(name string) bool {
	s := h.Load()
	if s == nil {
		return false
	}
	for _, f := range s.Filters {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Stats is one filter's count for show net packet-filter.
type Stats struct {
	Matches uint64
}

// Stats returns a filter's matches (zero for one never matched).
func (h *Holder) Stats(name string) Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.counters[name]; c != nil {
		return Stats{Matches: c.Matches.Load()}
	}
	return Stats{}
}

// Totals are the connections the default action decided and those
// exempt as trusted.
func (h *Holder) Totals() (deflt, trusted uint64) {
	return h.deflt.Matches.Load(), h.trusted.Matches.Load()
}

// Reset zeroes the named filters' counters (every counter with no names).
func (h *Holder) Reset(names ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(names) == 0 {
		h.deflt.Matches.Store(0)
		h.trusted.Matches.Store(0)
		for _, c := range h.counters {
			c.Matches.Store(0)
		}
		return
	}
	for _, n := range names {
		if c := h.counters[n]; c != nil {
			c.Matches.Store(0)
		}
	}
}

// Decide matches p against the filters in order and returns the action
// that applies, counting and logging the matches. With filtering off
// (nil Set) it is Accept, for one atomic load.
func (h *Holder) Decide(p *Packet) Action {
	a, _ := h.DecideClass(p)
	return a
}

// DecideClass is Decide with the rate class (full path; empty for none)
// the connection or flow is to be shaped by when it is accepted: the
// accepting filter's, else that of the first continue filter matched
// that names one [M: F5 documents a filter's rate class for what the
// filter allows, not how continue filters combine].
func (h *Holder) DecideClass(p *Packet) (Action, string) {
	s := h.Load()
	if s == nil {
		return Accept, ""
	}
	return s.decide(h, p, true)
}

// Classes reports whether a filter in force has a rate class: the TCP
// data paths then run a virtual's flows where they can be shaped.
func (h *Holder) Classes() bool {
	s := h.Load()
	return s != nil && s.classes
}

// Arrival reports whether the filters in force need each connection's
// arrival interface (Packet.If): a filter or the trusted list names a
// VLAN. Only then do the listeners keep it and the data paths read it.
func (h *Holder) Arrival() bool {
	s := h.Load()
	return s != nil && s.arrival
}

// Verdict is Decide without counting or logging: the refusal paths ask
// it whether a refused client is to be reset or dropped.
func (h *Holder) Verdict(p *Packet) Action {
	s := h.Load()
	if s == nil {
		return Accept
	}
	a, _ := s.decide(h, p, false)
	return a
}

func (s *Set) decide(h *Holder, p *Packet, count bool) (Action, string) {
	if s.trusts(p) {
		if count {
			h.trusted.Matches.Add(1)
		}
		return Accept, ""
	}
	class := ""
	for _, f := range s.Filters {
		if f.VLAN != nil && (p.If == 0 || !slices.Contains(f.VLAN, p.If)) {
			continue // the filter's vlan: not where this arrived
		}
		if !f.Expr.Match(p) {
			continue
		}
		if count {
			if f.count != nil {
				f.count.Matches.Add(1)
			}
			if f.Logging && s.Log != nil {
				s.Log(logLine(f, p))
			}
		}
		switch {
		case f.Action == Accept && f.RateClass != "":
			return Accept, f.RateClass
		case f.Action != Continue:
			return f.Action, classIf(f.Action, class)
		case class == "":
			class = f.RateClass
		}
	}
	if count {
		h.deflt.Matches.Add(1)
	}
	return s.Default, classIf(s.Default, class)
}

// trusts reports whether p is exempt from filtering: its source is a
// trusted address, it arrived on a trusted VLAN, or its source's MAC
// (the neighbour table's, asked only when MACs are trusted) is trusted.
func (s *Set) trusts(p *Packet) bool {
	for _, t := range s.Trusted {
		if t.Contains(p.Src.Addr()) {
			return true
		}
	}
	if p.If != 0 && slices.Contains(s.TrustedIf, p.If) {
		return true
	}
	if len(s.TrustedMAC) > 0 {
		look := s.Neighbour
		if look == nil {
			look = Neighbour
		}
		if mac := look(p.Src.Addr()); mac != nil {
			for _, m := range s.TrustedMAC {
				if bytes.Equal(m, mac) {
					return true
				}
			}
		}
	}
	return false
}

// classIf is class for what is accepted; none for what is not.
func classIf(a Action, class string) string {
	if a != Accept {
		return ""
	}
	return class
}

// logLine is the ltm log's line for a match [M: BIG-IP's packet filter
// log lines are not documented; this names the filter, the action, the
// protocol and the addresses as tcpdump prints them].
func logLine(f *Filter, p *Packet) string {
	proto := "proto " + strconv.Itoa(int(p.Proto))
	switch p.Proto {
	case ProtoTCP:
		proto = "TCP"
	case ProtoUDP:
		proto = "UDP"
	}
	return "Packet filter " + f.Name + " (order " + strconv.Itoa(f.Order) + ") " + f.Action.String() + ": " +
		proto + " " + p.Src.String() + " -> " + p.Dst.String()
}
