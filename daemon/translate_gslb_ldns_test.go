package daemon

import (
	"testing"
	"time"

	"github.com/openltm/openltm/objects"
)

// The LDNS table's global settings reach the GSLB: inactive-ldns-ttl,
// inactive-paths-ttl (seconds) and cache-ldns-servers.
func TestTranslateGSLBLDNSSettings(t *testing.T) {
	cases := []struct {
		conf              string
		ldnsTTL, pathsTTL time.Duration
		noCache           bool
	}{
		{"", 2419200 * time.Second, 604800 * time.Second, false},
		{"gtm global-settings metrics { inactive-ldns-ttl 3600 inactive-paths-ttl 600 }\n", time.Hour, 10 * time.Minute, false},
		{"gtm global-settings general { cache-ldns-servers no }\n", 2419200 * time.Second, 604800 * time.Second, true},
		{"gtm global-settings general { cache-ldns-servers yes }\n", 2419200 * time.Second, 604800 * time.Second, false},
	}
	for _, c := range cases {
		gc, _, err := TranslateGSLB(objects.Default, gtmConfig(t, c.conf))
		if err != nil {
			t.Fatalf("%q: %v", c.conf, err)
		}
		st := gc.Settings
		if st.InactiveLDNSTTL != c.ldnsTTL || st.InactivePathsTTL != c.pathsTTL || st.NoCacheLDNS != c.noCache {
			t.Errorf("%q: inactive-ldns-ttl %v inactive-paths-ttl %v no-cache %v, want %v %v %v",
				c.conf, st.InactiveLDNSTTL, st.InactivePathsTTL, st.NoCacheLDNS, c.ldnsTTL, c.pathsTTL, c.noCache)
		}
	}
}
