package daemon

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/dataplane/geoip/geoiptest"
)

// TestTrafficMatchingGeo: a source address list's geo entries admit the
// clients the loaded database places in their countries and regions,
// beside the list's addresses, on real connections from loopback
// addresses the test database places; with no database loaded they admit
// nobody and the commit says so; a database loaded later, and a list
// changed, are acted on at once; geo entries in a destination list are
// not listened on, saying so; a bad entry is refused with nothing
// changed.
func TestTrafficMatchingGeo(t *testing.T) {
	labelServer(t, "127.97.5.100:7000", "S1 Response")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	b, err := geoiptest.Build(`
127.97.1.0/24 continent=NA country=US state=CA state-name=California
127.97.2.0/24 continent=NA country=US state=NY state-name="New York"
127.97.3.0/24 continent=EU country=DE
`)
	if err != nil {
		t.Fatal(err)
	}
	db, err := geoip.OpenBytes("test.mmdb", b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		"create ltm pool p members add { 127.97.5.100:7000 }",
		`create net address-list clients addresses add { 127.97.4.7 } geo add { DE { } "US:New York" { } }`,
		"create ltm traffic-matching-criteria t destination-address-inline 127.97.5.1 destination-port-inline 8086 source-address-list clients",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, errText := run(t, s, "create ltm virtual v traffic-matching-criteria t pool p")
	if errText != "" || !strings.Contains(out, "no geolocation database is loaded: they admit no client until one is") {
		t.Fatalf("no warning without a database: %q %s", out, errText)
	}
	const vip = "127.97.5.1:8086"
	check := func(step string, want map[string]string) {
		t.Helper()
		for from, w := range want {
			eventually(t, 10*time.Second, step+": "+from+": "+w, func() bool {
				return slices.Contains(strings.Split(w, "|"), askFrom(t, from, vip))
			})
		}
	}
	check("no database", map[string]string{
		"127.97.4.7": "S1 Response",
		"127.97.3.5": "reset|refused", // during the handshake or after
		"127.97.2.5": "reset|refused",
	})
	e.GeoIP().Replace(geoip.NewSet(db))
	check("database loaded", map[string]string{
		"127.97.4.7": "S1 Response",
		"127.97.3.5": "S1 Response", // DE
		"127.97.2.5": "S1 Response", // US:New York
		"127.97.1.5": "reset|refused",
		"127.97.4.8": "reset|refused", // not in the database
	})
	if out, errText := run(t, s, "modify net address-list clients geo replace-all-with { US:California }"); errText != "" || strings.Contains(out, "geolocation") {
		t.Fatalf("modify: %q %s", out, errText)
	}
	check("list changed", map[string]string{
		"127.97.1.5": "S1 Response",
		"127.97.2.5": "reset|refused",
		"127.97.3.5": "reset|refused",
	})
	// Only geo entries: the virtual runs on them alone.
	if _, errText := run(t, s, "modify net address-list clients addresses none geo replace-all-with { us }"); errText != "" {
		t.Fatal(errText)
	}
	check("geo only", map[string]string{
		"127.97.2.5": "S1 Response",
		"127.97.4.7": "reset|refused",
	})
	for _, tc := range []struct{ cmd, err string }{
		{"modify net address-list clients geo add { USA }", `geo "USA" is not a country: use its two-letter ISO 3166 code`},
		{"modify net address-list clients geo add { US: }", `geo "US:" names no region after the colon`},
	} {
		if _, errText := run(t, s, tc.cmd); !strings.Contains(errText, tc.err) {
			t.Errorf("%s: %q, want %q", tc.cmd, errText, tc.err)
		}
	}
	check("unchanged after refusals", map[string]string{"127.97.1.5": "S1 Response", "127.97.3.5": "reset|refused"})
	// A destination list's geo entries: warned of, its addresses served.
	if _, errText := run(t, s, "create net address-list dsts addresses add { 127.97.5.2 } geo add { US }"); errText != "" {
		t.Fatal(errText)
	}
	if _, errText := run(t, s, "create ltm traffic-matching-criteria td destination-address-list dsts destination-port-inline 8087"); errText != "" {
		t.Fatal(errText)
	}
	out, errText = run(t, s, "create ltm virtual vd traffic-matching-criteria td pool p")
	if errText != "" || !strings.Contains(out, "its geo entries (US) are not listened on") {
		t.Fatalf("destination geo: %q %s", out, errText)
	}
	eventually(t, 10*time.Second, "destination list's address", func() bool { return askFrom(t, "127.97.3.5", "127.97.5.2:8087") == "S1 Response" })
}
