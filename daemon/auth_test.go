package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"

	"github.com/openltm/openltm/dataplane"
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
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// authRADIUSServer answers Access-Requests: alice/wonder is accepted, bob
// is challenged (and accepted once he answers 1234), anyone else
// rejected. It counts the requests.
func authRADIUSServer(t *testing.T, addr, secret string) *atomic.Int64 {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := &radius.PacketServer{SecretSource: radius.StaticSecretSource([]byte(secret)), Handler: radius.HandlerFunc(func(w radius.ResponseWriter, r *radius.Request) {
		n.Add(1)
		u, p := rfc2865.UserName_GetString(r.Packet), rfc2865.UserPassword_GetString(r.Packet)
		code := radius.CodeAccessReject
		resp := r.Response(code)
		switch {
		case u == "alice" && p == "wonder":
			resp = r.Response(radius.CodeAccessAccept)
			rfc2865.FilterID_SetString(resp, "staff")
		case u == "bob" && string(rfc2865.State_Get(r.Packet)) == "chal" && p == "1234":
			resp = r.Response(radius.CodeAccessAccept)
		case u == "bob":
			resp = r.Response(radius.CodeAccessChallenge)
			rfc2865.ReplyMessage_SetString(resp, "Enter the PIN")
			rfc2865.State_SetString(resp, "chal")
		}
		w.Write(resp)
	})}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Shutdown(t.Context()) })
	return &n
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
	asked := authRADIUSServer(t, "127.141.1.20:1812", "s3cret")
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
