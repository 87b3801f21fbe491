package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/authn/authntest"
)

// TestAuthTACACS: an http virtual with a tacacs auth profile: the
// client's basic credentials are a PAP login to the TACACS+ server,
// then the authorization of the configuration's service; 401 otherwise,
// with the http profile's basic-auth-realm in WWW-Authenticate. The
// commit checks refuse a configuration without servers, secret or
// service.
func TestAuthTACACS(t *testing.T) {
	srv, err := authntest.StartTACACS("127.145.1.20:4949", "tacsecret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	authBackend(t, "127.145.1.11:8080")
	s, _ := openAuthEngine(t)
	for _, c := range []struct{ cmd, want string }{
		{"create ltm auth tacacs t0 secret x service ppp", "requires at least one server"},
		{"create ltm auth tacacs t0 servers add { 127.145.1.20 } service ppp", "requires a shared secret"},
		{"create ltm auth tacacs t0 servers add { 127.145.1.20 } secret x", "requires a service"},
		{"create ltm auth tacacs t0 servers add { bad_name! } secret x service ppp", "neither an IP address nor a host name"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: got %q, want %q", c.cmd, err, c.want)
		}
	}
	mustRun(t, s,
		"create ltm pool p members add { 127.145.1.11:8080 }",
		"create ltm auth tacacs tac servers add { 127.145.1.99:4949 127.145.1.20:4949 } secret tacsecret service ppp protocol ip",
		"create ltm auth profile tacprof defaults-from tacacs config tac idle-timeout 0",
		`create ltm profile http realm defaults-from http basic-auth-realm "Staff Only"`,
		"create ltm virtual vs destination 127.145.1.1:80 pool p profiles replace-all-with { tcp realm } source-address-translation { type automap } auth { tacprof }",
	)
	url := "http://127.145.1.1/"
	for _, c := range []struct {
		user, pass string
		code       int
		body       string
	}{
		{"", "", 401, ""},
		{"alice", "nope", 401, ""},
		{"erin", "erinpw", 401, ""}, // authenticated, not authorized for ppp
		{"alice", "wonder", 200, "member saw alice"},
	} {
		code, www, body := authGet(t, url, c.user, c.pass)
		if code != c.code || c.code == 401 && www != `Basic realm="Staff Only"` || c.code == 200 && body != c.body {
			t.Errorf("%s/%s: %d %q %q, want %d %q", c.user, c.pass, code, www, body, c.code, c.body)
		}
	}
	if v, _ := srv.Services.Load().(string); v != "ppp" {
		t.Errorf("service argument %q, want ppp", v)
	}
	out, _ := run(t, s, "show ltm auth profile tacprof")
	if !strings.Contains(out, "Success") {
		t.Errorf("show:\n%s", out)
	}
}

// TestAuthTACACSAccounting: a tacacs profile against servers that take
// ASCII logins only: the login starts over as ASCII when the server
// answers the PAP START with RESTART; each connection let in is
// accounted for with a START and a STOP record (the virtual server as
// the port, the client's address as the remote address), to the first
// server (send-to-first-server), then to both (send-to-all-servers).
func TestAuthTACACSAccounting(t *testing.T) {
	opts := authntest.TACACSOptions{Types: []byte{authntest.TACACSASCII}}
	a, err := authntest.StartTACACSWith("127.158.1.20:4949", "tacsecret", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	b, err := authntest.StartTACACSWith("127.158.1.21:4949", "tacsecret", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	authBackend(t, "127.158.1.11:8080")
	s, _ := openAuthEngine(t)
	mustRun(t, s,
		"create ltm pool p members add { 127.158.1.11:8080 }",
		"create ltm auth tacacs tac servers add { 127.158.1.20:4949 127.158.1.21:4949 } secret tacsecret service ppp protocol ip",
		"create ltm auth profile tacprof defaults-from tacacs config tac idle-timeout 0",
		"create ltm virtual vs destination 127.158.1.1:80 pool p profiles replace-all-with { tcp http } source-address-translation { type automap } auth { tacprof }",
	)
	url := "http://127.158.1.1/"
	if code, _, body := authGet(t, url, "alice", "wonder"); code != 200 || body != "member saw alice" {
		t.Fatalf("alice: %d %q", code, body)
	}
	if code, _, _ := authGet(t, url, "alice", "nope"); code != 401 {
		t.Fatalf("alice with a bad password: %d", code)
	}
	if got := a.Logins(); len(got) != 1 || got[0] != "alice ascii" {
		t.Errorf("logins %q, want one ASCII login of alice", got)
	}
	recs := waitTACACSRecords(t, a, 2)
	if !strings.HasPrefix(recs[0], "start alice /Common/vs 127.") || !strings.HasPrefix(recs[1], "stop alice /Common/vs 127.") ||
		!strings.Contains(recs[0], "service=ppp protocol=ip") {
		t.Errorf("records %q", recs)
	}
	if len(b.Records()) != 0 {
		t.Errorf("send-to-first-server: the second server got %q", b.Records())
	}
	mustRun(t, s, "modify ltm auth tacacs tac accounting send-to-all-servers")
	if code, _, _ := authGet(t, url, "alice", "wonder"); code != 200 {
		t.Fatalf("alice: %d", code)
	}
	waitTACACSRecords(t, a, 4)
	waitTACACSRecords(t, b, 2)
}

// waitTACACSRecords waits (bounded) until srv holds n accounting
// records, and gives them.
func waitTACACSRecords(t *testing.T, srv *authntest.TACACS, n int) []string {
	t.Helper()
	for i := 0; i < 300 && len(srv.Records()) < n; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	got := srv.Records()
	if len(got) != n {
		t.Fatalf("records %q, want %d", got, n)
	}
	return got
}
