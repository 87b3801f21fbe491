package gslb

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules"
)

// A rule's after suspends its query's answer (DNS_REQUEST or
// DNS_RESPONSE of a listener or a wide IP, the wait form or a script),
// without holding up the UDP reader: a query sent after a suspended one,
// on the same socket, is answered first. A rule without after keeps the
// inline path (the plan says so).
func TestRuleAfterSuspends(t *testing.T) {
	cases := []struct {
		name     string
		listener string // listener rule
		wide     string // wide IP rule
		// the slow query's answer: its first A, or "" for none sent
		want string
	}{
		{"listener DNS_REQUEST wait", `when DNS_REQUEST { if {[DNS::question name] eq "slow.example.com"} { after 300 } }`, "", "127.16.1.1"},
		{"listener DNS_RESPONSE script", `when DNS_RESPONSE { if {[DNS::question name] eq "slow.example.com"} { after 300 { foreach rr [DNS::answer] { DNS::ttl $rr 7 } } } }`, "", "127.16.1.1"},
		{"wide IP DNS_REQUEST answers after the wait", "", `when DNS_REQUEST { if {[DNS::question name] eq "slow.example.com"} { after 300 { host 127.16.7.7 } } }`, "127.16.7.7"},
		{"dropped after the wait", `when DNS_REQUEST { if {[DNS::question name] eq "slow.example.com"} { after 300 { DNS::drop } } }`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			listen := freeAddr(t, "127.16.0.53")
			cfg := admitConfig()
			cfg.Listeners = []Listener{{Name: "/Common/dns", Addr: listen, Protocol: "udp"}}
			w := cfg.WideIPs["/Common/www.example.com"]
			w.Aliases = []string{"slow.example.com", "fast.example.com"}
			if c.listener != "" {
				cfg.Listeners[0].Rules = []*rules.Rule{compileRule(t, "/Common/l", c.listener)}
			}
			if c.wide != "" {
				w.Rules = []*rules.Rule{compileRule(t, "/Common/w", c.wide)}
			}
			s := newServer(t, cfg, Options{})
			if !s.plan.Load().afterRules {
				t.Fatal("the plan does not know its rule calls after")
			}
			conn, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(admitLDNS, 0)), net.UDPAddrFromAddrPort(listen))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			send := func(id uint16, name string) {
				q := new(dns.Msg)
				q.SetQuestion(name, dns.TypeA)
				q.Id = id
				b, _ := q.Pack()
				if _, err := conn.Write(b); err != nil {
					t.Fatal(err)
				}
			}
			send(1, "slow.example.com.")
			send(2, "fast.example.com.")
			var order []uint16
			answers := map[uint16]*dns.Msg{}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			want := 2
			if c.want == "" {
				want = 1
			}
			buf := make([]byte, 1500)
			for len(order) < want {
				n, err := conn.Read(buf)
				if err != nil {
					t.Fatalf("answers %v: %v", order, err)
				}
				m := new(dns.Msg)
				if err := m.Unpack(buf[:n]); err != nil {
					t.Fatal(err)
				}
				order = append(order, m.Id)
				answers[m.Id] = m
			}
			if order[0] != 2 {
				t.Fatalf("answers in order %v: the suspended query held up the next one", order)
			}
			if c.want == "" {
				conn.SetReadDeadline(time.Now().Add(600 * time.Millisecond))
				if _, err := conn.Read(buf); err == nil {
					t.Fatal("the dropped query was answered")
				}
				return
			}
			m := answers[1]
			if len(m.Answer) == 0 {
				t.Fatalf("slow answer: %v", m)
			}
			a, ok := m.Answer[0].(*dns.A)
			if !ok || a.A.String() != c.want {
				t.Fatalf("slow answer %v, want %s", m.Answer[0], c.want)
			}
			if c.name == "listener DNS_RESPONSE script" && a.Hdr.Ttl != 7 {
				t.Fatalf("the script's TTL was not applied: %v", a)
			}
		})
	}
	// Without after, the plan keeps its readers answering inline.
	cfg := admitConfig()
	cfg.WideIPs["/Common/www.example.com"].Rules = []*rules.Rule{compileRule(t, "/Common/w", `when DNS_REQUEST { log local0. [DNS::question name] }`)}
	if s := newServer(t, cfg, Options{}); s.plan.Load().afterRules {
		t.Fatal("a rule without after suspends queries")
	}
}
