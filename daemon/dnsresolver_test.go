package daemon

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

// startDNSHierarchy starts a root (127.39.2.1), a TLD server for com and
// org (127.39.2.2) and the servers of example.com (127.39.2.3) and
// example.org (127.39.2.4), all on port 53, as a resolver cache's
// root-hints see the Internet.
func startDNSHierarchy(t *testing.T) map[string]*authtest.Server {
	t.Helper()
	soa := func(z string) string {
		return z + " 3600 IN SOA ns." + strings.TrimPrefix(z, ".") + " h. 1 3600 600 86400 30"
	}
	zones := map[string][]string{
		"127.39.2.1:53": {soa("."), "com. 3600 IN NS ns.tld.", "org. 3600 IN NS ns.tld.", "ns.tld. 3600 IN A 127.39.2.2"},
		"127.39.2.2:53": {soa("com."), soa("org."),
			"example.com. 3600 IN NS ns1.example.com.", "ns1.example.com. 3600 IN A 127.39.2.3",
			"example.org. 3600 IN NS ns.example.org.", "ns.example.org. 3600 IN A 127.39.2.4"},
		"127.39.2.3:53": {soa("example.com."), "www.example.com. 300 IN A 127.39.9.1", "alias.example.com. 300 IN CNAME www.example.org."},
		"127.39.2.4:53": {soa("example.org."), "www.example.org. 300 IN A 127.39.9.3"},
	}
	out := map[string]*authtest.Server{}
	for addr, recs := range zones {
		s, err := authtest.New(recs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(addr); err != nil {
			t.Skipf("cannot serve DNS on %s (port 53 needs privileges): %v", addr, err)
		}
		t.Cleanup(s.Close)
		out[addr] = s
	}
	return out
}

// resolverAsk is dnsAsk from a client address in this test's range.
func resolverAsk(t *testing.T, network, addr, name string, qtype uint16) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	src := net.ParseIP("127.39.2.100")
	c := &dns.Client{Net: network, Timeout: 6 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: src}}}
	if network == "tcp" {
		c.Dialer.LocalAddr = &net.TCPAddr{IP: src}
	}
	m, _, err := c.Exchange(q, addr)
	if err != nil {
		return "error " + err.Error()
	}
	out := []string{dns.RcodeToString[m.Rcode]}
	for _, rr := range m.Answer {
		switch x := rr.(type) {
		case *dns.A:
			out = append(out, x.A.String())
		case *dns.CNAME:
			out = append(out, "cname:"+x.Target)
		case *dns.PTR:
			out = append(out, "ptr:"+x.Ptr)
		default:
			out = append(out, dns.TypeToString[rr.Header().Rrtype])
		}
	}
	return strings.Join(out, " ")
}

// TestDNSResolverCacheRecursion: a dns-profile virtual with a resolver
// cache resolves from its root-hints (over UDP and TCP), answers its
// local zones and default zones itself, sends its forward zones' names
// to their servers, and asks the root once for what it learnt.
func TestDNSResolverCacheRecursion(t *testing.T) {
	srv := startDNSHierarchy(t)
	e, _ := dnsProfileEngine(t, false)
	pool := startDNSPoolMember(t, "127.39.2.20:5300", map[string]string{
		"www.example.com. A": "x 60 IN A 127.39.9.99", "x.fwd.example. A": "x 60 IN A 127.39.9.50"})
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool dns_pool members add { 127.39.2.20:5300 }",
		`create ltm dns cache resolver r1 root-hints add { 127.39.2.1:53 } answer-default-zones yes `+
			`local-zones { { name corp.example type static records { "db.corp.example. 60 IN A 127.39.8.8" } } } `+
			`forward-zones replace-all-with { fwd.example { nameservers replace-all-with { 127.39.2.20:5300 { } } } }`,
		"create ltm profile dns dnsp enable-cache yes cache r1",
		"create ltm virtual dns_udp destination 127.39.2.5:53 ip-protocol udp profiles add { dnsp udp } pool dns_pool",
		"create ltm virtual dns_tcp destination 127.39.2.5:53 ip-protocol tcp profiles add { dnsp tcp } pool dns_pool",
	)
	for _, tt := range []struct {
		network, name string
		qtype         uint16
		want          string
	}{
		{"udp", "www.example.com", dns.TypeA, "NOERROR 127.39.9.1"}, // from the root, not the pool
		{"tcp", "alias.example.com", dns.TypeA, "NOERROR cname:www.example.org. 127.39.9.3"},
		{"udp", "nope.example.org", dns.TypeA, "NXDOMAIN"},
		{"udp", "x.fwd.example", dns.TypeA, "NOERROR 127.39.9.50"},
		{"tcp", "db.corp.example", dns.TypeA, "NOERROR 127.39.8.8"},
		{"udp", "other.corp.example", dns.TypeA, "NXDOMAIN"},
		{"udp", "localhost", dns.TypeA, "NOERROR 127.0.0.1"},
		{"udp", "1.0.0.127.in-addr.arpa", dns.TypePTR, "NOERROR ptr:localhost."},
	} {
		if got := resolverAsk(t, tt.network, "127.39.2.5:53", tt.name, tt.qtype); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.network, tt.name, got, tt.want)
		}
	}
	if n := pool.queries.Load(); n != 1 {
		t.Errorf("the pool's member got %d queries, want 1 (the forward zone's)", n)
	}
	// What was learnt is kept: a new name of example.com goes straight to
	// its server.
	root := srv["127.39.2.1:53"].Queries.Load()
	if got := resolverAsk(t, "udp", "127.39.2.5:53", "nope.example.com", dns.TypeA); got != "NXDOMAIN" {
		t.Errorf("nope.example.com: %q", got)
	}
	if n := srv["127.39.2.1:53"].Queries.Load(); n != root {
		t.Errorf("the root was asked again: %d queries, then %d", root, n)
	}
	// A commit that leaves the cache alone keeps what it learnt.
	mustRun(t, s, "create ltm pool unrelated")
	if got := resolverAsk(t, "tcp", "127.39.2.5:53", "again.example.com", dns.TypeA); got != "NXDOMAIN" {
		t.Errorf("again.example.com: %q", got)
	}
	if n := srv["127.39.2.1:53"].Queries.Load(); n != root {
		t.Errorf("after an unrelated commit the root was asked again: %d queries, then %d", root, n)
	}
	// Without root-hints and with a pool, the names go to the pool as
	// before [M].
	mustRun(t, s, "modify ltm dns cache resolver r1 root-hints none")
	if got := resolverAsk(t, "udp", "127.39.2.5:53", "www.example.com", dns.TypeA); got != "NOERROR 127.39.9.99" {
		t.Errorf("without root-hints: %q, want the pool's answer", got)
	}
	// A transparent cache answers its local zones and default zones
	// before its pool.
	mustRun(t, s,
		`create ltm dns cache transparent t1 answer-default-zones yes local-zones { { name corp.example type refuse } }`,
		"create ltm profile dns tprof enable-cache yes cache t1",
		"create ltm virtual t_udp destination 127.39.2.7:53 ip-protocol udp profiles add { tprof udp } pool dns_pool")
	pooled := pool.queries.Load()
	for _, tt := range []struct{ name, want string }{
		{"db.corp.example", "REFUSED"},
		{"localhost", "NOERROR 127.0.0.1"},
		{"www.example.com", "NOERROR 127.39.9.99"},
	} {
		if got := resolverAsk(t, "udp", "127.39.2.7:53", tt.name, dns.TypeA); got != tt.want {
			t.Errorf("transparent %s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if n := pool.queries.Load() - pooled; n != 1 {
		t.Errorf("the transparent cache's pool got %d queries, want 1", n)
	}
	if out, _ := run(t, s, "list ltm dns cache resolver r1 all-properties"); strings.Contains(out, "not acted on") {
		t.Errorf("the resolver's settings are still said not to be acted on:\n%s", out)
	}
}

// TestDNSResolverCacheRefusals: a resolver cache's settings that cannot
// work are refused, nothing changed.
func TestDNSResolverCacheRefusals(t *testing.T) {
	e, _ := dnsProfileEngine(t, false)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create ltm pool dns_pool",
		"create ltm dns cache resolver r1 root-hints add { 127.39.2.1:53 }",
		"create ltm profile dns dnsp enable-cache yes cache r1",
		"create ltm virtual v1 destination 127.39.2.6:53 ip-protocol udp profiles add { dnsp udp } pool dns_pool")
	before, _ := run(t, s, "list ltm dns cache resolver r1")
	for _, c := range []struct{ set, err string }{
		{"root-hints replace-all-with { 127.39.2.1:99999 }", "root-hints"},
		{"root-hints replace-all-with { nowhere }", "root-hints"},
		{"use-udp no use-tcp no", "use-udp and use-tcp are both no"},
		{"use-ipv4 no use-ipv6 no", "use-ipv4 and use-ipv6 are both no"},
		{`local-zones { { name a.example type nosuch } }`, "is not one of"},
		{`local-zones { { name a.example type static records { "www.b.example. 60 IN A 127.39.8.1" } } }`, "is not in the zone"},
		{`local-zones { { type static } }`, "needs a name"},
		{`local-zones { { name a.example type static records { "not a record" } } }`, "not a record"},
	} {
		_, err := run(t, s, "modify ltm dns cache resolver r1 "+c.set)
		if !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.set, err, c.err)
		}
		if after, _ := run(t, s, "list ltm dns cache resolver r1"); after != before {
			t.Errorf("%s: the cache changed:\n%s", c.set, after)
		}
	}
}

// TestDNSValidatingResolverRefusals: a validating-resolver's settings
// that cannot work are refused and leave it as it was; a cache a profile
// names cannot be deleted, nor a profile name a cache that is not there.
func TestDNSValidatingResolverRefusals(t *testing.T) {
	e, _ := dnsProfileEngine(t, false)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create ltm pool dns_pool",
		"create ltm dns cache validating-resolver vr1 root-hints add { 127.59.2.1:53 }",
		"create ltm profile dns dnsp enable-cache yes cache vr1",
		"create ltm virtual v1 destination 127.59.2.6:53 ip-protocol udp profiles add { dnsp udp } pool dns_pool")
	before, _ := run(t, s, "list ltm dns cache validating-resolver vr1 all-properties")
	for _, want := range []string{"ignore-cd no", "key-cache-size 10485760", "prefetch-key yes", "randomize-query-name-case yes"} {
		if !strings.Contains(before, want) {
			t.Errorf("defaults: no %q in\n%s", want, before)
		}
	}
	for _, c := range []struct{ cmd, err string }{
		{`modify ltm dns cache validating-resolver vr1 trust-anchors { "example. 60 IN A 10.0.0.1" }`, "neither a DS nor a DNSKEY"},
		{`modify ltm dns cache validating-resolver vr1 trust-anchors { "not a record" }`, "trust-anchors"},
		{"modify ltm dns cache validating-resolver vr1 use-udp no use-tcp no", "use-udp and use-tcp are both no"},
		{"modify ltm dns cache validating-resolver vr1 root-hints replace-all-with { nowhere }", "root-hints"},
		{"delete ltm dns cache validating-resolver vr1", "dnsp"},
		{"modify ltm profile dns dnsp cache nosuch", "nosuch"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
		if after, _ := run(t, s, "list ltm dns cache validating-resolver vr1 all-properties"); after != before {
			t.Errorf("%s: the cache changed:\n%s", c.cmd, after)
		}
	}
	mustRun(t, s, `modify ltm dns cache validating-resolver vr1 trust-anchors { ". 3600 IN DS 21735 15 2 7D96CE32CCD667CE9C5C0629C08D1DC610CCE9F41AE6E3E9E1EE3733D0624001" } ignore-cd yes`)
}
