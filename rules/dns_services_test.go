package rules

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// fakeDNSSvc is a fakeDNS with the dns profile's services.
type fakeDNSSvc struct {
	*fakeDNS
	origin string
	wide   map[string]bool
	logged []string
	logs   bool
}

func (f *fakeDNSSvc) DNSOrigin() string            { return f.origin }
func (f *fakeDNSSvc) DNSRPZPolicy() string         { return "rpz.test nxdomain *.bad.example" }
func (f *fakeDNSSvc) DNSIsWideIP(name string) bool { return f.wide[name] }
func (f *fakeDNSSvc) DNSLog(msg string) bool {
	if f.logs && msg != "" {
		f.logged = append(f.logged, msg)
	}
	return f.logs
}

func TestDNSServiceCommands(t *testing.T) {
	cases := []struct {
		name, body string
		ev         Event
		plain      bool   // a DNSConn without DNSServices
		actions    string // the DNSDisable/Enable/LastAct actions, in order
		logs       string // the rule's log local0. lines
		logged     string // what DNS::log sent
		err        string // the event's error, "" for none
		extra      int    // the query's additional records after the event
	}{
		{name: "disable and enable", ev: DNSRequest, body: `when DNS_REQUEST { DNS::disable dnsx gtm; if {[IP::client_addr] eq "127.92.0.9"} { DNS::enable dnsx } ; DNS::disable DNS-Express }`,
			actions: "disable dnsx,disable gtm,enable dnsx,disable dnsx"},
		{name: "all, avr, rpz", ev: DNSRequest, body: `when DNS_REQUEST { DNS::disable all; DNS::enable cache dnssec avr rpz }`,
			actions: "disable all,enable cache,enable dnssec,enable avr,enable rpz"},
		{name: "unknown service: nothing taken", ev: DNSRequest, body: `when DNS_REQUEST { DNS::disable gtm bogus }`,
			err: `unknown service "bogus"`},
		{name: "disable without a service", ev: DNSRequest, body: `when DNS_REQUEST { DNS::disable }`, err: "wrong # args"},
		{name: "last_act", ev: DNSRequest, body: `when DNS_REQUEST { DNS::last_act REJECT; DNS::last_act noerror }`,
			actions: "last_act reject,last_act noerror"},
		{name: "last_act bad", ev: DNSRequest, body: `when DNS_REQUEST { DNS::last_act nxdomain }`, err: `unknown action "nxdomain"`},
		{name: "origin", ev: DNSResponse, body: `when DNS_RESPONSE { log local0. [DNS::origin] }`, logs: "CACHE"},
		{name: "rpz_policy", ev: DNSResponse, body: `when DNS_RESPONSE { log local0. [lindex [DNS::rpz_policy] 2] }`, logs: "*.bad.example"},
		{name: "rpz_policy of a request", ev: DNSRequest, body: `when DNS_REQUEST { log local0. "<[DNS::rpz_policy]>" }`, logs: "<>"},
		{name: "rpz_policy without services", ev: DNSResponse, plain: true, body: `when DNS_RESPONSE { log local0. "<[DNS::rpz_policy]>" }`, logs: "<>"},
		{name: "origin of a request", ev: DNSRequest, body: `when DNS_REQUEST { log local0. [DNS::origin] }`, logs: "CLIENT"},
		{name: "origin without services", ev: DNSResponse, plain: true, body: `when DNS_RESPONSE { DNS::origin }`, err: "no dns profile services"},
		{name: "is_wideip", ev: DNSRequest, body: `when DNS_REQUEST { log local0. "[DNS::is_wideip www.example.com] [DNS::is_wideip WWW.Example.COM.] [DNS::is_wideip other.example.com] [DNS::is_wideip {bad name..}]" }`,
			logs: "1 1 0 0"},
		{name: "log", ev: DNSRequest, body: `when DNS_REQUEST { if {[DNS::log]} { DNS::log "q [DNS::question name]" } }`, logged: "q www.example.com"},
		{name: "tsig", ev: DNSRequest, body: `when DNS_REQUEST { set e [DNS::tsig exists]; DNS::tsig remove; log local0. "$e [DNS::tsig exists]" }`,
			logs: "1 0", extra: 1},
		{name: "tsig bad", ev: DNSRequest, body: `when DNS_REQUEST { DNS::tsig verify }`, err: `unknown option "verify"`},
		{name: "scrape", ev: DNSResponse, body: `when DNS_RESPONSE { foreach rr [DNS::scrape ANSWER type ttl name qnamelen rdatalen rdata] { log local0. $rr } ; log local0. [DNS::scrape all section type] }`,
			logs: "A 30 www.example.com 15 4 10.0.0.1\nA 30 www.example.com 15 4 10.0.0.2\n{answer A} {answer A} {authority NS}"},
		{name: "scrape bad field", ev: DNSResponse, body: `when DNS_RESPONSE { DNS::scrape ANSWER owner }`, err: `unknown field "owner"`},
		{name: "scrape bad section", ev: DNSResponse, body: `when DNS_RESPONSE { DNS::scrape QUESTION name }`, err: `unknown section "QUESTION"`},
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
			f.fakeConn.addrs[EndClient] = netip.MustParseAddrPort("127.92.0.9:5300")
			tsig := new(dns.TSIG)
			tsig.Hdr = dns.RR_Header{Name: "key.", Rrtype: dns.TypeTSIG, Class: dns.ClassANY}
			tsig.Algorithm = dns.HmacSHA256
			f.q.Extra = append(f.q.Extra, tsig)
			for _, a := range []string{"www.example.com. 30 IN A 10.0.0.1", "www.example.com. 30 IN A 10.0.0.2"} {
				rr, _ := dns.NewRR(a)
				f.r.Answer = append(f.r.Answer, rr)
			}
			ns, _ := dns.NewRR("example.com. 60 IN NS ns1.example.com.")
			f.r.Ns = append(f.r.Ns, ns)
			var conn Conn = &fakeDNSSvc{fakeDNS: f, origin: "CACHE", wide: map[string]bool{"www.example.com.": true}, logs: true}
			if c.plain {
				conn = f
			}
			s := NewProgram(env, r).NewConnState(conn)
			defer s.Release()
			err := s.Run(c.ev)
			if (err != nil) != (c.err != "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			var acts []string
			for _, a := range f.actions {
				switch a.Kind {
				case DNSDisable:
					acts = append(acts, "disable "+a.Name)
				case DNSEnable:
					acts = append(acts, "enable "+a.Name)
				case DNSLastAct:
					acts = append(acts, "last_act "+a.Name)
				}
			}
			if got := strings.Join(acts, ","); got != c.actions {
				t.Errorf("actions %q, want %q", got, c.actions)
			}
			if got := strings.Join(logs, "\n"); got != c.logs && c.err == "" {
				t.Errorf("logs %q, want %q", got, c.logs)
			}
			if sv, ok := conn.(*fakeDNSSvc); ok && strings.Join(sv.logged, "\n") != c.logged {
				t.Errorf("DNS::log sent %q, want %q", sv.logged, c.logged)
			}
			if c.extra > 0 && len(f.q.Extra) != c.extra {
				t.Errorf("query's additional records: %d, want %d", len(f.q.Extra), c.extra)
			}
		})
	}
}
