package dataplane

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// sipRuleReq is a request of the test client, as sipReq makes it but
// with this test's own addresses in its Via.
func sipRuleReq(meth, callID, branch string, cseq int, extra string) string {
	return strings.Replace(sipReq(meth, callID, branch, cseq, extra), "127.62.9.9:5060", "127.83.9.9:5060", 1)
}

// sipHead is a datagram's head, "" for none.
func sipHead(b string) string {
	head, _, _ := strings.Cut(b, "\r\n\r\n")
	return head
}

// TestSIPUDPRules: SIP_REQUEST and SIP_RESPONSE run on a UDP SIP virtual
// between real UDP clients and members, either way: SIP:: reads and
// edits the message, SIP::respond and SIP::discard answer for the
// member or keep a message from it, and a pool decision directs the one
// message.
func TestSIPUDPRules(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name  string
		rule  string
		check func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember)
	}{
		{"edits either way", `when SIP_REQUEST { SIP::header insert X-Rule "[SIP::method] [SIP::call_id]" }
when SIP_RESPONSE { SIP::header replace X-Member "[SIP::response code]-[SIP::header X-Member]" }`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember) {
				a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", "e1", "o1", 1, "")))
				if got := sipField(a, "X-Member"); got != "200-S1" && got != "200-S2" {
					t.Fatalf("answer's X-Member %q, want the SIP_RESPONSE edit:\n%s", got, a)
				}
				seen := append(s1.seen(), s2.seen()...)
				if len(seen) == 0 || sipField(seen[0].head, "X-Rule") != "OPTIONS e1" {
					t.Fatalf("member saw %+v, want X-Rule: OPTIONS e1", seen)
				}
			}},
		{"respond and discard", `when SIP_REQUEST {
  if {[SIP::method] eq "OPTIONS"} {
    SIP::respond 200 OK X-Member proxy
    SIP::discard
  }
}`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember) {
				a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", "d1", "o1", 1, "")))
				if !strings.HasPrefix(a, "SIP/2.0 200 OK") || sipField(a, "X-Member") != "proxy" || sipField(a, "Call-ID") != "d1" {
					t.Fatalf("OPTIONS answered %q, want the rule's 200", a)
				}
				a = sipHead(u.mustAsk(sipRuleReq("INVITE", "d2", "i1", 1, "")))
				if m := sipField(a, "X-Member"); m != "S1" && m != "S2" {
					t.Fatalf("INVITE answered %q, want a member's", a)
				}
				for _, s := range append(s1.seen(), s2.seen()...) {
					if s.method == "OPTIONS" {
						t.Fatalf("a member saw the discarded OPTIONS: %+v", s)
					}
				}
			}},
		{"respond and go on", `when SIP_REQUEST { if {[SIP::method] eq "INVITE"} { SIP::respond 100 } }`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember) {
				first := sipHead(u.mustAsk(sipRuleReq("INVITE", "g1", "i1", 1, "")))
				if !strings.HasPrefix(first, "SIP/2.0 100 Trying") || sipField(first, "X-Member") != "" {
					t.Fatalf("first answer %q, want the rule's 100 Trying", first)
				}
				final := sipHead(u.readUDP(5 * time.Second))
				if !strings.HasPrefix(final, "SIP/2.0 200") || sipField(final, "X-Member") == "" {
					t.Fatalf("then %q, want the member's 200", final)
				}
			}},
		{"pool for one message", `when SIP_REQUEST {
  if {[SIP::header X-To] ne ""} { pool /Common/pool member [SIP::header X-To] }
}`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember) {
				for k := 0; k < 4; k++ {
					a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", fmt.Sprintf("p%d", k), fmt.Sprintf("o%d", k), 1, "X-To: 127.83.7.2:5070\r\n")))
					if m := sipField(a, "X-Member"); m != "S2" {
						t.Fatalf("OPTIONS %d with X-To answered by %q, want S2", k, m)
					}
				}
				by := map[string]int{}
				for k := 0; k < 4; k++ {
					a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", fmt.Sprintf("f%d", k), fmt.Sprintf("f%d", k), 1, "")))
					by[sipField(a, "X-Member")]++
				}
				if by["S1"] == 0 || by["S2"] == 0 {
					t.Fatalf("requests without X-To went to %v: the earlier decision stuck", by)
				}
			}},
		{"a member's request", `when SIP_REQUEST {
  if {[SIP::method] eq "BYE"} { SIP::header insert X-Seen "[SIP::method] [SIP::call_id]" }
}
when SIP_RESPONSE { if {[SIP::response code] == 200 && [SIP::header CSeq] eq "9 BYE"} { SIP::discard } }`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember) {
				a := sipHead(u.mustAsk(sipRuleReq("INFO", "m1", "n1", 2, "X-Hang-Up: yes\r\n")))
				if !strings.HasPrefix(a, "SIP/2.0 200") {
					t.Fatalf("INFO answered %q", a)
				}
				bye := sipHead(u.readUDP(5 * time.Second))
				if !strings.HasPrefix(bye, "BYE ") || sipField(bye, "X-Seen") != "BYE m1" {
					t.Fatalf("the member's BYE came as %q, want it edited by SIP_REQUEST", bye)
				}
				// The client's answer to it is discarded by SIP_RESPONSE.
				ok := "SIP/2.0 200 OK\r\n" + strings.Join(strings.Split(bye, "\r\n")[1:], "\r\n") + "\r\nContent-Length: 0\r\n\r\n"
				ok = strings.Replace(ok, "X-Seen: BYE m1\r\n", "", 1)
				u.c.Write([]byte(ok))
				if a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", "m2", "o9", 1, ""))); !strings.HasPrefix(a, "SIP/2.0 200") {
					t.Fatalf("OPTIONS answered %q", a)
				}
				eventually(t, "the members to see the OPTIONS after the answer", func() bool {
					for _, s := range append(s1.seen(), s2.seen()...) {
						if s.callID == "m2" {
							return true
						}
					}
					return false
				})
				if got := append(s1.answered(), s2.answered()...); len(got) != 0 {
					t.Fatalf("a member got the discarded answer: %+v", got)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.83.7.%d:5060", 10+i)
			s1 := startSIPUDPMember(t, "127.83.7.1:5070", "S1")
			s2 := startSIPUDPMember(t, "127.83.7.2:5070", "S2")
			p, _ := newPlane(t)
			cfg := udpBasic(vs, "127.83.7.1:5070", "127.83.7.2:5070")
			cfg.Virtuals["/Common/vs"].SIP = &SIPDatagram{}
			r, _ := compileRules(t, tc.rule)
			setVirtualRules(cfg, "/Common/vs", r)
			mustApply(t, p, cfg)
			u := dialUDP(t, fmt.Sprintf("127.83.9.%d:0", 10+i), vs)
			tc.check(t, u, s1, s2)
		})
	}
}
