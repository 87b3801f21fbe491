package gslb

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The admission tests' topology, on 127.16.0.0/16: one datacenter, one
// server with virtual servers vs1..vs4 at 127.16.1.1-4:80, and two more
// for a second pool at 127.16.2.1-2:80. LDNS clients ask from 127.16.9.x.

var admitLDNS = netip.MustParseAddr("127.16.9.1")

func admitConfig() *Config {
	a := netip.MustParseAddr
	var vss []*VirtualServer
	for _, x := range []string{"127.16.1.1", "127.16.1.2", "127.16.1.3", "127.16.1.4", "127.16.2.1", "127.16.2.2"} {
		name := "vs" + strings.ReplaceAll(strings.TrimPrefix(x, "127.16."), ".", "_")
		vss = append(vss, &VirtualServer{Name: name, Destination: netip.AddrPortFrom(a(x), 80)})
	}
	member := func(vs string, order int) PoolMember {
		return PoolMember{Server: "/Common/ltm", VirtualServer: vs, Order: order}
	}
	return &Config{
		Datacenters: map[string]*Datacenter{"/Common/dc": {Name: "/Common/dc"}},
		Servers: map[string]*Host{"/Common/ltm": {Name: "/Common/ltm", Datacenter: "/Common/dc",
			Addresses: []netip.Addr{a("127.16.1.100")}, VirtualServers: vss}},
		Pools: map[string]*Pool{
			"/Common/main": {Name: "/Common/main", Mode: GlobalAvailability, Members: []PoolMember{
				member("vs1_1", 0), member("vs1_2", 1), member("vs1_3", 2)}},
			"/Common/spare": {Name: "/Common/spare", Mode: GlobalAvailability, Members: []PoolMember{member("vs2_1", 0)}},
		},
		WideIPs: map[string]*WideIP{"/Common/www.example.com": {Name: "/Common/www.example.com", PoolLBMode: GlobalAvailability,
			Pools: []WideIPPool{{Pool: "/Common/main", Order: 0}, {Pool: "/Common/spare", Order: 1}}}},
		Zones: []Zone{{Origin: "example.com", Data: "@ IN SOA ns1.example.com. h.example.com. 1 3600 600 86400 60\n@ IN NS ns1.example.com.\nns1 IN A 127.16.0.53\n"}},
	}
}

func memberStatus(t *testing.T, s *Server, pool, member string) ObjectStatus {
	t.Helper()
	for _, p := range s.Pools() {
		if p.Name != pool {
			continue
		}
		for _, m := range p.Members {
			if m.Member == member {
				return m.Status
			}
		}
	}
	t.Fatalf("no member %s in %s", member, pool)
	return ObjectStatus{}
}

// A member that went down under manual-resume stays out of the answers
// once it is up again, whatever told it down (its virtual server's
// report, its server's, its own monitor), until a configuration disables
// and enables it; without manual-resume it comes back by itself.
func TestManualResume(t *testing.T) {
	first := netip.MustParseAddr("127.16.1.1")
	second := netip.MustParseAddr("127.16.1.2")
	cases := []struct {
		name   string
		resume bool
		held   netip.Addr // the answer while held
		down   func(s *Server)
		up     func(s *Server)
	}{
		{"vs reported down", true, second,
			func(s *Server) { s.SetVirtualServerMetrics("/Common/ltm", "vs1_1", VSMetrics{Status: StatusDown}) },
			func(s *Server) { s.SetVirtualServerMetrics("/Common/ltm", "vs1_1", VSMetrics{Status: StatusUp}) }},
		// every member of the pool is on that server: the next pool answers
		{"server down", true, netip.MustParseAddr("127.16.2.1"),
			func(s *Server) { s.SetServerStatus("/Common/ltm", StatusDown) },
			func(s *Server) { s.SetServerStatus("/Common/ltm", StatusUp) }},
		{"without manual-resume", false, netip.Addr{},
			func(s *Server) { s.SetVirtualServerMetrics("/Common/ltm", "vs1_1", VSMetrics{Status: StatusDown}) },
			func(s *Server) { s.SetVirtualServerMetrics("/Common/ltm", "vs1_1", VSMetrics{Status: StatusUp}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := admitConfig()
			cfg.Pools["/Common/main"].ManualResume = c.resume
			s := newServer(t, cfg, Options{})
			if got := askA(t, s, admitLDNS, "www.example.com."); got != first {
				t.Fatalf("before: %v, want %v", got, first)
			}
			c.down(s)
			if got := askA(t, s, admitLDNS, "www.example.com."); got == first {
				t.Fatalf("down: still %v", got)
			}
			c.up(s)
			got := askA(t, s, admitLDNS, "www.example.com.")
			st := memberStatus(t, s, "/Common/main", "/Common/ltm:vs1_1")
			if !c.resume {
				if got != first || st.Availability != Available {
					t.Fatalf("up again without manual-resume: %v, %+v", got, st)
				}
				return
			}
			if got != c.held {
				t.Fatalf("up again: %v, want %v (held)", got, c.held)
			}
			if st.Availability != Offline || st.State != "disabled" || st.Reason != reasonManualResume {
				t.Fatalf("held member's status: %+v", st)
			}
			// A commit that changes something else keeps the hold.
			cfg = admitConfig()
			cfg.Pools["/Common/main"].ManualResume = true
			cfg.Pools["/Common/main"].TTL = 60
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			if got := askA(t, s, admitLDNS, "www.example.com."); got != c.held {
				t.Fatalf("after another commit: %v, want %v (still held)", got, c.held)
			}
			// The operator disables, then enables the member.
			cfg = admitConfig()
			cfg.Pools["/Common/main"].ManualResume = true
			cfg.Pools["/Common/main"].Members[0].Disabled = true
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			if st := memberStatus(t, s, "/Common/main", "/Common/ltm:vs1_1"); st.Reason != reasonMemberOff {
				t.Fatalf("disabled: %+v", st)
			}
			cfg = admitConfig()
			cfg.Pools["/Common/main"].ManualResume = true
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			if got := askA(t, s, admitLDNS, "www.example.com."); got != first {
				t.Fatalf("re-enabled: %v, want %v", got, first)
			}
		})
	}
}

// A member's own monitor going down holds it too: a real TCP probe of a
// listener on loopback that goes away and comes back.
func TestManualResumeMonitor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.16.1.1:0")
	if err != nil {
		t.Skipf("cannot listen on 127.16.1.1: %v", err)
	}
	ap := ln.Addr().(*net.TCPAddr).AddrPort()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	cfg := admitConfig()
	cfg.Servers["/Common/ltm"].VirtualServers[0].Destination = ap
	p := cfg.Pools["/Common/main"]
	p.ManualResume = true
	p.Members[0].Monitor = Monitor{Type: MonitorTCP, Interval: 50 * time.Millisecond, Timeout: 120 * time.Millisecond}
	s := newServer(t, cfg, Options{})
	probe := func() Status {
		pl := s.plan.Load().pools["/Common/main"]
		return Status(pl.members[0].rt.probe.Load())
	}
	waitFor(t, "the member's monitor up", func() bool { return probe() == StatusUp })
	if got := askA(t, s, admitLDNS, "www.example.com."); got != ap.Addr() {
		t.Fatalf("up: %v", got)
	}
	ln.Close()
	waitFor(t, "the member's monitor down", func() bool { return probe() == StatusDown })
	ln2, err := net.Listen("tcp", ap.String())
	if err != nil {
		t.Skipf("cannot listen again on %v: %v", ap, err)
	}
	defer ln2.Close()
	go func() {
		for {
			c, err := ln2.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	waitFor(t, "the member's monitor up again", func() bool { return probe() == StatusUp })
	if got := askA(t, s, admitLDNS, "www.example.com."); got == ap.Addr() {
		t.Fatalf("monitor up again: answered %v, want it held", got)
	}
	if st := memberStatus(t, s, "/Common/main", "/Common/ltm:vs1_1"); st.Reason != reasonManualResume {
		t.Fatalf("status: %+v", st)
	}
}

// min-members-up makes a pool with too few members available unavailable
// to the wide IP: the next pool answers.
func TestMinMembersUp(t *testing.T) {
	mainAddr := netip.MustParseAddr("127.16.1.2") // vs1_1 is down in every case
	spare := netip.MustParseAddr("127.16.2.1")
	cases := []struct {
		mode  MinUpMode
		value int
		downs int // members down, from the first
		want  netip.Addr
	}{
		{"", 0, 1, mainAddr},
		{MinUpOff, 3, 1, mainAddr},
		{MinUpAtLeast, 2, 1, mainAddr},
		{MinUpAtLeast, 3, 1, spare},
		{MinUpAtLeast, 0, 1, mainAddr},
		{MinUpPercent, 66, 1, mainAddr}, // 66 % of 3 is 1.98: 2 needed, 2 up
		{MinUpPercent, 67, 1, spare},    // 2.01: 3 needed
		{MinUpPercent, 34, 2, spare},    // 1.02: 2 needed, 1 up
		{MinUpPercent, 33, 2, netip.MustParseAddr("127.16.1.3")},
		{MinUpPercent, 100, 0, netip.MustParseAddr("127.16.1.1")},
	}
	for _, c := range cases {
		t.Run(string(c.mode)+"_"+strings.Repeat("x", c.value%10)+"_"+string(rune('0'+c.downs)), func(t *testing.T) {
			cfg := admitConfig()
			p := cfg.Pools["/Common/main"]
			p.MinUpMode, p.MinUpValue = c.mode, c.value
			s := newServer(t, cfg, Options{})
			for i := range c.downs {
				s.SetVirtualServerMetrics("/Common/ltm", p.Members[i].VirtualServer, VSMetrics{Status: StatusDown})
			}
			if got := askA(t, s, admitLDNS, "www.example.com."); got != c.want {
				t.Fatalf("%s %d with %d down: %v, want %v", c.mode, c.value, c.downs, got, c.want)
			}
			ps := s.Pools()
			var st ObjectStatus
			for _, x := range ps {
				if x.Name == "/Common/main" {
					st = x.Status
				}
			}
			if unavailable := c.want == spare; unavailable != (st.Reason == reasonPoolMinUp) {
				t.Fatalf("pool status %+v", st)
			}
		})
	}
}

// A name pool (CNAME) counts its available names against min-members-up.
func TestMinMembersUpNamePool(t *testing.T) {
	cfg := admitConfig()
	cfg.Pools[Key(TypeCNAME, "/Common/names")] = &Pool{Name: "/Common/names", Type: TypeCNAME, Mode: GlobalAvailability,
		MinUpMode: MinUpAtLeast, MinUpValue: 2,
		Members: []PoolMember{{Target: "a.example.net", StaticTarget: true}, {Target: "b.example.net", StaticTarget: true, Order: 1}}}
	cfg.Pools[Key(TypeCNAME, "/Common/names2")] = &Pool{Name: "/Common/names2", Type: TypeCNAME,
		Members: []PoolMember{{Target: "c.example.net", StaticTarget: true}}}
	cfg.WideIPs[Key(TypeCNAME, "/Common/cn.example.com")] = &WideIP{Name: "/Common/cn.example.com", Type: TypeCNAME, PoolLBMode: GlobalAvailability,
		Pools: []WideIPPool{{Pool: Key(TypeCNAME, "/Common/names")}, {Pool: Key(TypeCNAME, "/Common/names2"), Order: 1}}}
	for _, c := range []struct {
		disabled bool
		want     string
	}{{false, "a.example.net."}, {true, "c.example.net."}} {
		cfg.Pools[Key(TypeCNAME, "/Common/names")].Members[1].Disabled = c.disabled
		s := newServer(t, cfg, Options{})
		m := ask(t, s, admitLDNS, "cn.example.com.", dns.TypeCNAME)
		if m == nil || len(m.Answer) == 0 {
			t.Fatalf("no answer: %v", m)
		}
		if got := m.Answer[0].(*dns.CNAME).Target; got != c.want {
			t.Fatalf("second name disabled %v: %s, want %s", c.disabled, got, c.want)
		}
	}
}

// What BIG-IP refuses, Compile refuses.
func TestMinMembersUpRefused(t *testing.T) {
	for _, c := range []struct {
		mode  MinUpMode
		value int
		err   string
	}{
		{"number", 1, "not one of off, at-least, percent"},
		{MinUpPercent, 101, "not a percentage"},
		{MinUpPercent, -1, "not a percentage"},
		{MinUpAtLeast, -1, "negative"},
	} {
		cfg := admitConfig()
		cfg.Pools["/Common/main"].MinUpMode, cfg.Pools["/Common/main"].MinUpValue = c.mode, c.value
		if _, err := Compile(cfg); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %d: %v, want %q", c.mode, c.value, err, c.err)
		}
	}
}

// dynamic-ratio shares a dynamic method's answers in proportion to the
// members' metrics instead of giving every answer to the best.
func TestDynamicRatio(t *testing.T) {
	metrics := map[string]VSMetrics{
		"vs1_1": {Connections: 9, PacketRate: 100, Bps: 1000, Capacity: 1},
		"vs1_2": {Connections: 29, PacketRate: 300, Bps: 1000, Capacity: 3},
		"vs1_3": {Connections: 99, PacketRate: 100, Bps: 1000, Capacity: 0},
	}
	const n = 1000
	cases := []struct {
		mode    Mode
		dynamic bool
		qos     *QoSWeights
		want    [3]float64 // expected shares of vs1_1..3
	}{
		{LeastConnections, false, nil, [3]float64{1, 0, 0}},
		// weights (9+1)/(x+1): 1, 1/3, 1/10
		{LeastConnections, true, nil, [3]float64{1 / 1.4333, 0.3333 / 1.4333, 0.1 / 1.4333}},
		// weights (100+1)/(x+1): 1, 101/301, 1
		{PacketRate, true, nil, [3]float64{1 / 2.3355, 0.3355 / 2.3355, 1 / 2.3355}},
		// capacity: highest is best; 0 is not reported (never chosen)
		{VirtualServerCapacity, true, nil, [3]float64{0.25, 0.75, 0}},
		{QualityOfService, false, &QoSWeights{VSCapacity: 1}, [3]float64{0, 1, 0}},
		{QualityOfService, true, &QoSWeights{VSCapacity: 1}, [3]float64{0.25, 0.75, 0}},
	}
	for _, c := range cases {
		name := string(c.mode)
		if c.dynamic {
			name += "_dynamic"
		}
		t.Run(name, func(t *testing.T) {
			cfg := admitConfig()
			p := cfg.Pools["/Common/main"]
			p.Mode, p.Alternate, p.DynamicRatio, p.QoS = c.mode, None, c.dynamic, c.qos
			s := newServer(t, cfg, Options{})
			for vs, m := range metrics {
				s.SetVirtualServerMetrics("/Common/ltm", vs, m)
			}
			got := map[netip.Addr]int{}
			for range n {
				got[askA(t, s, admitLDNS, "www.example.com.")]++
			}
			for i, share := range c.want {
				a := netip.AddrFrom4([4]byte{127, 16, 1, byte(i + 1)})
				if d := float64(got[a])/n - share; d > 0.02 || d < -0.02 {
					t.Errorf("%v: %d of %d answers, want a share of %.3f (%v)", a, got[a], n, share, got)
				}
			}
		})
	}
}

// quality-of-service weighs the hit ratio (the share of the RTT probes
// over a member's path the LDNS answered) and the hops (fewer is better).
func TestQoSHitRatio(t *testing.T) {
	a := netip.MustParseAddr
	cases := []struct {
		name       string
		sent, hits [2]uint32
		hops       [2]int
		qos        QoSWeights
		want       netip.Addr
	}{
		{"second path answers more", [2]uint32{4, 4}, [2]uint32{1, 4}, [2]int{-1, -1}, QoSWeights{HitRatio: 5}, a("127.16.1.2")},
		{"first path answers more", [2]uint32{4, 4}, [2]uint32{3, 2}, [2]int{-1, -1}, QoSWeights{HitRatio: 5}, a("127.16.1.1")},
		{"fewer hops on the second", [2]uint32{4, 4}, [2]uint32{4, 4}, [2]int{6, 2}, QoSWeights{Hops: 1}, a("127.16.1.2")},
		{"hops outweighed by the hit ratio", [2]uint32{4, 4}, [2]uint32{4, 1}, [2]int{6, 2}, QoSWeights{Hops: 1, HitRatio: 5}, a("127.16.1.1")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := newClock()
			cfg := admitConfig()
			cfg.Datacenters["/Common/dc"].Prober = a("127.16.1.100")
			p := twoLinks(cfg)
			p.Mode, p.Alternate = QualityOfService, None
			p.QoS = &c.qos
			s := newServer(t, cfg, Options{Now: clock.Now})
			key := ldnsKey(admitLDNS, &s.plan.Load().settings)
			s.rtt.mu.Lock()
			s.rtt.m[key] = &ldnsEntry{key: key, addr: admitLDNS, first: clock.Now(), last: clock.Now(), probedAt: clock.Now(),
				paths: map[string]*pathRTT{
					"/Common/l1": {rtt: time.Millisecond, sent: c.sent[0], answered: c.hits[0], hops: c.hops[0]},
					"/Common/l2": {rtt: time.Millisecond, sent: c.sent[1], answered: c.hits[1], hops: c.hops[1]},
				}}
			s.rtt.mu.Unlock()
			for i := range 3 {
				if got := askA(t, s, admitLDNS, "www.example.com."); got != c.want {
					t.Fatalf("query %d: %v, want %v", i, got, c.want)
				}
			}
		})
	}
}
