package transcripts

import (
	"github.com/openltm/openltm/dataplane/geoip/geoiptest"
	"github.com/rogpeppe/go-internal/testscript"
)

// mmdb FILE SPEC: write the MaxMind DB the spec file describes (see
// dataplane/geoip/geoiptest), a geolocation database for loopback
// addresses that no real one places.
func cmdMMDB(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mmdb FILE SPEC")
	}
	if err := geoiptest.WriteFile(ts.MkAbs(args[0]), ts.ReadFile(args[1])); err != nil {
		ts.Fatalf("mmdb: %v", err)
	}
}
