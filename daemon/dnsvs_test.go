package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/gslb"
)

// dnsPoolMember is a small authoritative server standing for a DNS pool
// member: it answers the names it holds and counts the queries it got.
type dnsPoolMember struct {
	queries atomic.Int64
	subnet  atomic.Value // the client subnet option of the last query, as text ("" for none)
	signed  atomic.Bool  // the last query had a TSIG record
	stop    func()
}

func startDNSPoolMember(t *testing.T, addr string, records map[string]string) *dnsPoolMember {
	t.Helper()
	m := &dnsPoolMember{}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m.queries.Add(1)
		m.signed.Store(r.IsTsig() != nil)
		ecs := ""
		if o := r.IsEdns0(); o != nil {
			for _, x := range o.Option {
				if e, ok := x.(*dns.EDNS0_SUBNET); ok {
					ecs = e.String()
				}
			}
		}
		m.subnet.Store(ecs)
		a := new(dns.Msg)
		a.SetReply(r)
		a.Authoritative = true
		q := r.Question[0]
		if rr, ok := records[strings.ToLower(q.Name)+" "+dns.TypeToString[q.Qtype]]; ok {
			x, err := dns.NewRR(rr)
			if err != nil {
				t.Errorf("record %q: %v", rr, err)
			}
			x.Header().Name = q.Name
			a.Answer = append(a.Answer, x)
		} else {
			a.Ns = append(a.Ns, mustRR(t, "example.net. 30 IN SOA ns.example.net. h.example.net. 1 60 60 60 30"))
			a.Rcode = dns.RcodeNameError
			for k := range records {
				if strings.HasPrefix(k, strings.ToLower(q.Name)+" ") {
					a.Rcode = dns.RcodeSuccess // the name has other types: NODATA
				}
			}
		}
		w.WriteMsg(a)
	})
	var servers []*dns.Server
	for _, network := range []string{"udp", "tcp"} {
		started := make(chan struct{})
		srv := &dns.Server{Addr: addr, Net: network, Handler: h, NotifyStartedFunc: func() { close(started) }}
		go srv.ListenAndServe()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("member %s/%s did not start", addr, network)
		}
		servers = append(servers, srv)
	}
	var once sync.Once
	m.stop = func() {
		once.Do(func() {
			for _, s := range servers {
				s.Shutdown()
			}
		})
	}
	t.Cleanup(m.stop)
	return m
}

func mustRR(t *testing.T, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// dnsAsk sends one query over network to addr and describes the
// answer: "RCODE rdata rdata", or "timeout".
func dnsAsk(t *testing.T, network, addr, name string, qtype uint16) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	src := net.ParseIP("127.23.0.100") // the client, in the test's own range
	c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: src}}}
	if network == "tcp" {
		c.Dialer.LocalAddr = &net.TCPAddr{IP: src}
	}
	m, _, err := c.Exchange(q, addr)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return "timeout"
		}
		return "error " + err.Error()
	}
	out := []string{dns.RcodeToString[m.Rcode]}
	for _, rr := range m.Answer {
		switch x := rr.(type) {
		case *dns.A:
			out = append(out, x.A.String())
		case *dns.AAAA:
			out = append(out, x.AAAA.String())
		default:
			out = append(out, dns.TypeToString[rr.Header().Rrtype])
		}
	}
	return strings.Join(out, " ")
}

// dnsProfileEngine is an engine with a plane attached, and the GSLB when
// withGSLB (wide IPs), closed when the test ends.
func dnsProfileEngine(t *testing.T, withGSLB bool) (*Engine, *dataplane.Plane) {
	t.Helper()
	e := openTest(t, t.TempDir())
	t.Cleanup(func() { e.Close() })
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	t.Cleanup(func() { p.Close() })
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	if withGSLB {
		g := gslb.New(gslb.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		t.Cleanup(func() { g.Close() })
		stop, err := e.AttachGSLB(g, p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	return e, p
}

func TestDNSProfileVirtual(t *testing.T) {
	t.Parallel()
	e, _ := dnsProfileEngine(t, true)
	member := startDNSPoolMember(t, "127.23.0.11:5300", map[string]string{
		"fwd.example.net. A":       "x 60 IN A 127.23.9.9",
		"v4only.example.net. A":    "x 60 IN A 192.0.2.1",
		"dual.example.net. AAAA":   "x 60 IN AAAA 2001:db8::1",
		"dual.example.net. A":      "x 60 IN A 192.0.2.2",
		"www.example.com. A":       "x 60 IN A 127.23.99.99", // what the member says of the wide IP's name
		"static.example.com. A":    "x 60 IN A 127.23.99.98",
		"zero.example.net. A":      "x 0 IN A 127.23.9.10",
		"tcponly.example.net. A":   "x 60 IN A 127.23.9.11",
		"uncached.example.net. A":  "x 60 IN A 127.23.9.12",
		"after.example.net. A":     "x 60 IN A 127.23.9.13",
		"rejected.example.net. A":  "x 60 IN A 127.23.9.14",
		"noerror.example.net. A":   "x 60 IN A 127.23.9.15",
		"dropped.example.net. A":   "x 60 IN A 127.23.9.16",
		"secondary.example.net. A": "x 60 IN A 192.0.2.3",
	})
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create gtm datacenter dc1",
		"create gtm server s1 datacenter dc1 virtual-servers add { v1 { destination 127.23.5.5:80 } }",
		"create gtm pool a gp members add { s1:v1 }",
		"create gtm wideip a www.example.com pools add { gp }",
		"create gtm zone example.com definition { @ IN SOA ns1 hostmaster 1 3600 600 86400 300\n ns1 IN A 127.23.0.53\n static IN A 127.23.7.7 }",
		"create ltm pool dns_pool members add { 127.23.0.11:5300 } ",
		"create ltm dns cache transparent c1",
		"create ltm profile dns dnsp enable-cache yes cache c1",
		"create ltm virtual dns_udp destination 127.23.0.1:5300 ip-protocol udp profiles add { dnsp udp } pool dns_pool",
		"create ltm virtual dns_tcp destination 127.23.0.1:5300 ip-protocol tcp profiles add { dnsp tcp } pool dns_pool",
	)
	const vip = "127.23.0.1:5300"
	steps := []struct {
		cmd     string // a change made before the query
		network string
		name    string
		qtype   uint16
		want    string
		asked   int64  // how many queries the member has got after it
		subnet  string // the client subnet option the member got last
	}{
		{network: "udp", name: "www.example.com", qtype: dns.TypeA, want: "NOERROR 127.23.5.5"},
		{network: "tcp", name: "www.example.com", qtype: dns.TypeA, want: "NOERROR 127.23.5.5"},
		{network: "udp", name: "static.example.com", qtype: dns.TypeA, want: "NOERROR 127.23.7.7"},
		{network: "udp", name: "nothere.example.com", qtype: dns.TypeA, want: "NXDOMAIN"}, // the zone's
		{network: "udp", name: "fwd.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.9", asked: 1},
		{network: "udp", name: "fwd.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.9", asked: 1}, // cached
		{network: "tcp", name: "fwd.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.9", asked: 1}, // same cache
		{network: "tcp", name: "tcponly.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.11", asked: 2},
		{network: "udp", name: "zero.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.10", asked: 3},
		{network: "udp", name: "zero.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.10", asked: 4}, // TTL 0: not kept
		{network: "udp", name: "gone.example.net", qtype: dns.TypeA, want: "NXDOMAIN", asked: 5},
		{network: "udp", name: "gone.example.net", qtype: dns.TypeA, want: "NXDOMAIN", asked: 5},                                                  // negative answers are kept
		{cmd: "modify ltm profile dns dnsp enable-gtm no", network: "udp", name: "www.example.com", qtype: dns.TypeA, want: "NXDOMAIN", asked: 5}, // the zone's: DNS Express holds example.com
		{cmd: "modify ltm profile dns dnsp enable-dns-express no", network: "udp", name: "static.example.com", qtype: dns.TypeA, want: "NOERROR 127.23.99.98", asked: 6},
		{cmd: "modify ltm profile dns dnsp enable-gtm yes enable-cache no", network: "udp", name: "uncached.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.12", asked: 7},
		{network: "udp", name: "uncached.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.12", asked: 8},
		{cmd: "modify ltm profile dns dnsp unhandled-query-action reject", network: "udp", name: "rejected.example.net", qtype: dns.TypeA, want: "REFUSED", asked: 8},
		{network: "tcp", name: "rejected.example.net", qtype: dns.TypeA, want: "REFUSED", asked: 8},
		{network: "udp", name: "www.example.com", qtype: dns.TypeA, want: "NOERROR 127.23.5.5", asked: 8},
		{cmd: "modify ltm profile dns dnsp unhandled-query-action noerror", network: "udp", name: "noerror.example.net", qtype: dns.TypeA, want: "NOERROR", asked: 8},
		{cmd: "modify ltm profile dns dnsp unhandled-query-action drop", network: "udp", name: "dropped.example.net", qtype: dns.TypeA, want: "timeout", asked: 8},
		{cmd: "modify ltm profile dns dnsp unhandled-query-action allow dns64 secondary dns64-prefix 64:ff9b::", network: "udp", name: "v4only.example.net", qtype: dns.TypeAAAA, want: "NOERROR 64:ff9b::c000:201", asked: 10},
		{network: "udp", name: "dual.example.net", qtype: dns.TypeAAAA, want: "NOERROR 2001:db8::1", asked: 11},
		{cmd: "modify ltm profile dns dnsp dns64 immediate dns64-prefix 2001:db8:64::", network: "udp", name: "dual.example.net", qtype: dns.TypeAAAA, want: "NOERROR 2001:db8:64::c000:202", asked: 12},
		{cmd: "modify ltm profile dns dnsp dns64 disabled edns0-client-subnet-insert enabled", network: "udp", name: "fwd.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.9", asked: 13, subnet: "127.23.0.100/32/0"},
		{network: "tcp", name: "fwd.example.net", qtype: dns.TypeA, want: "NOERROR 127.23.9.9", asked: 14, subnet: "127.23.0.100/32/0"},
		// dig and this client ask with RD set: past the wide IP, to reject.
		{cmd: "modify ltm profile dns dnsp process-rd no unhandled-query-action reject", network: "udp", name: "www.example.com", qtype: dns.TypeA, want: "REFUSED", asked: 14},
	}
	for i, st := range steps {
		if st.cmd != "" {
			if _, err := run(t, s, st.cmd); err != "" {
				t.Fatalf("step %d: %s: %s", i, st.cmd, err)
			}
		}
		got := dnsAsk(t, st.network, vip, st.name, st.qtype)
		if got != st.want {
			t.Errorf("step %d: %s %s over %s: %q, want %q", i, st.name, dns.TypeToString[st.qtype], st.network, got, st.want)
		}
		if n := member.queries.Load(); n != st.asked {
			t.Errorf("step %d: %s: the member got %d queries, want %d", i, st.name, n, st.asked)
		}
		if ecs, _ := member.subnet.Load().(string); st.subnet != "" && ecs != st.subnet {
			t.Errorf("step %d: %s: the member got client subnet %q, want %q", i, st.name, ecs, st.subnet)
		}
	}
}

// TestDNSProfileCacheOutlivesMember: an answer kept by the cache is given
// after the member stopped, and a name it did not keep gets no answer.
func TestDNSProfileCacheOutlivesMember(t *testing.T) {
	t.Parallel()
	e, p := dnsProfileEngine(t, false)
	member := startDNSPoolMember(t, "127.23.0.12:5300", map[string]string{
		"kept.example.net. A":  "x 300 IN A 127.23.9.20",
		"later.example.net. A": "x 300 IN A 127.23.9.21",
	})
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool dns_pool members add { 127.23.0.12:5300 }",
		"create ltm dns cache resolver r1",
		"create ltm profile dns dnsp enable-cache yes cache r1",
		"create ltm virtual dns_udp destination 127.23.0.2:5300 ip-protocol udp profiles add { dnsp udp } pool dns_pool",
	)
	if got := dnsAsk(t, "udp", "127.23.0.2:5300", "kept.example.net", dns.TypeA); got != "NOERROR 127.23.9.20" {
		t.Fatalf("first: %q", got)
	}
	if n := p.DNSCacheLen("/Common/r1"); n != 1 {
		t.Fatalf("the cache keeps %d answers, want 1", n)
	}
	member.stop()
	if got := dnsAsk(t, "udp", "127.23.0.2:5300", "kept.example.net", dns.TypeA); got != "NOERROR 127.23.9.20" {
		t.Fatalf("after the member stopped: %q", got)
	}
	// A commit of something else keeps what the cache holds.
	if _, err := run(t, s, "create ltm pool other"); err != "" {
		t.Fatal(err)
	}
	if got := dnsAsk(t, "udp", "127.23.0.2:5300", "kept.example.net", dns.TypeA); got != "NOERROR 127.23.9.20" {
		t.Fatalf("after a commit: %q", got)
	}
	if got := dnsAsk(t, "udp", "127.23.0.2:5300", "later.example.net", dns.TypeA); got != "timeout" {
		t.Fatalf("a name not kept, the member stopped: %q", got)
	}
}

// TestDNSProfileResolverForwardZones: a resolver cache sends the names
// under a forward zone to its name servers, the others to the pool.
func TestDNSProfileResolverForwardZones(t *testing.T) {
	e, _ := dnsProfileEngine(t, false)
	pool := startDNSPoolMember(t, "127.23.0.15:5300", map[string]string{"www.example.net. A": "x 60 IN A 127.23.9.30"})
	zone := startDNSPoolMember(t, "127.23.0.16:5300", map[string]string{"www.example.org. A": "x 60 IN A 127.23.9.31"})
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool dns_pool members add { 127.23.0.15:5300 }",
		"create ltm dns cache resolver r1 forward-zones replace-all-with { example.org { nameservers replace-all-with { 127.23.0.16:5300 { } } } }",
		"create ltm profile dns dnsp enable-cache yes cache r1",
		"create ltm virtual dns_udp destination 127.23.0.5:5300 ip-protocol udp profiles add { dnsp udp } pool dns_pool",
	)
	for _, tt := range []struct {
		name, want    string
		pooled, zoned int64
	}{
		{"www.example.org", "NOERROR 127.23.9.31", 0, 1},
		{"www.example.net", "NOERROR 127.23.9.30", 1, 1},
		{"www.example.org", "NOERROR 127.23.9.31", 1, 1}, // cached
	} {
		if got := dnsAsk(t, "udp", "127.23.0.5:5300", tt.name, dns.TypeA); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if a, b := pool.queries.Load(), zone.queries.Load(); a != tt.pooled || b != tt.zoned {
			t.Errorf("%s: the pool's member got %d queries and the zone's server %d, want %d and %d", tt.name, a, b, tt.pooled, tt.zoned)
		}
	}
}

// TestDNSProfileRefusals: what the translation refuses, nothing changed.
func TestDNSProfileRefusals(t *testing.T) {
	e, _ := dnsProfileEngine(t, false)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool dns_pool",
		"create ltm profile dns nocache enable-cache yes",
		"create ltm profile dns badprefix dns64 secondary dns64-prefix 10.0.0.1",
	)
	for _, c := range []struct{ cmd, err string }{
		{"create ltm virtual v1 destination 127.23.0.3:5300 ip-protocol udp profiles add { nocache udp } pool dns_pool", "enable-cache yes needs a cache"},
		{"create ltm profile dns badcache enable-cache yes cache missing", "missing"},
		{"create ltm virtual v3 destination 127.23.0.3:5300 ip-protocol udp profiles add { badprefix udp } pool dns_pool", "is not an IPv6 address"},
		{"create ltm virtual v4 destination 127.23.0.3:80 profiles add { dns http tcp } pool dns_pool", "cannot be used with http profile"},
		{"create ltm virtual v5 destination 127.23.0.3:81 profiles add { dns mblb tcp } pool dns_pool", "cannot be used with an mblb profile"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list ltm virtual"); strings.Contains(out, "ltm virtual") {
		t.Errorf("a refused virtual was kept:\n%s", out)
	}
	// use-local-bind no acts on gtm listeners only: a virtual's is kept
	// with a warning, and the virtual is served.
	mustRun(t, s, "create ltm profile dns nobind use-local-bind no")
	out, err := run(t, s, "create ltm virtual v6 destination 127.23.0.3:5301 ip-protocol udp profiles add { nobind udp } pool dns_pool")
	if err != "" || !strings.Contains(out, "use-local-bind no is acted on by gtm listeners only") {
		t.Errorf("use-local-bind no on a virtual: out %q, error %q", out, err)
	}
	if out, _ := run(t, s, "list ltm virtual v6"); !strings.Contains(out, "ltm virtual v6") {
		t.Errorf("the virtual was not kept:\n%s", out)
	}
}

// TestDNSProfileRules: the virtual's iRules run DNS_REQUEST before the
// profile's steps and DNS_RESPONSE on every answer (the GSLB's, the
// cache's, the pool's), over UDP and TCP.
func TestDNSProfileRules(t *testing.T) {
	t.Parallel()
	e, _ := dnsProfileEngine(t, true)
	member := startDNSPoolMember(t, "127.23.0.13:5300", map[string]string{
		"fwd.example.net. A": "x 300 IN A 127.23.9.9",
	})
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create gtm datacenter dc1",
		"create gtm server s1 datacenter dc1 virtual-servers add { v1 { destination 127.23.5.5:80 } }",
		"create gtm pool a gp ttl 300 members add { s1:v1 }",
		"create gtm wideip a www.example.com pools add { gp }",
		"create ltm pool dns_pool members add { 127.23.0.13:5300 }",
		"create ltm rule dns_rule {\nwhen DNS_REQUEST {\n  if { [DNS::question name] equals \"ruled.example.net\" } {\n    DNS::answer insert \"ruled.example.net. 30 IN A 127.23.8.8\"\n    DNS::return\n  }\n  if { [DNS::question name] equals \"dropped.example.net\" } { DNS::drop }\n}\nwhen DNS_RESPONSE {\n  foreach rr [DNS::answer] {\n    if { [DNS::ttl $rr] > 60 } { DNS::ttl $rr 60 }\n  }\n}\n}",
		"create ltm virtual dns_udp destination 127.23.0.4:5300 ip-protocol udp profiles add { dns udp } pool dns_pool rules { dns_rule }",
		"create ltm virtual dns_tcp destination 127.23.0.4:5300 ip-protocol tcp profiles add { dns tcp } pool dns_pool rules { dns_rule }",
	)
	for _, network := range []string{"udp", "tcp"} {
		for _, tt := range []struct {
			name, want string
		}{
			{"ruled.example.net", "NOERROR 127.23.8.8 ttl 30"}, // DNS::return
			{"dropped.example.net", "timeout"},                 // DNS::drop
			{"www.example.com", "NOERROR 127.23.5.5 ttl 60"},   // the wide IP's 300, capped
			{"fwd.example.net", "NOERROR 127.23.9.9 ttl 60"},   // the member's 300, capped
		} {
			if network == "tcp" && tt.want == "timeout" {
				continue // a dropped query over TCP waits for the connection's end
			}
			if got := dnsAskTTL(t, network, "127.23.0.4:5300", tt.name); got != tt.want {
				t.Errorf("%s over %s: %q, want %q", tt.name, network, got, tt.want)
			}
		}
	}
	if n := member.queries.Load(); n != 2 {
		t.Errorf("the member got %d queries, want 2 (fwd.example.net over udp and tcp)", n)
	}
}

// dnsAskTTL is dnsAsk for an A question, with the first answer's TTL.
func dnsAskTTL(t *testing.T, network, addr, name string) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), dns.TypeA)
	src := net.ParseIP("127.23.0.100")
	c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: src}}}
	if network == "tcp" {
		c.Dialer.LocalAddr = &net.TCPAddr{IP: src}
	}
	m, _, err := c.Exchange(q, addr)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return "timeout"
		}
		return "error " + err.Error()
	}
	if len(m.Answer) == 0 {
		return dns.RcodeToString[m.Rcode]
	}
	a, _ := m.Answer[0].(*dns.A)
	if a == nil {
		return dns.RcodeToString[m.Rcode] + " " + dns.TypeToString[m.Answer[0].Header().Rrtype]
	}
	return fmt.Sprintf("%s %s ttl %d", dns.RcodeToString[m.Rcode], a.A, a.Hdr.Ttl)
}
