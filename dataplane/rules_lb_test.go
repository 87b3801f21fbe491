package dataplane

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// The LB:: commands acting on how the server side is made (rules
// commands_lb.go), on real connections.

// LB::prime opens the server connection in CLIENT_ACCEPTED although the
// rule collects the client's data: a server that speaks first (a
// banner, as SMTP and FTP servers do) is heard before the client sends
// anything; without it the collecting rule holds the server back.
func TestRulesLBPrime(t *testing.T) {
	t.Parallel()
	serveConns(t, "127.88.0.2:9000", func(c net.Conn) {
		c.Write([]byte("220 banner\n"))
		rawEcho(c)
	})
	for _, tc := range []struct {
		name, cmd string
		primes    bool
	}{
		{"prime", "LB::prime", true},
		{"connect", "LB::connect", true},
		{"neither", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic("127.88.0.1:8000", "127.88.0.2:9000")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect; `+tc.cmd+` }
when CLIENT_DATA { TCP::release }`)
			mustApply(t, p, cfg)
			c := dialFrom(t, "127.88.0.9", "127.88.0.1:8000")
			if !tc.primes {
				c.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				if line, err := c.r.ReadString('\n'); err == nil {
					t.Fatalf("the server spoke before the client without LB::prime: %q", line)
				}
				if r := flowsOf(p, "/Common/vs"); len(r) != 1 || r[0].SSServer.IsValid() {
					t.Fatalf("a server flow without LB::prime: %+v", r)
				}
				c = dialFrom(t, "127.88.0.9", "127.88.0.1:8000")
				c.c.SetDeadline(time.Now().Add(3 * time.Second))
				c.c.Write([]byte("hello\n"))
			} else {
				c.c.SetDeadline(time.Now().Add(3 * time.Second))
			}
			if line, err := c.r.ReadString('\n'); err != nil || line != "220 banner\n" {
				t.Fatalf("banner: %q %v", line, err)
			}
			if tc.primes {
				// The client has sent nothing yet: the server flow exists.
				if r := flowsOf(p, "/Common/vs"); len(r) != 1 || r[0].SSServer != ap("127.88.0.2:9000") {
					t.Fatalf("flow after LB::prime: %+v", r)
				}
				if a := c.mustAsk("ping"); a != "ping" {
					t.Fatalf("collected data after the prime: %q", a)
				}
			} else if line, err := c.r.ReadString('\n'); err != nil || line != "hello\n" {
				t.Fatalf("echo: %q %v", line, err)
			}
		})
	}
}

// rawEcho writes back what it reads until the peer goes.
func rawEcho(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

// translate address disable sends the client to the address it asked
// for (the virtual's own) on the member's port; translate port disable
// to the member's address on the port the client asked for; a client
// the rule leaves alone goes to the member, as the virtual says.
func TestRulesTranslate(t *testing.T) {
	t.Parallel()
	startServer(t, "127.88.1.2:9100", "MEMBER")
	startServer(t, "127.88.1.1:9100", "VIRTUAL-ADDRESS")
	startServer(t, "127.88.1.2:8100", "VIRTUAL-PORT")
	p, _ := newPlane(t)
	cfg := basic("127.88.1.1:8100", "127.88.1.2:9100")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED {
    switch [IP::client_addr] {
        127.88.1.10 { translate address disable }
        127.88.1.11 { translate service disable }
        127.88.1.12 { translate address disable; translate port disable; translate address enable }
    }
}`)
	mustApply(t, p, cfg)
	for _, tc := range []struct{ src, want string }{
		{"127.88.1.10", "VIRTUAL-ADDRESS Response"},
		{"127.88.1.11", "VIRTUAL-PORT Response"},
		{"127.88.1.12", "VIRTUAL-PORT Response"},
		{"127.88.1.13", "MEMBER Response"},
	} {
		c := dialFrom(t, tc.src, "127.88.1.1:8100")
		if got := c.mustAsk("hello"); got != tc.want {
			t.Errorf("client %s: %q, want %q", tc.src, got, tc.want)
		}
		c.c.Close()
	}
	// A virtual with translate-address disabled: the rule turns it on.
	cfg = basic("127.88.1.1:8101", "127.88.1.2:9100")
	cfg.Virtuals["/Common/vs"].TranslateAddress = false
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED {
    if { ![translate address] } { translate address enable }
}`)
	mustApply(t, p, cfg)
	c := dialFrom(t, "127.88.1.13", "127.88.1.1:8101")
	if got := c.mustAsk("hello"); got != "MEMBER Response" {
		t.Errorf("translate address enable: %q", got)
	}
}

// LB::snat reads the virtual's source translation and the rule's;
// LB::persist the record a returning client would follow, without
// making one; LB::enable_decisionlog writes the decision to the log.
func TestRulesLBSnatPersistDecisionLog(t *testing.T) {
	t.Parallel()
	startServer(t, "127.88.2.2:9200", "S1")
	startServer(t, "127.88.2.3:9200", "S2")
	p, plog := newPlane(t)
	cfg := basic("127.88.2.1:8200", "127.88.2.2:9200", "127.88.2.3:9200")
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap}
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED {
    log local0. "before [LB::snat]"
    snat none
    log local0. "after [LB::snat]"
    persist source_addr
    log local0. "key [LB::persist key] record {[LB::persist]}"
    LB::enable_decisionlog
}`)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	ask := func() string {
		c := dialFrom(t, "127.88.2.9", "127.88.2.1:8200")
		defer c.c.Close()
		return c.mustAsk("hello")
	}
	first := ask()
	eventually(t, "the first client's log", func() bool { return strings.Contains(lg.String(), "record {}") })
	for i := 0; i < 3; i++ {
		if got := ask(); got != first {
			t.Fatalf("persisted client went to %q, then %q", first, got)
		}
	}
	member := "127.88.2.2 9200"
	if first == "S2 Response" {
		member = "127.88.2.3 9200"
	}
	want := "key 127.88.2.9 record {pool /Common/pool member " + member + "}"
	eventually(t, "LB::persist of the returning client", func() bool { return strings.Contains(lg.String(), want) })
	for _, w := range []string{"before automap", "after none"} {
		if !strings.Contains(lg.String(), w) {
			t.Errorf("log lacks %q", w)
		}
	}
	eventually(t, "the decision log", func() bool {
		return strings.Contains(plog.String(), "LB decision: virtual /Common/vs") &&
			strings.Contains(plog.String(), "chosen by persistence") && strings.Contains(plog.String(), "chosen by load balancing")
	})
}

// On a UDP virtual, translate sends a flow as on a standard one, and
// LB::snat reads the rule's snat decision.
func TestUDPRulesTranslateAndSnat(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.88.3.2:5300", "MEMBER")
	startUDPMember(t, "127.88.3.1:5300", "VIRTUAL-ADDRESS")
	startUDPMember(t, "127.88.3.2:53", "VIRTUAL-PORT")
	p, _ := newPlane(t)
	cfg := udpBasic("127.88.3.1:53", "127.88.3.2:5300")
	r, lg := compileRules(t, `
when CLIENT_ACCEPTED {
    switch [IP::client_addr] {
        127.88.3.10 { translate address disable }
        127.88.3.11 { translate port disable }
    }
    snat automap
    log local0. "[IP::client_addr] snat [LB::snat] translate [translate address] [translate port]"
}`)
	lg.showOnFailure(t)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	for _, tc := range []struct{ src, want, log string }{
		{"127.88.3.10:0", "VIRTUAL-ADDRESS", "127.88.3.10 snat automap translate 0 1"},
		{"127.88.3.11:0", "VIRTUAL-PORT", "127.88.3.11 snat automap translate 1 0"},
		{"127.88.3.12:0", "MEMBER", "127.88.3.12 snat automap translate 1 1"},
	} {
		c := dialUDP(t, tc.src, "127.88.3.1:53")
		if got := label(c.mustAsk("hello")); got != tc.want {
			t.Errorf("client %s: %q, want %q", tc.src, got, tc.want)
		}
		if !strings.Contains(lg.String(), tc.log) {
			t.Errorf("log lacks %q", tc.log)
		}
	}
}

// On an http virtual LB::enable_decisionlog logs the member choice of
// each request from then on; LB::snat reads the virtual's translation.
func TestHTTPRuleDecisionLog(t *testing.T) {
	t.Parallel()
	startHTTPServer(t, "127.88.4.2:80", "W1")
	startHTTPServer(t, "127.88.4.3:80", "W2")
	p, plog := newPlane(t)
	cfg := mblbConfig("127.88.4.1:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}, OneConnect: &OneConnect{MaxSize: 4}},
		"127.88.4.2:80", "127.88.4.3:80")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when HTTP_REQUEST {
    if { [HTTP::path] eq "/log" } { LB::enable_decisionlog }
    HTTP::header replace X-Tag [LB::snat]
}`)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	cl := dialFrom(t, "127.88.4.9", "127.88.4.1:80")
	h := &httpRuleClient{c: cl.c, br: cl.r}
	_, body, err := h.do(httpReq("a.example", "/quiet"))
	if err != nil || !strings.Contains(body, "tag=automap") {
		t.Fatalf("first request: %q %v", body, err)
	}
	if strings.Contains(plog.String(), "LB decision") {
		t.Fatalf("a decision logged before the rule asked: %s", plog.String())
	}
	for i := 0; i < 2; i++ {
		if _, body, err := h.do(httpReq("a.example", "/log")); err != nil || !strings.HasPrefix(body, "W") {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
	}
	eventually(t, "two decisions logged", func() bool {
		return strings.Count(plog.String(), "LB decision: virtual /Common/vs client 127.88.4.9:") == 2 &&
			strings.Contains(plog.String(), "chosen by load balancing")
	})
}
