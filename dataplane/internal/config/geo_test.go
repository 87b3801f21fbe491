package config

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/dataplane/geoip/geoiptest"
)

// geoStore is a database placing 127.97.1.0/24 in California, 127.97.2.0/24
// in New York, 127.97.3.0/24 in Germany (no state) and fd97:3::/32 in
// Germany too; 127.97.4.0/24 is not in it.
func geoStore(t testing.TB) *geoip.Store {
	t.Helper()
	b, err := geoiptest.Build(`
127.97.1.0/24 continent=NA country=US state=CA state-name=California
127.97.2.0/24 continent=NA country=US state=NY state-name="New York"
127.97.3.0/24 continent=EU country=DE
fd97:3::/32 continent=EU country=DE
`)
	if err != nil {
		t.Fatal(err)
	}
	db, err := geoip.OpenBytes("test.mmdb", b)
	if err != nil {
		t.Fatal(err)
	}
	st := &geoip.Store{}
	st.Replace(geoip.NewSet(db))
	return st
}

func TestSourceMatchGeo(t *testing.T) {
	st := geoStore(t)
	rng := func(lo, hi string) AddrRange {
		return AddrRange{Low: netip.MustParseAddr(lo), High: netip.MustParseAddr(hi)}
	}
	geo := func(st *geoip.Store, countries []string, regions ...GeoRegion) *GeoMatch {
		return &GeoMatch{Store: st, Countries: countries, Regions: regions}
	}
	de := &SourceMatch{Geo: geo(st, []string{"DE"})}
	california := &SourceMatch{Geo: geo(st, nil, GeoRegion{"US", "california"})}
	nyCode := &SourceMatch{Geo: geo(st, nil, GeoRegion{"US", "NY"})}
	regionElsewhere := &SourceMatch{Geo: geo(st, nil, GeoRegion{"DE", "California"})}
	us := &SourceMatch{Geo: geo(st, []string{"US"})}
	// Addresses and geo entries in one list: either admits.
	mixed := NewSourceMatch([]AddrRange{rng("127.97.4.7", "127.97.4.7")}, []PortRange{{1000, 1999}})
	mixed.Geo = geo(st, []string{"DE"})
	noDB := &SourceMatch{Geo: geo(&geoip.Store{}, []string{"US", "DE"})}
	nilStore := &SourceMatch{Geo: geo(nil, []string{"US"})}
	for _, tc := range []struct {
		name   string
		m      *SourceMatch
		client string
		want   bool
	}{
		{"country", de, "127.97.3.9:1000", true},
		{"country, IPv6", de, "[fd97:3::1]:1000", true},
		{"country, IPv4-mapped", de, "[::ffff:127.97.3.9]:1000", true},
		{"other country", de, "127.97.1.9:1000", false},
		{"not in the database", de, "127.97.4.9:1000", false},
		{"region by name, any case", california, "127.97.1.9:1000", true},
		{"other region", california, "127.97.2.9:1000", false},
		{"region by code", nyCode, "127.97.2.9:1000", true},
		{"region of another country", regionElsewhere, "127.97.1.9:1000", false},
		{"country holds its regions", us, "127.97.2.9:1000", true},
		{"mixed: the address", mixed, "127.97.4.7:1500", true},
		{"mixed: the country", mixed, "127.97.3.1:1500", true},
		{"mixed: neither", mixed, "127.97.4.8:1500", false},
		{"mixed: the country, another port", mixed, "127.97.3.1:2000", false},
		{"no database loaded", noDB, "127.97.1.9:1000", false},
		{"no store", nilStore, "127.97.1.9:1000", false},
	} {
		if got := tc.m.Admits(netip.MustParseAddrPort(tc.client)); got != tc.want {
			t.Errorf("%s: Admits(%s) = %v, want %v", tc.name, tc.client, got, tc.want)
		}
	}
	// A database loaded after the commit is read at once.
	later := &geoip.Store{}
	m := &SourceMatch{Geo: geo(later, []string{"DE"})}
	c := netip.MustParseAddrPort("127.97.3.9:1000")
	if m.Admits(c) {
		t.Fatal("admitted with no database")
	}
	later.Replace(st.Set())
	if !m.Admits(c) {
		t.Fatal("not admitted once the database is loaded")
	}
}

// The lookup a geo list costs a client outside its addresses allocates
// nothing.
func TestSourceMatchGeoAllocs(t *testing.T) {
	m := &SourceMatch{Addrs: []AddrRange{PrefixRange(netip.MustParsePrefix("10.0.0.0/8"))}, Geo: &GeoMatch{Store: geoStore(t), Regions: []GeoRegion{{"US", "New York"}}}}
	c := netip.MustParseAddrPort("127.97.2.3:40000")
	if !m.Admits(c) {
		t.Fatal("not admitted")
	}
	if n := testing.AllocsPerRun(100, func() { m.Admits(c) }); n != 0 {
		t.Errorf("Admits allocates %v times", n)
	}
}

func BenchmarkSourceMatchGeo(b *testing.B) {
	m := &SourceMatch{Addrs: []AddrRange{PrefixRange(netip.MustParsePrefix("10.0.0.0/8"))}, Geo: &GeoMatch{Store: geoStore(b), Countries: []string{"DE"}}}
	c := netip.MustParseAddrPort("127.97.3.3:40000")
	for b.Loop() {
		m.Admits(c)
	}
}
