package gslb

import (
	"net/netip"
	"testing"
)

// cpuConfig is two datacenters with one gtm server each, ny with two
// virtual servers and la with one, in one pool (member order ny1, ny2,
// la1), on 127.61.0.0/16.
func cpuConfig(mode, alt, fb Mode) *Config {
	a := netip.MustParseAddr
	vs := func(name, addr string) *VirtualServer {
		return &VirtualServer{Name: name, Destination: netip.AddrPortFrom(a(addr), 80)}
	}
	return &Config{
		Datacenters: map[string]*Datacenter{
			"/Common/ny": {Name: "/Common/ny"},
			"/Common/la": {Name: "/Common/la"},
		},
		Servers: map[string]*Host{
			"/Common/ny-ltm": {Name: "/Common/ny-ltm", Datacenter: "/Common/ny", Addresses: []netip.Addr{a("127.61.1.1")},
				VirtualServers: []*VirtualServer{vs("vs1", "127.61.1.11"), vs("vs2", "127.61.1.12")}},
			"/Common/la-ltm": {Name: "/Common/la-ltm", Datacenter: "/Common/la", Addresses: []netip.Addr{a("127.61.2.1")},
				VirtualServers: []*VirtualServer{vs("vs1", "127.61.2.11")}},
		},
		Pools: map[string]*Pool{
			"/Common/p": {Name: "/Common/p", Mode: mode, Alternate: alt, Fallback: fb, Members: []PoolMember{
				{Server: "/Common/ny-ltm", VirtualServer: "vs1", Order: 0},
				{Server: "/Common/ny-ltm", VirtualServer: "vs2", Order: 1},
				{Server: "/Common/la-ltm", VirtualServer: "vs1", Order: 2},
			}},
		},
		WideIPs: map[string]*WideIP{
			"/Common/www.example.com": {Name: "/Common/www.example.com", Pools: []WideIPPool{{Pool: "/Common/p"}}},
		},
	}
}

// The cpu method answers with the virtual servers of the server that
// reports the least CPU busy, in turns when one server has several; a
// server with no figure is not ranked, and with none the next level
// answers, as the other dynamic methods do.
func TestCPUMethod(t *testing.T) {
	ny1, ny2, la1 := netip.MustParseAddr("127.61.1.11"), netip.MustParseAddr("127.61.1.12"), netip.MustParseAddr("127.61.2.11")
	ldns := netip.MustParseAddr("127.61.9.1")
	rep := func(cpu int64) *HostMetrics { return &HostMetrics{CPUUsage: cpu, MemAvail: -1, Bps: -1, Pps: -1} }
	cases := []struct {
		name          string
		mode, alt, fb Mode
		ny, la        *HostMetrics
		down          string // a server reported down
		want          map[netip.Addr]int
		level         int // 0 preferred, 1 alternate, 2 fallback
	}{
		{"la idler", CPU, GlobalAvailability, ReturnToDNS, rep(80), rep(20), "", map[netip.Addr]int{la1: 6}, 0},
		{"ny idler, its two in turns", CPU, GlobalAvailability, ReturnToDNS, rep(10), rep(90), "", map[netip.Addr]int{ny1: 3, ny2: 3}, 0},
		{"equal: all in turns", CPU, GlobalAvailability, ReturnToDNS, rep(50), rep(50), "", map[netip.Addr]int{ny1: 2, ny2: 2, la1: 2}, 0},
		{"only la reports", CPU, GlobalAvailability, ReturnToDNS, nil, rep(99), "", map[netip.Addr]int{la1: 6}, 0},
		{"unknown figure is not ranked", CPU, GlobalAvailability, ReturnToDNS, rep(-1), rep(70), "", map[netip.Addr]int{la1: 6}, 0},
		{"no report: alternate", CPU, GlobalAvailability, ReturnToDNS, nil, nil, "", map[netip.Addr]int{ny1: 6}, 1},
		{"idlest down: next idlest", CPU, GlobalAvailability, ReturnToDNS, rep(60), rep(5), "/Common/la-ltm", map[netip.Addr]int{ny1: 3, ny2: 3}, 0},
		{"fallback cpu", CompletionRate, None, CPU, rep(30), rep(20), "", map[netip.Addr]int{la1: 6}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, cpuConfig(c.mode, c.alt, c.fb), Options{})
			s.SetServerMetrics("/Common/ny-ltm", c.ny)
			s.SetServerMetrics("/Common/la-ltm", c.la)
			if c.down != "" {
				s.SetServerStatus(c.down, StatusDown)
			}
			got := map[netip.Addr]int{}
			for i := 0; i < 6; i++ {
				got[askA(t, s, ldns, "www.example.com.")]++
			}
			if len(got) != len(c.want) {
				t.Fatalf("answers %v, want %v", got, c.want)
			}
			for a, n := range c.want {
				if got[a] != n {
					t.Fatalf("answers %v, want %v", got, c.want)
				}
			}
			ps := s.Pools()[0]
			if n := [3]uint64{ps.Preferred, ps.AltCount, ps.FallCount}[c.level]; n != 6 {
				t.Errorf("preferred %d alternate %d fallback %d: want 6 at level %d", ps.Preferred, ps.AltCount, ps.FallCount, c.level)
			}
		})
	}
}

// With dynamic-ratio the cpu method shares the answers by each server's
// idleness, (best+1)/(cpu+1), rather than giving them all to the idlest.
func TestCPUMethodDynamicRatio(t *testing.T) {
	ny1, la1 := netip.MustParseAddr("127.61.1.11"), netip.MustParseAddr("127.61.2.11")
	cfg := cpuConfig(CPU, GlobalAvailability, ReturnToDNS)
	p := cfg.Pools["/Common/p"]
	p.DynamicRatio = true
	p.Members = []PoolMember{p.Members[0], p.Members[2]}
	s := newServer(t, cfg, Options{})
	s.SetServerMetrics("/Common/ny-ltm", &HostMetrics{CPUUsage: 9, MemAvail: -1, Bps: -1, Pps: -1})
	s.SetServerMetrics("/Common/la-ltm", &HostMetrics{CPUUsage: 29, MemAvail: -1, Bps: -1, Pps: -1})
	got := map[netip.Addr]int{}
	for i := 0; i < 40; i++ {
		got[askA(t, s, netip.MustParseAddr("127.61.9.1"), "www.example.com.")]++
	}
	// Weights 1 and 1/3: about 30 and 10.
	if got[ny1]+got[la1] != 40 || got[ny1] < 25 || got[la1] < 5 {
		t.Errorf("answers %v, want about 30 for ny and 10 for la", got)
	}
}

// The cpu method reads each candidate's server report and allocates
// nothing per query.
func TestCPUMethodAllocs(t *testing.T) {
	s := newServer(t, cpuConfig(CPU, GlobalAvailability, ReturnToDNS), Options{})
	s.SetServerMetrics("/Common/ny-ltm", &HostMetrics{CPUUsage: 40, MemAvail: -1, Bps: -1, Pps: -1})
	s.SetServerMetrics("/Common/la-ltm", &HostMetrics{CPUUsage: 20, MemAvail: -1, Bps: -1, Pps: -1})
	p := s.plan.Load()
	pl := p.pools["/Common/p"]
	rq := &request{plan: p}
	if i := s.pick(rq, pl, CPU, pl.members); pl.members[i].vs.addr != netip.MustParseAddr("127.61.2.11") {
		t.Fatalf("picked %v", pl.members[i].vs.addr)
	}
	if n := testing.AllocsPerRun(100, func() { s.pick(rq, pl, CPU, pl.members) }); n != 0 {
		t.Errorf("%v allocations per pick", n)
	}
}
