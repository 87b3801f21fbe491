package dataplane

import (
	"testing"
	"time"
)

// readUDP reads one datagram within d; "" when none came.
func (u *udpClient) readUDP(d time.Duration) string {
	u.c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 2048)
	n, err := u.c.Read(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// TestUDPRuleAfter: on a UDP virtual `after` is asynchronous, the flow
// (the client's address and port) being the connection: a periodic
// script answers the client on its own until it cancels itself, and a
// script's reject ends the flow, the client's next datagram making a
// new one.
func TestUDPRuleAfter(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.6.14.2:5300", "S1")
	for _, c := range []struct {
		name, vs, rule string
		check          func(t *testing.T, p *Plane, u *udpClient)
	}{
		{"periodic", "127.6.14.1:53", `when CLIENT_ACCEPTED {
    set n 0
    after 20 -periodic {
        incr n
        UDP::respond "tick $n"
        if {$n >= 3} { after cancel -current }
    }
}`, func(t *testing.T, p *Plane, u *udpClient) {
			var ticks []string
			for i := 0; i < 10 && len(ticks) < 3; i++ {
				switch got := u.readUDP(5 * time.Second); got {
				case "S1:q": // the member's answer, before or between the ticks
				case "":
					t.Fatalf("no datagram after %q", ticks)
				default:
					ticks = append(ticks, got)
				}
			}
			if len(ticks) != 3 || ticks[0] != "tick 1" || ticks[1] != "tick 2" || ticks[2] != "tick 3" {
				t.Fatalf("ticks %q, want tick 1..3", ticks)
			}
			if got := u.readUDP(200 * time.Millisecond); got != "" && got != "S1:q" {
				t.Fatalf("a cancelled script answered %q", got)
			}
		}},
		{"reject", "127.6.14.3:53", `when CLIENT_ACCEPTED { after 200 { reject } }`,
			func(t *testing.T, p *Plane, u *udpClient) {
				if got := u.readUDP(5 * time.Second); got != "S1:q" {
					t.Fatalf("first answer %q", got)
				}
				eventually(t, "the flow to end", func() bool {
					return p.Connections(ConnFilter{}, func(*Connection) bool { return true }) == 0
				})
				if got := u.mustAsk("again"); got != "S1:again" {
					t.Fatalf("after the reject: %q", got)
				}
				vs, _ := p.Virtual("/Common/vs")
				if vs.ClientSide.TotConns != 2 {
					t.Fatalf("total connections %d, want 2", vs.ClientSide.TotConns)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := udpBasic(c.vs, "127.6.14.2:5300")
			r, _ := compileRules(t, c.rule)
			setVirtualRules(cfg, "/Common/vs", r)
			mustApply(t, p, cfg)
			u := dialUDP(t, "", c.vs)
			u.c.Write([]byte("q"))
			c.check(t, p, u)
		})
	}
}

// TestUDPRuleSuspend: `after ms` in a UDP virtual's event suspends that
// flow alone, as on BIG-IP. The first client's CLIENT_DATA waits until the
// second client's datagram has been through its own CLIENT_DATA; were the
// wait holding up the listener's reader, the second datagram would never
// be read and the first wait would run out of rounds.
func TestUDPRuleSuspend(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.6.14.21:5300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.6.14.20:53", "127.6.14.21:5300")
	cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
	r, _ := compileRules(t, `when CLIENT_DATA {
    if {[UDP::payload] eq "wait"} {
        for {set i 0} {$i < 100 && [table lookup -notouch go] eq ""} {incr i} { after 50 }
        if {[table lookup -notouch go] eq ""} { reject }
        after 1500
    } else {
        table set go 1 60
    }
}`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	a, b := dialUDP(t, "", "127.6.14.20:53"), dialUDP(t, "", "127.6.14.20:53")
	a.c.Write([]byte("wait"))
	b.c.Write([]byte("go"))
	if got := b.readUDP(5 * time.Second); got != "S1:go" {
		t.Fatalf("the second client got %q while the first waited", got)
	}
	// The first flow waits past its idle timeout (1 s) in its event, and
	// is still served: a suspended event is not idleness.
	if got := a.readUDP(10 * time.Second); got != "S1:wait" {
		t.Fatalf("the waiting client got %q", got)
	}
	if got := a.mustAsk("again"); got != "S1:again" {
		t.Fatalf("after the wait: %q", got)
	}
}
