package gslb

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// appConfig is two data centers, each with one server holding a www and
// an api virtual server; pools by global-availability prefer dc1.
func appConfig(dep Dependency, persist bool, mode Mode) *Config {
	a := netip.MustParseAddr
	vs := func(name, addr string) *VirtualServer {
		return &VirtualServer{Name: name, Destination: netip.AddrPortFrom(a(addr), 80)}
	}
	pool := func(name, vsName string) *Pool {
		return &Pool{Name: name, Mode: mode, Members: []PoolMember{
			{Server: "/Common/s1", VirtualServer: vsName, Order: 0},
			{Server: "/Common/s2", VirtualServer: vsName, Order: 1},
		}}
	}
	return &Config{
		Datacenters: map[string]*Datacenter{"/Common/dc1": {Name: "/Common/dc1"}, "/Common/dc2": {Name: "/Common/dc2"}},
		Servers: map[string]*Host{
			"/Common/s1": {Name: "/Common/s1", Datacenter: "/Common/dc1", VirtualServers: []*VirtualServer{vs("www", "127.177.1.1"), vs("api", "127.177.1.2")}},
			"/Common/s2": {Name: "/Common/s2", Datacenter: "/Common/dc2", VirtualServers: []*VirtualServer{vs("www", "127.177.2.1"), vs("api", "127.177.2.2")}},
		},
		Pools: map[string]*Pool{"/Common/p_www": pool("/Common/p_www", "www"), "/Common/p_api": pool("/Common/p_api", "api")},
		WideIPs: map[string]*WideIP{
			"/Common/www.example.com": {Name: "/Common/www.example.com", Pools: []WideIPPool{{Pool: "/Common/p_www"}}},
			"/Common/api.example.com": {Name: "/Common/api.example.com", Pools: []WideIPPool{{Pool: "/Common/p_api"}}},
		},
		DistApps: map[string]*DistApp{"/Common/shop": {Name: "/Common/shop", Dependency: dep,
			WideIPs: []string{"/Common/www.example.com", "/Common/api.example.com"}, Persistence: persist, PersistTTL: time.Hour}},
	}
}

func appAsk(t *testing.T, s *Server, name string, src netip.Addr) string {
	t.Helper()
	r := new(dns.Msg)
	r.SetQuestion(name, dns.TypeA)
	m, send := s.Answer(r, src, true)
	if !send || m == nil {
		t.Fatalf("%s: no answer", name)
	}
	var out []string
	for _, rr := range m.Answer {
		if x, ok := rr.(*dns.A); ok {
			out = append(out, x.A.String())
		}
	}
	return strings.Join(out, ",")
}

func TestDistAppDependency(t *testing.T) {
	ldns := netip.MustParseAddr("127.177.9.1")
	for _, tc := range []struct {
		name     string
		dep      Dependency
		disabled bool
		down     string // server:vs reported down
		www, api string
		avail    Availability
	}{
		{"all up", DependDatacenter, false, "", "127.177.1.1", "127.177.1.2", Available},
		{"datacenter: www down in dc1 moves api", DependDatacenter, false, "/Common/s1:www", "127.177.2.1", "127.177.2.2", Available},
		{"server: www down on s1 moves api", DependServer, false, "/Common/s1:www", "127.177.2.1", "127.177.2.2", Available},
		{"none: api stays", DependNone, false, "/Common/s1:www", "127.177.2.1", "127.177.1.2", Available},
		{"link: no links, no dependency", DependLink, false, "/Common/s1:www", "127.177.2.1", "127.177.1.2", Available},
		{"datacenter: api down in dc1 moves www", DependDatacenter, false, "/Common/s1:api", "127.177.2.1", "127.177.2.2", Available},
		{"www down everywhere: api keeps no place", DependDatacenter, false, "/Common/s1:www /Common/s2:www", "", "", Offline},
		{"disabled: returns to DNS", DependDatacenter, true, "", "", "", Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{})
			defer s.Close()
			cfg := appConfig(tc.dep, false, GlobalAvailability)
			cfg.DistApps["/Common/shop"].Disabled = tc.disabled
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			for _, d := range strings.Fields(tc.down) {
				srv, v, _ := strings.Cut(d, ":")
				s.SetVirtualServerMetrics(srv, v, VSMetrics{Status: StatusDown})
			}
			if got := appAsk(t, s, "www.example.com.", ldns); got != tc.www {
				t.Errorf("www = %q, want %q", got, tc.www)
			}
			if got := appAsk(t, s, "api.example.com.", ldns); got != tc.api {
				t.Errorf("api = %q, want %q", got, tc.api)
			}
			st := s.DistApps()
			if len(st) != 1 || st[0].Status.Availability != tc.avail || st[0].Requests != 2 {
				t.Errorf("show = %+v, want %s with 2 requests", st, tc.avail)
			}
		})
	}
}

func TestDistAppPersistence(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if err := s.Apply(appConfig(DependNone, true, RoundRobin)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		ldns := netip.AddrFrom4([4]byte{127, 177, 9, byte(10 + i)})
		www := appAsk(t, s, "www.example.com.", ldns)
		want := www[:len(www)-1] + "2" // the api virtual server of www's data center
		for j := 0; j < 3; j++ {
			if got := appAsk(t, s, "api.example.com.", ldns); got != want {
				t.Fatalf("ldns %s: www %s then api %s, want %s (same data center)", ldns, www, got, want)
			}
		}
	}
	if st := s.DistApps(); st[0].Persisted == 0 {
		t.Errorf("persisted counter %+v", st[0])
	}
	// The held data center losing its api member moves the LDNS.
	ldns := netip.MustParseAddr("127.177.9.10")
	www := appAsk(t, s, "www.example.com.", ldns)
	srv := "/Common/s1"
	other := "127.177.2.2"
	if strings.HasPrefix(www, "127.177.2.") {
		srv, other = "/Common/s2", "127.177.1.2"
	}
	s.SetVirtualServerMetrics(srv, "api", VSMetrics{Status: StatusDown})
	if got := appAsk(t, s, "api.example.com.", ldns); got != other {
		t.Fatalf("api %s after its held member went down, want %s", got, other)
	}
}

func TestDistAppCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"missing wide IP", func(c *Config) {
			c.DistApps["/Common/shop"].WideIPs = append(c.DistApps["/Common/shop"].WideIPs, "/Common/nope.example.com")
		}, "does not exist"},
		{"two applications", func(c *Config) {
			c.DistApps["/Common/two"] = &DistApp{Name: "/Common/two", WideIPs: []string{"/Common/www.example.com"}}
		}, "already belongs"},
		{"bad level", func(c *Config) { c.DistApps["/Common/shop"].Dependency = "rack" }, "dependency-level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := appConfig(DependDatacenter, false, GlobalAvailability)
			tc.edit(cfg)
			if err := Check(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// The places an application can answer from are computed once per change
// of availability, not per query, and a change is seen by the next query.
func TestDistAppMaskCache(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if err := s.Apply(appConfig(DependDatacenter, false, GlobalAvailability)); err != nil {
		t.Fatal(err)
	}
	ldns := netip.MustParseAddr("127.177.9.1")
	a := s.plan.Load().apps[0]
	for i := 0; i < 5; i++ {
		if got := appAsk(t, s, "api.example.com.", ldns); got != "127.177.1.2" {
			t.Fatalf("api = %s", got)
		}
	}
	if n := a.computed.Load(); n != 1 {
		t.Errorf("%d computations for 5 queries with no change, want 1", n)
	}
	s.SetVirtualServerMetrics("/Common/s1", "www", VSMetrics{Status: StatusDown})
	if got := appAsk(t, s, "api.example.com.", ldns); got != "127.177.2.2" {
		t.Fatalf("api = %s after www went down in dc1", got)
	}
	s.SetVirtualServerMetrics("/Common/s1", "www", VSMetrics{Status: StatusUp})
	if got := appAsk(t, s, "api.example.com.", ldns); got != "127.177.1.2" {
		t.Fatalf("api = %s after www came back in dc1", got)
	}
	if n := a.computed.Load(); n != 3 {
		t.Errorf("%d computations, want 3 (one per availability)", n)
	}
}
