package gslb

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"unsafe"

	"github.com/openltm/openltm/dataplane/geoip"
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
	// pool is the pool's full path whatever its type: a record's `pool
	// /Common/p` matches the pool p of the asking wide IP's type, so
	// pool-lb-mode topology ranks AAAA, SVCB, HTTPS (and the other name)
	// pools as it ranks A pools [M: a topology record names a pool by
	// path only; a wide IP lists pools of its own type, so the path is
	// enough to tell them apart].
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

// continents are BIG-IP's continent codes; "--" is an address the
// database does not place.
var continents = map[string]bool{"AF": true, "AN": true, "AS": true, "EU": true, "NA": true, "OC": true, "SA": true, "--": true}

// isCountry is an ISO 3166-1 alpha-2 code's shape.
func isCountry(s string) bool {
	return len(s) == 2 && isLetter(s[0]) && isLetter(s[1])
}

func isLetter(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }

func checkMatch(m Match, regions map[string]*Region, where string) error {
	if _, ok := kindRank[m.Kind]; !ok {
		return fmt.Errorf("%s: unknown match kind %q", where, m.Kind)
	}
	switch m.Kind {
	case MatchContinent:
		if !continents[strings.ToUpper(m.Name)] {
			return fmt.Errorf("%s: continent %q is not one of AF AN AS EU NA OC SA --", where, m.Name)
		}
	case MatchCountry:
		if !isCountry(m.Name) {
			return fmt.Errorf("%s: country %q is not a two-letter ISO 3166 code (US, DE, ...)", where, m.Name)
		}
	case MatchState:
		if cc, st, ok := strings.Cut(m.Name, "/"); !ok || !isCountry(cc) || st == "" {
			return fmt.Errorf("%s: state %q is not COUNTRY/STATE (\"US/New York\")", where, m.Name)
		}
	case MatchISP:
		if m.Name == "" {
			return fmt.Errorf("%s: isp needs a name", where)
		}
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
		p.geoTopo = p.geoTopo || p.geoMatch(r.LDNS, 0) || p.geoMatch(r.Server, 0)
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

// geoMatch says whether m reads the geolocation database (itself or
// through a region), so plans without such a match never look up.
func (p *plan) geoMatch(m Match, depth int) bool {
	switch m.Kind {
	case MatchContinent, MatchCountry, MatchState, MatchISP:
		return true
	case MatchRegion:
		if r := p.regions[m.Name]; r != nil && depth < maxRegionDepth {
			for _, x := range r.Members {
				if p.geoMatch(x, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

// geoAddr is one address's geolocation, looked up the first time a
// record asks for it and kept for the rest of the scoring.
type geoAddr struct {
	store  *geoip.Store
	addr   netip.Addr
	looked bool
	found  bool
	loc    geoip.Location
}

func (g *geoAddr) location() (*geoip.Location, bool) {
	if g == nil {
		return nil, false
	}
	if !g.looked {
		g.looked = true
		g.found = g.addr.IsValid() && g.store.Lookup(g.addr, &g.loc)
	}
	return &g.loc, g.found
}

// matchGeo is a continent, country, state or isp match against an
// address's location. An address the database does not place matches
// only `continent --`; without a database nothing matches.
func matchGeo(m Match, g *geoAddr) bool {
	if g == nil || !g.store.Loaded() {
		return false
	}
	l, found := g.location()
	switch m.Kind {
	case MatchContinent:
		if m.Name == "--" {
			return !g.addr.IsValid() || l.Continent == ""
		}
		return found && strings.EqualFold(l.Continent, m.Name)
	case MatchCountry:
		return found && strings.EqualFold(l.Country, m.Name)
	case MatchState:
		cc, st, _ := strings.Cut(m.Name, "/")
		return found && strings.EqualFold(l.Country, cc) &&
			(strings.EqualFold(l.StateName, st) || strings.EqualFold(l.State, st))
	case MatchISP:
		name := m.Name
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:] // isp /Common/Comcast
		}
		return found && (strings.EqualFold(l.ISP, name) || strings.EqualFold(l.Org, name))
	}
	return false
}

// topoScore is the score of the first record (in sorted order) whose LDNS
// side matches client and whose server side matches t; ok is false when
// no record matches. lg, when not nil, is client's geolocation, kept by
// the caller across the members it scores.
func (p *plan) topoScore(client netip.Addr, t topoTarget, lg *geoAddr) (score int, ok bool) {
	var sg *geoAddr
	var own geoAddr
	if p.geoTopo {
		if lg == nil || lg.addr != client || lg.store != p.cfg.Geo {
			own = geoAddr{store: p.cfg.Geo, addr: client}
			lg = &own
		}
		sg = &geoAddr{store: p.cfg.Geo, addr: t.addr}
	} else {
		lg = nil
	}
	for _, r := range p.topo {
		if p.matchLDNS(r.rec.LDNS, client, lg, 0) && p.matchServer(r.rec.Server, t, sg, 0) {
			return r.rec.Score, true
		}
	}
	return 0, false
}

const maxRegionDepth = 8

func (p *plan) matchLDNS(m Match, a netip.Addr, g *geoAddr, depth int) bool {
	var hit bool
	switch m.Kind {
	case MatchSubnet:
		hit = a.IsValid() && m.Prefix.Contains(a)
	case MatchRegion:
		hit = depth < maxRegionDepth && p.inRegion(m.Name, func(x Match) bool { return p.matchLDNS(x, a, g, depth+1) })
	case MatchContinent, MatchCountry, MatchState, MatchISP:
		hit = matchGeo(m, g)
	}
	return hit != m.Not
}

func (p *plan) matchServer(m Match, t topoTarget, g *geoAddr, depth int) bool {
	var hit bool
	switch m.Kind {
	case MatchSubnet:
		hit = t.addr.IsValid() && m.Prefix.Contains(t.addr)
	case MatchDatacenter:
		hit = t.dc != "" && t.dc == m.Name
	case MatchPool:
		hit = t.pool == m.Name
	case MatchRegion:
		hit = depth < maxRegionDepth && p.inRegion(m.Name, func(x Match) bool { return p.matchServer(x, t, g, depth+1) })
	case MatchContinent, MatchCountry, MatchState, MatchISP:
		hit = t.addr.IsValid() && matchGeo(m, g)
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

// topoMemo keeps the topology scores of members for one client address,
// one per UDP reader. Why: a member's score for a client is fixed for the
// life of a plan (records, regions and members are all the plan's), a
// query scores every available member of its pool, and the queries of a
// reader's batch mostly come from one LDNS: scoring (each record's LDNS
// and server sides in turn) was a third of a topology wide IP's answer
// path, and a memo hit costs a pointer compare. Entries are indexed by
// member and belong to the generation that was current when stored; a
// new client or plan starts a new generation instead of clearing them.
type topoMemo struct {
	plan   *plan
	geo    *geoip.Set // the databases the scores were made with (geoTopo plans)
	client netip.Addr
	gen    uint32
	slots  [topoMemoSlots]topoMemoSlot
}

type topoMemoSlot struct {
	m     *member
	gen   uint32
	score int
}

// topoMemoSlots is the memo's size: more than a pool's members
// (candidates are at most len(request{}.cands)), a power of two.
const topoMemoSlots = 32

// score is m's topology score for client under p, from the memo when it
// has it.
func (t *topoMemo) score(p *plan, client netip.Addr, m *member, lg *geoAddr) int {
	var geo *geoip.Set
	if p.geoTopo {
		geo = p.cfg.Geo.Set() // a reload of the databases changes scores
	}
	if t.plan != p || t.client != client || t.geo != geo {
		t.plan, t.client, t.geo = p, client, geo
		if t.gen++; t.gen == 0 { // wrapped: old entries could look current
			t.slots = [topoMemoSlots]topoMemoSlot{}
			t.gen = 1
		}
	}
	h := uint64(uintptr(unsafe.Pointer(m))) * 0x9E3779B97F4A7C15 >> (64 - 5)
	e := &t.slots[h]
	if e.m == m && e.gen == t.gen {
		return e.score
	}
	sc, _ := p.topoScore(client, m.topoTarget(), lg)
	*e = topoMemoSlot{m: m, gen: t.gen, score: sc}
	return sc
}

// topoTarget is what the server side of a topology record matches
// against for m.
func (m *member) topoTarget() topoTarget {
	return topoTarget{addr: m.vs.addr, dc: m.vs.host.dc.name, pool: m.pool.full}
}
