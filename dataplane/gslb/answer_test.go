package gslb

import (
	"net"
	"net/netip"
	"testing"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

// Details of the answer: several answers when max-answers-returned asks,
// the EDNS client subnet standing for the LDNS when enabled, a disabled
// wide IP handed to the static zone, odd queries refused or rejected.
func TestAnswerDetails(t *testing.T) {
	pfx := netip.MustParsePrefix
	topo := []TopologyRecord{{LDNS: Match{Kind: MatchSubnet, Prefix: pfx("127.0.86.0/24")}, Server: Match{Kind: MatchSubnet, Prefix: pfx("127.0.82.12/32")}, Score: 10}}
	withECS := func(q *dns.Msg, a string) {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.ParseIP(a).To4()})
		q.Extra = append(q.Extra, o)
	}
	cases := []struct {
		name  string
		edit  func(*Config)
		query func(*dns.Msg)
		check func(t *testing.T, m *dns.Msg)
	}{
		{"max answers", func(c *Config) { c.Pools["/Common/app_pool"].MaxAnswers = 3 }, nil, func(t *testing.T, m *dns.Msg) {
			if got := gslbtest.Addrs(m); len(got) != 3 || got[0] == got[1] || got[1] == got[2] || got[0] == got[2] {
				t.Errorf("answers %v, want 3 distinct", got)
			}
		}},
		{"client subnet used", func(c *Config) {
			c.Settings.UseClientSubnet = true
			c.Topology = topo
			c.Pools["/Common/app_pool"].Mode = Topology
		}, func(q *dns.Msg) { withECS(q, "127.0.86.0") }, func(t *testing.T, m *dns.Msg) {
			if got := gslbtest.Addrs(m); len(got) != 1 || got[0] != gzCT {
				t.Errorf("answers %v, want %v for the client subnet", got, gzCT)
			}
			opt := m.IsEdns0()
			if opt == nil || len(opt.Option) != 1 {
				t.Fatalf("no OPT with the client subnet echoed: %v", m)
			}
		}},
		{"client subnet ignored", func(c *Config) {
			c.Topology = topo
			c.Pools["/Common/app_pool"].Mode = Topology
			c.Pools["/Common/app_pool"].Alternate = None
		}, func(q *dns.Msg) { withECS(q, "127.0.86.0") }, func(t *testing.T, m *dns.Msg) {
			if got := gslbtest.Addrs(m); len(got) != 1 || got[0] != bjCNC {
				t.Errorf("answers %v, want round robin's first %v (all scores 0)", got, bjCNC)
			}
		}},
		{"disabled wide IP", func(c *Config) {
			c.WideIPs["/Common/www.example.com"].Disabled = true
			c.Zones[0].Data += "www IN A 127.0.80.81\n"
		}, nil, func(t *testing.T, m *dns.Msg) {
			if got := gslbtest.Addrs(m); len(got) != 1 || got[0] != netip.MustParseAddr("127.0.80.81") {
				t.Errorf("answers %v, want the static record", got)
			}
		}},
		{"class CHAOS refused", nil, func(q *dns.Msg) { q.Question[0].Qclass = dns.ClassCHAOS }, func(t *testing.T, m *dns.Msg) {
			if m.Rcode != dns.RcodeRefused {
				t.Errorf("rcode %s", dns.RcodeToString[m.Rcode])
			}
		}},
		{"notify not implemented", nil, func(q *dns.Msg) { q.Opcode = dns.OpcodeNotify }, func(t *testing.T, m *dns.Msg) {
			if m.Rcode != dns.RcodeNotImplemented {
				t.Errorf("rcode %s", dns.RcodeToString[m.Rcode])
			}
		}},
		{"two questions", nil, func(q *dns.Msg) { q.Question = append(q.Question, q.Question[0]) }, func(t *testing.T, m *dns.Msg) {
			if m.Rcode != dns.RcodeFormatError {
				t.Errorf("rcode %s", dns.RcodeToString[m.Rcode])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(netip.AddrPort{})
			if c.edit != nil {
				c.edit(cfg)
			}
			s := newServer(t, cfg, Options{})
			q := new(dns.Msg)
			q.SetQuestion(wideName, dns.TypeA)
			if c.query != nil {
				c.query(q)
			}
			m, send := s.Answer(q, ldnsCNC, true)
			if !send {
				t.Fatal("dropped")
			}
			c.check(t, m)
		})
	}
	// A response is never answered.
	s := newServer(t, testConfig(netip.AddrPort{}), Options{})
	q := new(dns.Msg)
	q.SetQuestion(wideName, dns.TypeA)
	q.Response = true
	if _, send := s.Answer(q, ldnsCNC, true); send {
		t.Error("answered a response")
	}
	if c := s.Counters(); c.Queries != 1 || c.Malformed != 1 {
		t.Errorf("counters %+v", c)
	}
}
