package dataplane

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// sipUDPMember is a SIP member over UDP: it answers every request but an
// ACK "200 OK" (with the request's Via, From, To, Call-ID and CSeq, and
// X-Member), and remembers each request as it came.
type sipUDPMember struct {
	label string
	mu    sync.Mutex
	got   []sipSeen
	// answers are the responses it got (to the BYEs it sent).
	answers []sipSeen
}

type sipSeen struct {
	method, callID string
	from           netip.AddrPort
	head           string
}

func startSIPUDPMember(t *testing.T, addr, label string) *sipUDPMember {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		t.Fatalf("member %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	m := &sipUDPMember{label: label}
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			msg := string(buf[:n])
			head, _, _ := strings.Cut(msg, "\r\n\r\n")
			lines := strings.Split(head, "\r\n")
			meth, _, _ := strings.Cut(lines[0], " ")
			if strings.HasPrefix(meth, "SIP/") {
				m.mu.Lock()
				m.answers = append(m.answers, sipSeen{method: lines[0], callID: sipField(head, "Call-ID"), from: from, head: head})
				m.mu.Unlock()
				continue
			}
			m.mu.Lock()
			m.got = append(m.got, sipSeen{method: meth, callID: sipField(head, "Call-ID"), from: from, head: head})
			m.mu.Unlock()
			if meth == "ACK" {
				continue
			}
			var out strings.Builder
			out.WriteString("SIP/2.0 200 OK\r\n")
			for _, l := range lines[1:] {
				n, _, _ := strings.Cut(l, ":")
				switch strings.ToLower(n) {
				case "via", "from", "call-id", "cseq", "record-route":
					out.WriteString(l + "\r\n")
				case "to":
					if !strings.Contains(l, "tag=") {
						l += ";tag=" + label
					}
					out.WriteString(l + "\r\n")
				}
			}
			out.WriteString("X-Member: " + label + "\r\nContent-Length: 0\r\n\r\n")
			c.WriteToUDPAddrPort([]byte(out.String()), from)
			if sipField(head, "X-Hang-Up") != "" {
				// The callee hangs up: a BYE of its own toward the caller.
				bye := fmt.Sprintf("BYE sip:a@127.62.9.9 SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bKbye%s\r\nFrom: <sip:b@example.com>;tag=%s\r\nTo: <sip:a@example.com>;tag=a\r\nCall-ID: %s\r\nCSeq: 9 BYE\r\nContent-Length: 0\r\n\r\n",
					addr, label, label, sipField(head, "Call-ID"))
				c.WriteToUDPAddrPort([]byte(bye), from)
			}
		}
	}()
	return m
}

func (m *sipUDPMember) answered() []sipSeen {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sipSeen(nil), m.answers...)
}

func (m *sipUDPMember) seen() []sipSeen {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sipSeen(nil), m.got...)
}

// sipField is the value of a message head's first field name (long form).
func sipField(head, name string) string {
	for _, l := range strings.Split(head, "\r\n")[1:] {
		if n, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(n), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// sipReq is a request of the client at 127.62.x.y:port: branch and
// Call-ID of its own, extra fields after the usual ones.
func sipReq(meth, callID, branch string, cseq int, extra string) string {
	to := "<sip:b@example.com>"
	if meth != "INVITE" && meth != "REGISTER" && meth != "OPTIONS" {
		to += ";tag=callee"
	}
	return fmt.Sprintf("%s sip:b@example.com SIP/2.0\r\nVia: SIP/2.0/UDP 127.62.9.9:5060;branch=z9hG4bK%s\r\nFrom: <sip:a@example.com>;tag=a\r\nTo: %s\r\nCall-ID: %s\r\nCSeq: %d %s\r\nMax-Forwards: 70\r\n%sContent-Length: 0\r\n\r\n",
		meth, branch, to, callID, cseq, meth, extra)
}

// sipUDPVirtual is a UDP SIP virtual over the members.
func sipUDPVirtual(t *testing.T, vs string, sip SIPDatagram, members ...string) *Plane {
	t.Helper()
	p, _ := newPlane(t)
	cfg := udpBasic(vs, members...)
	cfg.Virtuals["/Common/vs"].SIP = &sip
	mustApply(t, p, cfg)
	return p
}

// sipAsk sends a request and returns its final answer's head.
func sipAsk(t *testing.T, u *udpClient, req string) string {
	t.Helper()
	a := u.mustAsk(req)
	head, _, _ := strings.Cut(a, "\r\n\r\n")
	return head
}

// TestSIPUDPProxyHeaders: the Via and Record-Route the virtual inserts
// reach the member, and the client's answers carry its own Via alone.
func TestSIPUDPProxyHeaders(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name                string
		sip                 SIPDatagram
		wantVia, wantRR     string // a prefix of the member's top Via; its Record-Route
		wantOptionsRR       bool
		sameBranchForCancel bool
	}{
		{name: "nothing inserted", sip: SIPDatagram{}, wantVia: "SIP/2.0/UDP 127.62.9.9:5060;branch=z9hG4bK"},
		{name: "insert-via-header", sip: SIPDatagram{Via: true}, wantVia: "SIP/2.0/UDP 127.62.1.%d:5060;branch=z9hG4bKltm", sameBranchForCancel: true},
		{name: "secure-via-header", sip: SIPDatagram{SecureVia: true, RecordRoute: true}, wantVia: "SIP/2.0/TLS 127.62.1.%d:5060;branch=z9hG4bKltm", wantRR: "<sips:127.62.1.%d:5060;lr>"},
		{name: "user-via-header", sip: SIPDatagram{UserVia: "SIP/2.0/UDP sbc.example.net:5070"}, wantVia: "SIP/2.0/UDP sbc.example.net:5070;branch=z9hG4bKltm"},
		{name: "insert-record-route-header", sip: SIPDatagram{RecordRoute: true}, wantVia: "SIP/2.0/UDP 127.62.9.9:5060", wantRR: "<sip:127.62.1.%d:5060;lr>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 10 + i
			vs := fmt.Sprintf("127.62.1.%d:5060", n)
			mem := startSIPUDPMember(t, fmt.Sprintf("127.62.1.%d:5070", n), "S1")
			sipUDPVirtual(t, vs, tc.sip, fmt.Sprintf("127.62.1.%d:5070", n))
			u := dialUDP(t, "127.62.9.9:0", vs)
			ans := sipAsk(t, u, sipReq("INVITE", "c1", "inv1", 1, ""))
			if got := sipField(ans, "Via"); got != "SIP/2.0/UDP 127.62.9.9:5060;branch=z9hG4bKinv1" {
				t.Fatalf("client's answer has Via %q:\n%s", got, ans)
			}
			if strings.Count(ans, "\r\nVia:") != 1 {
				t.Fatalf("client's answer has more than its own Via:\n%s", ans)
			}
			sipAsk(t, u, sipReq("CANCEL", "c1", "inv1", 1, ""))
			sipAsk(t, u, sipReq("OPTIONS", "c2", "opt1", 1, ""))
			got := mem.seen()
			if len(got) < 3 {
				t.Fatalf("member saw %d requests", len(got))
			}
			inv, cancel, opt := got[0], got[len(got)-2], got[len(got)-1]
			want := tc.wantVia
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, n)
			}
			if top := sipField(inv.head, "Via"); !strings.HasPrefix(top, want) {
				t.Fatalf("member's top Via %q, want %q…", top, want)
			}
			if tc.wantRR != "" {
				if rr := sipField(inv.head, "Record-Route"); rr != fmt.Sprintf(tc.wantRR, n) {
					t.Fatalf("INVITE's Record-Route %q", rr)
				}
				if strings.Contains(opt.head, "Record-Route") {
					t.Fatalf("OPTIONS, which opens no dialog, got a Record-Route:\n%s", opt.head)
				}
			} else if strings.Contains(inv.head, "Record-Route") {
				t.Fatalf("unexpected Record-Route:\n%s", inv.head)
			}
			if tc.sameBranchForCancel && sipField(inv.head, "Via") != sipField(cancel.head, "Via") {
				t.Fatalf("CANCEL's Via %q differs from its INVITE's %q", sipField(cancel.head, "Via"), sipField(inv.head, "Via"))
			}
			if tc.sameBranchForCancel && sipField(inv.head, "Via") == sipField(opt.head, "Via") {
				t.Fatalf("OPTIONS got the INVITE's branch")
			}
		})
	}
}

// TestSIPUDPTerminateOnBye: a BYE's answer ends the flow's binding to
// the member (its count given back), while the flow goes on; disabled,
// the binding stays.
func TestSIPUDPTerminateOnBye(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name   string
		on     bool
		wantAt uint64 // the member's current connections after the BYE
	}{
		{"enabled", true, 0},
		{"disabled", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 20 + i
			vs, ma := fmt.Sprintf("127.62.2.%d:5060", n), fmt.Sprintf("127.62.2.%d:5070", n)
			mem := startSIPUDPMember(t, ma, "S1")
			p := sipUDPVirtual(t, vs, SIPDatagram{TerminateOnBye: tc.on}, ma)
			u := dialUDP(t, "127.62.9.9:0", vs)
			sipAsk(t, u, sipReq("INVITE", "c1", "i1", 1, ""))
			if cur := memberStat(t, p, "/Common/pool", "/Common/"+ma).ServerSide.CurConns; cur != 1 {
				t.Fatalf("member's connections during the call: %d", cur)
			}
			if a := sipAsk(t, u, sipReq("BYE", "c1", "b1", 2, "")); !strings.HasPrefix(a, "SIP/2.0 200") {
				t.Fatalf("BYE answered %q", a)
			}
			if tc.on {
				eventually(t, "the member's binding to end", func() bool {
					return memberStat(t, p, "/Common/pool", "/Common/"+ma).ServerSide.CurConns == 0
				})
			}
			if cur := memberStat(t, p, "/Common/pool", "/Common/"+ma).ServerSide.CurConns; cur != tc.wantAt {
				t.Fatalf("member's connections after the BYE: %d, want %d", cur, tc.wantAt)
			}
			// The flow carries on: the next request opens a binding again.
			if a := sipAsk(t, u, sipReq("OPTIONS", "c2", "o1", 1, "")); !strings.Contains(a, "X-Member: S1") {
				t.Fatalf("OPTIONS after the BYE answered %q", a)
			}
			if cur := memberStat(t, p, "/Common/pool", "/Common/"+ma).ServerSide.CurConns; cur != 1 {
				t.Fatalf("member's connections after the next request: %d", cur)
			}
			if got := len(mem.seen()); got != 3 {
				t.Fatalf("member saw %d requests, want 3", got)
			}
		})
	}
}

// TestSIPUDPDialogAware: a dialog's requests follow its INVITE's member
// where round robin alone spreads them.
func TestSIPUDPDialogAware(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name  string
		aware bool
	}{
		{"dialog-aware", true},
		{"balancing alone", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 30 + 2*i
			vs := fmt.Sprintf("127.62.3.%d:5060", n)
			m1, m2 := fmt.Sprintf("127.62.3.%d:5070", n), fmt.Sprintf("127.62.3.%d:5070", n+1)
			startSIPUDPMember(t, m1, "S1")
			startSIPUDPMember(t, m2, "S2")
			sipUDPVirtual(t, vs, SIPDatagram{DialogAware: tc.aware}, m1, m2)
			u := dialUDP(t, "127.62.9.9:0", vs)
			split := 0
			for call := 0; call < 3; call++ {
				cid := fmt.Sprintf("call%d", call)
				members := map[string]bool{}
				for k, meth := range []string{"INVITE", "INFO", "INFO", "BYE"} {
					a := sipAsk(t, u, sipReq(meth, cid, fmt.Sprintf("%s-%d", cid, k), k+1, ""))
					members[sipField(a, "X-Member")] = true
				}
				if len(members) > 1 {
					split++
				}
			}
			if tc.aware && split != 0 {
				t.Fatalf("%d dialogs spread over both members", split)
			}
			if !tc.aware && split == 0 {
				t.Fatalf("round robin kept every dialog on one member: the test proves nothing")
			}
		})
	}
}

// TestSIPUDPRegistrations: max-registrations answers 503 from the
// virtual; expires=0 (the Contact's parameter or the Expires field)
// frees the slot, and so does a registration's time running out.
func TestSIPUDPRegistrations(t *testing.T) {
	t.Parallel()
	const vs, ma = "127.62.4.1:5060", "127.62.4.2:5070"
	mem := startSIPUDPMember(t, ma, "S1")
	sipUDPVirtual(t, vs, SIPDatagram{DialogAware: true, MaxRegistrations: 1, MaxSessionsPerRegistration: 1}, ma)
	u := dialUDP(t, "127.62.9.9:0", vs)
	reg := func(user, contact string, n int) string {
		r := fmt.Sprintf("REGISTER sip:example.com SIP/2.0\r\nVia: SIP/2.0/UDP 127.62.9.9:5060;branch=z9hG4bKr%s%d\r\nFrom: <sip:%s@example.com>;tag=r\r\nTo: <sip:%s@example.com>\r\nCall-ID: reg-%s\r\nCSeq: %d REGISTER\r\n%sContent-Length: 0\r\n\r\n",
			user, n, user, user, user, n, contact)
		return sipAsk(t, u, r)
	}
	status := func(head string) string {
		l, _, _ := strings.Cut(head, "\r\n")
		if m := sipField(head, "X-Member"); m != "" {
			return l + " " + m
		}
		return l + " (virtual)"
	}
	for k, step := range []struct {
		user, contact, want string
	}{
		{"alice", "Contact: <sip:alice@127.62.9.9>;expires=600\r\n", "SIP/2.0 200 OK S1"},
		{"bob", "Contact: <sip:bob@127.62.9.9>\r\n", "SIP/2.0 503 Service Unavailable (virtual)"},
		{"alice", "Contact: <sip:alice@127.62.9.9>;expires=0\r\nExpires: 600\r\n", "SIP/2.0 200 OK S1"},
		{"bob", "m: <sip:bob@127.62.9.9>\r\nExpires: 600\r\n", "SIP/2.0 200 OK S1"},
		{"carol", "Contact: <sip:carol@127.62.9.9>\r\n", "SIP/2.0 503 Service Unavailable (virtual)"},
		{"bob", "Contact: *\r\nExpires: 0\r\n", "SIP/2.0 200 OK S1"},
		{"carol", "Contact: <sip:carol@127.62.9.9>;expires=1\r\n", "SIP/2.0 200 OK S1"},
	} {
		if got := status(reg(step.user, step.contact, k)); got != step.want {
			t.Fatalf("step %d, REGISTER %s (%q): %q, want %q", k, step.user, step.contact, got, step.want)
		}
	}
	// carol's one second runs out: dave's registration then takes the
	// slot (bounded: a few seconds at most).
	deadline := time.Now().Add(5 * time.Second)
	for k := 0; ; k++ {
		got := status(reg("dave", "Contact: <sip:dave@127.62.9.9>\r\n", 100+k))
		if got == "SIP/2.0 200 OK S1" {
			break
		}
		if got != "SIP/2.0 503 Service Unavailable (virtual)" || time.Now().After(deadline) {
			t.Fatalf("dave's REGISTER after carol's expiry: %q", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// max-sessions-per-registration 1: dave's second call is refused.
	from := "From: <sip:dave@example.com>;tag=d"
	inv := func(cid string) string {
		return status(sipAsk(t, u, strings.Replace(sipReq("INVITE", cid, cid, 1, ""), "From: <sip:a@example.com>;tag=a", from, 1)))
	}
	if got := inv("d1"); got != "SIP/2.0 200 OK S1" {
		t.Fatalf("dave's first call: %q", got)
	}
	if got := inv("d2"); got != "SIP/2.0 503 Service Unavailable (virtual)" {
		t.Fatalf("dave's second call: %q", got)
	}
	for _, s := range mem.seen() {
		if via := sipField(s.head, "Via"); s.callID == "d2" || strings.HasSuffix(via, "branch=z9hG4bKrbob1") || strings.HasSuffix(via, "branch=z9hG4bKrcarol4") {
			t.Fatalf("a refused request reached the member:\n%s", s.head)
		}
	}
}

// TestSIPUDPMemberHangsUp: the client's answer to a member's BYE goes
// back to that member, whichever balancing would choose, and
// terminate-on-bye then ends the binding.
func TestSIPUDPMemberHangsUp(t *testing.T) {
	t.Parallel()
	const vs, m1, m2 = "127.62.6.1:5060", "127.62.6.2:5070", "127.62.6.3:5070"
	s1, s2 := startSIPUDPMember(t, m1, "S1"), startSIPUDPMember(t, m2, "S2")
	p := sipUDPVirtual(t, vs, SIPDatagram{TerminateOnBye: true, DialogAware: true}, m1, m2)
	u := dialUDP(t, "127.62.9.9:0", vs)
	ans := sipAsk(t, u, sipReq("INVITE", "c1", "i1", 1, ""))
	who := sipField(ans, "X-Member")
	callee, addr, other := s1, m1, s2
	if who == "S2" {
		callee, addr, other = s2, m2, s1
	}
	sipAsk(t, u, sipReq("INFO", "c1", "n1", 2, "X-Hang-Up: now\r\n"))
	u.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65535)
	n, err := u.c.Read(buf)
	if err != nil {
		t.Fatalf("no BYE from the member: %v", err)
	}
	bye := string(buf[:n])
	if !strings.HasPrefix(bye, "BYE ") {
		t.Fatalf("got %q, want the member's BYE", bye)
	}
	head, _, _ := strings.Cut(bye, "\r\n\r\n")
	ok := fmt.Sprintf("SIP/2.0 200 OK\r\nVia: %s\r\nFrom: %s\r\nTo: %s\r\nCall-ID: c1\r\nCSeq: 9 BYE\r\nContent-Length: 0\r\n\r\n",
		sipField(head, "Via"), sipField(head, "From"), sipField(head, "To"))
	// A few OPTIONS first: round robin's next choice is then either member.
	for k := 0; k < 3; k++ {
		sipAsk(t, u, sipReq("OPTIONS", fmt.Sprintf("o%d", k), fmt.Sprintf("o%d", k), 1, ""))
	}
	u.c.Write([]byte(ok))
	eventually(t, "the BYE's answer at the member that sent it", func() bool { return len(callee.answered()) == 1 })
	if got := other.answered(); len(got) != 0 {
		t.Fatalf("the other member got %v", got)
	}
	eventually(t, "the binding to the callee to end", func() bool {
		return memberStat(t, p, "/Common/pool", "/Common/"+addr).ServerSide.CurConns == 0
	})
}
