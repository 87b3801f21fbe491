package recursor

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

// hierarchy starts a root, a TLD server and authoritative servers on
// 127.39.1.x:53: example.com (glue in bailiwick), example.net (its name
// server in example.org: out of bailiwick), a CNAME from example.com
// into example.org, tc.example.com answering UDP truncated, and
// lc.example.com answering with the name in lower case.
func hierarchy(t *testing.T) map[string]*authtest.Server {
	t.Helper()
	soa := func(z string) string {
		return z + " 3600 IN SOA ns." + strings.TrimPrefix(z, ".") + " h. 1 3600 600 86400 30"
	}
	servers := map[string][]string{
		"127.39.1.1:53": {soa("."), ". 3600 IN NS a.root.", "a.root. 3600 IN A 127.39.1.1",
			"com. 3600 IN NS ns.tld.", "org. 3600 IN NS ns.tld.", "net. 3600 IN NS ns.tld.", "ns.tld. 3600 IN A 127.39.1.2"},
		"127.39.1.2:53": {soa("com."), soa("org."), soa("net."),
			"example.com. 3600 IN NS ns1.example.com.", "ns1.example.com. 3600 IN A 127.39.1.3",
			"example.org. 3600 IN NS ns.example.org.", "ns.example.org. 3600 IN A 127.39.1.4",
			"example.net. 3600 IN NS ns.example.org."},
		"127.39.1.3:53": {soa("example.com."), "ns1.example.com. 3600 IN A 127.39.1.3",
			"www.example.com. 300 IN A 127.39.9.1", "www.example.com. 300 IN A 127.39.9.2",
			"alias.example.com. 300 IN CNAME www.example.org.",
			"tc.example.com. 3600 IN NS ns.tc.example.com.", "ns.tc.example.com. 3600 IN A 127.39.1.6",
			"lc.example.com. 3600 IN NS ns.lc.example.com.", "ns.lc.example.com. 3600 IN A 127.39.1.7"},
		"127.39.1.4:53": {soa("example.org."), soa("example.net."), "ns.example.org. 3600 IN A 127.39.1.4",
			"www.example.org. 60 IN A 127.39.9.3", "host.example.net. 60 IN A 127.39.9.4"},
		"127.39.1.6:53": {soa("tc.example.com."), "big.tc.example.com. 60 IN A 127.39.9.6"},
		"127.39.1.7:53": {soa("lc.example.com."), "www.lc.example.com. 60 IN A 127.39.9.7"},
	}
	out := map[string]*authtest.Server{}
	for addr, recs := range servers {
		s, err := authtest.New(recs...)
		if err != nil {
			t.Fatal(err)
		}
		s.TruncateUDP = addr == "127.39.1.6:53"
		s.LowerCase = addr == "127.39.1.7:53"
		if err := s.Start(addr); err != nil {
			t.Skipf("cannot serve DNS on %s (port 53 needs privileges): %v", addr, err)
		}
		t.Cleanup(s.Close)
		out[addr] = s
	}
	return out
}

func config() Config {
	return Config{RootHints: []netip.AddrPort{netip.MustParseAddrPort("127.39.1.1:53")}, IPv4: true, IPv6: true, UDP: true, TCP: true, Randomize: true, Timeout: time.Second}
}

func ask(t *testing.T, r *Resolver, name string, qtype uint16) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := r.Resolve(ctx, q)
	if err != nil {
		return "error " + err.Error()
	}
	var parts []string
	parts = append(parts, dns.RcodeToString[m.Rcode])
	for _, rr := range m.Answer {
		switch v := rr.(type) {
		case *dns.A:
			parts = append(parts, v.A.String())
		case *dns.CNAME:
			parts = append(parts, "cname:"+v.Target)
		case *dns.PTR:
			parts = append(parts, "ptr:"+v.Ptr)
		default:
			parts = append(parts, dns.TypeToString[rr.Header().Rrtype])
		}
	}
	if len(m.Answer) == 0 && len(m.Ns) > 0 {
		parts = append(parts, "soa:"+m.Ns[0].Header().Name)
	}
	return strings.Join(parts, " ")
}

// TestResolve: iterative resolution from the root hints.
func TestResolve(t *testing.T) {
	srv := hierarchy(t)
	r := New(config())
	for _, tt := range []struct{ name, want string }{
		{"www.example.com.", "NOERROR 127.39.9.1 127.39.9.2"},
		{"WwW.Example.COM.", "NOERROR 127.39.9.1 127.39.9.2"},               // from the rrset cache
		{"host.example.net.", "NOERROR 127.39.9.4"},                         // name server out of bailiwick
		{"alias.example.com.", "NOERROR cname:www.example.org. 127.39.9.3"}, // CNAME across zones
		{"nope.example.com.", "NXDOMAIN soa:example.com."},
		{"nope.example.org.", "NXDOMAIN soa:example.org."},
		{"big.tc.example.com.", "NOERROR 127.39.9.6"}, // TC: again over TCP
		{"www.lc.example.com.", "error " + ErrMismatch.Error()},
	} {
		if got := ask(t, r, tt.name, dns.TypeA); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := ask(t, r, "www.example.com.", dns.TypeMX); got != "NOERROR soa:example.com." {
		t.Errorf("www.example.com MX: %q, want NODATA", got)
	}
	if got := ask(t, r, "example.com.", dns.TypeAXFR); got != "REFUSED" {
		t.Errorf("example.com AXFR: %q, want REFUSED", got)
	}
	if n := srv["127.39.1.6:53"].TCP.Load(); n == 0 {
		t.Errorf("the truncating server got no TCP query")
	}
	// The root and TLD were asked once per delegation: later names under
	// example.com go straight to its server.
	root := srv["127.39.1.1:53"].Queries.Load()
	ask(t, r, "other.example.com.", dns.TypeA)
	if n := srv["127.39.1.1:53"].Queries.Load(); n != root {
		t.Errorf("the root was asked again (%d queries, then %d)", root, n)
	}
	if _, _, zones, _ := r.CacheSizes(); zones == 0 {
		t.Errorf("no delegation kept")
	}
}

// TestResolveSettings: use-udp/tcp/ipv4/ipv6, randomize-query-name-case,
// rrset-rotate, the caches' bounds.
func TestResolveSettings(t *testing.T) {
	srv := hierarchy(t)
	for _, tt := range []struct {
		what string
		set  func(*Config)
		name string
		want string
	}{
		{"0x20 off: a server that lowers the case answers", func(c *Config) { c.Randomize = false }, "www.lc.example.com.", "NOERROR 127.39.9.7"},
		{"use-tcp no: a truncated answer is all there is", func(c *Config) { c.TCP = false }, "big.tc.example.com.", "NOERROR"},
		{"use-udp no: TCP only", func(c *Config) { c.UDP = false }, "www.example.com.", "NOERROR 127.39.9.1 127.39.9.2"},
		{"use-ipv4 no: no server can be asked", func(c *Config) { c.IPv4 = false }, "www.example.com.", "error " + ErrNoServer.Error()},
		{"tiny caches still resolve", func(c *Config) { c.NSCount, c.RRsetBytes = 1, 40 }, "host.example.net.", "NOERROR 127.39.9.4"},
		{"max-concurrent-udp 1", func(c *Config) { c.MaxUDP, c.MaxTCP = 1, 1 }, "alias.example.com.", "NOERROR cname:www.example.org. 127.39.9.3"},
	} {
		c := config()
		tt.set(&c)
		before := srv["127.39.1.1:53"].TCP.Load() + srv["127.39.1.3:53"].TCP.Load()
		if got := ask(t, New(c), tt.name, dns.TypeA); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.what, got, tt.want)
		}
		after := srv["127.39.1.1:53"].TCP.Load() + srv["127.39.1.3:53"].TCP.Load()
		if !c.UDP && after == before {
			t.Errorf("%s: no query went over TCP", tt.what)
		}
	}
	// rrset-rotate query-id: the kept set is answered in turns.
	c := config()
	c.Rotate = true
	r := New(c)
	ask(t, r, "www.example.com.", dns.TypeA)
	firsts := map[string]bool{}
	for id := range uint16(4) {
		q := new(dns.Msg)
		q.SetQuestion("www.example.com.", dns.TypeA)
		q.Id = id
		m, err := r.Resolve(context.Background(), q)
		if err != nil || len(m.Answer) != 2 {
			t.Fatalf("rotate: %v %v", m, err)
		}
		firsts[m.Answer[0].(*dns.A).A.String()] = true
	}
	if len(firsts) != 2 {
		t.Errorf("rrset-rotate query-id: the first address was always one of %v", firsts)
	}
	if st := r.Stats(); st.RRsetHits.Load() < 4 {
		t.Errorf("rrset hits %d, want 4 or more", st.RRsetHits.Load())
	}
}

// TestLocalZones: local-zones' types and answer-default-zones, answered
// without asking (the root hints here answer nothing).
func TestLocalZones(t *testing.T) {
	rr := func(s string) dns.RR { r, _ := dns.NewRR(s); return r }
	c := Config{RootHints: []netip.AddrPort{netip.MustParseAddrPort("127.39.1.250:53")}, Timeout: 200 * time.Millisecond, DefaultZones: true,
		LocalZones: []LocalZone{
			{Name: "st.example.", Type: "static", Records: []dns.RR{rr("st.example. 60 IN SOA ns. h. 1 1 1 1 60"), rr("a.st.example. 60 IN A 127.39.8.1")}},
			{Name: "tr.example.", Type: "transparent", Records: []dns.RR{rr("a.tr.example. 60 IN A 127.39.8.2")}},
			{Name: "tt.example.", Type: "type-transparent", Records: []dns.RR{rr("a.tt.example. 60 IN A 127.39.8.3")}},
			{Name: "rd.example.", Type: "redirect", Records: []dns.RR{rr("rd.example. 60 IN A 127.39.8.4")}},
			{Name: "rf.example.", Type: "refuse"},
			{Name: "dn.example.", Type: "deny"},
		}}
	r := New(c)
	for _, tt := range []struct {
		name  string
		qtype uint16
		want  string
	}{
		{"a.st.example.", dns.TypeA, "NOERROR 127.39.8.1"},
		{"a.st.example.", dns.TypeMX, "NOERROR soa:st.example."},
		{"b.st.example.", dns.TypeA, "NXDOMAIN soa:st.example."},
		{"a.tr.example.", dns.TypeA, "NOERROR 127.39.8.2"},
		{"a.tr.example.", dns.TypeMX, "NOERROR"},             // the name is local: NODATA
		{"b.tr.example.", dns.TypeA, "error"},                // resolved: nothing answers
		{"a.tt.example.", dns.TypeMX, "error"},               // type-transparent: resolved
		{"x.y.rd.example.", dns.TypeA, "NOERROR 127.39.8.4"}, // redirect: the apex's data
		{"x.rf.example.", dns.TypeA, "REFUSED"},
		{"x.dn.example.", dns.TypeA, "error " + ErrDrop.Error()},
		{"localhost.", dns.TypeA, "NOERROR 127.0.0.1"},
		{"1.0.0.127.in-addr.arpa.", dns.TypePTR, "NOERROR ptr:localhost."},
		{"5.1.168.192.in-addr.arpa.", dns.TypePTR, "NXDOMAIN soa:168.192.in-addr.arpa."},
		{"1.0.20.172.in-addr.arpa.", dns.TypePTR, "NXDOMAIN soa:20.172.in-addr.arpa."},
	} {
		got := ask(t, r, tt.name, tt.qtype)
		if got != tt.want && !(tt.want == "error" && strings.HasPrefix(got, "error")) {
			t.Errorf("%s %s: %q, want %q", tt.name, dns.TypeToString[tt.qtype], got, tt.want)
		}
	}
	if got := ask(t, New(Config{RootHints: c.RootHints, Timeout: c.Timeout}), "localhost.", dns.TypeA); !strings.HasPrefix(got, "error") {
		t.Errorf("without answer-default-zones localhost was answered: %q", got)
	}
}

func TestRandomCase(t *testing.T) {
	for _, name := range []string{"www.example.com.", "a.", "1.2.3.4.in-addr.arpa."} {
		for range 50 {
			got := RandomCase(name)
			if !strings.EqualFold(got, name) || got == name {
				t.Fatalf("RandomCase(%q) = %q", name, got)
			}
		}
	}
	if got := RandomCase("1.2."); got != "1.2." {
		t.Errorf("RandomCase(1.2.) = %q", got)
	}
}

// TestConcurrencySlots: with max-concurrent-udp 1, a second query waits
// allowed-query-time for the slot the first holds, then is given up.
func TestConcurrencySlots(t *testing.T) {
	mute, err := net.ListenPacket("udp", "127.39.1.251:53")
	if err != nil {
		t.Skipf("cannot listen on 127.39.1.251:53: %v", err)
	}
	defer mute.Close()
	c := Config{RootHints: []netip.AddrPort{netip.MustParseAddrPort("127.39.1.251:53")}, MaxUDP: 1, Wait: 50 * time.Millisecond, Timeout: 500 * time.Millisecond}
	r := New(c)
	first := make(chan error, 1)
	go func() {
		q := new(dns.Msg)
		q.SetQuestion("a.example.", dns.TypeA)
		_, err := r.Resolve(context.Background(), q)
		first <- err
	}()
	// The first query holds the slot once the mute server has it.
	mute.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	if _, _, err := mute.ReadFrom(buf); err != nil {
		t.Fatalf("the first query never came: %v", err)
	}
	q := new(dns.Msg)
	q.SetQuestion("b.example.", dns.TypeA)
	if _, err := r.Resolve(context.Background(), q); !errors.Is(err, errSlotsBusy) {
		t.Errorf("second query: %v, want %v", err, errSlotsBusy)
	}
	mute.Close()
	if err := <-first; err == nil {
		t.Errorf("the first query got an answer from a mute server")
	}
}
