package gslb

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/dataplane/geoip/geoiptest"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

const geoSpec = `
127.8.1.0/24 continent=EU country=DE country-name=Germany state=BY state-name=Bavaria
127.8.2.0/24 continent=NA country=US state=NY state-name="New York" isp="Example Cable" org="Example Holdings"
127.8.11.0/24 continent=EU country=DE
127.8.12.0/24 continent=NA country=US
fd00:8:1::/48 continent=EU country=DE
`

func geoStore(t testing.TB) *geoip.Store {
	t.Helper()
	p := filepath.Join(t.TempDir(), "geo.mmdb")
	if err := geoiptest.WriteFile(p, geoSpec); err != nil {
		t.Fatal(err)
	}
	set, err := geoip.LoadFiles([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	st := &geoip.Store{}
	st.Replace(set)
	return st
}

func TestGeoMatches(t *testing.T) {
	a := netip.MustParseAddr
	st := geoStore(t)
	p := &plan{regions: map[string]*Region{
		"/Common/europe": {Members: []Match{{Kind: MatchContinent, Name: "EU"}}},
	}}
	de, us, nowhere, de6 := a("127.8.1.7"), a("127.8.2.7"), a("127.8.3.7"), a("fd00:8:1::53")
	cases := []struct {
		m    Match
		addr netip.Addr
		want bool
	}{
		{Match{Kind: MatchCountry, Name: "DE"}, de, true},
		{Match{Kind: MatchCountry, Name: "de"}, de, true},
		{Match{Kind: MatchCountry, Name: "DE"}, us, false},
		{Match{Kind: MatchCountry, Name: "DE"}, de6, true},
		{Match{Not: true, Kind: MatchCountry, Name: "DE"}, us, true},
		{Match{Kind: MatchContinent, Name: "NA"}, us, true},
		{Match{Kind: MatchContinent, Name: "--"}, nowhere, true},
		{Match{Kind: MatchContinent, Name: "--"}, de, false},
		{Match{Kind: MatchContinent, Name: "EU"}, nowhere, false},
		{Match{Not: true, Kind: MatchContinent, Name: "EU"}, nowhere, true},
		{Match{Kind: MatchState, Name: "US/New York"}, us, true},
		{Match{Kind: MatchState, Name: "US/NY"}, us, true},
		{Match{Kind: MatchState, Name: "DE/New York"}, us, false},
		{Match{Kind: MatchState, Name: "DE/Bavaria"}, de, true},
		{Match{Kind: MatchISP, Name: "Example Cable"}, us, true},
		{Match{Kind: MatchISP, Name: "/Common/Example Holdings"}, us, true},
		{Match{Kind: MatchISP, Name: "Example Cable"}, de, false},
		{Match{Kind: MatchRegion, Name: "/Common/europe"}, de, true},
		{Match{Kind: MatchRegion, Name: "/Common/europe"}, us, false},
	}
	for _, c := range cases {
		if got := p.matchLDNS(c.m, c.addr, &geoAddr{store: st, addr: c.addr}, 0); got != c.want {
			t.Errorf("LDNS %v %+v: %v, want %v", c.addr, c.m, got, c.want)
		}
		tg := topoTarget{addr: c.addr}
		if got := p.matchServer(c.m, tg, &geoAddr{store: st, addr: c.addr}, 0); got != c.want {
			t.Errorf("server %v %+v: %v, want %v", c.addr, c.m, got, c.want)
		}
		// Without a database a geographic match never matches, a
		// negated one always does.
		if got := p.matchLDNS(c.m, c.addr, &geoAddr{store: &geoip.Store{}, addr: c.addr}, 0); c.m.Kind != MatchRegion && got != c.m.Not {
			t.Errorf("no database: LDNS %v %+v: %v", c.addr, c.m, got)
		}
	}
}

func geoConfig() *Config {
	a := netip.MustParseAddr
	return &Config{
		Datacenters: map[string]*Datacenter{"/Common/dc-eu": {Name: "/Common/dc-eu"}, "/Common/dc-us": {Name: "/Common/dc-us"}},
		Servers: map[string]*Host{
			"/Common/eu-ltm": {Name: "/Common/eu-ltm", Datacenter: "/Common/dc-eu", Addresses: []netip.Addr{a("127.8.11.1")},
				VirtualServers: []*VirtualServer{{Name: "vs", Destination: netip.MustParseAddrPort("127.8.11.10:80")}}},
			"/Common/us-ltm": {Name: "/Common/us-ltm", Datacenter: "/Common/dc-us", Addresses: []netip.Addr{a("127.8.12.1")},
				VirtualServers: []*VirtualServer{{Name: "vs", Destination: netip.MustParseAddrPort("127.8.12.10:80")}}},
		},
		Pools: map[string]*Pool{"/Common/app": {Name: "/Common/app", Mode: Topology, Members: []PoolMember{
			{Server: "/Common/eu-ltm", VirtualServer: "vs"}, {Server: "/Common/us-ltm", VirtualServer: "vs", Order: 1}}}},
		WideIPs: map[string]*WideIP{"/Common/www.geo.test": {Name: "/Common/www.geo.test", Pools: []WideIPPool{{Pool: "/Common/app"}}}},
		Topology: []TopologyRecord{
			{LDNS: Match{Kind: MatchCountry, Name: "DE"}, Server: Match{Kind: MatchContinent, Name: "EU"}, Score: 100},
			{LDNS: Match{Kind: MatchState, Name: "US/New York"}, Server: Match{Kind: MatchCountry, Name: "US"}, Score: 100},
		},
	}
}

// A topology pool answers each LDNS with the virtual server of its own
// country, over a real UDP listener; with the database unloaded (the same
// plan), no record matches and the pool answers with both in turn.
func TestGeoTopologyAnswers(t *testing.T) {
	st := geoStore(t)
	cfg := geoConfig()
	cfg.Geo = st
	listen := freeAddr(t, "127.8.0.53")
	cfg.Listeners = []Listener{{Name: "/Common/dns", Addr: listen, Protocol: "udp"}}
	newServer(t, cfg, Options{})
	eu, us := netip.MustParseAddr("127.8.11.10"), netip.MustParseAddr("127.8.12.10")
	for _, c := range []struct {
		ldns string
		want netip.Addr
	}{{"127.8.1.9", eu}, {"127.8.2.9", us}} {
		for range 3 {
			m := queryNet(t, netip.MustParseAddr(c.ldns), listen, "udp", "www.geo.test.", dns.TypeA)
			if got := gslbtest.Addrs(m); len(got) != 1 || got[0] != c.want {
				t.Fatalf("LDNS %s: %v, want %v", c.ldns, got, c.want)
			}
		}
	}
	st.Replace(nil)
	seen := map[netip.Addr]bool{}
	for range 4 {
		m := queryNet(t, netip.MustParseAddr("127.8.1.9"), listen, "udp", "www.geo.test.", dns.TypeA)
		for _, a := range gslbtest.Addrs(m) {
			seen[a] = true
		}
	}
	if !seen[eu] || !seen[us] {
		t.Errorf("without a database: answers %v, want both in turn", seen)
	}
}

func TestGeoMatchRefused(t *testing.T) {
	for _, c := range []struct {
		m    Match
		want string
	}{
		{Match{Kind: MatchCountry, Name: "Germany"}, "two-letter"},
		{Match{Kind: MatchContinent, Name: "Europe"}, "not one of AF"},
		{Match{Kind: MatchState, Name: "New York"}, "COUNTRY/STATE"},
		{Match{Kind: MatchState, Name: "USA/New York"}, "COUNTRY/STATE"},
	} {
		cfg := geoConfig()
		cfg.Topology = []TopologyRecord{{LDNS: c.m, Server: Match{Kind: MatchCountry, Name: "US"}}}
		if _, err := Compile(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.m, err, c.want)
		}
	}
}

// BenchmarkGeoTopology is a topology answer whose records match on
// country and state (each scoring looks the LDNS and the members up), next
// to the same pool with subnet records, which never look up.
func BenchmarkGeoTopology(b *testing.B) {
	st := geoStore(b)
	for _, name := range []string{"geo", "subnet"} {
		b.Run(name, func(b *testing.B) {
			cfg := geoConfig()
			cfg.Geo = st
			if name == "subnet" {
				pfx := netip.MustParsePrefix
				cfg.Topology = []TopologyRecord{
					{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.8.1.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.8.11.0/24")}, Score: 100},
					{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.8.2.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.8.12.0/24")}, Score: 100},
				}
			}
			s := newServer(b, cfg, Options{})
			q := new(dns.Msg)
			q.SetQuestion("www.geo.test.", dns.TypeA)
			src := netip.MustParseAddr("127.8.1.9")
			b.ReportAllocs()
			for b.Loop() {
				m, _ := s.Answer(q, src, true)
				if len(m.Answer) != 1 {
					b.Fatal(m)
				}
			}
		})
	}
}
