package dataplane

import (
	"fmt"
	"strings"
	"testing"
)

// TestSIPUDPSendEvents: SIP_REQUEST_SEND runs with the member chosen and
// may still edit or discard the request, SIP_RESPONSE_SEND edits what the
// client gets, the done events run once the message has left, and
// SIP::persist keys requests of different dialogs on one record. Real
// UDP clients and members.
func TestSIPUDPSendEvents(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name  string
		rule  string
		check func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember, lg *ruleLog)
	}{
		{"request send knows the member", `when SIP_REQUEST_SEND { SIP::header insert X-To "[LB::server addr]:[LB::server port]" }
when SIP_RESPONSE_SEND { SIP::header insert X-Out "[SIP::response code] [SIP::header X-Member]" }`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember, lg *ruleLog) {
				for k := 0; k < 4; k++ {
					a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", fmt.Sprintf("s%d", k), fmt.Sprintf("s%d", k), 1, "")))
					m := sipField(a, "X-Member")
					if m != "S1" && m != "S2" || sipField(a, "X-Out") != "200 "+m {
						t.Fatalf("answer %q, want X-Out: 200 <member>", a)
					}
				}
				for _, s := range []*sipUDPMember{s1, s2} {
					want := map[string]string{"S1": "127.83.21.1:5070", "S2": "127.83.21.2:5070"}[s.label]
					for _, got := range s.seen() {
						if sipField(got.head, "X-To") != want {
							t.Fatalf("%s got X-To %q, want its own address %s", s.label, sipField(got.head, "X-To"), want)
						}
					}
				}
			}},
		{"request send discards", `when SIP_REQUEST_SEND { if {[SIP::method] eq "INFO"} { SIP::discard } }`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember, lg *ruleLog) {
				u.c.Write([]byte(sipRuleReq("INFO", "x1", "x1", 1, "")))
				if a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", "x2", "x2", 1, ""))); !strings.HasPrefix(a, "SIP/2.0 200") || sipField(a, "Call-ID") != "x2" {
					t.Fatalf("OPTIONS answered %q", a)
				}
				for _, s := range append(s1.seen(), s2.seen()...) {
					if s.method == "INFO" {
						t.Fatalf("a member got the INFO SIP_REQUEST_SEND discarded: %+v", s)
					}
				}
			}},
		{"done events", `when SIP_REQUEST_DONE { log local0. "request done [SIP::method] [SIP::call_id] [LB::server addr]" }
when SIP_RESPONSE_DONE { log local0. "response done [SIP::response code] [SIP::call_id]" }`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember, lg *ruleLog) {
				sipHead(u.mustAsk(sipRuleReq("OPTIONS", "d1", "d1", 1, "")))
				eventually(t, "both done events", func() bool {
					s := lg.String()
					return strings.Contains(s, "request done OPTIONS d1 127.83.21.") && strings.Contains(s, "response done 200 d1")
				})
			}},
		{"SIP::persist keys dialogs together", `when SIP_REQUEST { SIP::persist [SIP::header X-Key] 60 }`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember, lg *ruleLog) {
				by := map[string]int{}
				for k := 0; k < 6; k++ {
					a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", fmt.Sprintf("p%d", k), fmt.Sprintf("p%d", k), 1, "X-Key: one\r\n")))
					by[sipField(a, "X-Member")]++
				}
				if len(by) != 1 {
					t.Fatalf("requests keyed alike went to %v, want one member", by)
				}
			}},
		{"SIP::persist reset balances anew", `when SIP_REQUEST {
  SIP::persist fixed
  if {[SIP::header X-Reset] ne ""} { SIP::persist reset }
}`,
			func(t *testing.T, u *udpClient, s1, s2 *sipUDPMember, lg *ruleLog) {
				first := sipField(sipHead(u.mustAsk(sipRuleReq("OPTIONS", "r0", "r0", 1, ""))), "X-Member")
				by := map[string]int{}
				for k := 1; k <= 6; k++ {
					a := sipHead(u.mustAsk(sipRuleReq("OPTIONS", fmt.Sprintf("r%d", k), fmt.Sprintf("r%d", k), 1, "X-Reset: yes\r\n")))
					by[sipField(a, "X-Member")]++
				}
				if by["S1"] == 0 || by["S2"] == 0 {
					t.Fatalf("after %s, requests that reset the record went to %v: the record held", first, by)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.83.21.%d:5060", 10+i)
			s1 := startSIPUDPMember(t, "127.83.21.1:5070", "S1")
			s2 := startSIPUDPMember(t, "127.83.21.2:5070", "S2")
			p, _ := newPlane(t)
			cfg := udpBasic(vs, "127.83.21.1:5070", "127.83.21.2:5070")
			cfg.Virtuals["/Common/vs"].SIP = &SIPDatagram{}
			r, lg := compileRules(t, tc.rule)
			lg.showOnFailure(t)
			setVirtualRules(cfg, "/Common/vs", r)
			mustApply(t, p, cfg)
			u := dialUDP(t, fmt.Sprintf("127.83.22.%d:0", 10+i), vs)
			tc.check(t, u, s1, s2, lg)
		})
	}
}
