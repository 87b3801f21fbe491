package monitor

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestDBCount: a database monitor with a count logs in once for that
// many probes, then logs in again; count 0 logs in for every probe; a
// failed probe closes the kept login. Real logins to the fake servers
// of the three protocols on loopback; the logins are counted where the
// server sees them.
func TestDBCount(t *testing.T) {
	str := func(s string) *string { return &s }
	type server struct {
		typ   Type
		start func(t *testing.T, seen chan string) (target string)
	}
	servers := []server{
		{PostgreSQL, func(t *testing.T, seen chan string) string {
			s := &pgServer{user: "mon", password: "pw", rows: [][]string{{"ready"}}, seen: seen, addr: "127.17.6.1:0"}
			return s.start(t).String()
		}},
		{MySQL, func(t *testing.T, seen chan string) string {
			s := &mysqlServer{user: "mon", password: "pw", rows: [][]string{{"ready"}}, seen: seen, addr: "127.17.6.2:0"}
			return s.start(t).String()
		}},
		{MSSQL, func(t *testing.T, seen chan string) string {
			s := &tdsServer{user: "mon", password: "pw", rows: [][]*string{{str("ready")}}, seen: seen, addr: "127.17.6.3:0"}
			return s.start(t).String()
		}},
	}
	for _, srv := range servers {
		for _, c := range []struct {
			count, probes, logins int
			recv                  string
			up                    bool
		}{
			{count: 0, probes: 3, logins: 3, recv: "ready", up: true},
			{count: 2, probes: 5, logins: 3, recv: "ready", up: true},
			{count: 5, probes: 5, logins: 1, recv: "ready", up: true},
			// Every probe fails (no match): each closes its login.
			{count: 5, probes: 3, logins: 3, recv: "busy"},
		} {
			name := fmt.Sprintf("%v/count=%d/recv=%s", srv.typ, c.count, c.recv)
			t.Run(name, func(t *testing.T) {
				seen := make(chan string, 64)
				target := srv.start(t, seen)
				spec := &Spec{Type: srv.typ, DB: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT status", Recv: c.recv, Count: c.count}}
				var kept dbKept
				defer kept.close()
				for i := 0; i < c.probes; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					out, err := probeDB(ctx, spec, netip.MustParseAddrPort(target), &kept)
					cancel()
					if up := err == nil && out.Up; up != c.up {
						t.Fatalf("probe %d: up %v (%v), want %v", i+1, up, err, c.up)
					}
				}
				kept.close()
				logins, queries := 0, 0
				for done := false; !done; {
					select {
					case s := <-seen:
						if strings.Contains(s, "@") {
							logins++
						} else {
							queries++
						}
					default:
						done = true
					}
				}
				if logins != c.logins || queries != c.probes {
					t.Errorf("%d logins and %d queries, want %d and %d", logins, queries, c.logins, c.probes)
				}
			})
		}
	}
}
