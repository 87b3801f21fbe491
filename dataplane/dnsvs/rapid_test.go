package dnsvs

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// expressStub holds example.com as DNS Express would: www answers, any
// other name under it is NXDOMAIN, a name outside it nothing.
type expressStub struct{}

func (expressStub) Answer(r *dns.Msg, qname string) *dns.Msg {
	if !strings.HasSuffix(qname, "example.com.") {
		return nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if qname == "www.example.com." {
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{127, 53, 0, 80}})
	} else {
		m.Rcode = dns.RcodeNameError
	}
	return m
}

func (expressStub) Notify([]byte, *dns.Msg, netip.Addr) (*dns.Msg, bool) { return nil, false }

func TestRapid(t *testing.T) {
	e := New(nil)
	e.SetExpress(expressStub{})
	notify := query("example.com.", dns.TypeSOA, false)
	notify.Opcode = dns.OpcodeNotify
	for _, tt := range []struct {
		name   string
		last   string
		q      *dns.Msg
		done   bool
		rcode  int // -1: nothing sent
		tc     bool
		answer int
		counts ProfileCounts
	}{
		{"a zone's name", "drop", query("www.example.com.", dns.TypeA, true), true, dns.RcodeSuccess, false, 1, ProfileCounts{RapidAnswers: 1}},
		{"a zone's NXDOMAIN", "drop", query("nope.example.com.", dns.TypeA, false), true, dns.RcodeNameError, false, 0, ProfileCounts{RapidAnswers: 1}},
		{"elsewhere, allow: the usual path", "allow", query("www.example.net.", dns.TypeA, false), false, -1, false, 0, ProfileCounts{RapidAllow: 1}},
		{"elsewhere, drop", "drop", query("www.example.net.", dns.TypeA, false), true, -1, false, 0, ProfileCounts{RapidDrop: 1}},
		{"elsewhere, noerror", "noerror", query("www.example.net.", dns.TypeA, false), true, dns.RcodeSuccess, false, 0, ProfileCounts{RapidNoError: 1}},
		{"elsewhere, nxdomain", "nxdomain", query("www.example.net.", dns.TypeA, false), true, dns.RcodeNameError, false, 0, ProfileCounts{RapidNXDomain: 1}},
		{"elsewhere, refuse", "refuse", query("www.example.net.", dns.TypeA, false), true, dns.RcodeRefused, false, 0, ProfileCounts{RapidRefuse: 1}},
		{"elsewhere, truncate: TC, ask over TCP", "truncate", query("www.example.net.", dns.TypeA, true), true, dns.RcodeSuccess, true, 0, ProfileCounts{RapidTruncate: 1}},
		{"a transfer request gets the last action", "refuse", query("example.com.", dns.TypeAXFR, false), true, dns.RcodeRefused, false, 0, ProfileCounts{RapidRefuse: 1}},
		{"a NOTIFY goes the usual way", "drop", notify, false, -1, false, 0, ProfileCounts{}},
	} {
		p := &config.DNSProfile{Name: "/Common/rr", Express: true, Unhandled: "allow", Rapid: true, RapidLast: tt.last}
		s := e.Prepare([]*config.DNSProfile{p})[p]
		s.st.Reset()
		m, done := s.rapid(tt.q)
		if got := s.st.Counts(); got != tt.counts {
			t.Errorf("%s: counts %+v, want %+v", tt.name, got, tt.counts)
		}
		if done != tt.done || (m == nil) != (tt.rcode < 0) {
			t.Errorf("%s: done %v, answer %v; want done %v, rcode %d", tt.name, done, m, tt.done, tt.rcode)
			continue
		}
		if m == nil {
			continue
		}
		if m.Rcode != tt.rcode || m.Truncated != tt.tc || len(m.Answer) != tt.answer || m.Id != tt.q.Id {
			t.Errorf("%s: %v", tt.name, m)
		}
		if tt.q.IsEdns0() != nil && m.IsEdns0() == nil {
			t.Errorf("%s: the OPT record is not echoed", tt.name)
		}
	}
	// Without DNS Express every query gets the last action.
	e.SetExpress(nil)
	p := &config.DNSProfile{Name: "/Common/rr", Express: true, Rapid: true, RapidLast: "refuse"}
	s := e.Prepare([]*config.DNSProfile{p})[p]
	if m, done := s.rapid(query("www.example.com.", dns.TypeA, false)); !done || m == nil || m.Rcode != dns.RcodeRefused {
		t.Errorf("without DNS Express: %v %v", done, m)
	}
}

func TestHintReply(t *testing.T) {
	for _, tt := range []struct {
		name   string
		edns   bool
		size   int // the client's UDP size, 0 over TCP
		glue   int // addresses kept
		hasOPT bool
		tc     bool
	}{
		{"TCP: every address", false, 0, 26, false, false},
		{"UDP 512: the NS records, fewer addresses, TC (RFC 9471: glue left out)", false, 512, -1, false, true},
		{"UDP 1232 with EDNS: every address", true, 1232, 26, true, false},
	} {
		r := query("www.example.org.", dns.TypeA, tt.edns)
		r.RecursionDesired = true
		m := hintReply(r)
		if tt.size > 0 {
			m.Truncate(tt.size)
		}
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		if tt.size > 0 && len(b) > tt.size {
			t.Errorf("%s: %d bytes", tt.name, len(b))
		}
		if m.Rcode != dns.RcodeSuccess || m.Authoritative || m.RecursionAvailable || len(m.Answer) != 0 || m.Truncated != tt.tc {
			t.Errorf("%s: header %v", tt.name, m.MsgHdr)
		}
		if len(m.Ns) != 13 {
			t.Fatalf("%s: %d NS records, want 13", tt.name, len(m.Ns))
		}
		for i, rr := range m.Ns {
			ns, ok := rr.(*dns.NS)
			if !ok || ns.Hdr.Name != "." || ns.Ns != string(rune('a'+i))+".root-servers.net." || ns.Hdr.Ttl != 518400 {
				t.Errorf("%s: authority %d is %v", tt.name, i, rr)
			}
		}
		glue, opt := 0, false
		for _, rr := range m.Extra {
			switch x := rr.(type) {
			case *dns.A, *dns.AAAA:
				glue++
				if !strings.HasSuffix(x.Header().Name, ".root-servers.net.") || x.Header().Ttl != 3600000 {
					t.Errorf("%s: glue %v", tt.name, rr)
				}
			case *dns.OPT:
				opt = true
			}
		}
		if tt.glue >= 0 && glue != tt.glue || tt.glue < 0 && (glue == 0 || glue >= 26) || opt != tt.hasOPT {
			t.Errorf("%s: %d addresses, OPT %v", tt.name, glue, opt)
		}
		if a, ok := m.Extra[0].(*dns.A); !ok || a.Hdr.Name != "a.root-servers.net." || a.A.String() != "198.41.0.4" {
			t.Errorf("%s: first address %v", tt.name, m.Extra[0])
		}
	}
	// Each answer has its own records: editing one leaves the next whole.
	m := hintReply(query("x.", dns.TypeA, false))
	m.Ns[0].Header().Ttl = 1
	if hintReply(query("x.", dns.TypeA, false)).Ns[0].Header().Ttl != 518400 {
		t.Error("hint answers share their records")
	}
}
