package tlsprof

import (
	"crypto/tls"
	"strings"
	"testing"
)

// A cipher string and a minimum version read into the versions and
// suites of a channel outside profiles, as a profile reads them.
func TestChannelOf(t *testing.T) {
	cases := []struct {
		ciphers  string
		min      uint16
		lo, hi   uint16
		has, not uint16
		err      string
	}{
		{ciphers: "none", min: tls.VersionTLS13, lo: tls.VersionTLS13, hi: tls.VersionTLS13},
		{ciphers: "", min: tls.VersionTLS12, lo: tls.VersionTLS12, hi: tls.VersionTLS13, has: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		{ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256", min: tls.VersionTLS12, lo: tls.VersionTLS12, hi: tls.VersionTLS12,
			has: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, not: tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		{ciphers: "ECDHE-ECDSA-AES128-SHA", min: tls.VersionTLS10, lo: tls.VersionTLS10, hi: tls.VersionTLS12, has: tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA},
		{ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256", min: tls.VersionTLS13, err: "nothing at or above the minimum version TLSv1.3"},
		{ciphers: "BOGUS", min: tls.VersionTLS12, err: `unknown cipher keyword or suite "BOGUS"`},
	}
	for _, c := range cases {
		t.Run(c.ciphers+"/"+VersionName(c.min), func(t *testing.T) {
			ch, err := ChannelOf("x", c.ciphers, c.min)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.MinVersion != c.lo || ch.MaxVersion != c.hi {
				t.Errorf("versions %s-%s", VersionName(ch.MinVersion), VersionName(ch.MaxVersion))
			}
			in := func(id uint16) bool {
				for _, s := range ch.Suites {
					if s == id {
						return true
					}
				}
				return false
			}
			if c.has != 0 && !in(c.has) || c.not != 0 && in(c.not) {
				t.Errorf("suites %v", ch.Suites)
			}
		})
	}
	for in, want := range map[string]uint16{"TLSv1": tls.VersionTLS10, "tlsv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13, "SSLv3": 0, "none": 0} {
		if v, ok := ParseVersion(in); v != want || ok != (want != 0) {
			t.Errorf("ParseVersion(%q) = %x %v", in, v, ok)
		}
	}
}
