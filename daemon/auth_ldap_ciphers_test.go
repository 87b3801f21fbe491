package daemon

import (
	"crypto/tls"
	"strings"
	"testing"
)

// TestLDAPCiphers: ssl-ciphers limits an ldap configuration's TLS to the
// suites and versions it selects; a string that selects nothing TLS 1.2
// or 1.3 speaks, or does not parse, is refused.
func TestLDAPCiphers(t *testing.T) {
	for _, c := range []struct {
		cs       string
		min, max uint16
		suite    uint16
		err      string
	}{
		{cs: "ECDHE-ECDSA-AES128-GCM-SHA256", min: tls.VersionTLS12, max: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		{cs: "ECDHE+AESGCM:TLS13-AES128-GCM-SHA256", min: tls.VersionTLS12, max: tls.VersionTLS13, suite: tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256},
		{cs: "RC4-MD5", err: "selects no TLS 1.2 or 1.3 cipher"},
		{cs: "ECDHE+", err: "cipher string"},
	} {
		tc := &tls.Config{}
		err := ldapCiphers(tc, c.cs)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.cs, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.cs, err)
			continue
		}
		if tc.MinVersion != c.min || tc.MaxVersion != c.max {
			t.Errorf("%s: versions %x-%x, want %x-%x", c.cs, tc.MinVersion, tc.MaxVersion, c.min, c.max)
		}
		found := false
		for _, s := range tc.CipherSuites {
			found = found || s == c.suite
		}
		if !found {
			t.Errorf("%s: suites %x, want %x among them", c.cs, tc.CipherSuites, c.suite)
		}
	}
}
