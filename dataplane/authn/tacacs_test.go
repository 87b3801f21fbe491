package authn_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/authn"
	"github.com/openltm/openltm/dataplane/authn/authntest"
)

// TestTACACS: PAP logins against a TACACS+ server, obfuscated and
// clear, with and without the authorization of a service; a server that
// does not answer moves to the next; with use-first-server a failure
// decides, with use-all-servers the next server is asked.
func TestTACACS(t *testing.T) {
	srv, err := authntest.StartTACACS("127.145.0.20:4949", "tacsecret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	clear, err := authntest.StartTACACS("127.145.0.21:4949", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clear.Close)
	down := "127.145.0.99:4949"
	for _, c := range []struct {
		name       string
		tc         authn.TACACS
		user, pass string
		want       authn.Status
	}{
		{"good", authn.TACACS{Servers: []string{srv.Addr()}, Secret: []byte("tacsecret"), Encrypt: true}, "alice", "wonder", authn.Success},
		{"bad password", authn.TACACS{Servers: []string{srv.Addr()}, Secret: []byte("tacsecret"), Encrypt: true}, "alice", "nope", authn.Failure},
		{"no password", authn.TACACS{Servers: []string{srv.Addr()}, Secret: []byte("tacsecret"), Encrypt: true}, "alice", "", authn.Failure},
		{"wrong secret", authn.TACACS{Servers: []string{srv.Addr()}, Secret: []byte("other"), Encrypt: true}, "alice", "wonder", authn.Error},
		{"authorized", authn.TACACS{Servers: []string{srv.Addr()}, Secret: []byte("tacsecret"), Encrypt: true, Service: "ppp", Protocol: "ip"}, "alice", "wonder", authn.Success},
		{"not authorized", authn.TACACS{Servers: []string{srv.Addr()}, Secret: []byte("tacsecret"), Encrypt: true, Service: "ppp"}, "erin", "erinpw", authn.Failure},
		{"unencrypted", authn.TACACS{Servers: []string{clear.Addr()}}, "alice", "wonder", authn.Success},
		{"first down", authn.TACACS{Servers: []string{down, srv.Addr()}, Secret: []byte("tacsecret"), Encrypt: true}, "alice", "wonder", authn.Success},
		{"all down", authn.TACACS{Servers: []string{down}, Secret: []byte("tacsecret"), Encrypt: true}, "alice", "wonder", authn.Error},
		{"first decides", authn.TACACS{Servers: []string{srv.Addr(), clear.Addr()}, Secret: []byte("tacsecret"), Encrypt: true}, "alice", "wonder", authn.Success},
		{"use-first-server failure", authn.TACACS{Servers: []string{srv.Addr(), clear.Addr()}, Secret: []byte("tacsecret"), Encrypt: true, Service: "ppp"}, "erin", "erinpw", authn.Failure},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.tc.Timeout = 5 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res := c.tc.Authenticate(ctx, authn.Request{Username: c.user, Password: c.pass})
			if res.Status != c.want {
				t.Fatalf("%s/%s: %v (%v), want %v", c.user, c.pass, res.Status, res.Err, c.want)
			}
		})
	}
	if v, _ := srv.Services.Load().(string); v != "ppp" {
		t.Errorf("service argument %q, want ppp", v)
	}
}

// TestTACACSLoginTypes: a server that does not take PAP answers
// RESTART with the types it takes, and the login starts over as an
// ASCII login (GETUSER/GETPASS answered) or a CHAP one; a server that
// takes none openltm speaks is an error. The type used is in the
// answer's data.
func TestTACACSLoginTypes(t *testing.T) {
	ascii, err := authntest.StartTACACSWith("127.158.0.20:4949", "tacsecret", authntest.TACACSOptions{Types: []byte{authntest.TACACSASCII}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ascii.Close)
	chap, err := authntest.StartTACACSWith("127.158.0.21:4949", "tacsecret", authntest.TACACSOptions{Types: []byte{authntest.TACACSCHAP, authntest.TACACSASCII}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chap.Close)
	other, err := authntest.StartTACACSWith("127.158.0.22:4949", "tacsecret", authntest.TACACSOptions{Types: []byte{5}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	for _, c := range []struct {
		name       string
		srv        *authntest.TACACS
		user, pass string
		service    string
		want       authn.Status
		typ        string
	}{
		{"ascii", ascii, "alice", "wonder", "", authn.Success, "ascii"},
		{"ascii bad password", ascii, "alice", "nope", "", authn.Failure, ""},
		{"ascii authorized", ascii, "alice", "wonder", "ppp", authn.Success, "ascii"},
		{"ascii not authorized", ascii, "erin", "erinpw", "ppp", authn.Failure, ""},
		{"chap", chap, "alice", "wonder", "", authn.Success, "chap"},
		{"chap bad password", chap, "erin", "nope", "", authn.Failure, ""},
		{"no type in common", other, "alice", "wonder", "", authn.Error, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := authn.TACACS{Servers: []string{c.srv.Addr()}, Secret: []byte("tacsecret"), Encrypt: true, Service: c.service, Timeout: 5 * time.Second}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res := tc.Authenticate(ctx, authn.Request{Username: c.user, Password: c.pass})
			if res.Status != c.want {
				t.Fatalf("%s/%s: %v (%v), want %v", c.user, c.pass, res.Status, res.Err, c.want)
			}
			if c.typ != "" && !slices.Contains(res.Data, authn.Attr{Name: "tacacs:authen_type", Value: c.typ}) {
				t.Errorf("data %v, want tacacs:authen_type %s", res.Data, c.typ)
			}
		})
	}
	if got := chap.Logins(); !slices.Contains(got, "alice chap") {
		t.Errorf("chap server's logins %v", got)
	}
}

// TestTACACSAccounting: a session let in is recorded by a START then a
// STOP record with the same task_id, to the first server that takes
// them (send-to-first-server) or to every server (send-to-all-servers);
// a server down is passed over and logged.
func TestTACACSAccounting(t *testing.T) {
	a, err := authntest.StartTACACS("127.158.0.23:4949", "tacsecret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	b, err := authntest.StartTACACS("127.158.0.24:4949", "tacsecret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	down := "127.158.0.99:4949"
	var logged atomic.Int64
	tc := authn.TACACS{Servers: []string{down, a.Addr(), b.Addr()}, Secret: []byte("tacsecret"), Encrypt: true, Service: "ppp", Protocol: "ip",
		Account: true, Timeout: 5 * time.Second, Log: func(string) { logged.Add(1) }}
	stop := tc.AccountStart(authn.AcctSession{User: "alice", Port: "/Common/vs", Remote: "127.158.0.5", Data: []authn.Attr{{Name: "tacacs:authen_type", Value: "pap"}}})
	stop()
	stop() // once only
	waitRecords(t, a, 2)
	recs := a.Records()
	if !strings.HasPrefix(recs[0], "start alice /Common/vs 127.158.0.5 task_id=") || !strings.Contains(recs[0], " service=ppp protocol=ip") ||
		!strings.HasPrefix(recs[1], "stop alice /Common/vs 127.158.0.5 task_id=") || !strings.Contains(recs[1], "elapsed_time=") {
		t.Errorf("records %q", recs)
	}
	if task := func(r string) string { return strings.Fields(r)[4] }; task(recs[0]) != task(recs[1]) {
		t.Errorf("task ids differ: %q", recs)
	}
	if len(b.Records()) != 0 {
		t.Errorf("send-to-first-server: the second server got %q", b.Records())
	}
	if logged.Load() == 0 {
		t.Errorf("the server down was not logged")
	}
	// Copies: the records above may still be on their way out.
	all := tc
	all.AcctAll = true
	all.AccountStart(authn.AcctSession{User: "erin"})()
	waitRecords(t, a, 4)
	waitRecords(t, b, 2)
	off := tc
	off.Account = false
	if off.AccountStart(authn.AcctSession{User: "erin"}) != nil {
		t.Errorf("accounting off still records")
	}
}

// waitRecords waits (bounded) until srv holds n accounting records.
func waitRecords(t *testing.T, srv *authntest.TACACS, n int) {
	t.Helper()
	for i := 0; i < 300 && len(srv.Records()) < n; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if got := srv.Records(); len(got) != n {
		t.Fatalf("records %q, want %d", got, n)
	}
}
