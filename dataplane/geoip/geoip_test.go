package geoip_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/dataplane/geoip/geoiptest"
)

const citySpec = `
type GeoIP2-City
127.8.1.0/24 continent=EU country=DE country-name=Germany state=BY state-name=Bavaria city=Munich postal=80331 latitude=48.1 longitude=11.5
127.8.2.0/24 continent=NA country=US country-name="United States" state=NY state-name="New York"
fd00:8:3::/48 continent=AS country=JP country-name=Japan
`

const asnSpec = `
type GeoLite2-ASN
127.8.1.0/24 org="Example Telekom" asn=64501
127.8.2.0/24 isp="Example Cable" org="Example Cable Holdings" asn=64502
fd00:8:3::/48 org="Example Japan" asn=64503
`

func write(t testing.TB, name, spec string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := geoiptest.WriteFile(p, spec); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLookupMerged(t *testing.T) {
	set, err := geoip.LoadFiles([]string{write(t, "city.mmdb", citySpec), write(t, "asn.mmdb", asnSpec)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr  string
		found bool
		want  geoip.Location
	}{
		{"127.8.1.9", true, geoip.Location{Continent: "EU", Country: "DE", CountryName: "Germany", State: "BY", StateName: "Bavaria",
			City: "Munich", Postal: "80331", Latitude: 48.1, Longitude: 11.5, ISP: "Example Telekom", Org: "Example Telekom", ASN: 64501}},
		{"127.8.2.200", true, geoip.Location{Continent: "NA", Country: "US", CountryName: "United States", State: "NY", StateName: "New York",
			ISP: "Example Cable", Org: "Example Cable Holdings", ASN: 64502}},
		{"::ffff:127.8.2.1", true, geoip.Location{Continent: "NA", Country: "US", CountryName: "United States", State: "NY", StateName: "New York",
			ISP: "Example Cable", Org: "Example Cable Holdings", ASN: 64502}},
		{"fd00:8:3::1", true, geoip.Location{Continent: "AS", Country: "JP", CountryName: "Japan", ISP: "Example Japan", Org: "Example Japan", ASN: 64503}},
		{"127.8.9.1", false, geoip.Location{}},
		{"fd00:8:4::1", false, geoip.Location{}},
	}
	for _, tc := range tests {
		var l geoip.Location
		found := set.Lookup(netip.MustParseAddr(tc.addr), &l)
		if found != tc.found || l != tc.want {
			t.Errorf("%s: got %v %+v, want %v %+v", tc.addr, found, l, tc.found, tc.want)
		}
	}
	dbs := set.Databases()
	if len(dbs) != 2 || dbs[0].Type != "GeoIP2-City" || dbs[1].Type != "GeoLite2-ASN" || dbs[0].Nodes == 0 || dbs[0].Built.IsZero() {
		t.Errorf("databases: %+v %+v", dbs[0], dbs[1])
	}
}

func TestStoreReplace(t *testing.T) {
	var st geoip.Store
	var l geoip.Location
	a := netip.MustParseAddr("127.8.1.1")
	if st.Loaded() || st.Lookup(a, &l) {
		t.Fatal("empty store answered")
	}
	var nilStore *geoip.Store
	if nilStore.Lookup(a, &l) {
		t.Fatal("nil store answered")
	}
	s1, err := geoip.LoadFiles([]string{write(t, "a.mmdb", "127.8.1.0/24 country=DE")})
	if err != nil {
		t.Fatal(err)
	}
	st.Replace(s1)
	if !st.Lookup(a, &l) || l.Country != "DE" {
		t.Fatalf("after load: %+v", l)
	}
	s2, err := geoip.LoadFiles([]string{write(t, "b.mmdb", "127.8.1.0/24 country=FR")})
	if err != nil {
		t.Fatal(err)
	}
	st.Replace(s2)
	if !st.Lookup(a, &l) || l.Country != "FR" {
		t.Fatalf("after reload: %+v", l)
	}
	st.Replace(nil)
	if st.Loaded() || st.Lookup(a, &l) || l.Country != "" {
		t.Fatalf("after unload: %+v", l)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.mmdb")
	if err := os.WriteFile(junk, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := write(t, "good.mmdb", "127.8.1.0/24 country=DE")
	tests := []struct {
		paths []string
		want  string
	}{
		{[]string{junk}, "junk.mmdb: not a MaxMind DB file"},
		{[]string{good, filepath.Join(dir, "missing.mmdb")}, "no such file"},
	}
	for _, tc := range tests {
		s, err := geoip.LoadFiles(tc.paths)
		if err == nil || !strings.Contains(err.Error(), tc.want) || s != nil {
			t.Errorf("%v: got %v, %v; want error with %q", tc.paths, s, err, tc.want)
		}
	}
}

func TestSpecErrors(t *testing.T) {
	for _, spec := range []string{"127.8.1.0/24 planet=Mars", "127.8.1.0/33 country=DE", `127.8.1.0/24 country="DE`, "127.8.1.0/24 asn=x", "type"} {
		if _, err := geoiptest.Build(spec); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
}

// BenchmarkLookup is a City plus an ASN lookup, the case GTM and whereis
// pay per query when databases are loaded.
func BenchmarkLookup(b *testing.B) {
	set, err := geoip.LoadFiles([]string{write(b, "city.mmdb", citySpec), write(b, "asn.mmdb", asnSpec)})
	if err != nil {
		b.Fatal(err)
	}
	a := netip.MustParseAddr("127.8.2.7")
	var l geoip.Location
	b.ReportAllocs()
	for b.Loop() {
		set.Lookup(a, &l)
	}
	if l.Country != "US" {
		b.Fatal(l)
	}
}

// Lookups run while the databases are replaced: each sees one whole set,
// the old or the new, never a mix or a freed one.
func TestStoreReloadWhileLooking(t *testing.T) {
	de, err := geoip.LoadFiles([]string{write(t, "de.mmdb", "127.8.1.0/24 continent=EU country=DE")})
	if err != nil {
		t.Fatal(err)
	}
	us, err := geoip.LoadFiles([]string{write(t, "us.mmdb", "127.8.1.0/24 continent=NA country=US")})
	if err != nil {
		t.Fatal(err)
	}
	var st geoip.Store
	st.Replace(de)
	a := netip.MustParseAddr("127.8.1.1")
	done := make(chan string, 2)
	for range 2 {
		go func() {
			var l geoip.Location
			for range 2000 {
				st.Lookup(a, &l)
				if !(l.Country == "DE" && l.Continent == "EU" || l.Country == "US" && l.Continent == "NA") {
					done <- l.Country + "/" + l.Continent
					return
				}
			}
			done <- ""
		}()
	}
	for i := range 200 {
		if i%2 == 0 {
			st.Replace(us)
		} else {
			st.Replace(de)
		}
	}
	for range 2 {
		if bad := <-done; bad != "" {
			t.Errorf("a lookup saw %s", bad)
		}
	}
}
