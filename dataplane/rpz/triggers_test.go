package rpz

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

func TestParsePrefix(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // "" for refused
	}{
		{"32.7.2.0.192", "192.0.2.7/32"},
		{"24.0.2.0.192", "192.0.2.0/24"},
		{"8.0.0.0.10", "10.0.0.0/8"},
		{"48.zz.db8.2001", "2001:db8::/48"},
		{"128.1.zz", "::1/128"},
		{"64.zz.db8.2001", "2001:db8::/64"},
		{"128.1.zz.db8.2001", "2001:db8::1/128"},
		{"128.8.7.6.5.4.3.2.1", "1:2:3:4:5:6:7:8/128"},
		{"24.7.2.0.192", ""},   // bits past the length
		{"33.7.2.0.192", ""},   // too long for IPv4
		{"0.0.0.0.0", ""},      // no length
		{"x.7.2.0.192", ""},    // not a number
		{"32.7.2.0", ""},       // three octets
		{"32.300.2.0.192", ""}, // not an octet
		{"48.zz.zz.2001", ""},  // two zero runs
		{"129.1.zz", ""},
		{"32", ""},
	} {
		p, ok := parsePrefix(tt.in)
		got := ""
		if ok {
			got = p.String()
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.in, got, tt.want)
		}
		if ok && ipOwner(p) != tt.in && tt.in != "128.8.7.6.5.4.3.2.1" {
			t.Errorf("%s: written back as %s", tt.in, ipOwner(p))
		}
	}
}

// triggerZones are two policy zones with every kind of trigger, for the
// precedence between kinds in one zone and between zones.
func triggerZones(t *testing.T) source {
	return source{
		"one.test.": zone(t, "one.test.",
			// client-IP: 127.0.0.0/24 NXDOMAIN, 127.0.0.9 passthru, 2001:db8::/32 drop
			"24.0.0.0.127.rpz-client-ip.one.test. 60 IN CNAME .",
			"32.9.0.0.127.rpz-client-ip.one.test. 60 IN CNAME rpz-passthru.",
			"32.zz.db8.2001.rpz-client-ip.one.test. 60 IN CNAME rpz-drop.",
			"bad.example.one.test. 60 IN CNAME *.",
			// a QNAME trigger for a name ending in a trigger label is no trigger
			"x.rpz-ip.one.test. 60 IN CNAME .",
			// rpz-ip: 192.0.2.0/24 NODATA, 192.0.2.128/25 NXDOMAIN
			"24.0.2.0.192.rpz-ip.one.test. 60 IN CNAME *.",
			"25.128.2.0.192.rpz-ip.one.test. 60 IN CNAME .",
			// nsdname: ns.evil.net exactly, anything under dark.net
			"ns.evil.net.rpz-nsdname.one.test. 60 IN CNAME .",
			"*.dark.net.rpz-nsdname.one.test. 60 IN A 192.0.2.99",
			// nsip: 198.51.100.0/24 NXDOMAIN, 198.51.100.7/32 drop
			"24.0.100.51.198.rpz-nsip.one.test. 60 IN CNAME .",
			"32.7.100.51.198.rpz-nsip.one.test. 60 IN CNAME rpz-drop.",
			// bad encodings: indexed as nothing
			"24.7.2.0.192.rpz-ip.one.test. 60 IN CNAME .",
			"zz.rpz-nsip.one.test. 60 IN CNAME .",
		),
		"two.test.": zone(t, "two.test.",
			"8.0.0.0.10.rpz-client-ip.two.test. 60 IN CNAME .",
			"late.example.two.test. 60 IN CNAME .",
			"16.0.0.51.198.rpz-nsip.two.test. 60 IN CNAME *.",
			"ns.grey.org.rpz-nsdname.two.test. 60 IN CNAME .",
			"32.5.0.0.203.rpz-ip.two.test. 60 IN CNAME .",
		),
	}
}

func TestCheckClientIP(t *testing.T) {
	src := triggerZones(t)
	p := New([]Zone{{Name: "one.test.", Action: ActionNXDOMAIN}, {Name: "two.test.", Action: ActionNXDOMAIN}})
	for _, tt := range []struct {
		client, qname, want, kind string
	}{
		{"127.0.0.5", "www.example.", "one.test nxdomain 24.0.0.0.127.rpz-client-ip", TriggerClientIP},
		{"127.0.0.9", "bad.example.", "one.test passthru 32.9.0.0.127.rpz-client-ip", TriggerClientIP}, // longest prefix; before the QNAME trigger
		{"127.0.1.5", "bad.example.", "one.test nodata bad.example", TriggerQNAME},
		{"2001:db8:1::7", "www.example.", "one.test drop 32.zz.db8.2001.rpz-client-ip", TriggerClientIP},
		{"::ffff:127.0.0.5", "www.example.", "one.test nxdomain 24.0.0.0.127.rpz-client-ip", TriggerClientIP},
		{"10.1.2.3", "bad.example.", "one.test nodata bad.example", TriggerQNAME}, // the first zone's QNAME before the second's client-IP
		{"10.1.2.3", "www.example.", "two.test nxdomain 8.0.0.0.10.rpz-client-ip", TriggerClientIP},
		{"192.0.2.1", "late.example.", "two.test nxdomain late.example", TriggerQNAME},
		{"192.0.2.1", "www.example.", "", ""},
		{"", "www.example.", "", ""},
		{"192.0.2.1", "x.rpz-ip.", "", ""},
	} {
		var a netip.Addr
		if tt.client != "" {
			a = netip.MustParseAddr(tt.client)
		}
		h := p.Check(src, a, tt.qname, true)
		if h.String() != tt.want || (h != nil && h.Kind != tt.kind) {
			t.Errorf("%s %s: %v, want %q (%s)", tt.client, tt.qname, h, tt.want, tt.kind)
		}
	}
	st := p.Stats()
	if st.ClientIP.Load() != 5 || st.QNAME.Load() != 3 {
		t.Errorf("client-IP %d, QNAME %d", st.ClientIP.Load(), st.QNAME.Load())
	}
	r := new(dns.Msg)
	r.SetQuestion("www.example.", dns.TypeA)
	if m := p.Check(src, netip.MustParseAddr("127.0.0.5"), "www.example.", true).Answer(r); m == nil || m.Rcode != dns.RcodeNameError {
		t.Errorf("a blocked client's answer: %v", m)
	}
}

func ns(zone string, names []string, addrs ...string) NameServers {
	c := NameServers{Zone: zone, Names: names}
	for _, a := range addrs {
		c.Addrs = append(c.Addrs, netip.AddrPortFrom(netip.MustParseAddr(a), 53))
	}
	return c
}

func TestCheckResponseNameServers(t *testing.T) {
	src := triggerZones(t)
	p := New([]Zone{{Name: "one.test.", Action: ActionNXDOMAIN}, {Name: "two.test.", Action: ActionNXDOMAIN}})
	if !p.WantsNameServers(src) {
		t.Fatal("zones with NSDNAME and NSIP triggers want no name servers")
	}
	com := ns("com.", []string{"ns.tld."}, "203.0.113.1")
	root := ns(".", []string{"ns.evil.net."}, "198.51.100.7") // the root's servers are not checked
	for _, tt := range []struct {
		name   string
		answer string // an A record's address, "" for none
		ns     []NameServers
		want   string
		kind   string
	}{
		{"no name servers", "203.0.113.9", nil, "", ""},
		{"clean", "203.0.113.9", []NameServers{ns("example.com.", []string{"ns1.example.com."}, "203.0.113.53"), com}, "", ""},
		{"nsdname exact", "", []NameServers{ns("example.com.", []string{"ns1.example.com.", "ns.evil.net."}, "203.0.113.53"), com}, "one.test nxdomain ns.evil.net.rpz-nsdname", TriggerNSDNAME},
		{"nsdname wildcard", "", []NameServers{ns("example.com.", []string{"a.ns.dark.net."}, "203.0.113.53")}, "one.test local-data *.dark.net.rpz-nsdname", TriggerNSDNAME},
		{"nsdname wildcard not the name itself", "", []NameServers{ns("example.com.", []string{"dark.net."}, "203.0.113.53")}, "", ""},
		{"nsdname of a parent zone", "", []NameServers{ns("www.example.com.", []string{"ns.example.com."}, "203.0.113.53"), ns("example.com.", []string{"NS.Evil.Net."}, "203.0.113.54")}, "one.test nxdomain ns.evil.net.rpz-nsdname", TriggerNSDNAME},
		{"nsdname smallest name first", "", []NameServers{ns("example.com.", []string{"z.dark.net.", "ns.evil.net.", "b.dark.net."})}, "one.test local-data *.dark.net.rpz-nsdname", TriggerNSDNAME},
		{"nsip longest prefix", "", []NameServers{ns("example.com.", []string{"ns1.example.com."}, "198.51.100.8", "198.51.100.7")}, "one.test drop 32.7.100.51.198.rpz-nsip", TriggerNSIP},
		{"nsip shorter prefix", "", []NameServers{ns("example.com.", []string{"ns1.example.com."}, "198.51.100.8")}, "one.test nxdomain 24.0.100.51.198.rpz-nsip", TriggerNSIP},
		{"ip before nsdname", "192.0.2.200", []NameServers{ns("example.com.", []string{"ns.evil.net."})}, "one.test nxdomain 25.128.2.0.192.rpz-ip", TriggerIP},
		{"nsdname before nsip", "", []NameServers{ns("example.com.", []string{"ns.evil.net."}, "198.51.100.7")}, "one.test nxdomain ns.evil.net.rpz-nsdname", TriggerNSDNAME},
		{"first zone's nsip before second zone's ip", "203.0.0.5", []NameServers{ns("example.com.", []string{"ns1.example.com."}, "198.51.100.8")}, "one.test nxdomain 24.0.100.51.198.rpz-nsip", TriggerNSIP},
		{"second zone's ip", "203.0.0.5", nil, "two.test nxdomain 32.5.0.0.203.rpz-ip", TriggerIP},
		{"second zone's nsip", "", []NameServers{ns("example.com.", []string{"ns1.example.com."}, "198.51.3.3")}, "two.test nodata 16.0.0.51.198.rpz-nsip", TriggerNSIP},
		{"second zone's nsdname", "", []NameServers{ns("example.org.", []string{"ns.grey.org."})}, "two.test nxdomain ns.grey.org.rpz-nsdname", TriggerNSDNAME},
		{"root and TLD servers are not checked", "", []NameServers{root, ns("net.", []string{"ns.evil.net."}, "198.51.100.7")}, "", ""},
	} {
		m := new(dns.Msg)
		m.SetQuestion("www.example.com.", dns.TypeA)
		if tt.answer != "" {
			rr, _ := dns.NewRR("www.example.com. 60 IN A " + tt.answer)
			m.Answer = []dns.RR{rr}
		}
		h := p.CheckResponse(src, m, tt.ns, true)
		if h.String() != tt.want || (h != nil && h.Kind != tt.kind) {
			t.Errorf("%s: %v (%v), want %q (%s)", tt.name, h, func() string {
				if h == nil {
					return ""
				}
				return h.Kind
			}(), tt.want, tt.kind)
		}
	}
	// The local data of an NSDNAME trigger answers in place of the answer.
	r := new(dns.Msg)
	r.SetQuestion("www.example.com.", dns.TypeA)
	h := p.CheckResponse(src, new(dns.Msg), []NameServers{ns("example.com.", []string{"a.dark.net."})}, true)
	if m := h.Answer(r); m == nil || len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "192.0.2.99" || m.Answer[0].Header().Name != "www.example.com." {
		t.Errorf("local data of an NSDNAME trigger: %v", m)
	}
	// Zones without them want none.
	plain := New([]Zone{{Name: "two.test.", Action: ActionNXDOMAIN}})
	if plain.WantsNameServers(source{"two.test.": zone(t, "two.test.", "a.example.two.test. 60 IN CNAME .")}) {
		t.Error("a zone of QNAME triggers wants name servers")
	}
}

// A transfer's new copy is indexed anew: its triggers act at once.
func TestIndexFollowsCopy(t *testing.T) {
	p := New([]Zone{{Name: "one.test.", Action: ActionNXDOMAIN}})
	client := netip.MustParseAddr("127.0.0.5")
	src := source{"one.test.": zone(t, "one.test.", "a.example.one.test. 60 IN CNAME .")}
	if h := p.Check(src, client, "www.example.", true); h != nil {
		t.Fatalf("hit %s", h)
	}
	src["one.test."] = zone(t, "one.test.", "32.5.0.0.127.rpz-client-ip.one.test. 60 IN CNAME .")
	if h := p.Check(src, client, "www.example.", true); h.String() != "one.test nxdomain 32.5.0.0.127.rpz-client-ip" {
		t.Fatalf("after the transfer: %v", h)
	}
	src["one.test."] = zone(t, "one.test.")
	if h := p.Check(src, client, "www.example.", true); h != nil {
		t.Fatalf("after the trigger went: %v", h)
	}
}

// The per-query cost of the triggers on a query and an answer no
// trigger holds, in zones that have every kind.
func BenchmarkTriggers(b *testing.B) {
	t := &testing.T{}
	src := triggerZones(t)
	p := New([]Zone{{Name: "one.test.", Action: ActionNXDOMAIN}, {Name: "two.test.", Action: ActionNXDOMAIN}})
	client := netip.MustParseAddr("192.0.2.1")
	m := new(dns.Msg)
	m.SetQuestion("www.example.com.", dns.TypeA)
	rr, _ := dns.NewRR("www.example.com. 60 IN A 203.0.113.9")
	m.Answer = []dns.RR{rr}
	nss := []NameServers{ns("example.com.", []string{"ns1.example.com.", "ns2.example.com."}, "203.0.113.53", "203.0.113.54")}
	var s Source = src
	b.Run("query", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p.Check(s, client, "www.example.com.", true) != nil {
				b.Fatal("hit")
			}
		}
	})
	b.Run("response", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p.CheckResponse(s, m, nss, true) != nil {
				b.Fatal("hit")
			}
		}
	})
	b.Run("none", func(b *testing.B) {
		var none *Policies
		b.ReportAllocs()
		for b.Loop() {
			if none.Check(s, client, "www.example.com.", true) != nil || none.CheckResponse(s, m, nss, true) != nil {
				b.Fatal("hit")
			}
		}
	})
}

// The triggers allocate nothing for a query and an answer none holds.
func TestTriggersAllocateNothing(t *testing.T) {
	src := triggerZones(t)
	p := New([]Zone{{Name: "one.test.", Action: ActionNXDOMAIN}, {Name: "two.test.", Action: ActionNXDOMAIN}})
	var s Source = src
	client := netip.MustParseAddr("192.0.2.1")
	m := new(dns.Msg)
	rr, _ := dns.NewRR("www.example.com. 60 IN A 203.0.113.9")
	m.Answer = []dns.RR{rr}
	nss := []NameServers{ns("example.com.", []string{"ns1.example.com."}, "203.0.113.53")}
	p.Check(s, client, "www.example.com.", true) // index the copies
	if n := testing.AllocsPerRun(100, func() { p.CheckResponse(s, m, nss, true) }); n != 0 {
		t.Errorf("CheckResponse allocates %v", n)
	}
	if n := testing.AllocsPerRun(100, func() { p.Check(s, client, "www.example.com.", true) }); n != 0 {
		t.Errorf("Check allocates %v", n)
	}
	if n := testing.AllocsPerRun(100, func() { p.WantsNameServers(s) }); n != 0 {
		t.Errorf("WantsNameServers allocates %v", n)
	}
}

// Queries on many goroutines while transfers replace the copy: each
// sees one copy's triggers, indexed once per copy.
func TestTriggersConcurrent(t *testing.T) {
	p := New([]Zone{{Name: "one.test.", Action: ActionNXDOMAIN}})
	copies := []*dnszone.Zone{
		zone(t, "one.test.", "32.5.0.0.127.rpz-client-ip.one.test. 60 IN CNAME .", "ns.evil.net.rpz-nsdname.one.test. 60 IN CNAME ."),
		zone(t, "one.test.", "32.5.0.0.127.rpz-client-ip.one.test. 60 IN CNAME *.", "*.evil.net.rpz-nsdname.one.test. 60 IN CNAME *."),
	}
	var cur atomic.Pointer[dnszone.Zone]
	cur.Store(copies[0])
	src := sourceFunc(func(string) *dnszone.Zone { return cur.Load() })
	client := netip.MustParseAddr("127.0.0.5")
	nss := []NameServers{ns("example.com.", []string{"ns.evil.net."})}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				if g == 0 && i%50 == 0 {
					cur.Store(copies[(i/50)%2])
				}
				if h := p.Check(src, client, "www.example.", true); h == nil || h.Kind != TriggerClientIP {
					t.Errorf("client-IP: %v", h)
					return
				}
				if h := p.CheckResponse(src, new(dns.Msg), nss, true); h == nil || h.Kind != TriggerNSDNAME {
					t.Errorf("NSDNAME: %v", h)
					return
				}
			}
		}()
	}
	wg.Wait()
}

type sourceFunc func(string) *dnszone.Zone

func (f sourceFunc) PolicyZone(name string) *dnszone.Zone { return f(name) }
