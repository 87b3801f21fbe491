package dataplane

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// LB::connlimit on a standard virtual, with real clients held open: the
// balancing passes over a member with as many connections as the rule's
// poolmember limit, LB_FAILED runs when every member is at it, and a
// member freed takes the next client; the virtual limit fails the
// balancing while the virtual holds more connections than it allows.
func TestRulesConnLimit(t *testing.T) {
	t.Parallel()
	startServer(t, "127.140.4.2:9000", "A")
	startServer(t, "127.140.4.3:9000", "B")
	for i, tc := range []struct {
		name, cmd string
		admitted  int // clients served while all are held
	}{
		{"poolmember", "LB::connlimit poolmember limit 1", 2},
		{"node", "LB::connlimit node limit 1", 2},
		{"virtual", "LB::connlimit virtual limit 3", 3},
		{"none", "", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.140.4.1:%d", 8000+i)
			p, _ := newPlane(t)
			cfg := basic(vs, "127.140.4.2:9000", "127.140.4.3:9000")
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { `+tc.cmd+` }
when LB_SELECTED { log local0. "limits [LB::connlimit virtual] [LB::connlimit node] [LB::connlimit poolmember]" }
when LB_FAILED { log local0. "failed" }`)
			mustApply(t, p, cfg)
			lg.showOnFailure(t)
			var held []*client
			served := 0
			for k := 0; k < 4; k++ {
				// A refused client's reset may reach its connect first.
				d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.140.4.9")}}
				conn, err := d.Dial("tcp", vs)
				if err != nil {
					continue
				}
				t.Cleanup(func() { conn.Close() })
				c := &client{t: t, c: conn.(*net.TCPConn), r: bufio.NewReader(conn)}
				if _, err := c.ask("hi"); err == nil {
					served++
					held = append(held, c)
				}
			}
			if served != tc.admitted {
				t.Fatalf("%d of 4 held clients served, want %d", served, tc.admitted)
			}
			if tc.admitted < 4 && !strings.Contains(lg.String(), "failed") {
				t.Fatalf("LB_FAILED did not run for a client over the limit")
			}
			if tc.name == "poolmember" && !strings.Contains(lg.String(), "limits 0 0 1") {
				t.Fatalf("LB::connlimit did not read back the limit")
			}
			if tc.name != "poolmember" {
				return
			}
			held[0].c.Close() // its member has room again
			eventually(t, "a client served again", func() bool { return tryAsk("127.140.4.9", vs) == nil })
		})
	}
}

// LB::connlimit on an HTTP virtual: a request finds no member while the
// only one holds as many server connections as the rule allows (another
// client's keep-alive connection), and is served once it is closed.
func TestRulesConnLimitHTTP(t *testing.T) {
	t.Parallel()
	startSourceHTTP(t, "127.140.5.2:80")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.140.5.1:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.140.5.2:80")
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{}
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when HTTP_REQUEST { LB::connlimit poolmember limit 1 }
when LB_FAILED { HTTP::respond 503 content "full" }`)
	mustApply(t, p, cfg)
	lg.showOnFailure(t)
	a := dialHTTPVS(t, "127.140.5.1:80")
	if r, _, err := a.do(httpReq("a", "/")); err != nil || r.StatusCode != 200 {
		t.Fatalf("first client: %v %v", r, err)
	}
	b := dialHTTPVS(t, "127.140.5.1:80")
	if r, body, err := b.do(httpReq("a", "/")); err != nil || r.StatusCode != 503 || body != "full" {
		t.Fatalf("second client while the member is at the rule's limit: %v %q %v", r, body, err)
	}
	a.c.Close()
	eventually(t, "the member taking the second client", func() bool {
		r, _, err := b.do(httpReq("a", "/"))
		return err == nil && r.StatusCode == 200
	})
}

// LB::connlimit on a UDP virtual: each client flow holds a connection
// on its member, so with a poolmember limit of 1 and two members a
// third client's flow finds none (LB_FAILED) while the first two live.
func TestRulesConnLimitUDP(t *testing.T) {
	t.Parallel()
	startSourceUDP(t, "127.140.4.12:5300")
	startSourceUDP(t, "127.140.4.13:5300")
	p, _ := newPlane(t)
	cfg := udpBasic("127.140.4.11:53", "127.140.4.12:5300", "127.140.4.13:5300")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { LB::connlimit poolmember limit 1 }
when LB_FAILED { log local0. "failed" }`)
	mustApply(t, p, cfg)
	lg.showOnFailure(t)
	a, b := dialUDP(t, "127.140.4.19:0", "127.140.4.11:53"), dialUDP(t, "127.140.4.19:0", "127.140.4.11:53")
	a.mustAsk("q")
	b.mustAsk("q")
	c := dialUDP(t, "127.140.4.19:0", "127.140.4.11:53")
	if got := c.ask("q"); got != "" {
		t.Fatalf("a third flow was answered (%q) with both members at the rule's limit", got)
	}
	eventually(t, "LB_FAILED to run", func() bool { return strings.Contains(lg.String(), "failed") })
}

// LB::connlimit ... key on a standard virtual, with real clients from
// two addresses held open: keyed by the client's address, each client
// holds at most the limit on each member (poolmember) or on the virtual
// (virtual) while the other client still finds room; a client's closed
// connection gives its room back; an HTTP virtual counts each client
// connection under its key on the member of its latest request.
func TestRulesConnLimitKey(t *testing.T) {
	t.Parallel()
	startServer(t, "127.160.1.2:9000", "A")
	startServer(t, "127.160.1.3:9000", "B")
	const a, b = "127.160.1.9", "127.160.1.10"
	for i, tc := range []struct {
		name, cmd string
		// served are, in turn, whether each of a, a, a, b (all held)
		// is served.
		served [4]bool
	}{
		{"poolmember", "LB::connlimit poolmember limit 1 key [IP::client_addr]", [4]bool{true, true, false, true}},
		{"node", "LB::connlimit node key [IP::client_addr] limit 1", [4]bool{true, true, false, true}},
		{"virtual", "LB::connlimit virtual limit 2 key [IP::client_addr]", [4]bool{true, true, false, true}},
		{"unkeyed", "LB::connlimit poolmember limit 1", [4]bool{true, true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.160.1.1:%d", 8000+i)
			p, _ := newPlane(t)
			cfg := basic(vs, "127.160.1.2:9000", "127.160.1.3:9000")
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { `+tc.cmd+` }
when LB_FAILED { log local0. "failed [IP::client_addr]" }`)
			mustApply(t, p, cfg)
			lg.showOnFailure(t)
			var held []*client
			for k, src := range []string{a, a, a, b} {
				c, err := dialKeyed(t, src, vs)
				if err == nil {
					_, err = c.ask("hi")
				}
				if (err == nil) != tc.served[k] {
					t.Fatalf("client %d from %s: served %v (%v), want %v", k, src, err == nil, err, tc.served[k])
				}
				if err == nil {
					held = append(held, c)
				}
			}
			if !strings.Contains(lg.String(), "failed "+a) || tc.name != "unkeyed" && strings.Contains(lg.String(), "failed "+b) {
				t.Fatalf("LB_FAILED ran for the wrong clients")
			}
			if tc.name == "unkeyed" {
				return
			}
			held[0].c.Close() // its room comes back to a
			eventually(t, "a served again", func() bool { return tryAsk(a, vs) == nil })
		})
	}
	t.Run("http", func(t *testing.T) {
		startSourceHTTP(t, "127.160.1.22:80")
		p, _ := newPlane(t)
		cfg := mblbConfig("127.160.1.21:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.160.1.22:80")
		cfg.Virtuals["/Common/vs"].SNAT = SNAT{}
		var lg *ruleLog
		cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when HTTP_REQUEST { LB::connlimit poolmember limit 1 key [IP::client_addr] }
when LB_FAILED { HTTP::respond 503 content "full" }`)
		mustApply(t, p, cfg)
		lg.showOnFailure(t)
		ask := func(c *httpRuleClient) (int, string) {
			r, body, err := c.do(httpReq("a", "/"))
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			return r.StatusCode, body
		}
		a1 := dialHTTPFrom(t, a, "127.160.1.21:80")
		if code, _ := ask(a1); code != 200 {
			t.Fatalf("a's first connection: %d", code)
		}
		a2 := dialHTTPFrom(t, a, "127.160.1.21:80")
		if code, body := ask(a2); code != 503 || body != "full" {
			t.Fatalf("a's second connection while a holds the member's keyed limit: %d %q", code, body)
		}
		b1 := dialHTTPFrom(t, b, "127.160.1.21:80")
		if code, _ := ask(b1); code != 200 {
			t.Fatalf("b while a is at its keyed limit: %d", code)
		}
		a1.c.Close()
		eventually(t, "a's second connection served", func() bool {
			r, _, err := a2.do(httpReq("a", "/"))
			return err == nil && r.StatusCode == 200
		})
	})
}

// dialKeyed connects from src to vs; the connection closes with the test.
func dialKeyed(t *testing.T, src, vs string) (*client, error) {
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	conn, err := d.Dial("tcp", vs)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, c: conn.(*net.TCPConn), r: bufio.NewReader(conn)}, nil
}

// dialHTTPFrom is dialHTTPVS from the address src.
func dialHTTPFrom(t *testing.T, src, vs string) *httpRuleClient {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &httpRuleClient{c: c, br: bufio.NewReader(c)}
}

// LB::connlimit ... key on a UDP virtual: keyed by the client's address,
// two flows from one client hold its place on each of the two members,
// so its third flow finds none (LB_FAILED) while another client's flow
// is answered.
func TestRulesConnLimitKeyUDP(t *testing.T) {
	t.Parallel()
	startSourceUDP(t, "127.160.1.32:5300")
	startSourceUDP(t, "127.160.1.33:5300")
	p, _ := newPlane(t)
	cfg := udpBasic("127.160.1.31:53", "127.160.1.32:5300", "127.160.1.33:5300")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { LB::connlimit poolmember limit 1 key [IP::client_addr] }
when LB_FAILED { log local0. "failed [IP::client_addr]" }`)
	mustApply(t, p, cfg)
	lg.showOnFailure(t)
	a, b := dialUDP(t, "127.160.1.39:0", "127.160.1.31:53"), dialUDP(t, "127.160.1.39:0", "127.160.1.31:53")
	a.mustAsk("q")
	b.mustAsk("q")
	if got := dialUDP(t, "127.160.1.39:0", "127.160.1.31:53").ask("q"); got != "" {
		t.Fatalf("a third flow of the same client was answered (%q) with its key at the limit on both members", got)
	}
	eventually(t, "LB_FAILED to run", func() bool { return strings.Contains(lg.String(), "failed 127.160.1.39") })
	dialUDP(t, "127.160.1.40:0", "127.160.1.31:53").mustAsk("q")
	if strings.Contains(lg.String(), "failed 127.160.1.40") {
		t.Fatalf("LB_FAILED ran for the other client")
	}
}
