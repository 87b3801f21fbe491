package daemon

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"

	"github.com/openltm/openltm/objects"
)

// A gtm server's iquery-cipher-list and iquery-minimum-tls-version read
// into the channel's policy as a client-ssl profile reads its ciphers;
// what cannot make a channel is refused with BIG-IP's configuration
// error, and iq-allow-service-check no reaches prober selection.
func TestIQueryTLSSettings(t *testing.T) {
	gcm128, gcm256 := tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
	cases := []struct {
		settings string
		min, max uint16
		has      []uint16 // suites allowed
		hasNot   []uint16
		err      string
	}{
		{settings: "", min: 0},
		{settings: "iquery-cipher-list none iquery-minimum-tls-version none", min: 0},
		{settings: "iquery-cipher-list ECDHE-ECDSA-AES128-GCM-SHA256", min: tls.VersionTLS12, max: tls.VersionTLS12, has: []uint16{gcm128}, hasNot: []uint16{gcm256}},
		{settings: "iquery-minimum-tls-version TLSv1.2", min: tls.VersionTLS12, max: tls.VersionTLS13, has: []uint16{gcm128, gcm256}},
		{settings: "iquery-minimum-tls-version TLSv1.3", min: tls.VersionTLS13, max: tls.VersionTLS13},
		{settings: "iquery-minimum-tls-version TLSv1 iquery-cipher-list ECDHE+AES256:!SHA384", min: tls.VersionTLS10, max: tls.VersionTLS12, hasNot: []uint16{gcm128, gcm256}},
		{settings: "iquery-cipher-list ECDHE-ECDSA-AES128-GCM-SHA256:TLS13 iquery-minimum-tls-version TLSv1.2", min: tls.VersionTLS12, max: tls.VersionTLS13, has: []uint16{gcm128}},
		{settings: "iquery-cipher-list NOSUCHCIPHER", err: `01070734:3: Configuration error: gtm server /Common/ltm1 iquery-cipher-list: cipher string "NOSUCHCIPHER", column 1: unknown cipher keyword or suite "NOSUCHCIPHER"`},
		{settings: "iquery-cipher-list ECDHE-ECDSA-AES128-GCM-SHA256 iquery-minimum-tls-version TLSv1.3", err: "nothing at or above the minimum version TLSv1.3"},
		{settings: "iquery-cipher-list DES-CBC-SHA", err: "selects only suites Go's TLS cannot do"},
	}
	for _, c := range cases {
		t.Run(c.settings, func(t *testing.T) {
			text := "gtm datacenter /Common/dc1 { }\ngtm server /Common/ltm1 { datacenter /Common/dc1 product bigip addresses { 127.99.2.1 { } } " + c.settings + " }"
			cfg := gtmConfig(t, text)
			_, _, err := TranslateGSLB(objects.Default, cfg)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pol, _, err := iqueryTLSOf(cfg.Get(gtmServer, "/Common/ltm1"))
			if err != nil {
				t.Fatal(err)
			}
			if c.min == 0 {
				if pol != nil {
					t.Fatalf("policy %+v, want the default", pol)
				}
				return
			}
			if pol.MinVersion != c.min || pol.MaxVersion != c.max {
				t.Errorf("versions %x-%x, want %x-%x", pol.MinVersion, pol.MaxVersion, c.min, c.max)
			}
			for _, s := range c.has {
				if !slices.Contains(pol.CipherSuites, s) {
					t.Errorf("%s not allowed", tls.CipherSuiteName(s))
				}
			}
			for _, s := range c.hasNot {
				if slices.Contains(pol.CipherSuites, s) {
					t.Errorf("%s allowed", tls.CipherSuiteName(s))
				}
			}
		})
	}
	cfg := gtmConfig(t, "gtm datacenter /Common/dc1 { }\ngtm server /Common/ltm1 { datacenter /Common/dc1 product bigip addresses { 127.99.2.1 { } } iq-allow-service-check no }")
	gc, _, err := TranslateGSLB(objects.Default, cfg)
	if err != nil || !gc.Servers["/Common/ltm1"].NoServiceCheck {
		t.Errorf("iq-allow-service-check no: %v %+v", err, gc.Servers["/Common/ltm1"])
	}
}
