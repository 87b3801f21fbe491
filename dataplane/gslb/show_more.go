package gslb

import (
	"sort"
	"strings"
)

// TopologyStats is one record of `show gtm topology`, in the order
// records are evaluated (longest match first unless topology-longest-match
// is no).
type TopologyStats struct {
	LDNS, Server string // `[not] KIND VALUE`
	Order, Score int
}

// RegionStats is `show gtm region`: its members and where the region is
// used.
type RegionStats struct {
	Name    string
	Members []string // `[not] KIND VALUE`
	// UsedBy counts topology records and regions naming this region.
	UsedBy int
}

// ListenerStats is `show gtm listener`: what a listener serves and
// whether its sockets are bound.
type ListenerStats struct {
	Name     string
	Address  string // address:port
	Protocol string // udp, tcp, or "udp tcp"
	Status   ObjectStatus
}

func (m Match) String() string {
	v := m.Name
	if m.Kind == MatchSubnet {
		v = m.Prefix.String()
	}
	s := string(m.Kind) + " " + v
	if m.Not {
		s = "not " + s
	}
	return s
}

// Topology snapshots the topology records in evaluation order.
func (s *Server) Topology() []TopologyStats {
	p := s.plan.Load()
	out := make([]TopologyStats, 0, len(p.topo))
	for _, r := range p.topo {
		out = append(out, TopologyStats{LDNS: r.rec.LDNS.String(), Server: r.rec.Server.String(), Order: r.rec.Order, Score: r.rec.Score})
	}
	return out
}

// Regions snapshots every region, sorted by name.
func (s *Server) Regions() []RegionStats {
	p := s.plan.Load()
	used := map[string]int{}
	for _, r := range p.topo {
		for _, m := range []Match{r.rec.LDNS, r.rec.Server} {
			if m.Kind == MatchRegion {
				used[m.Name]++
			}
		}
	}
	for _, r := range p.regions {
		for _, m := range r.Members {
			if m.Kind == MatchRegion {
				used[m.Name]++
			}
		}
	}
	out := make([]RegionStats, 0, len(p.regions))
	for _, name := range sortedKeys(p.regions) {
		rs := RegionStats{Name: name, UsedBy: used[name]}
		for _, m := range p.regions[name].Members {
			rs.Members = append(rs.Members, m.String())
		}
		out = append(out, rs)
	}
	return out
}

// Listeners snapshots every configured listener, sorted by name.
func (s *Server) Listeners() []ListenerStats {
	p := s.plan.Load()
	bound := map[string]bool{}
	for _, a := range s.ListenerAddrs() {
		bound[a] = true
	}
	out := make([]ListenerStats, 0, len(p.cfg.Listeners))
	for _, l := range p.cfg.Listeners {
		protos := []string{"udp", "tcp"}
		if l.Protocol != "" {
			protos = []string{l.Protocol}
		}
		up := !l.Disabled
		for _, pr := range protos {
			up = up && bound[pr+" "+l.Addr.String()]
		}
		reason := reasonAvailable
		switch {
		case l.Disabled:
			reason = "The listener is disabled"
		case !up:
			reason = "The listener is not bound"
		}
		out = append(out, ListenerStats{Name: l.Name, Address: l.Addr.String(), Protocol: strings.Join(protos, " "),
			Status: status(up, reason, l.Disabled, false)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// StatsKind names what ResetStats clears.
type StatsKind string

// The kinds reset-stats takes.
const (
	StatsWideIP     StatsKind = "wideip"
	StatsPool       StatsKind = "pool"
	StatsServer     StatsKind = "server"
	StatsLink       StatsKind = "link"
	StatsDatacenter StatsKind = "datacenter"
	StatsListener   StatsKind = "listener"
)

// ResetStats zeroes the counters of one object of a kind (name is its
// full path; for wide IPs and pools, Key(type, path)), or of every object
// of the kind when name is "". Statuses, metrics, the RTT table and
// persistence records are kept: they are state, not statistics.
func (s *Server) ResetStats(kind StatsKind, name string) {
	p := s.plan.Load()
	match := func(n string) bool { return name == "" || n == name }
	switch kind {
	case StatsWideIP:
		for _, w := range p.wideIPs {
			if match(w.path) {
				r := w.rt
				for _, c := range []*counter{&r.requests, &r.requestsA, &r.requestsOther, &r.resolved, &r.persisted,
					&r.preferred, &r.alternate, &r.fallback, &r.returnedToDNS, &r.dropped, &r.lastResort} {
					c.Reset()
				}
			}
		}
	case StatsPool:
		for _, pl := range p.poolList {
			if !match(pl.name) {
				continue
			}
			r := pl.rt
			for _, c := range []*counter{&r.preferred, &r.alternate, &r.fallback, &r.returnToDNS, &r.dropped} {
				c.Reset()
			}
			for _, m := range pl.members {
				m.rt.preferred.Reset()
				m.rt.alternate.Reset()
				m.rt.fallback.Reset()
			}
			for _, m := range pl.names {
				m.rt.preferred.Reset()
				m.rt.alternate.Reset()
				m.rt.fallback.Reset()
			}
		}
	case StatsServer:
		for _, h := range p.hostList {
			if match(h.name) {
				h.rt.picks.Reset()
				for _, v := range h.vss {
					v.rt.picks.Reset()
				}
			}
		}
	case StatsLink:
		for _, l := range p.linkList {
			if match(l.name) {
				l.rt.picks.Reset()
			}
		}
	case StatsDatacenter:
		// A datacenter's figures are its servers' and links'.
		for _, h := range p.hostList {
			if match(h.dc.name) {
				h.rt.picks.Reset()
				for _, v := range h.vss {
					v.rt.picks.Reset()
				}
			}
		}
		for _, l := range p.linkList {
			if match(l.dc.name) {
				l.rt.picks.Reset()
			}
		}
	case StatsListener:
		c := &s.stats
		for _, x := range []*counter{&c.queries, &c.wideIP, &c.static, &c.nxdomain, &c.refused, &c.dropped, &c.malformed} {
			x.Reset()
		}
	}
}
