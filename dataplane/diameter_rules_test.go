package dataplane

import (
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// exchangeTagged sends one CCR per session (client.example;SESSION) at
// once and waits for the answers.
func exchangeTagged(t *testing.T, c *diamtest.Client, sessions ...string) []diamtest.Answer {
	t.Helper()
	codes, avps := make([]uint32, len(sessions)), make([][]byte, len(sessions))
	for i, s := range sessions {
		codes[i], avps[i] = 272, diamtest.Request("client.example", "client.example;"+s, "")
	}
	ans, err := c.Exchange(codes, 4, avps...)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return ans
}

// gotSessions is what member s received of 272 requests: session ->
// whether it came with the T flag.
func gotSessions(s *diamtest.Server) map[string]bool {
	out := map[string]bool{}
	for _, g := range s.Got() {
		if g.Code == 272 {
			out[g.Session] = out[g.Session] || g.Retransmit
		}
	}
	return out
}

// TestDiameterRetransmissionRules: DIAMETER_RETRANSMISSION over the
// requests a silent member holds — a rule answering DIAMETER_TOO_BUSY
// instead of retrying, or letting them go to the other member with the
// reason it reads; DIAMETER::retransmit sending an answered request
// again; DIAMETER::respond answering from the rule.
func TestDiameterRetransmissionRules(t *testing.T) {
	t.Parallel()

	t.Run("a rule chooses not to retry", func(t *testing.T) {
		t.Parallel()
		a := diamServer(t, "127.128.1.10:3868", "member-a.example", false)
		b := diamServer(t, "127.128.1.11:3868", "member-b.example", false)
		a.Silent(true)
		p, _ := newPlane(t)
		cfg := basic("127.128.1.1:3868", a.Addr(), b.Addr())
		delete(cfg.Virtuals, "/Common/vs")
		diamVirtual(t, cfg, "/Common/diam", "127.128.1.1:3868", "/Common/pool", diameter.Options{MaxRetransmit: 1, RetransmitTimeout: time.Second}, "")
		var lg *ruleLog
		cfg.Virtuals["/Common/diam"].Rules, lg = compileRules(t, `
			when DIAMETER_RETRANSMISSION {
				if {[DIAMETER::is_request] && [DIAMETER::session] starts_with "client.example;busy"} {
					DIAMETER::retransmission action busy
				} elseif {[DIAMETER::is_request]} {
					log local0. "again [DIAMETER::session] [DIAMETER::retransmission_reason] [DIAMETER::is_retransmission]"
				}
			}`)
		lg.showOnFailure(t)
		mustApply(t, p, cfg)
		stats := func() DiameterProfileStats {
			return p.ProfileStats(ProfileDiameter, "/Common/diameter", []string{"/Common/diam"}).Diameter
		}
		c, _ := diamClient(t, "127.128.1.1:3868", "client.example")
		ans := exchangeTagged(t, c, "busy;1", "busy;2", "busy;3", "busy;4")
		held := gotSessions(a)
		busy := 0
		for i, an := range ans {
			sid := fmt.Sprintf("client.example;busy;%d", i+1)
			switch {
			case held[sid]:
				t.Fatalf("member-a got %s with the T flag", sid)
			case an.Result == diammsg.ResultTooBusy:
				if _, ok := held[sid]; !ok {
					t.Fatalf("%s answered busy, but member-a never had it", sid)
				}
				busy++
			case an.Result != diammsg.ResultSuccess || an.Origin != "member-b.example":
				t.Fatalf("answer %d: %+v", i, an)
			}
		}
		if busy == 0 || busy != len(held) {
			t.Fatalf("%d busy answers, member-a held %d", busy, len(held))
		}
		for sid, re := range gotSessions(b) {
			if re {
				t.Fatalf("member-b got %s with the T flag: the rule said busy", sid)
			}
		}
		if s := stats(); s.Busy != uint64(busy) || s.Retransmitted != 0 {
			t.Fatalf("stats %+v, want %d busy and none retransmitted", s, busy)
		}

		// Without the rule's say the request goes to member-b, T flag set,
		// and the rule reads why.
		ans = exchangeTagged(t, c, "on;1", "on;2", "on;3", "on;4")
		for i, an := range ans {
			if an.Result != diammsg.ResultSuccess || an.Origin != "member-b.example" {
				t.Fatalf("answer %d: %+v", i, an)
			}
		}
		eventually(t, "the rule logged the reason", func() bool { return strings.Contains(lg.String(), "timeout 1") })
		if s := stats(); s.Retransmitted == 0 {
			t.Fatalf("stats %+v, want requests retransmitted", s)
		}
	})

	t.Run("retransmit and respond from rules", func(t *testing.T) {
		t.Parallel()
		a := diamServer(t, "127.128.2.10:3868", "member-a.example", false)
		b := diamServer(t, "127.128.2.11:3868", "member-b.example", false)
		p, _ := newPlane(t)
		cfg := basic("127.128.2.1:3868", a.Addr(), b.Addr())
		delete(cfg.Virtuals, "/Common/vs")
		diamVirtual(t, cfg, "/Common/diam", "127.128.2.1:3868", "/Common/pool", diameter.Options{MaxRetransmit: 1}, `
			when DIAMETER_INGRESS {
				if {[DIAMETER::is_request] && [DIAMETER::session] starts_with "client.example;local"} {
					set avps [DIAMETER::avp create Session-Id 0 1 0 0 [DIAMETER::session] string]
					append avps [DIAMETER::avp create Result-Code 0 1 0 0 2001 unsigned32]
					append avps [DIAMETER::avp create Origin-Host 0 1 0 0 lb.example string]
					append avps [DIAMETER::avp create Origin-Realm 0 1 0 0 lb.realm string]
					DIAMETER::respond 1 0 1 0 0 [DIAMETER::command] [DIAMETER::header appid] [DIAMETER::header hopbyhop] [DIAMETER::header endtoend] $avps
					DIAMETER::drop
				}
			}
			when DIAMETER_EGRESS {
				if {[DIAMETER::is_response] && ![DIAMETER::is_retransmission] && [DIAMETER::session] starts_with "client.example;again"} {
					DIAMETER::retransmit
				}
			}`)
		mustApply(t, p, cfg)
		c, _ := diamClient(t, "127.128.2.1:3868", "client.example")
		ans := exchangeTagged(t, c, "local;1", "again;1", "local;2", "again;2")
		for i, an := range ans {
			if strings.Contains(an.Session, "local") != (an.Origin == "lb.example") || an.Result != diammsg.ResultSuccess {
				t.Fatalf("answer %d: %+v", i, an)
			}
		}
		ga, gb := gotSessions(a), gotSessions(b)
		for _, sid := range []string{"client.example;local;1", "client.example;local;2"} {
			if _, ok := ga[sid]; ok {
				t.Fatalf("member-a got %s, which the rule answered", sid)
			}
			if _, ok := gb[sid]; ok {
				t.Fatalf("member-b got %s, which the rule answered", sid)
			}
		}
		for i, sid := range []string{"client.example;again;1", "client.example;again;2"} {
			reA, okA := ga[sid]
			reB, okB := gb[sid]
			if !okA || !okB || reA == reB {
				t.Fatalf("%s: member-a got it %v (T %v), member-b %v (T %v): want it sent once to each, again with the T flag", sid, okA, reA, okB, reB)
			}
			want := "member-b.example"
			if reA {
				want = "member-a.example"
			}
			if an := ans[1+2*i]; an.Origin != want {
				t.Fatalf("%s answered by %s, want %s (the member it was sent again to)", sid, an.Origin, want)
			}
		}
		s := p.ProfileStats(ProfileDiameter, "/Common/diameter", []string{"/Common/diam"}).Diameter
		if s.Responded != 2 || s.Retransmitted != 2 {
			t.Fatalf("stats %+v, want 2 responded and 2 retransmitted", s)
		}
	})
}

// TestDiameterHandshakeTimeout: a hung member that never answers the CER
// is reset after handshake-timeout and counted; the client gets the
// other member's CEA, and its requests (those sent to the hung member
// too, again) are answered there. With no other member the client is
// reset.
func TestDiameterHandshakeTimeout(t *testing.T) {
	t.Parallel()
	mute := diamServer(t, "127.128.3.10:3868", "member-mute.example", false)
	mute.MuteCER(true) // and answers nothing else: hung
	mute.Silent(true)
	b := diamServer(t, "127.128.3.11:3868", "member-b.example", false)
	p, _ := newPlane(t)
	cfg := basic("127.128.3.1:3868", mute.Addr(), b.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/alone", mute.Addr())
	opt := diameter.Options{HandshakeTimeout: time.Second, MaxRetransmit: 1}
	diamVirtual(t, cfg, "/Common/diam", "127.128.3.1:3868", "/Common/pool", opt, "")
	diamVirtual(t, cfg, "/Common/alone", "127.128.3.2:3868", "/Common/alone", opt, "")
	mustApply(t, p, cfg)
	stats := func(v string) DiameterProfileStats {
		return p.ProfileStats(ProfileDiameter, "/Common/diameter", []string{v}).Diameter
	}
	// Round robin: of two connections, at least one tries the mute
	// member first.
	for i := range 2 {
		c, cea := diamClient(t, "127.128.3.1:3868", "client.example")
		if cea.Origin != "member-b.example" {
			t.Fatalf("connection %d: CEA from %s", i, cea.Origin)
		}
		for j, an := range exchangeTagged(t, c, fmt.Sprintf("hs;%d;1", i), fmt.Sprintf("hs;%d;2", i)) {
			if an.Result != diammsg.ResultSuccess || an.Origin != "member-b.example" {
				t.Fatalf("connection %d answer %d: %+v", i, j, an)
			}
		}
	}
	if s := stats("/Common/diam"); s.HandshakeTimeouts == 0 {
		t.Fatalf("stats %+v, want handshake timeouts", s)
	}

	c, err := diamtest.Dial("127.128.3.2:3868")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CER("client.example"); err == nil {
		t.Fatal("a CEA came from a pool whose only member does not answer CERs")
	}
	eventually(t, "the timeout counted", func() bool { return stats("/Common/alone").HandshakeTimeouts == 1 })
}

// TestDiameterOverTLS: a diameter virtual with client-ssl reads the
// messages of a crypto/tls client; with server-ssl too, it balances
// them over TLS members, each member connection handshaking on its own.
func TestDiameterOverTLS(t *testing.T) {
	t.Parallel()
	cert, key, roots := testCert(t, "diameter.example")
	mcert, mkey, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	member := func(addr, name string) *diamtest.Server {
		s, err := diamtest.StartTLS(addr, name, &tls.Config{Certificates: []tls.Certificate{pair}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	sa := member("127.128.4.10:3868", "secure-a.example")
	sb := member("127.128.4.11:3868", "secure-b.example")
	pa := diamServer(t, "127.128.4.12:3868", "plain-a.example", false)
	p, _ := newPlane(t)
	cfg := basic("127.128.4.1:3868", sa.Addr(), sb.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/plain", pa.Addr())
	diamVirtual(t, cfg, "/Common/both", "127.128.4.1:3868", "/Common/pool", diameter.Options{MaxRetransmit: 1}, `
		when DIAMETER_INGRESS {
			if {[DIAMETER::is_request]} { DIAMETER::avp replace Destination-Realm tls.example }
		}`)
	diamVirtual(t, cfg, "/Common/front", "127.128.4.2:3868", "/Common/plain", diameter.Options{}, "")
	cfg.Virtuals["/Common/both"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/both"].TLS.Server = serverSSL(t)
	cfg.Virtuals["/Common/front"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)

	dial := func(t *testing.T, vs string) (*diamtest.Client, diamtest.Answer) {
		t.Helper()
		c, err := diamtest.DialTLS(vs, &tls.Config{ServerName: "diameter.example", RootCAs: roots})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cea, err := c.CER("client.example")
		if err != nil || cea.Result != diammsg.ResultSuccess {
			t.Fatalf("CEA %+v: %v", cea, err)
		}
		return c, cea
	}
	t.Run("client-ssl and server-ssl", func(t *testing.T) {
		c, cea := dial(t, "127.128.4.1:3868")
		if !strings.HasPrefix(cea.Origin, "secure-") {
			t.Fatalf("CEA from %s", cea.Origin)
		}
		seen := map[string]int{}
		for i, an := range exchangeTagged(t, c, "t;1", "t;2", "t;3", "t;4", "t;5", "t;6") {
			if an.Result != diammsg.ResultSuccess {
				t.Fatalf("answer %d: %+v", i, an)
			}
			seen[an.Origin]++
		}
		if seen["secure-a.example"] == 0 || seen["secure-b.example"] == 0 {
			t.Fatalf("answers by member %v, want both TLS members", seen)
		}
		for _, s := range []*diamtest.Server{sa, sb} {
			for _, g := range s.Got() {
				if g.Code == 272 && g.Origin != "client.example" {
					t.Fatalf("%s got %+v", s.Name, g)
				}
			}
		}
	})
	t.Run("client-ssl to a plain member", func(t *testing.T) {
		c, cea := dial(t, "127.128.4.2:3868")
		if cea.Origin != "plain-a.example" {
			t.Fatalf("CEA from %s", cea.Origin)
		}
		for i, an := range exchangeTagged(t, c, "p;1", "p;2") {
			if an.Result != diammsg.ResultSuccess || an.Origin != "plain-a.example" {
				t.Fatalf("answer %d: %+v", i, an)
			}
		}
	})
}

// TestDiameterSkipCapabilitiesExchange: a client a rule lets go without
// a CER has its first request balanced like any other, and DIAMETER::state
// reads its connection open; without the rule it reads WAIT_ICEA over
// the CER, IOPEN once the client has its CEA.
func TestDiameterSkipCapabilitiesExchange(t *testing.T) {
	t.Parallel()
	a := diamServer(t, "127.128.5.10:3868", "member-a.example", false)
	p, _ := newPlane(t)
	cfg := basic("127.128.5.1:3868", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	const state = `
		when DIAMETER_INGRESS {
			if {[DIAMETER::is_request]} { log local0. "state [DIAMETER::command] [DIAMETER::session] [DIAMETER::state]" }
		}`
	var skip, plain *ruleLog
	diamVirtual(t, cfg, "/Common/skip", "127.128.5.1:3868", "/Common/pool", diameter.Options{}, "")
	cfg.Virtuals["/Common/skip"].Rules, skip = compileRules(t, `when CLIENT_ACCEPTED { DIAMETER::skip_capabilities_exchange peer.example }`+state)
	diamVirtual(t, cfg, "/Common/plain", "127.128.5.2:3868", "/Common/pool", diameter.Options{}, "")
	cfg.Virtuals["/Common/plain"].Rules, plain = compileRules(t, state)
	skip.showOnFailure(t)
	plain.showOnFailure(t)
	mustApply(t, p, cfg)
	c, err := diamtest.Dial("127.128.5.1:3868")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, an := range exchangeTagged(t, c, "skip;1", "skip;2") {
		if an.Result != diammsg.ResultSuccess || an.Origin != "member-a.example" {
			t.Fatalf("answer %d: %+v", i, an)
		}
	}
	c2, _ := diamClient(t, "127.128.5.2:3868", "client.example")
	exchangeTagged(t, c2, "plain;1")
	for _, w := range []struct {
		lg   *ruleLog
		want string
	}{
		{skip, "state 272 client.example;skip;1 IOPEN"}, {skip, "state 272 client.example;skip;2 IOPEN"},
		{plain, "state 257  WAIT_ICEA"}, {plain, "state 272 client.example;plain;1 IOPEN"},
	} {
		if !strings.Contains(w.lg.String(), w.want) {
			t.Fatalf("log %q, want %q", w.lg.String(), w.want)
		}
	}
}
