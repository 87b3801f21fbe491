package sslfwd

import (
	"crypto/tls"
	"net/netip"
	"testing"
	"time"
)

// cert-lookup-by-ipaddr-port: what Lookup gives back for an address and
// port once a certificate was forged for the origin there.
func TestLookupByAddr(t *testing.T) {
	caKey := ecKey(t)
	ca := issue(t, caTmpl("Proxy CA"), nil, nil, caKey)
	pair, _ := origin(t, "www.origin.test", "www.origin.test")
	dst := netip.MustParseAddrPort("127.85.3.11:443")
	other := netip.MustParseAddrPort("127.85.3.11:8443")
	now := time.Now()
	for _, tc := range []struct {
		name     string
		lookup   bool
		remember bool
		ask      netip.AddrPort
		at       time.Time
		found    bool
	}{
		{"disabled", false, true, dst, now, false},
		{"enabled, nothing forged yet", true, false, dst, now, false},
		{"enabled, the same address and port", true, true, dst, now, true},
		{"enabled, another port", true, true, other, now, false},
		{"enabled, within an hour of the end", true, true, dst, now.Add(24*time.Hour - 30*time.Minute), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(Config{Name: "fp", CA: ca, CAKey: caKey, Client: &tls.Config{}, Lifespan: 24 * time.Hour, LookupByAddr: tc.lookup})
			if err != nil {
				t.Fatal(err)
			}
			var want *tls.Config
			if tc.remember {
				if want, err = p.ClientConfigAt(dst, pair.Leaf, now); err != nil {
					t.Fatal(err)
				}
			}
			got := p.Lookup(tc.ask, tc.at)
			if (got != nil) != tc.found || (tc.found && got != want) {
				t.Fatalf("Lookup %v, want found %v (%p)", got, tc.found, want)
			}
		})
	}
}
