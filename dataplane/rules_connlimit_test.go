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
