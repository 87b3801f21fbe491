package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startPortHTTP is an HTTP member that answers each request with the
// address and port its connection came from: one answer per server
// connection.
func startPortHTTP(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// ONECONNECT::select persist on an HTTP virtual with OneConnect: a
// request reuses only an idle server connection opened for its own
// persistence key; without the command any idle one serves it. (A pool
// of one connection per key, so that a request never opens another on
// its own event loop beside an idle one.)
func TestRulesOneConnectSelectHTTP(t *testing.T) {
	t.Parallel()
	startPortHTTP(t, "127.140.7.2:80")
	for i, sel := range []bool{true, false} {
		t.Run(fmt.Sprintf("select=%v", sel), func(t *testing.T) {
			vs := fmt.Sprintf("127.140.7.1:%d", 80+i)
			p, _ := newPlane(t)
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP},
				OneConnect: &OneConnect{Profile: "/Common/oc", MaxSize: 1}}, "127.140.7.2:80")
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{}
			cmd := "ONECONNECT::select none"
			if sel {
				cmd = "ONECONNECT::select persist"
			}
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when HTTP_REQUEST {
	persist uie [HTTP::header value X-User]
	`+cmd+`
}`)
			mustApply(t, p, cfg)
			lg.showOnFailure(t)
			idle := func(n int64) {
				eventually(t, fmt.Sprintf("%d idle connections", n), func() bool {
					st, _ := p.OneConnectStats("/Common/oc")
					return st.CurrentIdle == n
				})
			}
			ask := func(c *httpRuleClient, user string) string {
				_, body, err := c.do("GET / HTTP/1.1\r\nHost: a\r\nX-User: " + user + "\r\n\r\n")
				if err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				return body
			}
			a, b, c := dialHTTPVS(t, vs), dialHTTPVS(t, vs), dialHTTPVS(t, vs)
			alice := ask(a, "alice")
			idle(1)
			bob := ask(b, "bob")
			if sel && bob == alice {
				t.Fatalf("bob's request reused alice's connection %s", alice)
			}
			if !sel && bob != alice {
				t.Fatalf("without select bob's request opened %s beside the idle %s", bob, alice)
			}
			if !sel {
				return
			}
			idle(2)
			if got := ask(c, "alice"); got != alice {
				t.Fatalf("another client's alice request came on %s, not alice's %s", got, alice)
			}
			if got := ask(b, "bob"); got != bob {
				t.Fatalf("bob's second request came on %s, not %s", got, bob)
			}
		})
	}
}

// ONECONNECT::label and ONECONNECT::select persist on a message-based
// virtual with OneConnect, in CLIENT_DATA: each message goes on a server
// connection opened for its own key.
func TestRulesOneConnectSelectMBLB(t *testing.T) {
	t.Parallel()
	serveConns(t, "127.140.8.2:9000", func(c net.Conn) {
		from := c.RemoteAddr().String()
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if _, err := c.Write([]byte(from + "\n")); err != nil {
				return
			}
		}
	})
	for i, cmd := range []string{"ONECONNECT::select persist", "ONECONNECT::label [string trim [TCP::payload]]"} {
		t.Run(cmd, func(t *testing.T) {
			vs := fmt.Sprintf("127.140.8.1:%d", 8000+i)
			p, _ := newPlane(t)
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.Rule},
				OneConnect: &OneConnect{Profile: "/Common/oc", MaxSize: 1}}, "127.140.8.2:9000")
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{}
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
	persist uie [string trim [TCP::payload]]
	`+cmd+`
	TCP::release
	TCP::notify request
	TCP::collect
}`)
			mustApply(t, p, cfg)
			lg.showOnFailure(t)
			idle := func(n int64) {
				eventually(t, fmt.Sprintf("%d idle connections", n), func() bool {
					st, _ := p.OneConnectStats("/Common/oc")
					return st.CurrentIdle == n
				})
			}
			a, b := dialVS(t, vs), dialVS(t, vs)
			alice := a.mustAsk("alice")
			idle(1)
			bob := b.mustAsk("bob")
			if bob == alice {
				t.Fatalf("bob's message went on alice's connection %s", alice)
			}
			idle(2)
			if got := b.mustAsk("alice"); got != alice {
				t.Fatalf("alice's message from another client came on %s, not %s", got, alice)
			}
		})
	}
}
