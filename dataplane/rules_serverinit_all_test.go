package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startSourceHTTP is an HTTP member that answers each request with the
// address its connection came from.
func startSourceHTTP(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		fmt.Fprint(w, host)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// startSourceUDP is a UDP member that answers each datagram with the
// address it came from.
func startSourceUDP(t *testing.T, addr string) {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			_, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			c.WriteToUDP([]byte(from.IP.String()), from)
		}
	}()
}

// serveSourceLines is a TCP member that answers each read with the
// address its connection came from and a newline.
func serveSourceLines(t *testing.T, addr string) {
	serveConns(t, addr, func(c net.Conn) {
		from := c.RemoteAddr().(*net.TCPAddr).IP.String()
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
}

// countLines counts the rule's log lines holding s.
func countLines(lg *ruleLog, s string) int {
	return strings.Count(lg.String(), s)
}

// SERVER_INIT on an HTTP virtual: it runs once per member connection
// opened, with LB::server naming the member, and its snat sets that
// connection's source; a request that reuses a connection (the client's
// own keep-alive one, or one OneConnect lends to another client) raises
// no SERVER_INIT. Choosing again there is a Tcl error that resets the
// client.
func TestRulesServerInitHTTP(t *testing.T) {
	t.Parallel()
	startSourceHTTP(t, "127.140.1.2:80")
	const rule = `
when SERVER_INIT {
	snat 127.140.1.77
	log local0. "init [LB::server addr] [LB::snat]"
}`
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			vs := "127.140.1.1:80"
			if oc {
				vs = "127.140.1.1:81"
			}
			p, _ := newPlane(t)
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.140.1.2:80")
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{}
			if oc {
				// One connection per pool: a client on another event loop
				// than the idle connection's is lent it, rather than
				// opening one of its own beside it.
				cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{Profile: "/Common/oc", MaxSize: 1}
			}
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, rule)
			mustApply(t, p, cfg)
			lg.showOnFailure(t)

			c := dialHTTPVS(t, vs)
			for i := 0; i < 3; i++ {
				_, body, err := c.do(httpReq("a", "/x"))
				if err != nil || body != "127.140.1.77" {
					t.Fatalf("request %d: member saw %q (%v), want the SERVER_INIT snat", i, body, err)
				}
			}
			if n := countLines(lg, "init 127.140.1.2 127.140.1.77"); n != 1 {
				t.Fatalf("SERVER_INIT ran %d times for one connection's three requests: %s", n, lg)
			}
			if !oc {
				return
			}
			eventually(t, "c's connection idle in the pool", func() bool {
				st, _ := p.OneConnectStats("/Common/oc")
				return st.CurrentIdle == 1
			})
			d := dialHTTPVS(t, vs) // the pool lends it c's idle connection
			if _, body, err := d.do(httpReq("a", "/y")); err != nil || body != "127.140.1.77" {
				t.Fatalf("second client: %q (%v)", body, err)
			}
			if n := countLines(lg, "init 127.140.1.2"); n != 1 {
				t.Fatalf("SERVER_INIT ran for a connection OneConnect lent: %d times: %s", n, lg)
			}
		})
	}
	t.Run("pool there is refused", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := mblbConfig("127.140.1.1:82", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.140.1.2:80")
		var lg *ruleLog
		cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when SERVER_INIT { pool /Common/pool }`)
		mustApply(t, p, cfg)
		c := dialHTTPVS(t, "127.140.1.1:82")
		if _, _, err := c.do(httpReq("a", "/")); err == nil {
			t.Fatal("answered after a pool command in SERVER_INIT")
		}
		eventually(t, "the Tcl error logged", func() bool { return strings.Contains(lg.String(), "not valid in SERVER_INIT") })
	})
}

// SERVER_INIT on a message-based virtual: once per member connection,
// its snat the connection's source; the client's later messages ride
// that connection without raising it again.
func TestRulesServerInitMBLB(t *testing.T) {
	t.Parallel()
	serveSourceLines(t, "127.140.2.2:9000")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.140.2.1:8000", &MBLB{Request: mblb.Framing{Mode: mblb.Rule}}, "127.140.2.2:9000")
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{}
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when SERVER_INIT {
	log local0. "init [LB::server addr]"
	if { [IP::client_addr] eq "127.140.2.9" } { snat 127.140.2.77 }
}`)
	mustApply(t, p, cfg)
	lg.showOnFailure(t)

	a := dialFrom(t, "127.140.2.9", "127.140.2.1:8000")
	for i := 0; i < 3; i++ {
		if got := a.mustAsk("hi"); got != "127.140.2.77" {
			t.Fatalf("message %d: member saw %q, want the SERVER_INIT snat", i, got)
		}
	}
	b := dialFrom(t, "127.140.2.8", "127.140.2.1:8000")
	if got := b.mustAsk("hi"); got != "127.140.2.8" {
		t.Fatalf("a client the rule left alone: member saw %q", got)
	}
	if n := countLines(lg, "init 127.140.2.2"); n != 2 {
		t.Fatalf("SERVER_INIT ran %d times for two clients' connections: %s", n, lg)
	}
}

// SERVER_INIT on a UDP virtual: once per server-side flow (not per
// datagram), its snat the flow's source.
func TestRulesServerInitUDP(t *testing.T) {
	t.Parallel()
	startSourceUDP(t, "127.140.3.2:5300")
	p, _ := newPlane(t)
	cfg := udpBasic("127.140.3.1:53", "127.140.3.2:5300")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when SERVER_INIT {
	log local0. "init [LB::server addr]"
	snat 127.140.3.77
}`)
	mustApply(t, p, cfg)
	lg.showOnFailure(t)

	u := dialUDP(t, "127.140.3.9:0", "127.140.3.1:53")
	for i := 0; i < 3; i++ {
		if got := u.mustAsk("q"); got != "127.140.3.77" {
			t.Fatalf("datagram %d: member saw %q, want the SERVER_INIT snat", i, got)
		}
	}
	if n := countLines(lg, "init 127.140.3.2"); n != 1 {
		t.Fatalf("SERVER_INIT ran %d times for one flow: %s", n, lg)
	}
}
