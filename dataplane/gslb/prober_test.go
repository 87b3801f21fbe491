package gslb

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/dataplane/monitor"
)

// firewalledSite is a web site that answers 200 only to connections
// from allowed, 403 to the others: a site behind a firewall that only
// one datacenter's devices get through.
func firewalledSite(t *testing.T, addr string, allowed netip.Addr) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				bufio.NewReader(c).ReadString('\n')
				from := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
				if from == allowed {
					c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nok\n"))
				} else {
					c.Write([]byte("HTTP/1.0 403 Forbidden\r\n\r\nno\n"))
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).AddrPort()
}

// The servers' prober-preference, prober-fallback and prober-pool choose
// which BIG-IP probes their virtual servers, and the verdict is that
// device's: a site only ltm2's address gets through to is up when ltm2
// probes it, down when another device does. Each device probes from its
// own address (ProbeFrom, as a peer does when asked over iQuery).
func TestProberSelection(t *testing.T) {
	var (
		gtmAddr  = netip.MustParseAddr("127.94.0.1")
		ltm1Addr = netip.MustParseAddr("127.94.1.1")
		ltm2Addr = netip.MustParseAddr("127.94.2.1")
		ldns     = netip.MustParseAddr("127.94.9.9")
	)
	site := firewalledSite(t, "127.94.7.10:0", ltm2Addr)
	listen := freeAddr(t, "127.94.0.53")
	addrOf := map[string]netip.Addr{"/Common/gtm": gtmAddr, "/Common/ltm1": ltm1Addr, "/Common/ltm2": ltm2Addr}
	spec := &monitor.Spec{Name: "/Common/http_fw", Type: monitor.HTTP, Interval: 50 * time.Millisecond, Timeout: 2 * time.Second,
		ProbeTimeout: time.Second, DownOnResponse: true, Send: "GET / HTTP/1.0\r\n\r\n", Recv: regexp.MustCompile("200 OK")}

	type want struct {
		prober string
		status Status
	}
	cases := []struct {
		name     string
		web, dc1 [3]string // prober-preference, prober-fallback, prober-pool
		pool     ProberPool
		down     []string // peers whose iQuery stream is down
		want     want
	}{
		{name: "inside-datacenter by default: the datacenter's BIG-IP probes, blocked",
			want: want{"/Common/ltm1", StatusDown}},
		{name: "prober pool: ltm2 gets through",
			web: [3]string{"pool", "", "/Common/pp"}, pool: ProberPool{Members: []string{"/Common/ltm2"}},
			want: want{"/Common/ltm2", StatusUp}},
		{name: "the datacenter's preference is inherited",
			dc1: [3]string{"pool", "any-available", "/Common/pp"}, web: [3]string{"inherit", "inherit", ""}, pool: ProberPool{Members: []string{"/Common/ltm2"}},
			want: want{"/Common/ltm2", StatusUp}},
		{name: "global-availability pool: the first member up",
			web: [3]string{"pool", "", "/Common/pp"}, pool: ProberPool{Members: []string{"/Common/ltm1", "/Common/ltm2"}},
			want: want{"/Common/ltm1", StatusDown}},
		{name: "global-availability pool, first member's stream down: the next",
			web: [3]string{"pool", "", "/Common/pp"}, pool: ProberPool{Mode: "global-availability", Members: []string{"/Common/ltm1", "/Common/ltm2"}},
			down: []string{"/Common/ltm1"}, want: want{"/Common/ltm2", StatusUp}},
		{name: "outside-datacenter: this device first",
			web: [3]string{"outside-datacenter", "", ""}, want: want{"/Common/gtm", StatusDown}},
		{name: "inside-datacenter with nobody up there, fallback any-available: this device",
			down: []string{"/Common/ltm1"}, want: want{"/Common/gtm", StatusDown}},
		{name: "fallback pool",
			web: [3]string{"inside-datacenter", "pool", "/Common/pp"}, pool: ProberPool{Members: []string{"/Common/ltm2"}},
			down: []string{"/Common/ltm1"}, want: want{"/Common/ltm2", StatusUp}},
		{name: "fallback none: nobody probes, the status is unknown",
			web: [3]string{"inside-datacenter", "none", ""}, down: []string{"/Common/ltm1"}, want: want{"", StatusUnknown}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{
				Listeners: []Listener{{Name: "/Common/l", Addr: listen, Protocol: "udp"}},
				Datacenters: map[string]*Datacenter{
					"/Common/dc0": {Name: "/Common/dc0"},
					"/Common/dc1": {Name: "/Common/dc1", ProberPreference: tc.dc1[0], ProberFallback: tc.dc1[1], ProberPool: tc.dc1[2]},
					"/Common/dc2": {Name: "/Common/dc2"},
				},
				Servers: map[string]*Host{
					"/Common/gtm":  {Name: "/Common/gtm", Datacenter: "/Common/dc0", BigIP: true, Addresses: []netip.Addr{gtmAddr}},
					"/Common/ltm1": {Name: "/Common/ltm1", Datacenter: "/Common/dc1", BigIP: true, Addresses: []netip.Addr{ltm1Addr}},
					"/Common/ltm2": {Name: "/Common/ltm2", Datacenter: "/Common/dc2", BigIP: true, Addresses: []netip.Addr{ltm2Addr}},
					"/Common/web": {Name: "/Common/web", Datacenter: "/Common/dc1", ProberPreference: tc.web[0], ProberFallback: tc.web[1], ProberPool: tc.web[2],
						VirtualServers: []*VirtualServer{{Name: "site", Destination: site, Monitor: Monitor{Spec: spec}}}},
				},
				Pools:   map[string]*Pool{Key(TypeA, "/Common/p"): {Name: "/Common/p", Members: []PoolMember{{Server: "/Common/web", VirtualServer: "site"}}, Fallback: ReturnToDNS}},
				WideIPs: map[string]*WideIP{Key(TypeA, "/Common/www.fw.test"): {Name: "/Common/www.fw.test", Pools: []WideIPPool{{Pool: Key(TypeA, "/Common/p")}}}},
				Self:    "/Common/gtm",
			}
			if tc.pool.Members != nil {
				pp := tc.pool
				pp.Name = "/Common/pp"
				cfg.ProberPools = map[string]*ProberPool{"/Common/pp": &pp}
			}
			var mu sync.Mutex
			ran := map[string]int{}
			s := New(Options{})
			t.Cleanup(func() { s.Close() })
			// Every device but this one is asked through the hook, which
			// probes from the device's address as the device would.
			s.SetMonitorProber(func(ctx context.Context, device string, spec *monitor.Spec, dest netip.AddrPort) (monitor.Outcome, error) {
				mu.Lock()
				ran[device]++
				mu.Unlock()
				return ProbeFrom(ctx, addrOf[device], spec, dest)
			})
			for _, peer := range []string{"/Common/ltm1", "/Common/ltm2"} {
				st := StatusUp
				for _, d := range tc.down {
					if d == peer {
						st = StatusDown
					}
				}
				s.SetServerStatus(peer, st)
			}
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			vsShow := func() VirtualServerStats {
				for _, sv := range s.Servers() {
					if sv.Name == "/Common/web" {
						return sv.VirtualServers[0]
					}
				}
				return VirtualServerStats{}
			}
			wantProber := tc.want.prober
			if wantProber == "" {
				wantProber = "none"
			}
			waitFor(t, "prober "+wantProber+" and status "+tc.want.status.String(), func() bool {
				v := vsShow()
				return v.Prober == wantProber && v.Monitor == tc.want.status
			})
			// The devices not chosen never probed it.
			mu.Lock()
			for dev, n := range ran {
				if dev != tc.want.prober && n > 0 {
					t.Errorf("%s probed %d times; only %q should have", dev, n, tc.want.prober)
				}
			}
			mu.Unlock()
			// The answer follows the chosen prober's verdict (an unknown
			// status still answers, as BIG-IP balances to unknown objects).
			m := queryNet(t, ldns, listen, "udp", "www.fw.test.", dns.TypeA)
			got := gslbtest.Addrs(m)
			if up := tc.want.status != StatusDown; up != (len(got) == 1 && got[0] == site.Addr()) {
				t.Errorf("answer %v with the site %s", got, tc.want.status)
			}
		})
	}
}

// Compile refuses prober selections BIG-IP refuses.
func TestProberSelectionRefused(t *testing.T) {
	base := func() *Config {
		return &Config{
			Datacenters: map[string]*Datacenter{"/Common/dc1": {Name: "/Common/dc1"}},
			Servers: map[string]*Host{
				"/Common/ltm1": {Name: "/Common/ltm1", Datacenter: "/Common/dc1", BigIP: true},
				"/Common/web":  {Name: "/Common/web", Datacenter: "/Common/dc1"},
			},
		}
	}
	cases := []struct {
		name string
		edit func(c *Config)
		err  string
	}{
		{"bad preference", func(c *Config) { c.Servers["/Common/web"].ProberPreference = "any-available" }, `prober-preference "any-available" is not`},
		{"bad fallback", func(c *Config) { c.Servers["/Common/web"].ProberFallback = "nearest" }, `prober-fallback "nearest" is not`},
		{"pool without a prober-pool", func(c *Config) { c.Servers["/Common/web"].ProberPreference = "pool" }, "needs a prober-pool"},
		{"unknown prober-pool", func(c *Config) { c.Servers["/Common/web"].ProberPool = "/Common/nope" }, `prober-pool "/Common/nope" does not exist`},
		{"member not a BIG-IP", func(c *Config) {
			c.ProberPools = map[string]*ProberPool{"/Common/pp": {Name: "/Common/pp", Members: []string{"/Common/web"}}}
		}, "is not a BIG-IP"},
		{"bad pool mode", func(c *Config) {
			c.ProberPools = map[string]*ProberPool{"/Common/pp": {Name: "/Common/pp", Mode: "ratio"}}
		}, "is not round-robin or global-availability"},
		{"datacenter inherits", func(c *Config) { c.Datacenters["/Common/dc1"].ProberPreference = "inherit" }, "nothing to inherit"},
		{"self unknown", func(c *Config) { c.Self = "/Common/gone" }, "this device"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(c)
			_, err := Compile(c)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Compile: %v, want an error with %q", err, tc.err)
			}
		})
	}
	if _, err := Compile(base()); err != nil {
		t.Fatal(err)
	}
}

// A prober whose iQuery stream breaks is replaced at the next probe, and
// the verdict becomes the new prober's; it takes over again once back.
func TestProberReplaced(t *testing.T) {
	ltm1Addr, ltm2Addr := netip.MustParseAddr("127.94.1.1"), netip.MustParseAddr("127.94.2.1")
	site := firewalledSite(t, "127.94.7.11:0", ltm2Addr)
	spec := &monitor.Spec{Name: "/Common/http_fw", Type: monitor.HTTP, Interval: 50 * time.Millisecond, Timeout: 2 * time.Second,
		ProbeTimeout: time.Second, DownOnResponse: true, Send: "GET / HTTP/1.0\r\n\r\n", Recv: regexp.MustCompile("200 OK")}
	cfg := &Config{
		Datacenters: map[string]*Datacenter{"/Common/dc1": {Name: "/Common/dc1"}, "/Common/dc2": {Name: "/Common/dc2"}},
		Servers: map[string]*Host{
			"/Common/ltm1": {Name: "/Common/ltm1", Datacenter: "/Common/dc1", BigIP: true},
			"/Common/ltm2": {Name: "/Common/ltm2", Datacenter: "/Common/dc2", BigIP: true},
			"/Common/web": {Name: "/Common/web", Datacenter: "/Common/dc1", ProberPreference: "pool", ProberFallback: "none", ProberPool: "/Common/pp",
				VirtualServers: []*VirtualServer{{Name: "site", Destination: site, Monitor: Monitor{Spec: spec}}}},
		},
		ProberPools: map[string]*ProberPool{"/Common/pp": {Name: "/Common/pp", Members: []string{"/Common/ltm2", "/Common/ltm1"}}},
	}
	addrOf := map[string]netip.Addr{"/Common/ltm1": ltm1Addr, "/Common/ltm2": ltm2Addr}
	s := New(Options{})
	t.Cleanup(func() { s.Close() })
	s.SetMonitorProber(func(ctx context.Context, device string, spec *monitor.Spec, dest netip.AddrPort) (monitor.Outcome, error) {
		return ProbeFrom(ctx, addrOf[device], spec, dest)
	})
	s.SetServerStatus("/Common/ltm1", StatusUp)
	s.SetServerStatus("/Common/ltm2", StatusUp)
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	vsShow := func() VirtualServerStats {
		for _, sv := range s.Servers() {
			if sv.Name == "/Common/web" {
				return sv.VirtualServers[0]
			}
		}
		return VirtualServerStats{}
	}
	steps := []struct {
		down   []string
		prober string
		status Status
	}{
		{nil, "/Common/ltm2", StatusUp},
		{[]string{"/Common/ltm2"}, "/Common/ltm1", StatusDown},
		{nil, "/Common/ltm2", StatusUp},
		{[]string{"/Common/ltm1", "/Common/ltm2"}, "none", StatusUnknown},
	}
	for i, st := range steps {
		for _, d := range []string{"/Common/ltm1", "/Common/ltm2"} {
			s.SetServerStatus(d, StatusUp)
		}
		for _, d := range st.down {
			s.SetServerStatus(d, StatusDown)
		}
		waitFor(t, "step "+strconv.Itoa(i)+": prober "+st.prober, func() bool {
			v := vsShow()
			return v.Prober == st.prober && v.Monitor == st.status
		})
	}
}

// A BIG-IP whose server has iq-allow-service-check no is never chosen
// to probe: not by its datacenter's preference, not from a prober pool;
// this device still probes (the setting is about asking others).
func TestProberNoServiceCheck(t *testing.T) {
	base := func(noCheck ...string) *Config {
		cfg := &Config{
			Datacenters: map[string]*Datacenter{"/Common/dc0": {Name: "/Common/dc0"}, "/Common/dc1": {Name: "/Common/dc1"}},
			Servers: map[string]*Host{
				"/Common/gtm":  {Name: "/Common/gtm", Datacenter: "/Common/dc0", BigIP: true},
				"/Common/ltm1": {Name: "/Common/ltm1", Datacenter: "/Common/dc1", BigIP: true},
				"/Common/ltm2": {Name: "/Common/ltm2", Datacenter: "/Common/dc1", BigIP: true},
				"/Common/web":  {Name: "/Common/web", Datacenter: "/Common/dc1"},
			},
			ProberPools: map[string]*ProberPool{"/Common/pp": {Name: "/Common/pp", Members: []string{"/Common/ltm1", "/Common/ltm2"}}},
			Self:        "/Common/gtm",
		}
		for _, n := range noCheck {
			cfg.Servers[n].NoServiceCheck = true
		}
		return cfg
	}
	cases := []struct {
		name    string
		noCheck []string
		pref    string
		want    string
	}{
		{"inside-datacenter: the first BIG-IP there", nil, "", "/Common/ltm1"},
		{"inside-datacenter, ltm1 allows none: the next", []string{"/Common/ltm1"}, "", "/Common/ltm2"},
		{"inside-datacenter, none there allows: fallback, this device", []string{"/Common/ltm1", "/Common/ltm2"}, "", "/Common/gtm"},
		{"prober pool, first member allows none: the next", []string{"/Common/ltm1"}, "pool", "/Common/ltm2"},
		{"this device probes whatever its own setting", []string{"/Common/gtm", "/Common/ltm1", "/Common/ltm2"}, "outside-datacenter", "/Common/gtm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base(c.noCheck...)
			if c.pref != "" {
				cfg.Servers["/Common/web"].ProberPreference = c.pref
				cfg.Servers["/Common/web"].ProberPool = "/Common/pp"
			}
			s := New(Options{})
			t.Cleanup(func() { s.Close() })
			for _, peer := range []string{"/Common/ltm1", "/Common/ltm2"} {
				s.SetServerStatus(peer, StatusUp)
			}
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			p := s.plan.Load()
			h, _, ok := p.pickProber(p.hosts["/Common/web"].probers)
			if !ok || h.name != c.want {
				t.Errorf("prober %v (ok %v), want %s", h, ok, c.want)
			}
		})
	}
}
