package gslb

import (
	"net/netip"
	"strings"
	"testing"
)

// disabled-contexts: the application's wide IPs do not answer from a data
// center, server or link it is disabled in; with a dependency the other
// wide IPs leave that place too; show says where it is disabled, and
// offline when a wide IP is left with nowhere to answer.
func TestDistAppDisabledContexts(t *testing.T) {
	ldns := netip.MustParseAddr("127.199.9.1")
	for _, tc := range []struct {
		name     string
		dep      Dependency
		ctx      []DistAppContext
		down     string // server:vs reported down
		www, api string
		avail    Availability
		shown    string
	}{
		{"none", DependNone, nil, "", "127.177.1.1", "127.177.1.2", Available, ""},
		{"datacenter dc1", DependNone, []DistAppContext{{DependDatacenter, "/Common/dc1"}}, "", "127.177.2.1", "127.177.2.2", Available, "datacenter /Common/dc1"},
		{"server s1", DependNone, []DistAppContext{{DependServer, "/Common/s1"}}, "", "127.177.2.1", "127.177.2.2", Available, "server /Common/s1"},
		{"link l1 (s1's www)", DependNone, []DistAppContext{{DependLink, "/Common/l1"}}, "", "127.177.2.1", "127.177.1.2", Available, "link /Common/l1"},
		// With dependency-level datacenter, www leaving dc1 by its link
		// takes api out of dc1 as well.
		{"link l1 with a dependency", DependDatacenter, []DistAppContext{{DependLink, "/Common/l1"}}, "", "127.177.2.1", "127.177.2.2", Available, "link /Common/l1"},
		// The other data center down: nowhere left to answer.
		{"dc1 disabled, dc2 down", DependNone, []DistAppContext{{DependDatacenter, "/Common/dc1"}}, "/Common/s2:www /Common/s2:api", "", "", Offline, "datacenter /Common/dc1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{})
			defer s.Close()
			cfg := appConfig(tc.dep, false, GlobalAvailability)
			cfg.Links = map[string]*Link{"/Common/l1": {Name: "/Common/l1", Datacenter: "/Common/dc1"}}
			cfg.Servers["/Common/s1"].VirtualServers[0].Link = "/Common/l1"
			cfg.DistApps["/Common/shop"].DisabledContexts = tc.ctx
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			for _, d := range strings.Fields(tc.down) {
				srv, v, _ := strings.Cut(d, ":")
				s.SetVirtualServerMetrics(srv, v, VSMetrics{Status: StatusDown})
			}
			for i := 0; i < 3; i++ {
				if got := appAsk(t, s, "www.example.com.", ldns); got != tc.www {
					t.Errorf("www = %q, want %q", got, tc.www)
				}
				if got := appAsk(t, s, "api.example.com.", ldns); got != tc.api {
					t.Errorf("api = %q, want %q", got, tc.api)
				}
			}
			st := s.DistApps()
			if len(st) != 1 || st[0].Status.Availability != tc.avail || strings.Join(st[0].DisabledContexts, ",") != tc.shown {
				t.Errorf("show = %+v, want %s disabled in %q", st, tc.avail, tc.shown)
			}
		})
	}
}

// A context naming nothing, or of another kind, is refused.
func TestDistAppContextsRefused(t *testing.T) {
	for _, tc := range []struct {
		ctx  DistAppContext
		want string
	}{
		{DistAppContext{DependDatacenter, "/Common/nope"}, "the datacenter /Common/nope does not exist"},
		{DistAppContext{DependServer, "/Common/dc1"}, "the server /Common/dc1 does not exist"},
		{DistAppContext{DependLink, "/Common/l9"}, "the link /Common/l9 does not exist"},
		{DistAppContext{"rack", "/Common/dc1"}, "not a datacenter, server or link"},
	} {
		cfg := appConfig(DependNone, false, GlobalAvailability)
		cfg.DistApps["/Common/shop"].DisabledContexts = []DistAppContext{tc.ctx}
		if err := Check(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.ctx, err, tc.want)
		}
	}
}
