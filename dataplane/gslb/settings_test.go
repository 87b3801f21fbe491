package gslb

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// verify-vs-availability no answers with members whatever their
// monitors and reports say; disabled ones still stay out.
func TestVerifyVSAvailability(t *testing.T) {
	first, second := netip.MustParseAddr("127.16.1.1"), netip.MustParseAddr("127.16.1.2")
	for _, c := range []struct {
		noVerify bool
		disabled bool
		want     netip.Addr
	}{
		{false, false, second},
		{true, false, first},
		{true, true, second},
	} {
		cfg := admitConfig()
		cfg.Settings.NoVerifyVS = c.noVerify
		cfg.Servers["/Common/ltm"].VirtualServers[0].Disabled = c.disabled
		s := newServer(t, cfg, Options{})
		s.SetVirtualServerMetrics("/Common/ltm", "vs1_1", VSMetrics{Status: StatusDown})
		if got := askA(t, s, admitLDNS, "www.example.com."); got != c.want {
			t.Errorf("verify-vs-availability no=%v, vs disabled=%v: %v, want %v", c.noVerify, c.disabled, got, c.want)
		}
	}
}

// drain-persistent-requests keeps an LDNS persisted on a member the
// operator disabled while it is up; with no it moves at once. A new LDNS
// never gets the disabled member, and a member down moves it either way.
func TestDrainPersistentRequests(t *testing.T) {
	first := netip.MustParseAddr("127.16.1.1")
	other := netip.MustParseAddr("127.16.9.2")
	for _, c := range []struct {
		name    string
		noDrain bool
		disable func(*Config)
		down    bool
		kept    bool // the persisted LDNS stays on the first member
	}{
		{"member disabled, drain", false, func(c *Config) { c.Pools["/Common/main"].Members[0].Disabled = true }, false, true},
		{"virtual server disabled, drain", false, func(c *Config) { c.Servers["/Common/ltm"].VirtualServers[0].Disabled = true }, false, true},
		{"server disabled, drain", false, func(c *Config) { c.Servers["/Common/ltm"].Disabled = true }, false, true},
		{"member disabled, no drain", true, func(c *Config) { c.Pools["/Common/main"].Members[0].Disabled = true }, false, false},
		{"member disabled and down, drain", false, func(c *Config) { c.Pools["/Common/main"].Members[0].Disabled = true }, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mk := func() *Config {
				cfg := admitConfig()
				cfg.Settings.NoDrainPersistent = c.noDrain
				w := cfg.WideIPs["/Common/www.example.com"]
				w.Persistence = true
				cfg.Pools["/Common/main"].Mode = RoundRobin
				return cfg
			}
			s := newServer(t, mk(), Options{})
			// Round robin: the first LDNS gets the first member.
			if got := askA(t, s, admitLDNS, "www.example.com."); got != first {
				t.Fatalf("first answer %v", got)
			}
			cfg := mk()
			c.disable(cfg)
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			if c.down {
				s.SetVirtualServerMetrics("/Common/ltm", "vs1_1", VSMetrics{Status: StatusDown})
			}
			if got := askA(t, s, admitLDNS, "www.example.com."); (got == first) != c.kept {
				t.Fatalf("persisted LDNS: %v, kept on %v: %v", got, first, c.kept)
			}
			for range 4 {
				if got := askA(t, s, other, "www.example.com."); got == first {
					t.Fatalf("a new LDNS got the disabled member")
				}
			}
		})
	}
}

// ignore-path-ttl lets an RTT measurement older than path-ttl decide;
// by default it counts as none and the alternate method answers.
func TestIgnorePathTTL(t *testing.T) {
	a := netip.MustParseAddr
	for _, c := range []struct {
		ignore bool
		age    time.Duration
		want   netip.Addr
	}{
		{false, time.Minute, a("127.16.1.2")},
		{false, 11 * time.Minute, a("127.16.1.1")}, // expired: the alternate's first member
		{true, 11 * time.Minute, a("127.16.1.2")},
	} {
		clock := newClock()
		cfg := admitConfig()
		cfg.Settings.IgnorePathTTL = c.ignore
		cfg.Settings.PathTTL = 10 * time.Minute
		p := twoLinks(cfg)
		p.Mode, p.Alternate = LowestRoundTripTime, GlobalAvailability
		s := newServer(t, cfg, Options{Now: clock.Now})
		key := ldnsKey(admitLDNS, &s.plan.Load().settings)
		at := clock.Now()
		s.rtt.mu.Lock()
		s.rtt.m[key] = &ldnsEntry{key: key, addr: admitLDNS, first: at, last: at, probedAt: at, paths: map[string]*pathRTT{
			"/Common/l1": {rtt: 9 * time.Millisecond, at: at, sent: 1, answered: 1},
			"/Common/l2": {rtt: 2 * time.Millisecond, at: at, sent: 1, answered: 1},
		}}
		s.rtt.mu.Unlock()
		clock.Add(c.age)
		// The first query after the measurement decides before the probe
		// it may start returns.
		if got := askA(t, s, admitLDNS, "www.example.com."); got != c.want {
			t.Errorf("ignore-path-ttl %v, age %v: %v, want %v", c.ignore, c.age, got, c.want)
		}
	}
}

// monitor-disabled-objects yes keeps probing a disabled virtual server;
// by default its probe stops.
func TestMonitorDisabledObjects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.16.1.1:0")
	if err != nil {
		t.Skipf("cannot listen on 127.16.1.1: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, monitorOff := range []bool{false, true} {
		cfg := admitConfig()
		cfg.Settings.MonitorDisabled = monitorOff
		v := cfg.Servers["/Common/ltm"].VirtualServers[0]
		v.Destination = ln.Addr().(*net.TCPAddr).AddrPort()
		v.Monitor = Monitor{Type: MonitorTCP, Interval: 50 * time.Millisecond}
		v.Disabled = true
		s := newServer(t, cfg, Options{})
		s.mu.Lock()
		_, probing := s.monitors["vs /Common/ltm:vs1_1"]
		s.mu.Unlock()
		if probing != monitorOff {
			t.Fatalf("monitor-disabled-objects %v: probing %v", monitorOff, probing)
		}
		if monitorOff {
			vrt := s.plan.Load().vss["/Common/ltm:vs1_1"].rt
			waitFor(t, "the disabled virtual server probed up", func() bool { return Status(vrt.probe.Load()) == StatusUp })
		}
	}
}

// An A wide IP's pools-cname pools are balanced with its pools: when one
// answers, over the message path and the UDP listener's wire path alike,
// the answer is its CNAME.
func TestPoolsCNAME(t *testing.T) {
	listen := freeAddr(t, "127.16.0.53")
	cname := func(order int) *Config {
		cfg := admitConfig()
		cfg.Listeners = []Listener{{Name: "/Common/dns", Addr: listen, Protocol: "udp"}}
		cfg.Pools[Key(TypeCNAME, "/Common/cn")] = &Pool{Name: "/Common/cn", Type: TypeCNAME, TTL: 45,
			Members: []PoolMember{{Target: "www.cdn.example.net", StaticTarget: true}}}
		w := cfg.WideIPs["/Common/www.example.com"]
		w.Pools = w.Pools[:1] // main only
		w.CNAMEPools = []WideIPPool{{Pool: Key(TypeCNAME, "/Common/cn"), Order: order}}
		return cfg
	}
	for _, c := range []struct {
		name     string
		order    int
		mainDown bool
		want     string // the CNAME target, or "" for main's A
	}{
		{"main first", 1, false, ""},
		{"main down", 1, true, "www.cdn.example.net."},
		{"equal order: the pool first", 0, false, ""},
		{"cname first", -1, false, "www.cdn.example.net."},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, cname(c.order), Options{})
			if c.mainDown {
				s.SetServerStatus("/Common/ltm", StatusDown)
			}
			for _, path := range []string{"answer", "udp"} {
				var m *dns.Msg
				if path == "answer" {
					m = ask(t, s, admitLDNS, "www.example.com.", dns.TypeA)
				} else {
					m = queryNet(t, admitLDNS, listen, "udp", "www.example.com.", dns.TypeA)
				}
				if m == nil || len(m.Answer) == 0 {
					t.Fatalf("%s: no answer: %v", path, m)
				}
				switch rr := m.Answer[0].(type) {
				case *dns.CNAME:
					if rr.Target != c.want || rr.Hdr.Ttl != 45 {
						t.Fatalf("%s: CNAME %s ttl %d, want %q", path, rr.Target, rr.Hdr.Ttl, c.want)
					}
				case *dns.A:
					if c.want != "" {
						t.Fatalf("%s: A %v, want CNAME %s", path, rr.A, c.want)
					}
				default:
					t.Fatalf("%s: %v", path, rr)
				}
			}
		})
	}
	bad := cname(0)
	bad.WideIPs["/Common/www.example.com"].CNAMEPools = []WideIPPool{{Pool: "/Common/spare"}}
	if _, err := Compile(bad); err == nil || !strings.Contains(err.Error(), "is a pool a") {
		t.Errorf("an A pool in pools-cname: %v", err)
	}
}

// respect-fallback-dependency no (BIG-IP's default): with no member
// available, the fallback method answers with a member the operator has
// not disabled, down as it is; yes returns to DNS (then the next pool).
func TestRespectFallbackDependency(t *testing.T) {
	for _, c := range []struct {
		respect bool
		want    netip.Addr
	}{
		{false, netip.MustParseAddr("127.16.1.2")}, // vs1_1 disabled: the next one
		{true, netip.Addr{}},
	} {
		cfg := admitConfig()
		cfg.Settings.RespectFallback = c.respect
		w := cfg.WideIPs["/Common/www.example.com"]
		w.Pools = w.Pools[:1]
		p := cfg.Pools["/Common/main"]
		p.Fallback = GlobalAvailability
		p.Members[0].Disabled = true
		s := newServer(t, cfg, Options{})
		for _, vs := range []string{"vs1_1", "vs1_2", "vs1_3"} {
			s.SetVirtualServerMetrics("/Common/ltm", vs, VSMetrics{Status: StatusDown})
		}
		if got := askA(t, s, admitLDNS, "www.example.com."); got != c.want {
			t.Errorf("respect-fallback-dependency %v: %v, want %v", c.respect, got, c.want)
		}
		if st := s.Pools()[0]; !c.respect && st.FallCount != 1 {
			t.Errorf("fallback counted %d", st.FallCount)
		}
	}
}

func TestHopsFrom(t *testing.T) {
	for ttl, want := range map[int]int{0: -1, -1: -1, 1: 63, 64: 0, 60: 4, 65: 63, 128: 0, 113: 15, 129: 126, 255: 0, 256: -1} {
		if got := hopsFrom(ttl); got != want {
			t.Errorf("hopsFrom(%d) = %d, want %d", ttl, got, want)
		}
	}
}

// twoLinks gives admitConfig's pool two members, each behind a link of
// its own with its own prober, and returns the pool.
func twoLinks(cfg *Config) *Pool {
	cfg.Links = map[string]*Link{
		"/Common/l1": {Name: "/Common/l1", Datacenter: "/Common/dc", Prober: netip.MustParseAddr("127.16.1.101")},
		"/Common/l2": {Name: "/Common/l2", Datacenter: "/Common/dc", Prober: netip.MustParseAddr("127.16.1.102")},
	}
	vss := cfg.Servers["/Common/ltm"].VirtualServers
	vss[0].Link, vss[1].Link = "/Common/l1", "/Common/l2"
	p := cfg.Pools["/Common/main"]
	p.Members = p.Members[:2]
	return p
}
