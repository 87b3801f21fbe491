package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/authn/authntest"
	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
)

// openAuthEngine opens an engine with a dataplane whose log the test
// prints when it fails.
func openAuthEngine(t *testing.T) (*Session, *syncBuf) {
	t.Helper()
	logs := &syncBuf{}
	e, err := Open(Options{StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	t.Cleanup(p.Close)
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	})
	return e.NewSession("admin").(*Session), logs
}

// authBackend is an HTTP member that says which user it served.
func authBackend(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _, _ := r.BasicAuth()
		fmt.Fprintf(w, "member saw %s", u)
		if m := r.Header.Get("X-Mail"); m != "" {
			fmt.Fprintf(w, " %s", m)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// authGet sends one GET to url with the given basic credentials (none
// when user is ""), retrying while the virtual is not yet listening,
// and gives the status, the WWW-Authenticate header and the body.
func authGet(t *testing.T, url, user, pass string) (int, string, string) {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := c.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAuthRADIUS: an http virtual with a radius auth profile answers
// 401 with WWW-Authenticate to a request without credentials or with
// bad ones, and passes a good one to the member; the success is
// remembered for the profile's idle-timeout; a rule of the virtual's
// own sees AUTH_RESULT, AUTH::status and the reply's attributes; a
// challenge is AUTH_WANTCREDENTIAL with its prompt; mode disabled lets
// every client through.
func TestAuthRADIUS(t *testing.T) {
	authBackend(t, "127.141.1.11:8080")
	rs, err := authntest.StartRADIUS("127.141.1.20:1812", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	asked := &rs.Requests
	s, logs := openAuthEngine(t)
	mustRun(t, s,
		"create ltm pool p members add { 127.141.1.11:8080 }",
		"create ltm auth radius-server rs1 server 127.141.1.20 secret s3cret timeout 2",
		"create ltm auth radius rad servers add { rs1 } retries 2",
		"create ltm auth profile radprof defaults-from radius config rad idle-timeout 60",
		`create ltm rule seen { when AUTH_RESULT {
    if {[AUTH::status] == 0} {
        HTTP::header insert X-Auth ok
        log local0. "auth ok for [HTTP::username] sid [AUTH::last_event_session_id]"
    }
}
when AUTH_WANTCREDENTIAL {
    log local0. "want: [AUTH::wantcredential_prompt] ([AUTH::wantcredential_type])"
} }`,
		"create ltm virtual vs destination 127.141.1.1:80 pool p profiles replace-all-with { tcp http } source-address-translation { type automap } auth { radprof } rules { seen }",
	)
	url := "http://127.141.1.1/"
	code, www, _ := authGet(t, url, "", "")
	if code != 401 || !strings.HasPrefix(www, "Basic") {
		t.Fatalf("no credentials: %d %q", code, www)
	}
	if code, www, _ := authGet(t, url, "alice", "nope"); code != 401 || www == "" {
		t.Fatalf("bad password: %d %q", code, www)
	}
	before := asked.Load()
	if code, _, body := authGet(t, url, "alice", "wonder"); code != 200 || body != "member saw alice" {
		t.Fatalf("good password: %d %q", code, body)
	}
	if asked.Load() != before+1 {
		t.Fatalf("the server was asked %d times for one request", asked.Load()-before)
	}
	// Remembered for idle-timeout: the server is not asked again.
	if code, _, _ := authGet(t, url, "alice", "wonder"); code != 200 || asked.Load() != before+1 {
		t.Fatalf("second request: %d, server asked %d times", code, asked.Load()-before)
	}
	if code, _, _ := authGet(t, url, "bob", "x"); code != 401 || !strings.Contains(logs.String(), "want: Enter the PIN (password)") {
		t.Fatalf("challenge: %d", code)
	}
	out, _ := run(t, s, "show ltm auth profile radprof")
	for _, want := range []string{"radprof", "Success", "Failure"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show ltm auth profile lacks %q:\n%s", want, out)
		}
	}
	mustRun(t, s, "modify ltm auth profile radprof mode disabled")
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, body := authGet(t, url, "", "")
		if code == 200 && body == "member saw " {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mode disabled: %d %q", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAuthLDAP: an http virtual with an ldap auth profile, against a
// real slapd: the user is searched under search-base-dn as bind-dn, then
// bound to with the client's password, and must be in group-dn; 401
// with WWW-Authenticate otherwise. A rule that subscribes reads the
// user's entry in AUTH::response_data.
func TestAuthLDAP(t *testing.T) {
	if err := authntest.Available(); err != nil {
		t.Skipf("the directory is OpenLDAP's slapd: %v", err)
	}
	sd, err := authntest.StartSlapd(t.TempDir(), "127.141.2.20:3890")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sd.Close)
	authBackend(t, "127.141.2.11:8080")
	s, _ := openAuthEngine(t)
	mustRun(t, s,
		"create ltm pool p members add { 127.141.2.11:8080 }",
		"create ltm auth ldap dir servers add { 127.141.2.99 127.141.2.20 } port 3890 search-base-dn ou=people,"+authntest.Suffix+
			" bind-dn "+authntest.RootDN+" bind-pw "+authntest.RootPW+" group-dn cn=staff,ou=groups,"+authntest.Suffix+" bind-timeout 2",
		"create ltm auth profile ldapprof defaults-from ldap config dir idle-timeout 0",
		`create ltm rule mail {
when HTTP_REQUEST priority 100 {
    set tmm_auth_subscription 1
}
when AUTH_RESULT {
    array set data [AUTH::response_data]
    if {[info exists data(ldap:attr:mail)]} {
        HTTP::header insert X-Mail $data(ldap:attr:mail)
    }
}
}`,
		"create ltm virtual vs destination 127.141.2.1:80 pool p profiles replace-all-with { tcp http } source-address-translation { type automap } auth { ldapprof } rules { mail }",
	)
	url := "http://127.141.2.1/"
	for _, c := range []struct {
		user, pass string
		code       int
		body       string
	}{
		{"", "", 401, ""},
		{"carol", "wrong", 401, ""},
		{"nobody", "x", 401, ""},
		{"carol", "", 401, ""},
		{"erin", "erinpw", 401, ""}, // not in cn=staff
		{"carol", "ldappw", 200, "member saw carol carol@example.com"},
		{"dave", "davepw", 200, "member saw dave dave@example.com"},
	} {
		code, www, body := authGet(t, url, c.user, c.pass)
		if code != c.code || c.code == 401 && !strings.HasPrefix(www, "Basic realm=") || c.code == 200 && body != c.body {
			t.Errorf("%s/%s: %d %q %q, want %d %q", c.user, c.pass, code, www, body, c.code, c.body)
		}
	}
	out, _ := run(t, s, "show ltm auth profile ldapprof")
	if !strings.Contains(out, "Success") {
		t.Errorf("show:\n%s", out)
	}
}

// TestAuthChecks: the commit checks of the auth kinds.
func TestAuthChecks(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create ltm auth ldap l servers add { 127.141.9.9 } search-base-dn dc=example,dc=com")
	for _, c := range []struct{ cmd, want string }{
		{"create ltm auth ldap l2 port 389", "requires at least one server"},
		{"create ltm auth ldap l3 servers add { bad_name! }", "neither an IP address nor a host name"},
		{"create ltm auth radius-server r1 server 127.141.9.9", "requires a shared secret"},
		{"create ltm auth radius-server r2 secret x", "requires a server address"},
		{"create ltm auth profile p1 defaults-from ldap", "requires a configuration"},
		{"create ltm auth radius rad", ""},
		{"create ltm auth profile p2 defaults-from radius config l", "must be an ltm auth radius object"},
		{"create ltm auth ocsp-responder o1 url ftp://x", "not an http or https URL"},
		{"create ltm auth profile p3 defaults-from ldap config nothere", "nothere"},
		{"create ltm auth profile p4 defaults-from ldap config l", ""},
		{"delete ltm auth ldap l", "in use"},
		{"create ltm virtual v destination 127.141.9.1:80 auth { nosuch }", "nosuch"},
	} {
		_, err := run(t, s, c.cmd)
		if c.want == "" && err != "" || c.want != "" && !strings.Contains(err, c.want) {
			t.Errorf("%s: got %q, want %q", c.cmd, err, c.want)
		}
	}
	out, _ := run(t, s, "list ltm auth profile ldap all-properties")
	if !strings.Contains(out, "rule _sys_auth_ldap") || !strings.Contains(out, "idle-timeout 300") {
		t.Errorf("built-in ldap profile:\n%s", out)
	}
}

// TestAuthSSLOCSP: an https virtual whose client-ssl profile requests a
// client certificate, with an ssl_ocsp auth profile: openssl's OCSP
// responder is asked about the certificate (its issuer found in the
// responder's ca-file); a good one gets through to the member, a
// revoked one is reset, as is any certificate while no responder
// answers; a client without a certificate is not asked about.
func TestAuthSSLOCSP(t *testing.T) {
	if err := ocsptest.Available(); err != nil {
		t.Skipf("the responder is openssl ocsp: %v", err)
	}
	pki := newTestPKI(t)
	now := time.Now()
	scrt, skey, _ := pki.issue(t, "site", "site.example", false, now.Add(-time.Hour), now.Add(24*time.Hour))
	acrt, akey, aserial := pki.issue(t, "alice", "alice", true, now.Add(-time.Hour), now.Add(24*time.Hour))
	mcrt, mkey, mserial := pki.issue(t, "mallory", "mallory", true, now.Add(-time.Hour), now.Add(24*time.Hour))
	kd, err := x509.MarshalPKCS8PrivateKey(pki.caKey)
	if err != nil {
		t.Fatal(err)
	}
	caKey := pki.write(t, "ca.key", "PRIVATE KEY", kd)
	exp := now.Add(24 * time.Hour).UTC().Format("060102150405Z")
	index := filepath.Join(pki.dir, "index.txt")
	os.WriteFile(index, []byte(fmt.Sprintf("V\t%s\t\t%X\tunknown\t/CN=alice\nR\t%s\t%s\t%X\tunknown\t/CN=mallory\n",
		exp, aserial, exp, now.Add(-time.Minute).UTC().Format("060102150405Z"), mserial)), 0o600)
	r := &ocsptest.Responder{Index: index, CA: filepath.Join(pki.dir, "ca.crt"), Signer: filepath.Join(pki.dir, "ca.crt"), SignerKey: caKey, Minutes: 10}
	if err := r.Start("127.141.3.20:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	authBackend(t, "127.141.3.11:8080")
	s, _ := openAuthEngine(t)
	mustRun(t, s,
		"install sys crypto cert site.crt from-local-file "+scrt,
		"install sys crypto key site.key from-local-file "+skey,
		"install sys crypto cert ca.crt from-local-file "+filepath.Join(pki.dir, "ca.crt"),
		"create ltm profile client-ssl req cert-key-chain replace-all-with { site { cert site.crt key site.key } } peer-cert-mode request ca-file ca.crt",
		"create ltm auth ocsp-responder resp url "+r.URL()+" ca-file ca.crt",
		"create ltm auth ocsp-responder down url http://127.141.3.21:9/ ca-file ca.crt",
		"create ltm auth ssl-ocsp ocsp responders add { resp } max-timeout 10",
		"create ltm auth ssl-ocsp dead responders add { down } max-timeout 10",
		"create ltm auth profile ocspprof defaults-from ssl_ocsp config ocsp idle-timeout 0",
		"create ltm auth profile deadprof defaults-from ssl_ocsp config dead",
		"create ltm pool p members add { 127.141.3.11:8080 }",
		"create ltm virtual vs destination 127.141.3.1:443 pool p profiles replace-all-with { tcp http req } source-address-translation { type automap } auth { ocspprof }",
		"create ltm virtual vs_dead destination 127.141.3.2:443 pool p profiles replace-all-with { tcp http req } source-address-translation { type automap } auth { deadprof }",
	)
	pair := func(crt, key string) []tls.Certificate {
		c, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{c}
	}
	get := func(addr string, certs []tls.Certificate) (int, error) {
		tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: pki.roots, ServerName: "site.example", Certificates: certs}}
		c := &http.Client{Timeout: 20 * time.Second, Transport: tr}
		var resp *http.Response
		var err error
		for i := 0; i < 100; i++ { // until the virtual listens
			resp, err = c.Get("https://" + addr + "/")
			if err == nil || !strings.Contains(err.Error(), "connection refused") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	alice, mallory := pair(acrt, akey), pair(mcrt, mkey)
	for _, c := range []struct {
		name, addr string
		certs      []tls.Certificate
		ok         bool
	}{
		{"good certificate", "127.141.3.1:443", alice, true},
		{"revoked certificate", "127.141.3.1:443", mallory, false},
		{"no certificate", "127.141.3.1:443", nil, true},
		{"no responder answers", "127.141.3.2:443", alice, false},
	} {
		code, err := get(c.addr, c.certs)
		if c.ok != (err == nil && code == 200) {
			t.Errorf("%s: %d %v, want through %v", c.name, code, err, c.ok)
		}
	}
	if r.Requests() < 2 {
		t.Errorf("the responder was asked %d times", r.Requests())
	}
}

// TestAuthProfileRule: a profile's rule may be the user's own, written
// as F5's examples are (HTTP::collect in HTTP_REQUEST, HTTP::release in
// AUTH_RESULT); it replaces the built-in one.
func TestAuthProfileRule(t *testing.T) {
	rs, err := authntest.StartRADIUS("127.141.5.20:1812", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	authBackend(t, "127.141.5.11:8080")
	s, _ := openAuthEngine(t)
	mustRun(t, s,
		"create ltm pool p members add { 127.141.5.11:8080 }",
		"create ltm auth radius-server rs1 server 127.141.5.20 secret s3cret timeout 2",
		"create ltm auth radius rad servers add { rs1 } retries 2",
		`create ltm rule mine {
when HTTP_REQUEST {
    set sid [AUTH::start pam default_radius]
    AUTH::username_credential $sid [HTTP::username]
    AUTH::password_credential $sid [HTTP::password]
    AUTH::authenticate $sid
    HTTP::collect
}
when AUTH_RESULT {
    if {[AUTH::status] == 0} { HTTP::release } else { HTTP::respond 401 }
}
}`,
		"create ltm auth profile radprof defaults-from radius config rad idle-timeout 0 rule mine",
		"create ltm virtual vs destination 127.141.5.1:80 pool p profiles replace-all-with { tcp http } source-address-translation { type automap } auth { radprof }",
	)
	for _, c := range []struct {
		u, p string
		code int
	}{{"alice", "wonder", 200}, {"alice", "x", 401}, {"", "", 401}} {
		code, _, _ := authGet(t, "http://127.141.5.1/", c.u, c.p)
		if code != c.code {
			t.Errorf("%s: %d", c.u, code)
		}
	}
}
