package daemon

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestDNSRuleServices: a dns-profile virtual's iRule skips the profile's
// steps for one query (DNS::disable, DNS::enable), ends it its own way
// (DNS::last_act), and reads what answered (DNS::origin), whether a
// name is a wide IP (DNS::is_wideip), the query's TSIG (DNS::tsig) and
// the answer's records (DNS::scrape), and logs through the profile's
// logging profile (DNS::log): real queries over UDP and TCP, a real
// pool member, a real log sink.
func TestDNSRuleServices(t *testing.T) {
	t.Parallel()
	e, _ := dnsProfileEngine(t, true)
	member := startDNSPoolMember(t, "127.92.0.13:5300", map[string]string{
		"www.example.com. A":    "x 60 IN A 127.92.99.99", // what the member says of the wide IP's name
		"static.example.com. A": "x 60 IN A 127.92.99.98",
		"fwd.example.net. A":    "x 300 IN A 127.92.9.9",
	})
	sink, err := net.ListenPacket("udp", "127.92.0.50:5514")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create gtm datacenter dc1",
		"create gtm server s1 datacenter dc1 virtual-servers add { v1 { destination 127.92.5.5:80 } }",
		"create gtm pool a gp members add { s1:v1 }",
		"create gtm wideip a www.example.com pools add { gp }",
		"create gtm zone example.com definition { @ IN SOA ns1 hostmaster 1 3600 600 86400 300\n ns1 IN A 127.92.0.53\n static IN A 127.92.7.7 }",
		"create ltm pool dns_pool members add { 127.92.0.13:5300 }",
		"create ltm pool log_pool members add { 127.92.0.50:5514 }",
		"create sys log-config destination remote-high-speed-log dns_hsl pool-name log_pool protocol udp",
		"create sys log-config publisher dns_pub destinations replace-all-with { dns_hsl }",
		"create ltm profile dns-logging dnslog log-publisher dns_pub enable-query-logging no include-timestamp no include-source no include-view no",
		"create ltm dns cache transparent c1",
		"create ltm profile dns dnsp enable-cache yes cache c1 unhandled-query-action allow enable-logging yes log-profile dnslog",
		// The client's address picks what the rule does.
		`create ltm rule svc {
when DNS_REQUEST {
  switch [IP::client_addr] {
    127.92.0.101 { DNS::disable gtm }
    127.92.0.102 { DNS::disable all ; DNS::last_act reject }
    127.92.0.103 { DNS::disable gtm dnsx ; DNS::enable gtm }
    127.92.0.104 { DNS::disable dnsx ; DNS::disable cache }
    127.92.0.105 { DNS::disable gtm ; DNS::last_act drop }
    127.92.0.106 { if {[DNS::tsig exists]} { DNS::tsig remove } }
    127.92.0.107 { DNS::disable gtm dnsx }
  }
}
when DNS_RESPONSE {
  DNS::additional insert "origin.rule. 0 IN TXT [DNS::origin]"
  DNS::additional insert "wideip.rule. 0 IN TXT [DNS::is_wideip [DNS::question name]]"
  DNS::additional insert "scrape.rule. 0 IN TXT \"[join [DNS::scrape ANSWER type name] ,]\""
  if {[DNS::log]} { DNS::log "rule [IP::client_addr] [DNS::question name] [DNS::origin]" }
}
}`,
		"create ltm virtual dns_udp destination 127.92.0.1:5300 ip-protocol udp profiles add { dnsp udp } pool dns_pool rules { svc }",
		"create ltm virtual dns_tcp destination 127.92.0.1:5300 ip-protocol tcp profiles add { dnsp tcp } pool dns_pool rules { svc }",
	)
	const vip = "127.92.0.1:5300"
	for _, tt := range []struct {
		network, client, name string
		want                  string // rcode, first A, then the TXT records the rule added
		asked                 int64  // the member's queries after it
		logged                string // DNS::log's line, "" for none
	}{
		{"udp", "127.92.0.100", "www.example.com", "NOERROR 127.92.5.5 origin=GTM_BUILD wideip=1 scrape=A www.example.com", 0, "rule 127.92.0.100 www.example.com GTM_BUILD"},
		// gtm off: the static zone example.com answers, and has no www.
		{"udp", "127.92.0.101", "www.example.com", "NXDOMAIN origin=DNSX wideip=1 scrape=", 0, "rule 127.92.0.101 www.example.com DNSX"},
		{"udp", "127.92.0.100", "static.example.com", "NOERROR 127.92.7.7 origin=DNSX wideip=0 scrape=A static.example.com", 0, "rule 127.92.0.100 static.example.com DNSX"},
		// gtm and dnsx off: the pool's member answers, then the cache.
		{"udp", "127.92.0.107", "www.example.com", "NOERROR 127.92.99.99 origin=SERVER wideip=1 scrape=A www.example.com", 1, "rule 127.92.0.107 www.example.com SERVER"},
		{"tcp", "127.92.0.107", "www.example.com", "NOERROR 127.92.99.99 origin=CACHE wideip=1 scrape=A www.example.com", 1, "rule 127.92.0.107 www.example.com CACHE"},
		// all off, last action reject.
		{"udp", "127.92.0.102", "www.example.com", "REFUSED origin=LAST_ACTION wideip=1 scrape=", 1, "rule 127.92.0.102 www.example.com LAST_ACTION"},
		{"tcp", "127.92.0.102", "static.example.com", "REFUSED origin=LAST_ACTION wideip=0 scrape=", 1, "rule 127.92.0.102 static.example.com LAST_ACTION"},
		// enable undoes disable for the query.
		{"udp", "127.92.0.103", "www.example.com", "NOERROR 127.92.5.5 origin=GTM_BUILD wideip=1 scrape=A www.example.com", 1, "rule 127.92.0.103 www.example.com GTM_BUILD"},
		{"udp", "127.92.0.103", "static.example.com", "NOERROR 127.92.99.98 origin=SERVER wideip=0 scrape=A static.example.com", 2, "rule 127.92.0.103 static.example.com SERVER"},
		{"udp", "127.92.0.100", "fwd.example.net", "NOERROR 127.92.9.9 origin=SERVER wideip=0 scrape=A fwd.example.net", 3, "rule 127.92.0.100 fwd.example.net SERVER"},
		{"udp", "127.92.0.100", "fwd.example.net", "NOERROR 127.92.9.9 origin=CACHE wideip=0 scrape=A fwd.example.net", 3, "rule 127.92.0.100 fwd.example.net CACHE"},
		// cache off: the member is asked again.
		{"udp", "127.92.0.104", "fwd.example.net", "NOERROR 127.92.9.9 origin=SERVER wideip=0 scrape=A fwd.example.net", 4, "rule 127.92.0.104 fwd.example.net SERVER"},
		// last_act drop: a name nothing holds gets no answer...
		{"udp", "127.92.0.105", "other.example.net", "timeout", 4, ""},
		// ...one the cache holds still gets the cache's.
		{"udp", "127.92.0.105", "fwd.example.net", "NOERROR 127.92.9.9 origin=CACHE wideip=0 scrape=A fwd.example.net", 4, "rule 127.92.0.105 fwd.example.net CACHE"},
	} {
		got := ruleAsk(t, tt.network, tt.client, vip, tt.name, false)
		if got != tt.want {
			t.Errorf("%s from %s over %s: %q, want %q", tt.name, tt.client, tt.network, got, tt.want)
		}
		if n := member.queries.Load(); n != tt.asked {
			t.Errorf("%s from %s over %s: the member has had %d queries, want %d", tt.name, tt.client, tt.network, n, tt.asked)
		}
		if tt.logged != "" {
			if lines := sinkLines(sink, 1); len(lines) != 1 || lines[0] != tt.logged {
				t.Errorf("%s from %s: DNS::log sent %q, want %q", tt.name, tt.client, lines, tt.logged)
			}
		}
	}
	// DNS::tsig remove: the member gets the query unsigned.
	if got := ruleAsk(t, "udp", "127.92.0.106", vip, "tsig.example.net", true); !strings.HasPrefix(got, "NXDOMAIN") {
		t.Errorf("a signed query: %q", got)
	}
	if member.signed.Load() {
		t.Error("the member got the TSIG record DNS::tsig removed")
	}
	if got := ruleAsk(t, "udp", "127.92.0.100", vip, "tsig2.example.net", true); !strings.HasPrefix(got, "NXDOMAIN") {
		t.Errorf("a signed query: %q", got)
	}
	if !member.signed.Load() {
		t.Error("the member did not get the query's TSIG record (the rule left it)")
	}
}

// ruleAsk asks name (A) of addr from client and sums up the answer: the
// rcode, the first A record, then the TXT records of the additional
// section as name=text.
func ruleAsk(t *testing.T, network, client, addr, name string, signed bool) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), dns.TypeA)
	if signed {
		q.SetTsig("k.example.", dns.HmacSHA256, 300, time.Now().Unix())
	}
	c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(client)}}}
	if network == "tcp" {
		c.Dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(client)}
	}
	if signed {
		c.TsigSecret = map[string]string{"k.example.": "c2VjcmV0c2VjcmV0c2VjcmV0"}
		c.TsigProvider = nil
	}
	m, _, err := c.Exchange(q, addr)
	if err != nil && m == nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return "timeout"
		}
		return "error " + err.Error()
	}
	out := []string{dns.RcodeToString[m.Rcode]}
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
			break
		}
	}
	for _, rr := range m.Extra {
		if x, ok := rr.(*dns.TXT); ok {
			out = append(out, strings.TrimSuffix(x.Hdr.Name, ".rule.")+"="+strings.Join(x.Txt, ""))
		}
	}
	return strings.Join(out, " ")
}

// TestResolverNameLookupDNSMsg: a rule asks a net dns-resolver
// (RESOLVER::name_lookup, its forward zone's real nameserver) and reads
// the dns_message with DNSMSG::, answering a dns-profile virtual's query
// from it; a resolver that does not exist is a Tcl error (the query
// dropped), and a changed configuration is what the next query sees.
func TestResolverNameLookupDNSMsg(t *testing.T) {
	t.Parallel()
	e, _ := dnsProfileEngine(t, true) // a dns profile's rules run through the GSLB
	ns := startDNSPoolMember(t, "127.92.0.23:5300", map[string]string{
		"backend.corp.example. A": "x 120 IN A 127.92.3.3",
	})
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create net dns-resolver r1 forward-zones replace-all-with { corp.example { nameservers replace-all-with { 127.92.0.23:5300 { } } } }",
		`create ltm rule lookup {
when DNS_REQUEST {
  set res [RESOLVER::name_lookup r1 "backend.corp.example" a]
  if { $res eq "" } { DNS::drop ; return }
  foreach rr [DNSMSG::section $res answer] {
    DNS::answer insert "[DNS::question name]. [DNSMSG::record $rr ttl] IN [DNSMSG::record $rr type] [DNSMSG::record $rr rdata]"
  }
  DNS::answer insert "[DNS::question name]. 0 IN TXT [DNSMSG::header $res rcode] [DNSMSG::header $res aa] [DNSMSG::record [lindex [DNSMSG::section $res answer] 0] owner]"
  DNS::return
}
}`,
		"create ltm profile dns dnsr",
		"create ltm virtual dnsr_udp destination 127.92.0.2:5300 ip-protocol udp profiles add { dnsr udp } rules { lookup }",
	)
	q := func() *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion("svc.example.org.", dns.TypeA)
		c := &dns.Client{Net: "udp", Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP("127.92.0.120")}}}
		in, _, err := c.Exchange(m, "127.92.0.2:5300")
		if err != nil {
			return nil
		}
		return in
	}
	m := q()
	if m == nil || len(m.Answer) != 2 {
		t.Fatalf("answer %v", m)
	}
	if a, ok := m.Answer[0].(*dns.A); !ok || a.A.String() != "127.92.3.3" || a.Hdr.Ttl != 120 || a.Hdr.Name != "svc.example.org." {
		t.Errorf("the rule's A record: %v", m.Answer[0])
	}
	// (the resolver's randomize-query-name-case: the owner comes back in
	// the case it was asked in)
	if x, ok := m.Answer[1].(*dns.TXT); !ok || !strings.EqualFold(strings.Join(x.Txt, " "), "NOERROR 1 backend.corp.example") {
		t.Errorf("the rule's TXT record: %v", m.Answer[1])
	}
	if n := ns.queries.Load(); n != 1 {
		t.Errorf("the nameserver got %d queries, want 1", n)
	}
	// The forward zone's nameserver changes: the rule asks the new one,
	// which does not answer: RESOLVER::name_lookup gives "", the rule drops.
	mustRun(t, s, "modify net dns-resolver r1 forward-zones replace-all-with { corp.example { nameservers replace-all-with { 127.92.0.24:5300 { } } } }")
	if m := q(); m != nil {
		t.Errorf("a nameserver that does not answer: %v", m)
	}
	// No such resolver: a Tcl error, the query dropped.
	mustRun(t, s, "delete ltm virtual dnsr_udp", "modify ltm rule lookup { when DNS_REQUEST { RESOLVER::name_lookup nosuch x.example a } }",
		"create ltm virtual dnsr_udp destination 127.92.0.2:5300 ip-protocol udp profiles add { dnsr udp } rules { lookup }")
	if m := q(); m != nil {
		t.Errorf("a resolver that does not exist: %v", m)
	}
}
