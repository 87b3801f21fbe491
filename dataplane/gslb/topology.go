package gslb

import (
	"fmt"
	"net/netip"
	"sort"
)

type topoRec struct {
	rec        TopologyRecord
	ldnsRank   int
	serverRank int
}

// topoTarget is what the server side of a record is matched against: a
// pool member (its virtual server's address, datacenter and pool) or, for
// pool-lb-mode topology, a pool alone.
type topoTarget struct {
	addr netip.Addr // invalid for a pool
	dc   string
	pool string
}

// kindRank orders match kinds from the most to the least specific, the
// way topology-longest-match sorts records.
var kindRank = map[MatchKind]int{
	MatchSubnet: 8, MatchRegion: 7, MatchISP: 6, MatchState: 5,
	MatchCountry: 4, MatchContinent: 3, MatchPool: 2, MatchDatacenter: 1,
}

// rank is a match's specificity: a non-negated entry before any negated
// one, then by kind, then subnets by prefix length.
func rank(m Match) int {
	r := kindRank[m.Kind] * 256
	if m.Kind == MatchSubnet {
		r += m.Prefix.Bits() + 1
	}
	if !m.Not {
		r += 4096
	}
	return r
}

func checkMatch(m Match, regions map[string]*Region, where string) error {
	if _, ok := kindRank[m.Kind]; !ok {
		return fmt.Errorf("%s: unknown match kind %q", where, m.Kind)
	}
	switch m.Kind {
	case MatchSubnet:
		if !m.Prefix.IsValid() {
			return fmt.Errorf("%s: subnet needs an address/prefix", where)
		}
	case MatchRegion:
		if regions[m.Name] == nil {
			return fmt.Errorf("%s: region %q does not exist", where, m.Name)
		}
	}
	return nil
}

func (p *plan) compileTopology() error {
	for name, r := range p.regions {
		for _, m := range r.Members {
			if err := checkMatch(m, p.regions, "gtm region "+name); err != nil {
				return err
			}
		}
	}
	for i, r := range p.cfg.Topology {
		where := fmt.Sprintf("gtm topology record %d", i+1)
		if err := checkMatch(r.LDNS, p.regions, where); err != nil {
			return err
		}
		if err := checkMatch(r.Server, p.regions, where); err != nil {
			return err
		}
		p.topo = append(p.topo, &topoRec{rec: r, ldnsRank: rank(r.LDNS), serverRank: rank(r.Server)})
	}
	// Normalise subnets so Contains works on the masked prefix.
	for _, t := range p.topo {
		t.rec.LDNS.Prefix = t.rec.LDNS.Prefix.Masked()
		t.rec.Server.Prefix = t.rec.Server.Prefix.Masked()
	}
	orderOnly := p.settings.TopologyOrderOnly
	sort.SliceStable(p.topo, func(i, j int) bool {
		a, b := p.topo[i], p.topo[j]
		if !orderOnly {
			if a.ldnsRank != b.ldnsRank {
				return a.ldnsRank > b.ldnsRank
			}
			if a.serverRank != b.serverRank {
				return a.serverRank > b.serverRank
			}
		}
		return a.rec.Order < b.rec.Order
	})
	return nil
}

// topoScore is the score of the first record (in sorted order) whose LDNS
// side matches client and whose server side matches t; ok is false when
// no record matches.
func (p *plan) topoScore(client netip.Addr, t topoTarget) (score int, ok bool) {
	for _, r := range p.topo {
		if p.matchLDNS(r.rec.LDNS, client, 0) && p.matchServer(r.rec.Server, t, 0) {
			return r.rec.Score, true
		}
	}
	return 0, false
}

const maxRegionDepth = 8

func (p *plan) matchLDNS(m Match, a netip.Addr, depth int) bool {
	var hit bool
	switch m.Kind {
	case MatchSubnet:
		hit = a.IsValid() && m.Prefix.Contains(a)
	case MatchRegion:
		hit = depth < maxRegionDepth && p.inRegion(m.Name, func(x Match) bool { return p.matchLDNS(x, a, depth+1) })
	}
	return hit != m.Not
}

func (p *plan) matchServer(m Match, t topoTarget, depth int) bool {
	var hit bool
	switch m.Kind {
	case MatchSubnet:
		hit = t.addr.IsValid() && m.Prefix.Contains(t.addr)
	case MatchDatacenter:
		hit = t.dc != "" && t.dc == m.Name
	case MatchPool:
		hit = t.pool == m.Name
	case MatchRegion:
		hit = depth < maxRegionDepth && p.inRegion(m.Name, func(x Match) bool { return p.matchServer(x, t, depth+1) })
	}
	return hit != m.Not
}

// inRegion reports whether any member of the region matches.
func (p *plan) inRegion(name string, match func(Match) bool) bool {
	r := p.regions[name]
	if r == nil {
		return false
	}
	for _, m := range r.Members {
		if match(m) {
			return true
		}
	}
	return false
}
