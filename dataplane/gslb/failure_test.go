package gslb

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// askBoth asks over Answer and over the UDP wire path, which must agree.
func askBoth(t *testing.T, s *Server, name string) [2]*dns.Msg {
	t.Helper()
	byMsg := ask(t, s, ldnsCNC, name, dns.TypeA)
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	in, _ := q.Pack()
	var bc batchCtx
	bc.now = s.now()
	resp, send := s.answerUDP(in, ldnsCNC, nil, listenerKey{}, &bc)
	s.flushSeen(&bc)
	wire := new(dns.Msg)
	if !send || wire.Unpack(resp) != nil {
		t.Fatalf("wire answer %v", send)
	}
	return [2]*dns.Msg{byMsg, wire}
}

// failure-rcode-response answers a wide IP no member can serve with its
// RCODE and the zone's SOA at failure-rcode-ttl, where returning to DNS
// would answer NOERROR with nothing.
func TestWideIPFailureRcode(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	for i := range cfg.Pools["/Common/app_pool"].Members {
		cfg.Pools["/Common/app_pool"].Members[i].Disabled = true
	}
	s := newServer(t, cfg, Options{})
	for _, m := range askBoth(t, s, wideName) {
		if m.Rcode != dns.RcodeSuccess || len(m.Answer) != 0 {
			t.Errorf("returned to DNS: rcode %d answers %v", m.Rcode, m.Answer)
		}
	}
	w := cfg.WideIPs["/Common/www.example.com"]
	w.FailureResponse, w.FailureRcode, w.FailureTTL = true, dns.RcodeNameError, 7
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	for i, m := range askBoth(t, s, wideName) {
		if m.Rcode != dns.RcodeNameError || !m.Authoritative || len(m.Answer) != 0 || len(m.Ns) != 1 {
			t.Fatalf("path %d: %v", i, m)
		}
		if soa, ok := m.Ns[0].(*dns.SOA); !ok || soa.Hdr.Ttl != 7 || soa.Ns != "ns1.example.com." {
			t.Errorf("path %d: authority %v", i, m.Ns)
		}
	}
	// A disabled wide IP fails the same way.
	for i := range cfg.Pools["/Common/app_pool"].Members {
		cfg.Pools["/Common/app_pool"].Members[i].Disabled = false
	}
	w.Disabled, w.FailureRcode = true, dns.RcodeRefused
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if m := ask(t, s, ldnsCNC, wideName, dns.TypeA); m.Rcode != dns.RcodeRefused {
		t.Errorf("disabled wide IP: rcode %d", m.Rcode)
	}
}

// minimal-response disabled adds the zone's NS records and their
// addresses; enabled (the default) answers the A records alone.
func TestWideIPFullResponse(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	s := newServer(t, cfg, Options{})
	for i, m := range askBoth(t, s, wideName) {
		if len(m.Answer) != 1 || len(m.Ns) != 0 || len(m.Extra) != 0 {
			t.Errorf("minimal, path %d: %v", i, m)
		}
	}
	cfg.WideIPs["/Common/www.example.com"].FullResponse = true
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	for i, m := range askBoth(t, s, wideName) {
		if len(m.Answer) != 1 || len(m.Ns) != 2 || len(m.Extra) != 2 {
			t.Fatalf("full, path %d: %v", i, m)
		}
		if ns, ok := m.Ns[0].(*dns.NS); !ok || ns.Ns != "ns1.example.com." {
			t.Errorf("path %d: authority %v", i, m.Ns)
		}
		if a, ok := m.Extra[1].(*dns.A); !ok || a.A.String() != "127.0.80.2" {
			t.Errorf("path %d: additional %v", i, m.Extra)
		}
	}
	// With EDNS the OPT record stays last.
	q := new(dns.Msg)
	q.SetQuestion(wideName, dns.TypeA)
	q.SetEdns0(1232, false)
	m, _ := s.Answer(q, ldnsCNC, true)
	if n := len(m.Extra); n != 3 || m.Extra[n-1].Header().Rrtype != dns.TypeOPT {
		t.Errorf("EDNS: additional %v", m.Extra)
	}
}

// verify-member-availability disabled answers with members whatever their
// status says; a disabled member stays out.
func TestNoVerifyMemberAvailability(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	p := cfg.Pools["/Common/app_pool"]
	p.Mode = RoundRobin
	p.Members[3].Disabled = true // gz vs_ct
	s := newServer(t, cfg, Options{})
	s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_ct", VSMetrics{Status: StatusDown})
	if got := count(t, s, ldnsCNC, 6); got[bjCT] != 0 || got[gzCT] != 0 {
		t.Fatalf("verified: %v", got)
	}
	p.NoVerify = true
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_ct", VSMetrics{Status: StatusDown})
	if got := count(t, s, ldnsCNC, 6); got[bjCT] != 2 || got[gzCT] != 0 {
		t.Errorf("not verified: %v", got)
	}
}

// A pool's limits take it out of the answers while its members' reported
// traffic together reaches one: the wide IP answers from its next pool.
func TestPoolLimits(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	bjOnly := &Pool{Name: "/Common/bj_pool", Members: []PoolMember{{Server: "/Common/bj-ltm", VirtualServer: "vs_cnc"}}, LimitMaxConnections: 100}
	gzOnly := &Pool{Name: "/Common/gz_pool", Members: []PoolMember{{Server: "/Common/gz-ltm", VirtualServer: "vs_cnc"}}}
	cfg.Pools[bjOnly.Name], cfg.Pools[gzOnly.Name] = bjOnly, gzOnly
	w := cfg.WideIPs["/Common/www.example.com"]
	w.PoolLBMode = GlobalAvailability
	w.Pools = []WideIPPool{{Pool: bjOnly.Name}, {Pool: gzOnly.Name, Order: 1}}
	s := newServer(t, cfg, Options{})
	s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_cnc", VSMetrics{Connections: 99})
	if a := askA(t, s, ldnsCNC, wideName); a != bjCNC {
		t.Fatalf("under its limit: %v", a)
	}
	s.SetVirtualServerMetrics("/Common/bj-ltm", "vs_cnc", VSMetrics{Connections: 100})
	if a := askA(t, s, ldnsCNC, wideName); a != gzCNC {
		t.Fatalf("at its limit: %v", a)
	}
	for _, p := range s.Pools() {
		if p.Name == "/Common/bj_pool" && p.Status.Reason != reasonPoolLimit {
			t.Errorf("show: %+v", p.Status)
		}
	}
}
