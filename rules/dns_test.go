package rules

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// fakeDNS is a fakeConn answering a DNS query.
type fakeDNS struct {
	*fakeConn
	q, r    *dns.Msg
	actions []DNSAction
}

func newFakeDNS(name string, qtype uint16) *fakeDNS {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	q.SetEdns0(1232, true)
	q.IsEdns0().Option = append(q.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IP{192, 0, 2, 0}})
	r := new(dns.Msg)
	r.SetReply(q)
	return &fakeDNS{fakeConn: newFakeConn(), q: q, r: r}
}

func (f *fakeDNS) DNSQuery() *dns.Msg    { return f.q }
func (f *fakeDNS) DNSResponse() *dns.Msg { return f.r }
func (f *fakeDNS) DNSLen() int           { return f.q.Len() }
func (f *fakeDNS) DNSDo(a DNSAction) error {
	f.actions = append(f.actions, a)
	return nil
}

func TestDNSCommands(t *testing.T) {
	cases := []struct {
		name, body string
		ev         Event
		answers    []string // the response's answer section after the event
		rcode      int
		actions    string
		logs       string
	}{
		{name: "question", ev: DNSRequest, body: `when DNS_REQUEST { log local0. "[DNS::question name] [DNS::question type] [DNS::question class] [DNS::question]" }`,
			logs: "www.example.com A IN www.example.com A IN"},
		{name: "build an answer and return it", ev: DNSRequest, body: `when DNS_REQUEST {
  if { [DNS::question name] ends_with "example.com" } {
    DNS::answer insert "[DNS::question name]. 60 [DNS::question class] [DNS::question type] 192.0.2.7"
    DNS::header aa 1
    DNS::return
  }
}`, answers: []string{"www.example.com.\t60\tIN\tA\t192.0.2.7"}, actions: "return"},
		{name: "DNS::query on a side without zones", ev: DNSRequest, body: `when DNS_REQUEST { log local0. "n=[llength [DNS::query dnsx www.example.com A]]" }`,
			logs: "n=0"},
		{name: "refuse", ev: DNSRequest, body: `when DNS_REQUEST { DNS::header rcode REFUSED; DNS::return }`, rcode: dns.RcodeRefused, actions: "return"},
		{name: "drop", ev: DNSRequest, body: `when DNS_REQUEST { if {[DNS::header rd]} { DNS::drop } }`, actions: "drop"},
		{name: "rewrite answers", ev: DNSResponse, body: `when DNS_RESPONSE {
  foreach rr [DNS::answer] {
    if { [DNS::type $rr] eq "A" && [DNS::rdata $rr] eq "10.0.0.1" } {
      DNS::rdata $rr 192.0.2.1
      DNS::ttl [DNS::rr [DNS::name $rr] A IN [DNS::ttl $rr] 192.0.2.1] 5
    }
  }
  log local0. "[DNS::ptype] [DNS::header ancount] [DNS::header rcode]"
}`, answers: []string{"www.example.com.\t5\tIN\tA\t192.0.2.1", "www.example.com.\t30\tIN\tA\t10.0.0.2"}, logs: "ANSWER 2 NOERROR"},
		{name: "clear and NXDOMAIN", ev: DNSResponse, body: `when DNS_RESPONSE { DNS::answer clear; DNS::header rcode nxdomain; log local0. [DNS::ptype] }`,
			rcode: dns.RcodeNameError, logs: "NXDOMAIN"},
		{name: "edns0 subnet", ev: DNSRequest, body: `when DNS_REQUEST { log local0. "[DNS::edns0 exists] [DNS::edns0 size] [DNS::edns0 do] [DNS::edns0 subnet address]/[DNS::edns0 subnet source] [DNS::len]" }`,
			logs: "1 1232 1 192.0.2.0/24 55"},
		{name: "wide IP choices", ev: DNSRequest, body: `when DNS_REQUEST {
  switch -glob [DNS::question name] {
    "www.*" { host 192.0.2.9 }
    default { cname other.example.net }
  }
}`, actions: "host 192.0.2.9"},
		{name: "rr forms", ev: DNSRequest, body: `when DNS_REQUEST { log local0. "[DNS::rr {a.example. 10 IN TXT "x y"}]|[DNS::rr a.example MX IN 20 {10 mx.example.}]|[DNS::rdata [DNS::rr a.example MX IN 20 {10 mx.example.}]]" }`,
			logs: "a.example.\t10\tIN\tTXT\t\"x y\"|a.example.\t20\tIN\tMX\t10 mx.example.|10 mx.example."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs []string
			env := &Env{Log: func(_, line string) { logs = append(logs, line[strings.Index(line, ": ")+2:]) }}
			r := mustCompile(t, "/Common/r", c.body)
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("unsupported: %v", u)
			}
			f := newFakeDNS("www.example.com.", dns.TypeA)
			if c.ev == DNSResponse {
				for _, a := range []string{"10.0.0.1", "10.0.0.2"} {
					rr, _ := dns.NewRR("www.example.com. 30 IN A " + a)
					f.r.Answer = append(f.r.Answer, rr)
				}
			}
			s := NewProgram(env, r).NewConnState(f)
			defer s.Release()
			if err := s.Run(c.ev); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, rr := range f.r.Answer {
				got = append(got, rr.String())
			}
			if fmt.Sprint(got) != fmt.Sprint(c.answers) && (len(got) > 0 || len(c.answers) > 0) {
				t.Errorf("answers %q, want %q", got, c.answers)
			}
			if f.r.Rcode != c.rcode {
				t.Errorf("rcode %d, want %d", f.r.Rcode, c.rcode)
			}
			var acts []string
			for _, a := range f.actions {
				switch a.Kind {
				case DNSReturn:
					acts = append(acts, "return")
				case DNSDrop:
					acts = append(acts, "drop")
				case DNSHost:
					acts = append(acts, "host "+a.Addr.String())
				case DNSCNAME:
					acts = append(acts, "cname "+a.Name)
				}
			}
			if strings.Join(acts, ",") != c.actions {
				t.Errorf("actions %q, want %q", acts, c.actions)
			}
			if strings.Join(logs, "\n") != c.logs {
				t.Errorf("logs %q, want %q", logs, c.logs)
			}
		})
	}
}

// Wrong use is a Tcl error with what would be valid; a connection
// without a DNS side refuses DNS:: commands.
func TestDNSErrors(t *testing.T) {
	cases := []struct{ body, want string }{
		{`when DNS_REQUEST { DNS::header rcode BOGUS }`, "unknown rcode \"BOGUS\""},
		{`when DNS_REQUEST { DNS::answer insert "not a record" }`, "bad resource record"},
		{`when DNS_REQUEST { DNS::ttl [DNS::rr "x. 1 IN A 192.0.2.1"] 5 }`, "is not in the response"},
		{`when DNS_REQUEST { DNS::question type NOPE }`, "unknown type"},
		{`when DNS_REQUEST { host not-an-address }`, "is not an IP address"},
		{`when DNS_REQUEST { DNS::edns0 subnet color }`, "must be address, source or scope"},
		{`when DNS_REQUEST { DNS::query cache www.example.com A }`, "must be dnsx or dns-express"},
		{`when DNS_REQUEST { DNS::query dnsx www.example.com NOPE }`, "unknown record type"},
		{`when DNS_REQUEST { DNS::query dnsx www.example.com }`, "DNS::query dnsx|dns-express name type ?dnssec?"},
		{`when DNS_REQUEST { DNS::query dnsx www.example.com A nsec }`, "must be dnssec"},
		{`when DNS_REQUEST { DNS::query dnsx "two words" A }`, "is not a domain name"},
	}
	for _, c := range cases {
		r := mustCompile(t, "/Common/r", c.body)
		s := NewProgram(&Env{}, r).NewConnState(newFakeDNS("www.example.com.", dns.TypeA))
		err := s.Run(DNSRequest)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.body, err, c.want)
		}
		s.Release()
	}
	r := mustCompile(t, "/Common/r", `when CLIENT_ACCEPTED { DNS::question name }`)
	s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "not a DNS listener or wide IP") {
		t.Errorf("DNS:: without a DNS side: %v", err)
	}
}
