//go:build linux

package dataplane

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sklookup"
)

// wildcardNamesConfig is a TCP wildcard on every port (member W at
// 127.222.5.30:30030) whose names are asked of the test zone z.
func wildcardNamesConfig(z *testZone) *Config {
	cfg := basic("127.222.5.1:30080")
	cfg.NameServers = []string{z.addr}
	withPool(cfg, "/Common/pw", "127.222.5.30:30030")
	cfg.Virtuals["/Common/w"] = &Virtual{Name: "/Common/w", Destination: ap("0.0.0.0:0"), Network: netip.MustParsePrefix("0.0.0.0/0"),
		Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: "/Common/pw", SNAT: SNAT{Type: SNATNone}}
	return cfg
}

// TestAnyPortOwnDestNames: in a namespace of its own, under a TCP
// wildcard on every port, a server the process connects to written as
// a host name (Config.OwnDestNames: an auth profile's ldap server) is
// resolved and its address passed over: a connection to it reaches the
// server, not the wildcard; when the name's answer changes the new
// address is passed over and the old one is the wildcard's again. Fails
// without the resolution (the wildcard answers W).
func TestAnyPortOwnDestNames(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	z := startTestZone(t, "127.222.5.53")
	z.set("ldap.example", "127.222.5.40")
	startServer(t, "127.222.5.40:30389", "L1")
	startServer(t, "127.222.5.41:30389", "L2")
	startServer(t, "127.222.5.30:30030", "W")
	p, _ := loggedPlane(t)
	cfg := wildcardNamesConfig(z)
	cfg.OwnDestNames = []NamedDest{{Name: "ldap.example", Port: 30389}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	ask := func(dst string) func() bool {
		return func() bool {
			got, _ := askOnce(dst)
			return got == map[string]string{"127.222.5.40:30389": "L1 Response", "127.222.5.41:30389": "L2 Response"}[dst]
		}
	}
	eventually(t, "the ldap server's address passed over", ask("127.222.5.40:30389"))
	if got, err := askOnce("127.222.5.40:30390"); got != "W Response" {
		t.Errorf("another port of the server's address: %q (%v), want the wildcard's", got, err)
	}
	z.set("ldap.example", "127.222.5.41")
	eventually(t, "the new address passed over", ask("127.222.5.41:30389"))
	if got, err := askOnce("127.222.5.40:30389"); got != "W Response" {
		t.Errorf("the old address: %q (%v), want the wildcard's", got, err)
	}
	// The server's connections are not the wildcard's.
	before, _ := p.Virtual("/Common/w")
	for i := range 3 {
		if got, err := askOnce("127.222.5.41:30389"); got != "L2 Response" {
			t.Errorf("ask %d to the server: %q (%v)", i, got, err)
		}
	}
	if after, _ := p.Virtual("/Common/w"); after.ClientSide.TotConns != before.ClientSide.TotConns {
		t.Errorf("the wildcard counted %d connections to the server", after.ClientSide.TotConns-before.ClientSide.TotConns)
	}
}

// TestAnyPortFQDNGrowthHeld: in a namespace of its own, under a TCP
// wildcard on every port, with the entries the steering passes over one
// short of sklookup.MaxSpecific, an FQDN node's first address is taken
// in; when its answer grows past the bound the new address is not taken
// into service (no member, the wildcard keeps its port), the old one
// stays, and the refusal is logged once with the counts, also across a
// commit made meanwhile; when the answer shrinks back under the bound
// the new address is taken in. Fails without the refusal (the second
// address becomes a member).
func TestAnyPortFQDNGrowthHeld(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	z := startTestZone(t, "127.222.6.53")
	z.set("app.example", "127.222.6.11")
	startServer(t, "127.222.6.11:30001", "S1")
	startServer(t, "127.222.6.12:30001", "S2")
	startServer(t, "127.222.5.30:30030", "W")
	p, logs := loggedPlane(t)
	cfg := wildcardNamesConfig(z)
	cfg.Nodes = map[string]*Node{"/Common/app.example": {Name: "/Common/app.example",
		FQDN: &FQDN{Name: "app.example", Interval: time.Second, DownInterval: time.Second, Autopopulate: true}}}
	cfg.Pools["/Common/pool"].FQDNMembers = []Member{{Node: "/Common/app.example", Addr: netip.AddrPortFrom(netip.Addr{}, 30001)}}
	fill := sklookup.MaxSpecific - steerSpecificCount(cfg) - 1
	for i := range fill {
		cfg.OwnDests = append(cfg.OwnDests, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 222, 20 + byte(i/10000), 1}), uint16(20000+i%10000)))
	}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	eventually(t, "the first address", func() bool {
		return memberNames(p, "/Common/pool") == "/Common/_auto_127.222.6.11:30001"
	})
	const warned = "the new addresses are not taken into service"
	z.set("app.example", "127.222.6.11", "127.222.6.12")
	eventually(t, "the refusal logged", func() bool { return strings.Contains(logs.String(), warned) })
	if got := memberNames(p, "/Common/pool"); got != "/Common/_auto_127.222.6.11:30001" {
		t.Errorf("members after the growth: %q, want the first address only", got)
	}
	for i := range 3 { // answers through the virtual: the first address only
		if got, err := askOnce("127.222.5.1:30080"); got != "S1 Response" {
			t.Errorf("ask %d through the virtual: %q (%v)", i, got, err)
		}
	}
	if got, err := askOnce("127.222.6.12:30001"); got != "W Response" {
		t.Errorf("the refused address: %q (%v), want the wildcard's", got, err)
	}
	mustApply(t, p, cfg) // a commit meanwhile keeps the refusal, not logged again
	if got := memberNames(p, "/Common/pool"); got != "/Common/_auto_127.222.6.11:30001" {
		t.Errorf("members after a commit: %q, want the first address only", got)
	}
	log := logs.String()
	if n := strings.Count(log, warned); n != 1 {
		t.Errorf("the refusal logged %d times, want once", n)
	}
	for _, want := range []string{"refused_addresses=1", "passed_over_wanted=16385", "passed_over_kept=16384", "limit=16384"} {
		if !strings.Contains(log, want) {
			t.Errorf("the refusal's log has no %s", want)
		}
	}
	if strings.Contains(log, "cannot steer every port") {
		t.Errorf("the steering's update failed:\n%s", log)
	}
	z.set("app.example", "127.222.6.12")
	eventually(t, "the new address alone", func() bool {
		return memberNames(p, "/Common/pool") == "/Common/_auto_127.222.6.12:30001"
	})
	if got, err := askOnce("127.222.5.1:30080"); got != "S2 Response" {
		t.Errorf("through the virtual after the shrink: %q (%v)", got, err)
	}
	if !strings.Contains(logs.String(), "their new addresses are taken into service") {
		t.Errorf("the end of the refusal is not logged")
	}
}

// TestNameServerName: a name-servers entry written as a host name, with
// or without a port, is followed; an address is not a name.
func TestNameServerName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want NamedDest
		ok   bool
	}{
		{"ns.example", NamedDest{Name: "ns.example", Port: 53}, true},
		{"ns.example:5353", NamedDest{Name: "ns.example", Port: 5353}, true},
		{"ns.example:x", NamedDest{}, false},
		{"", NamedDest{}, false},
	} {
		got, ok := nameServerName(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("nameServerName(%q) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	cfg := &Config{NameServers: []string{"127.0.0.53", "127.0.0.53:5353", "[::1]:53", "ns.example"},
		OwnDestNames: []NamedDest{{Name: "ldap.example", Port: 389}}}
	got := ownDestNames(cfg)
	want := []NamedDest{{Name: "ldap.example", Port: 389}, {Name: "ns.example", Port: 53}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ownDestNames = %v, want %v", got, want)
	}
}
