package daemon

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// A distributed application's wide IPs are NAME:TYPE (NAME alone is A),
// relative to its folder; its properties default as F5 documents them.
func TestTranslateDistApps(t *testing.T) {
	const wides = `
gtm wideip a /Common/www.ex.test { }
gtm wideip aaaa /Common/www.ex.test { }
gtm wideip a /Common/api.ex.test { }
gtm datacenter /Common/dc1 { }
gtm server /Common/s1 { datacenter /Common/dc1 addresses { 127.199.30.1 { } } }
`
	for _, tc := range []struct {
		name, text string
		want       *gslb.DistApp
		err        string
	}{
		{"defaults", `gtm distributed-app /Common/shop { wideips { www.ex.test:A { } /Common/api.ex.test { } www.ex.test:aaaa { } } }`,
			&gslb.DistApp{Name: "/Common/shop", Dependency: gslb.DependNone, PersistTTL: time.Hour,
				WideIPs: []string{"/Common/www.ex.test", "/Common/api.ex.test", gslb.Key(gslb.TypeAAAA, "/Common/www.ex.test")}}, ""},
		{"set", `gtm distributed-app /Common/shop { wideips { www.ex.test:A { } } dependency-level link persistence enabled ttl-persistence 60 disabled }`,
			&gslb.DistApp{Name: "/Common/shop", Dependency: gslb.DependLink, Persistence: true, PersistTTL: time.Minute, Disabled: true,
				WideIPs: []string{"/Common/www.ex.test"}}, ""},
		{"missing", `gtm distributed-app /Common/shop { wideips { nope.ex.test:A { } } }`, nil, "01020036:3: The requested wide IP (/Common/nope.ex.test A) was not found."},
		{"missing type", `gtm distributed-app /Common/shop { wideips { api.ex.test:AAAA { } } }`, nil, "(/Common/api.ex.test AAAA) was not found"},
		{"bad type", `gtm distributed-app /Common/shop { wideips { api.ex.test:PTR { } } }`, nil, "is not NAME or NAME:TYPE"},
		{"contexts", `gtm distributed-app /Common/shop { wideips { www.ex.test:A { } } disabled-contexts { dc1 { } /Common/s1 { type server } } }`,
			&gslb.DistApp{Name: "/Common/shop", Dependency: gslb.DependNone, PersistTTL: time.Hour, WideIPs: []string{"/Common/www.ex.test"},
				DisabledContexts: []gslb.DistAppContext{{Kind: gslb.DependDatacenter, Name: "/Common/dc1"}, {Kind: gslb.DependServer, Name: "/Common/s1"}}}, ""},
		{"context of another type", `gtm distributed-app /Common/shop { wideips { www.ex.test:A { } } disabled-contexts { dc1 { type server } } }`, nil,
			"01020036:3: The requested server (/Common/dc1) was not found."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc, _, err := TranslateGSLB(objects.Default, gtmConfig(t, wides+tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := gc.DistApps["/Common/shop"]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if err := gslb.Check(gc); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}
