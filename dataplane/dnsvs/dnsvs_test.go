package dnsvs

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/recursor"
	"github.com/openltm/openltm/rules"
)

func rr(t *testing.T, s string) dns.RR {
	t.Helper()
	x, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func query(name string, qtype uint16, do bool) *dns.Msg {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	if do {
		q.SetEdns0(1232, true)
	}
	return q
}

func answer(q *dns.Msg, rcode int, rrs ...dns.RR) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(q, rcode)
	for _, x := range rrs {
		if _, ok := x.(*dns.SOA); ok {
			m.Ns = append(m.Ns, x)
		} else {
			m.Answer = append(m.Answer, x)
		}
	}
	return m
}

func TestCache(t *testing.T) {
	soa := "example.net. 600 IN SOA ns.example.net. h.example.net. 1 60 60 60 45"
	tests := []struct {
		name    string
		put     *dns.Msg // answer kept for stored (nil: none)
		rcode   int
		rrs     []string
		ask     *dns.Msg
		after   time.Duration // since the answer was kept
		wantTTL int           // -1: no answer from the cache
	}{
		{name: "kept", rcode: dns.RcodeSuccess, rrs: []string{"a.example.net. 60 IN A 192.0.2.1"}, ask: query("a.example.net.", dns.TypeA, false), after: 10 * time.Second, wantTTL: 50},
		{name: "name case does not matter", rcode: dns.RcodeSuccess, rrs: []string{"a.example.net. 60 IN A 192.0.2.1"}, ask: query("A.Example.NET.", dns.TypeA, false), wantTTL: 60},
		{name: "expired", rcode: dns.RcodeSuccess, rrs: []string{"a.example.net. 60 IN A 192.0.2.1"}, ask: query("a.example.net.", dns.TypeA, false), after: 60 * time.Second, wantTTL: -1},
		{name: "smallest TTL decides", rcode: dns.RcodeSuccess, rrs: []string{"a.example.net. 60 IN A 192.0.2.1", "a.example.net. 5 IN A 192.0.2.2"}, ask: query("a.example.net.", dns.TypeA, false), after: 6 * time.Second, wantTTL: -1},
		{name: "another type", rcode: dns.RcodeSuccess, rrs: []string{"a.example.net. 60 IN A 192.0.2.1"}, ask: query("a.example.net.", dns.TypeAAAA, false), wantTTL: -1},
		{name: "DO bit apart", rcode: dns.RcodeSuccess, rrs: []string{"a.example.net. 60 IN A 192.0.2.1"}, ask: query("a.example.net.", dns.TypeA, true), wantTTL: -1},
		{name: "negative: SOA minimum", rcode: dns.RcodeNameError, rrs: []string{soa}, ask: query("a.example.net.", dns.TypeA, false), after: 40 * time.Second, wantTTL: 5},
		{name: "negative expired", rcode: dns.RcodeNameError, rrs: []string{soa}, ask: query("a.example.net.", dns.TypeA, false), after: 45 * time.Second, wantTTL: -1},
		{name: "SERVFAIL not kept", rcode: dns.RcodeServerFailure, rrs: []string{soa}, ask: query("a.example.net.", dns.TypeA, false), wantTTL: -1},
		{name: "TTL 0 not kept", rcode: dns.RcodeSuccess, rrs: []string{"a.example.net. 0 IN A 192.0.2.1"}, ask: query("a.example.net.", dns.TypeA, false), wantTTL: -1},
		{name: "no record not kept", rcode: dns.RcodeSuccess, ask: query("a.example.net.", dns.TypeA, false), wantTTL: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1_000_000, 0)
			c := newCache(&config.DNSCache{Name: "/Common/c"})
			c.now = func() time.Time { return now }
			stored := query("a.example.net.", dns.TypeA, false)
			var rrs []dns.RR
			for _, s := range tt.rrs {
				rrs = append(rrs, rr(t, s))
			}
			c.Put(stored, answer(stored, tt.rcode, rrs...))
			now = now.Add(tt.after)
			tt.ask.Id = 4242
			m := c.Get(tt.ask)
			if tt.wantTTL < 0 {
				if m != nil {
					t.Fatalf("an answer from the cache: %v", m)
				}
				return
			}
			if m == nil {
				t.Fatal("no answer from the cache")
			}
			if m.Id != 4242 || m.Question[0].Name != tt.ask.Question[0].Name {
				t.Errorf("id %d question %s, want the query's", m.Id, m.Question[0].Name)
			}
			all := append(append([]dns.RR{}, m.Answer...), m.Ns...)
			if len(all) == 0 || int(all[0].Header().Ttl) != tt.wantTTL {
				t.Errorf("records %v, want the first at TTL %d", all, tt.wantTTL)
			}
		})
	}
}

func TestCacheSizeBound(t *testing.T) {
	c := newCache(&config.DNSCache{Name: "/Common/c", MsgCacheSize: 120})
	names := []string{"a.example.net.", "b.example.net.", "c.example.net.", "d.example.net.", "e.example.net."}
	for _, n := range names {
		q := query(n, dns.TypeA, false)
		c.Put(q, answer(q, dns.RcodeSuccess, rr(t, n+" 60 IN A 192.0.2.1")))
	}
	if c.size > 120 {
		t.Fatalf("the cache holds %d bytes over its 120", c.size)
	}
	if c.Get(query(names[len(names)-1], dns.TypeA, false)) == nil {
		t.Error("the newest answer was dropped")
	}
	if c.Get(query(names[0], dns.TypeA, false)) != nil {
		t.Error("the oldest answer was kept past the size")
	}
}

func TestForwardZone(t *testing.T) {
	a, b := netip.MustParseAddrPort("127.23.0.1:53"), netip.MustParseAddrPort("127.23.0.2:53")
	zones := map[string][]netip.AddrPort{"example.net.": {a}, "in.example.net.": {b}}
	for _, tt := range []struct {
		name string
		want []netip.AddrPort
	}{
		{"www.example.net.", []netip.AddrPort{a}},
		{"example.net", []netip.AddrPort{a}},
		{"x.IN.example.net.", []netip.AddrPort{b}},
		{"example.org.", nil},
		{".", nil},
	} {
		got := forwardZone(zones, tt.name)
		if len(got) != len(tt.want) || len(got) > 0 && got[0] != tt.want[0] {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSynthesize(t *testing.T) {
	for _, tt := range []struct{ prefix, a, want string }{
		{"64:ff9b::", "192.0.2.33", "64:ff9b::c000:221"},
		{"2001:db8:64::", "10.1.2.3", "2001:db8:64::a01:203"},
	} {
		a := rr(t, "x.example.net. 60 IN A "+tt.a).(*dns.A)
		got := synthesize(netip.MustParseAddr(tt.prefix), a)
		if got.AAAA.String() != tt.want || got.Hdr.Ttl != 60 || got.Hdr.Rrtype != dns.TypeAAAA {
			t.Errorf("%s in %s: %v, want %s", tt.a, tt.prefix, got, tt.want)
		}
	}
}

// TestDecideSteps: the profile's steps short of the pool, without a GSLB.
func TestDecideSteps(t *testing.T) {
	e := New(nil)
	for _, tt := range []struct {
		unhandled string
		q         *dns.Msg
		step      step
		rcode     int
		counts    ProfileCounts // the profile's counters after it
	}{
		{"allow", query("a.example.net.", dns.TypeA, false), stepForward, 0, ProfileCounts{Queries: 1, Allow: 1}},
		{"drop", query("a.example.net.", dns.TypeA, false), stepDrop, 0, ProfileCounts{Queries: 1, Drop: 1}},
		{"reject", query("a.example.net.", dns.TypeA, false), stepAnswer, dns.RcodeRefused, ProfileCounts{Queries: 1, Reject: 1}},
		{"hint", query("a.example.net.", dns.TypeA, false), stepAnswer, dns.RcodeSuccess, ProfileCounts{Queries: 1, Hint: 1}},
		{"noerror", query("a.example.net.", dns.TypeA, true), stepAnswer, dns.RcodeSuccess, ProfileCounts{Queries: 1, NoError: 1}},
		{"allow", func() *dns.Msg { q := query("a.example.net.", dns.TypeA, false); q.Opcode = dns.OpcodeNotify; return q }(), stepAnswer, dns.RcodeNotImplemented, ProfileCounts{Queries: 1, Malformed: 1}},
		{"allow", func() *dns.Msg { q := query("a.example.net.", dns.TypeA, false); q.Question = nil; return q }(), stepAnswer, dns.RcodeFormatError, ProfileCounts{Queries: 1, Malformed: 1}},
		{"allow", func() *dns.Msg { q := query("a.example.net.", dns.TypeA, false); q.Response = true; return q }(), stepDrop, 0, ProfileCounts{}},
	} {
		p := &config.DNSProfile{Name: "/Common/dnsp", GTM: true, Express: true, Unhandled: tt.unhandled}
		s := e.Prepare([]*config.DNSProfile{p})[p]
		if e.ProfileStats(p.Name) != s.st {
			t.Fatal("the profile's counters are not the engine's")
		}
		s.st.Reset()
		m, st, _, _ := s.decide(tt.q, nil, netip.MustParseAddr("127.23.0.5"), true, gslb.Services{})
		if got := s.st.Counts(); got != tt.counts {
			t.Errorf("%s, opcode %d: counts %+v, want %+v", tt.unhandled, tt.q.Opcode, got, tt.counts)
		}
		if st != tt.step || st == stepAnswer && m.Rcode != tt.rcode {
			t.Errorf("%s, opcode %d: step %d %v, want %d rcode %d", tt.unhandled, tt.q.Opcode, st, m, tt.step, tt.rcode)
		}
		if st == stepAnswer && tt.q.IsEdns0() != nil && m.IsEdns0() == nil {
			t.Errorf("%s: the OPT record is not echoed", tt.unhandled)
		}
	}
}

// gslbStub answers every name, as a wide IP would (as a zone would
// when gtm is off), and keeps the steps it was let run.
type gslbStub struct {
	asked                int
	gtm, express, dnssec bool
}

func (g *gslbStub) AnswerVirtual(r *dns.Msg, _ netip.Addr, _, gtm, express, dnssec bool) (*dns.Msg, bool, bool, string) {
	g.asked++
	g.gtm, g.express, g.dnssec = gtm, express, dnssec
	if !gtm && !express {
		return nil, false, false, ""
	}
	m := new(dns.Msg)
	m.SetReply(r)
	if !gtm {
		return m, true, true, gslb.OriginDNSX
	}
	return m, true, true, gslb.OriginGTM
}

func (g *gslbStub) VirtualRequest(*rules.Program, *dns.Msg, netip.Addr, netip.AddrPort, bool, func(uint16, string), rules.Cloner) (*gslb.VirtualRules, *dns.Msg, bool, bool) {
	return nil, nil, false, false
}

// TestProcessRD: with process-rd no a query asking for recursion goes
// past the wide IPs, zones and cache to unhandled-query-action.
func TestProcessRD(t *testing.T) {
	for _, tt := range []struct {
		noRD, rd bool
		gslb     bool // the stub answered
	}{
		{noRD: false, rd: true, gslb: true},
		{noRD: true, rd: false, gslb: true},
		{noRD: true, rd: true, gslb: false},
	} {
		e := New(nil)
		g := &gslbStub{}
		e.SetAnswerer(g)
		p := &config.DNSProfile{GTM: true, Express: true, Unhandled: "reject", NoProcessRD: tt.noRD}
		s := e.Prepare([]*config.DNSProfile{p})[p]
		q := query("www.example.com.", dns.TypeA, false)
		q.RecursionDesired = tt.rd
		m, st, _, _ := s.decide(q, nil, netip.MustParseAddr("127.23.0.5"), true, gslb.Services{})
		if (g.asked == 1) != tt.gslb || st != stepAnswer {
			t.Errorf("process-rd no %v, RD %v: GSLB asked %d times, step %d", tt.noRD, tt.rd, g.asked, st)
		}
		if !tt.gslb && m.Rcode != dns.RcodeRefused {
			t.Errorf("process-rd no, RD: rcode %s, want REFUSED", dns.RcodeToString[m.Rcode])
		}
	}
}

func TestRewriteAdditional(t *testing.T) {
	extra := []string{
		"mx1.example.net. 60 IN A 192.0.2.1",
		"mx2.example.net. 60 IN A 192.0.2.2",
		"mx2.example.net. 60 IN AAAA 2001:db8::2",
		"example.net. 60 IN TXT \"kept\"",
	}
	for _, tt := range []struct {
		mode string
		want []string // the section's rdata, in order
	}{
		{"v6-only", []string{"64:ff9b::c000:201", "2001:db8::2", "kept"}},
		{"v4-only", []string{"192.0.2.1", "192.0.2.2", "kept"}},
		{"any", []string{"192.0.2.1", "64:ff9b::c000:201", "192.0.2.2", "2001:db8::2", "kept"}},
	} {
		m := new(dns.Msg)
		for _, s := range extra {
			m.Extra = append(m.Extra, rr(t, s))
		}
		rewriteAdditional(tt.mode, WellKnownPrefix, m)
		var got []string
		for _, x := range m.Extra {
			switch x := x.(type) {
			case *dns.A:
				got = append(got, x.A.String())
			case *dns.AAAA:
				got = append(got, x.AAAA.String())
			case *dns.TXT:
				got = append(got, x.Txt[0])
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: %v, want %v", tt.mode, got, tt.want)
		}
	}
}

// TestCacheStats: each step's look-up or answer kept moves the counters
// show ltm dns cache prints.
func TestCacheStats(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	c := newCache(&config.DNSCache{Name: "/Common/c", MsgCacheSize: 120})
	c.now = func() time.Time { return now }
	put := func(n string, ttl string) {
		q := query(n, dns.TypeA, false)
		c.Put(q, answer(q, dns.RcodeSuccess, rr(t, n+" "+ttl+" IN A 192.0.2.1")))
	}
	get := func(n string) { c.Get(query(n, dns.TypeA, false)) }
	steps := []struct {
		name string
		do   func()
		want CacheStats // Bytes aside
	}{
		{"a miss", func() { get("a.example.net.") }, CacheStats{Misses: 1, MaxBytes: 120}},
		{"kept", func() { put("a.example.net.", "60") }, CacheStats{Misses: 1, Inserts: 1, Entries: 1, MaxBytes: 120}},
		{"a hit", func() { get("A.example.net.") }, CacheStats{Hits: 1, Misses: 1, Inserts: 1, Entries: 1, MaxBytes: 120}},
		{"TTL 0 is not an insert", func() { put("z.example.net.", "0") }, CacheStats{Hits: 1, Misses: 1, Inserts: 1, Entries: 1, MaxBytes: 120}},
		{"over the size: evicted", func() { put("b.example.net.", "5"); put("c.example.net.", "5") }, CacheStats{Hits: 1, Misses: 1, Inserts: 3, Evictions: 1, Entries: 2, MaxBytes: 120}},
		{"expired: a miss", func() { now = now.Add(5 * time.Second); get("c.example.net.") }, CacheStats{Hits: 1, Misses: 2, Inserts: 3, Evictions: 1, Expired: 1, Entries: 1, MaxBytes: 120}},
		{"reset", func() { c.ResetStats() }, CacheStats{Entries: 1, MaxBytes: 120}},
		{"flush", func() { c.Flush(); get("b.example.net.") }, CacheStats{Misses: 1, MaxBytes: 120}},
	}
	for _, st := range steps {
		st.do()
		got := c.Stats()
		if (got.Bytes == 0) != (got.Entries == 0) {
			t.Errorf("%s: %d bytes for %d entries", st.name, got.Bytes, got.Entries)
		}
		got.Bytes = 0
		if got != st.want {
			t.Errorf("%s: %+v, want %+v", st.name, got, st.want)
		}
	}
}

// TestCacheValidatingKey: a validating resolver's answers are kept apart
// by the query's AD and CD bits (AD is answered only to who asked, the
// unvalidated answer only to CD); other caches share them.
func TestCacheValidatingKey(t *testing.T) {
	for _, tc := range []struct {
		name             string
		validating       bool
		putAD, putCD     bool
		askAD, askCD     bool
		wantFromTheCache bool
	}{
		{"same bits", true, true, false, true, false, true},
		{"AD kept, asked without", true, true, false, false, false, false},
		{"CD kept, asked without", true, false, true, false, false, false},
		{"without, asked with CD", true, false, false, false, true, false},
		{"not validating: AD shared", false, true, false, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.DNSCache{Name: "/Common/c"}
			if tc.validating {
				cfg.Resolver = &recursor.Config{Validate: true}
			} else {
				cfg.Resolver = &recursor.Config{}
			}
			c := newCache(cfg)
			put := query("a.example.net.", dns.TypeA, false)
			put.AuthenticatedData, put.CheckingDisabled = tc.putAD, tc.putCD
			c.Put(put, answer(put, dns.RcodeSuccess, rr(t, "a.example.net. 60 IN A 192.0.2.1")))
			ask := query("a.example.net.", dns.TypeA, false)
			ask.AuthenticatedData, ask.CheckingDisabled = tc.askAD, tc.askCD
			if got := c.Get(ask) != nil; got != tc.wantFromTheCache {
				t.Errorf("answered from the cache: %v, want %v", got, tc.wantFromTheCache)
			}
		})
	}
}

// TestDecideServices: what a rule's DNS::disable and DNS::last_act ask
// of the steps, and the origin DNS::origin then reads.
func TestDecideServices(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		svc                  gslb.Services
		cached               bool // the cache holds the answer
		gtm, express, dnssec bool // what the GSLB was let do
		step                 step
		rcode                int
		origin               string
	}{
		{name: "profile's own", gtm: true, express: true, dnssec: true, step: stepAnswer, origin: gslb.OriginGTM},
		{name: "gtm off", svc: gslb.Services{Off: gslb.ServiceGTM}, express: true, dnssec: true, step: stepAnswer, origin: gslb.OriginDNSX},
		{name: "dnssec off", svc: gslb.Services{Off: gslb.ServiceDNSSEC}, gtm: true, express: true, step: stepAnswer, origin: gslb.OriginGTM},
		{name: "gtm and dnsx off: the cache", svc: gslb.Services{Off: gslb.ServiceGTM | gslb.ServiceDNSX}, cached: true, dnssec: true, step: stepAnswer, origin: gslb.OriginCache},
		{name: "all off: last action", svc: gslb.Services{Off: 0xf}, cached: true, step: stepAnswer, rcode: dns.RcodeRefused, origin: gslb.OriginLastAction},
		{name: "last_act drop", svc: gslb.Services{Off: gslb.ServiceGTM | gslb.ServiceDNSX | gslb.ServiceCache, LastAct: "drop"}, step: stepDrop},
		{name: "last_act allow", svc: gslb.Services{Off: gslb.ServiceGTM | gslb.ServiceDNSX, LastAct: "allow"}, dnssec: true, step: stepForward, origin: gslb.OriginServer},
		{name: "last_act noerror", svc: gslb.Services{Off: gslb.ServiceGTM | gslb.ServiceDNSX, LastAct: "noerror"}, dnssec: true, step: stepAnswer, origin: gslb.OriginLastAction},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := New(nil)
			g := &gslbStub{}
			e.SetAnswerer(g)
			p := &config.DNSProfile{Name: "/Common/dnsp", GTM: true, Express: true, DNSSEC: true, Unhandled: "reject",
				Cache: &config.DNSCache{Name: "/Common/c", Kind: "transparent"}}
			s := e.Prepare([]*config.DNSProfile{p})[p]
			q := query("www.example.com.", dns.TypeA, false)
			if tt.cached {
				a := new(dns.Msg)
				a.SetReply(q)
				a.Answer = append(a.Answer, rr(t, "www.example.com. 60 IN A 192.0.2.9"))
				s.cache.Put(q, a)
			}
			m, st, origin, _ := s.decide(q, nil, netip.MustParseAddr("127.92.0.5"), true, tt.svc)
			if st != tt.step || origin != tt.origin {
				t.Fatalf("step %d origin %q, want %d %q", st, origin, tt.step, tt.origin)
			}
			if g.asked > 0 && (g.gtm != tt.gtm || g.express != tt.express || g.dnssec != tt.dnssec) {
				t.Errorf("GSLB let run gtm %v express %v dnssec %v, want %v %v %v", g.gtm, g.express, g.dnssec, tt.gtm, tt.express, tt.dnssec)
			}
			if g.asked == 0 && (tt.gtm || tt.express) {
				t.Errorf("the GSLB was not asked")
			}
			if st == stepAnswer && m.Rcode != tt.rcode {
				t.Errorf("rcode %s, want %s", dns.RcodeToString[m.Rcode], dns.RcodeToString[tt.rcode])
			}
		})
	}
}
