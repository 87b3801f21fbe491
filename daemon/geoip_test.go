package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/geoip/geoiptest"
)

func TestGeoIPCommands(t *testing.T) {
	dir := t.TempDir()
	city := filepath.Join(t.TempDir(), "city.mmdb")
	if err := geoiptest.WriteFile(city, "127.8.1.0/24 continent=EU country=DE country-name=Germany state=BY state-name=Bavaria latitude=48.1 longitude=11.5"); err != nil {
		t.Fatal(err)
	}
	// The ASN database is found in STATE-DIR/geoip.
	if err := os.MkdirAll(filepath.Join(dir, "geoip"), 0o755); err != nil {
		t.Fatal(err)
	}
	asn := filepath.Join(dir, "geoip", "asn.mmdb")
	if err := geoiptest.WriteFile(asn, "type GeoLite2-ASN\n127.8.1.0/24 org=\"Example Telekom\" asn=64501"); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), GeoIPFiles: []string{city}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []struct {
		cmd      string
		out, err []string
	}{
		{cmd: "show sys geoip", out: []string{"Sys::GeoIP Databases", city, "GeoIP2-City", asn, "GeoLite2-ASN"}},
		{cmd: "run sys geoip lookup 127.8.1.7", out: []string{"name = 127.8.1.7\n", "continent = EU\n", "country code = DE\n", "country name = Germany\n",
			"region code = BY\n", "region name = Bavaria\n", "latitude = 48.1000\n", "isp = Example Telekom\n", "asn = 64501\n"}},
		{cmd: "run sys geoip lookup 127.8.2.7", out: []string{"name = 127.8.2.7\n", "country code = \n"}},
		{cmd: "run sys geoip lookup nowhere", err: []string{`"nowhere" is not an IP address`}},
		{cmd: "run sys geoip", err: []string{"needs lookup ADDRESS or reload"}},
		{cmd: "run sys geoip find 127.8.1.7", err: []string{"unknown operation"}},
		{cmd: "show sys geoip all", err: []string{"takes no options"}},
		{cmd: "run sys geoip reload", out: []string{"GeoLite2-ASN"}},
	} {
		out, err := run(t, s, c.cmd)
		for _, w := range c.out {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q in\n%s (err %s)", c.cmd, w, out, err)
			}
		}
		for _, w := range c.err {
			if !strings.Contains(err, w) {
				t.Errorf("%s: want error %q, got %q", c.cmd, w, err)
			}
		}
	}
	// A damaged file refuses the reload and keeps the databases in use.
	if err := os.WriteFile(asn, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, s, "run sys geoip reload"); !strings.Contains(err, "asn.mmdb: not a MaxMind DB file") {
		t.Errorf("reload of a damaged file: %q", err)
	}
	if out, _ := run(t, s, "run sys geoip lookup 127.8.1.7"); !strings.Contains(out, "asn = 64501") {
		t.Errorf("after a refused reload:\n%s", out)
	}
	// So does a start.
	if _, err := Open(Options{StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), GeoIPFiles: []string{asn}}); err == nil {
		t.Error("a damaged --geoip-db file: no error")
	}
}

func TestGeoIPNone(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	if out, _ := run(t, s, "show sys geoip"); !strings.Contains(out, "no geolocation database is loaded") {
		t.Errorf("show sys geoip: %q", out)
	}
	if _, err := run(t, s, "run sys geoip lookup 127.8.1.7"); !strings.Contains(err, "no geolocation database is loaded") {
		t.Errorf("lookup: %q", err)
	}
}
