package daemon

import (
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/authn/authntest"
)

// TestAuthSSLCCLDAP: an https virtual whose client-ssl profile requests
// a client certificate, with an ssl_cc_ldap auth profile against a real
// slapd: the certificate's subject names the user, who must be in a
// valid group; others are reset. A rule of the virtual's own reads
// AUTH::ssl_cc_ldap_username and AUTH::ssl_cc_ldap_status; the answer
// is remembered for cache-timeout.
func TestAuthSSLCCLDAP(t *testing.T) {
	if err := authntest.Available(); err != nil {
		t.Skipf("the directory is OpenLDAP's slapd: %v", err)
	}
	sd, err := authntest.StartSlapd(t.TempDir(), "127.145.2.20:3890")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sd.Close)
	pki := newTestPKI(t)
	now := time.Now()
	scrt, skey, _ := pki.issue(t, "site", "site.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	ccrt, ckey, _ := pki.issue(t, "carol", "carol", true, now.Add(-time.Hour), now.Add(24*time.Hour))
	ecrt, ekey, _ := pki.issue(t, "erin", "erin", true, now.Add(-time.Hour), now.Add(24*time.Hour))
	mcrt, mkey, _ := pki.issue(t, "mallory", "mallory", true, now.Add(-time.Hour), now.Add(24*time.Hour))
	authBackend(t, "127.145.2.11:8080")
	s, _ := openAuthEngine(t)
	mustRun(t, s,
		"install sys crypto cert site.crt from-local-file "+scrt,
		"install sys crypto key site.key from-local-file "+skey,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"create ltm profile client-ssl req cert-key-chain replace-all-with { site { cert site.crt key site.key } } peer-cert-mode request ca-file ca.crt",
		"create ltm auth ssl-cc-ldap cc servers add { 127.145.2.99:3890 "+sd.Addr+" } admin-dn "+authntest.RootDN+" admin-password "+authntest.RootPW+
			" search-type user user-base ou=people,"+authntest.Suffix+" user-class inetOrgPerson user-key uid"+
			" group-base ou=groups,"+authntest.Suffix+" group-key cn group-member-key member valid-groups add { staff } cache-timeout 300",
		"create ltm auth profile ccprof defaults-from ssl_cc_ldap config cc",
		`create ltm rule who {
when AUTH_RESULT {
    set ccuser "[AUTH::ssl_cc_ldap_username] [AUTH::ssl_cc_ldap_status]"
}
when HTTP_REQUEST {
    if {[info exists ccuser]} {
        HTTP::header insert X-Mail $ccuser
    }
}
}`,
		"create ltm pool p members add { 127.145.2.11:8080 }",
		"create ltm virtual vs destination 127.145.2.1:443 pool p profiles replace-all-with { tcp http req } source-address-translation { type automap } auth { ccprof } rules { who }",
	)
	pair := func(crt, key string) []tls.Certificate {
		c, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{c}
	}
	get := func(certs []tls.Certificate) (string, error) {
		tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: pki.roots, ServerName: "site.example", Certificates: certs}}
		c := &http.Client{Timeout: 20 * time.Second, Transport: tr}
		var resp *http.Response
		var err error
		for i := 0; i < 100; i++ { // until the virtual listens
			resp, err = c.Get("https://127.145.2.1/")
			if err == nil || !strings.Contains(err.Error(), "connection refused") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b), nil
	}
	for _, c := range []struct {
		name  string
		certs []tls.Certificate
		body  string // "" : reset
	}{
		{"staff member", pair(ccrt, ckey), "member saw  carol success"},
		{"again, from the cache", pair(ccrt, ckey), "member saw  carol success"},
		{"not in a valid group", pair(ecrt, ekey), ""},
		{"not in the directory", pair(mcrt, mkey), ""},
		{"no certificate", nil, "member saw "},
	} {
		body, err := get(c.certs)
		if c.body == "" && err == nil || c.body != "" && body != c.body {
			t.Errorf("%s: %q %v, want %q", c.name, body, err, c.body)
		}
	}
	out, _ := run(t, s, "show ltm auth profile ccprof")
	if !strings.Contains(out, "Success") {
		t.Errorf("show:\n%s", out)
	}
}
