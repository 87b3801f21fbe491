package authn_test

import (
	"context"
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
