package dataplane

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/fix/fixtest"
)

// startAcceptor runs a FIX acceptor as a member.
func startAcceptor(t *testing.T, addr, name string) *fixtest.Acceptor {
	t.Helper()
	a, err := fixtest.StartAcceptor(addr, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// fixVirtual adds a fix virtual named name at vs over pool, with the
// rule (if any).
func fixVirtual(t *testing.T, cfg *Config, name, vs, pool string, opt fix.Options, rule string) {
	opt.Profile = "/Common/fix"
	v := &Virtual{Name: name, Destination: ap(vs), Enabled: true, TranslateAddress: true, TranslatePort: true,
		Pool: pool, SNAT: SNAT{Type: SNATNone}, FIX: &opt}
	if rule != "" {
		v.Rules, _ = compileRules(t, rule)
	}
	cfg.Virtuals[name] = v
}

// fixDial connects a client to vs.
func fixDial(t *testing.T, vs string) *fixtest.Client {
	t.Helper()
	c, err := fixtest.Dial(vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The messages a session sends: Logon, NewOrderSingle (with the desk
// in a user-defined tag, 10001), Heartbeat.
func fixLogon(begin, sender string) []byte {
	return fixtest.Build(begin, "35=A", "34=1", "49="+sender, "52=20250101-10:00:00.000", "56=EXEC", "98=0", "108=30")
}

func fixOrder(begin, sender string) []byte {
	return fixtest.Build(begin, "35=D", "34=2", "49="+sender, "52=20250101-10:00:01.000", "56=EXEC", "11=ORD1", "21=1",
		"38=100", "40=2", "44=101.25", "54=1", "55=IBM", "60=20250101-10:00:01.000", "10001=desk7")
}

func fixHeartbeat(begin, sender string) []byte {
	return fixtest.Build(begin, "35=0", "34=3", "49="+sender, "52=20250101-10:00:30.000", "56=EXEC")
}

// recvHas reads the client's next message and checks it holds each of
// the "tag=value" fields.
func recvHas(t *testing.T, c *fixtest.Client, fields ...string) string {
	t.Helper()
	m, err := c.Recv(10 * time.Second)
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	for _, f := range fields {
		if !strings.Contains("|"+m, "|"+f+"|") {
			t.Fatalf("message %s lacks %s", m, f)
		}
	}
	return m
}

// TestFIXProfile: FIX 4.2 and 4.4 sessions (Logon, NewOrderSingle,
// Heartbeat) through a virtual with the fix profile, to acceptors that
// check every message's BodyLength and CheckSum: messages pass both
// ways; a FIX_HEADER rule picks the pool by SenderCompID; a sender's tag
// map renumbers tag 10001 toward the member (the message re-encoded, so
// the member's checks still pass) and back in the member's answer; a
// malformed message is dropped with error-action dont-forward and
// resets the connection with drop-connection; a session that does not
// begin with a Logon is refused under full-logon-parsing; show ltm
// profile fix counts them.
func TestFIXProfile(t *testing.T) {
	t.Parallel()
	a := startAcceptor(t, "127.110.1.10:9878", "member-a")
	b := startAcceptor(t, "127.110.1.11:9878", "member-b")
	p, _ := newPlane(t)
	cfg := basic("127.110.1.1:9878", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/pa", a.Addr())
	withPool(cfg, "/Common/pb", b.Addr())
	fixVirtual(t, cfg, "/Common/plain", "127.110.1.1:9878", "/Common/pool", fix.Options{FullLogon: true}, "")
	fixVirtual(t, cfg, "/Common/route", "127.110.1.2:9878", "/Common/pa", fix.Options{FullLogon: true,
		SenderTags: map[string]map[int]int{"DESKS": {10001: 20001}}}, `when FIX_HEADER {
		if {[FIX::tag get 35] eq "A" && [FIX::tag get 49] starts_with "B-"} { pool /Common/pb }
	}
	when FIX_MESSAGE {
		if {[FIX::tag get 35] eq "D"} { log local0. "order [FIX::tag get 11] [FIX::tag get 55] from [FIX::tag get 49]" }
	}`)
	fixVirtual(t, cfg, "/Common/strict", "127.110.1.3:9878", "/Common/pool", fix.Options{FullLogon: true, DropConnection: true}, "")
	mustApply(t, p, cfg)

	t.Run("a session passes", func(t *testing.T) {
		for _, begin := range []string{"FIX.4.2", "FIX.4.4"} {
			before := len(a.Messages())
			c := fixDial(t, "127.110.1.1:9878")
			c.Send(fixLogon(begin, "BANZAI"))
			recvHas(t, c, "8="+begin, "35=A", "49=member-a", "56=BANZAI")
			c.Send(fixOrder(begin, "BANZAI"), fixHeartbeat(begin, "BANZAI"))
			recvHas(t, c, "35=8", "11=ORD1", "55=IBM", "49=member-a")
			c.Close()
			eventually(t, "the member got the three messages", func() bool { return len(a.Messages()) == before+3 })
			got := a.Messages()[before:]
			for i, want := range [][]byte{fixLogon(begin, "BANZAI"), fixOrder(begin, "BANZAI"), fixHeartbeat(begin, "BANZAI")} {
				if got[i] != fixtest.Text(want) {
					t.Fatalf("member got %s, want %s", got[i], fixtest.Text(want))
				}
			}
		}
	})

	t.Run("rule routes by sender, tags mapped", func(t *testing.T) {
		c := fixDial(t, "127.110.1.2:9878")
		c.Send(fixLogon("FIX.4.4", "B-1"))
		recvHas(t, c, "49=member-b", "56=B-1")
		c = fixDial(t, "127.110.1.2:9878")
		c.Send(fixLogon("FIX.4.4", "DESKS"))
		recvHas(t, c, "49=member-a", "56=DESKS")
		c.Send(fixOrder("FIX.4.4", "DESKS"))
		// The member's answer carries 20001, which the client gets back
		// as 10001.
		m := recvHas(t, c, "35=8", "10001=desk7")
		if strings.Contains(m, "20001=") {
			t.Fatalf("the member's tag reached the client: %s", m)
		}
		eventually(t, "the member got the mapped order", func() bool {
			for _, g := range a.Messages() {
				if strings.Contains(g, "|49=DESKS|") && strings.Contains(g, "|35=D|") {
					return strings.Contains(g, "|20001=desk7|") && !strings.Contains(g, "|10001=")
				}
			}
			return false
		})
		if r := a.Refused(); len(r) != 0 {
			t.Fatalf("the member refused %v", r)
		}
	})

	t.Run("malformed messages", func(t *testing.T) {
		before := p.ProfileStats(ProfileFIX, "/Common/fix", []string{"/Common/plain", "/Common/strict"}).FIX
		bad := fixOrder("FIX.4.4", "BANZAI")
		bad[len(bad)-2]++ // the checksum's last digit
		// dont-forward: the bad order is dropped, the heartbeat and the
		// next order pass.
		n := len(a.Messages())
		c := fixDial(t, "127.110.1.1:9878")
		c.Send(fixLogon("FIX.4.4", "BANZAI"))
		recvHas(t, c, "35=A")
		c.Send(bad, fixHeartbeat("FIX.4.4", "BANZAI"), fixOrder("FIX.4.4", "BANZAI"))
		recvHas(t, c, "35=8")
		eventually(t, "three messages at the member", func() bool { return len(a.Messages()) >= n+3 })
		for _, g := range a.Messages()[n:] {
			if g == fixtest.Text(bad) {
				t.Fatal("the malformed order reached the member")
			}
		}
		// drop-connection: reset.
		c = fixDial(t, "127.110.1.3:9878")
		c.Send(fixLogon("FIX.4.4", "BANZAI"))
		recvHas(t, c, "35=A")
		c.Send(bad)
		if _, err := c.Recv(10 * time.Second); err == nil || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("after a bad checksum under drop-connection: %v, want a reset", err)
		}
		// full-logon-parsing: an order first is not a session.
		c = fixDial(t, "127.110.1.3:9878")
		c.Send(fixOrder("FIX.4.4", "BANZAI"))
		if _, err := c.Recv(10 * time.Second); err == nil || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("an order before the Logon: %v, want a reset", err)
		}
		// Not FIX at all: the framing is lost, so a reset whatever
		// error-action says.
		c = fixDial(t, "127.110.1.1:9878")
		c.Send([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		if _, err := c.Recv(10 * time.Second); err == nil || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("HTTP to a FIX virtual: %v, want a reset", err)
		}
		eventually(t, "the refused messages counted", func() bool {
			now := p.ProfileStats(ProfileFIX, "/Common/fix", []string{"/Common/plain", "/Common/strict"}).FIX
			return now.Malformed-before.Malformed == 4 && now.FromClient > before.FromClient
		})
		if r := a.Refused(); len(r) != 0 {
			t.Fatalf("the member refused %v", r)
		}
	})
}
