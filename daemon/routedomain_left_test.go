package daemon

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// TestVirtualRouteDomainExists: a virtual server's destination or
// source, or a node (a pool member's too), in a route domain no net
// route-domain has is refused with nothing changed, as a NAT's address
// is; a source in another route domain than the destination is refused;
// deleting a route domain a virtual or node is in is refused; and a
// loaded configuration may define the route domain after the virtual.
func TestVirtualRouteDomainExists(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net route-domain rd2 id 2",
		"create net route-domain rd3 id 3",
		"create ltm pool p members add { 127.82.1.11:30001 }",
		"create ltm virtual v2 destination 127.82.0.2%2:30000 source 127.82.8.0%2/24 pool p profiles replace-all-with { tcp { } }",
		"create ltm pool p3 members add { 127.82.1.12%3:30001 }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	runSteps(t, s, []step{
		{cmd: "create ltm virtual z_bad destination 127.82.0.9%9:30000 pool p profiles replace-all-with { tcp { } }",
			err: "ltm virtual /Common/z_bad: destination /Common/127.82.0.9%9:30000: route domain 9 does not exist (create net route-domain NAME { id 9 } first)"},
		{cmd: "create ltm virtual z_bad destination 127.82.0.9%70000:30000 pool p profiles replace-all-with { tcp { } }",
			err: "route domain 70000 is not a route domain id (0 to 65534"},
		{cmd: "create ltm virtual z_bad destination 127.82.0.9%2:30000 source 127.82.8.0%9/24 pool p profiles replace-all-with { tcp { } }",
			err: "ltm virtual /Common/z_bad: source 127.82.8.0%9: route domain 9 does not exist"},
		{cmd: "create ltm virtual z_bad destination 127.82.0.9%2:30000 source 127.82.8.0%3/24 pool p profiles replace-all-with { tcp { } }",
			err: "source 127.82.8.0%3/24 is in route domain 3, the destination in route domain 2"},
		{cmd: "create ltm virtual z_bad destination 127.82.0.9:30000 source 127.82.8.0%2/24 pool p profiles replace-all-with { tcp { } }",
			err: "is in route domain 2, the destination in route domain 0"},
		{cmd: "create ltm pool z_bad members add { 127.82.1.13%9:30001 }",
			err: "ltm node /Common/127.82.1.13%9: address 127.82.1.13%9: route domain 9 does not exist"},
		{cmd: "create ltm node z_bad address 127.82.1.14%9", err: "route domain 9 does not exist"},
		{cmd: "delete net route-domain rd2", err: "ltm virtual /Common/v2: destination /Common/127.82.0.2%2:30000: route domain 2 does not exist"},
		{cmd: "delete net route-domain rd3", err: "ltm node /Common/127.82.1.12%3: address 127.82.1.12%3: route domain 3 does not exist"},
		{cmd: "modify net route-domain rd2 id 4", err: "route domain 2 does not exist"},
		// Route domain 0 is always there.
		{cmd: "create ltm virtual v0 destination 127.82.0.1%0:30000 pool p profiles replace-all-with { tcp { } }"},
	})
	if out, _ := run(t, s, "list ltm"); strings.Contains(out, "z_bad") {
		t.Errorf("a refused object was kept:\n%s", out)
	}
	if out, _ := run(t, s, "list net route-domain"); !strings.Contains(out, "rd2") || !strings.Contains(out, "rd3") {
		t.Errorf("a route domain in use was deleted:\n%s", out)
	}
	// A whole configuration: the virtual and node come before the route
	// domains they are in.
	conf := filepath.Join(t.TempDir(), "order.conf")
	text := "ltm node /Common/127.82.1.15%5 { address 127.82.1.15%5 }\n" +
		"ltm pool /Common/p5 { members { /Common/127.82.1.15%5:30001 { address 127.82.1.15%5 } } }\n" +
		"ltm virtual /Common/v5 { destination /Common/127.82.0.5%5:30000 pool /Common/p5 profiles { /Common/tcp { } } }\n" +
		"net route-domain /Common/rd5 { id 5 }\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, s, "load sys config merge file "+conf); err != "" {
		t.Fatalf("load: %s", err)
	}
	if out, _ := run(t, s, "list ltm virtual v5"); !strings.Contains(out, "127.82.0.5%5:30000") {
		t.Errorf("the loaded virtual:\n%s", out)
	}
	// Without its route domain, the file is refused whole.
	bad := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(bad, []byte(strings.ReplaceAll(strings.ReplaceAll(text, "%5", "%6"), "/Common/v5", "/Common/v6")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, s, "load sys config merge file "+bad); !strings.Contains(err, "route domain 6 does not exist") {
		t.Errorf("loading a virtual in route domain 6 with no route domain 6: error %q", err)
	}
	if out, _ := run(t, s, "list ltm virtual"); strings.Contains(out, "v6") {
		t.Errorf("a refused load was kept:\n%s", out)
	}
}

// TestRouteDomainStrictDisabled: a client of a virtual in a route domain
// with strict isolation disabled is translated by the NAT or SNAT of its
// parent (and on up while strict is disabled) when none of its own route
// domain holds it; strict enabled (the default) keeps it to its own.
func TestRouteDomainStrictDisabled(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.82.11.11:30001", fromHost, false)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net route-domain rd2 id 2 parent 0 strict disabled",
		"create net route-domain rd3 id 3 parent rd2 strict disabled",
		"create net route-domain rd4 id 4 parent rd2",
		"create ltm pool p members add { 127.82.11.11:30001 }",
		"create ltm virtual v2 destination 127.82.10.2%2:30000 pool p profiles replace-all-with { tcp { } }",
		"create ltm virtual v3 destination 127.82.10.3%3:30000 pool p profiles replace-all-with { tcp { } }",
		"create ltm virtual v4 destination 127.82.10.4%4:30000 pool p profiles replace-all-with { tcp { } }",
		// Route domain 0's NAT and SNAT; route domain 2's SNAT on a
		// narrower origin.
		"create ltm nat n0 originating-address 127.82.12.10 translation-address 127.82.10.10",
		"create ltm snat s0 origins add { 127.82.13.0/24 } translation 127.82.10.20",
		"create ltm snat s2 origins add { 127.82.13.0%2/25 } translation 127.82.10.21%2",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	probes := func(ps []natProbe) {
		t.Helper()
		for _, p := range ps {
			if got := sourceSeenFrom(t, p.from, p.vip); got != p.want {
				t.Errorf("from %s to %s, the member saw %s, want %s", p.from, p.vip, got, p.want)
			}
		}
	}
	probes([]natProbe{
		// Route domain 2 reaches 0: n0 and s0 translate its clients
		// where none of its own does; s2 first where it holds one.
		{"127.82.12.10", "127.82.10.2:30000", "127.82.10.10"},
		{"127.82.13.5", "127.82.10.2:30000", "127.82.10.21"},
		{"127.82.13.200", "127.82.10.2:30000", "127.82.10.20"},
		// Route domain 3 reaches 2, then 0.
		{"127.82.12.10", "127.82.10.3:30000", "127.82.10.10"},
		{"127.82.13.5", "127.82.10.3:30000", "127.82.10.21"},
		{"127.82.13.200", "127.82.10.3:30000", "127.82.10.20"},
		// Route domain 4 is strict: none.
		{"127.82.12.10", "127.82.10.4:30000", "127.82.12.10"},
		{"127.82.13.200", "127.82.10.4:30000", "127.82.13.200"},
	})
	// Route domain 2 made strict: its clients and route domain 3's stop
	// at route domain 2.
	if _, err := run(t, s, "modify net route-domain rd2 strict enabled"); err != "" {
		t.Fatal(err)
	}
	probes([]natProbe{
		{"127.82.12.10", "127.82.10.2:30000", "127.82.12.10"},
		{"127.82.13.200", "127.82.10.2:30000", "127.82.13.200"},
		{"127.82.13.5", "127.82.10.2:30000", "127.82.10.21"},
		{"127.82.12.10", "127.82.10.3:30000", "127.82.12.10"},
		{"127.82.13.5", "127.82.10.3:30000", "127.82.10.21"},
	})
}

// TestRouteDomainReachAndNATTimers: the translation gives a virtual the
// route domains its route domain reaches (none when strict), and a NAT's
// way in its route domain's timer policy, as a virtual in that route
// domain without a service-policy gets.
func TestRouteDomainReachAndNATTimers(t *testing.T) {
	const pol = "net timer-policy /Common/tp { rules { ssh { ip-protocol tcp destination-ports { 22 { } } timers { flow-idle-timeout { value 3600 } } } } }\n" +
		"net service-policy /Common/sp { timer-policy /Common/tp }\n"
	rds := "net route-domain /Common/rd2 { id 2 parent /Common/0 strict disabled }\n" +
		"net route-domain /Common/rd3 { id 3 parent /Common/rd2 strict disabled }\n" +
		"net route-domain /Common/rd4 { id 4 parent /Common/rd2 }\n"
	for _, tc := range []struct {
		dst   string
		reach []int
	}{{"127.82.20.1:22", nil}, {"127.82.20.1%2:22", []int{0}}, {"127.82.20.1%3:22", []int{2, 0}}, {"127.82.20.1%4:22", nil}} {
		v := translatedVirtual(t, tc.dst, rds+"ltm virtual /Common/v { destination /Common/"+tc.dst+" ip-protocol tcp profiles { /Common/tcp { } } }\n")
		if !reflect.DeepEqual(v.RouteDomainReach, tc.reach) {
			t.Errorf("%s: reach %v, want %v", tc.dst, v.RouteDomainReach, tc.reach)
		}
	}
	for _, tc := range []struct {
		name, conf string
		timers     bool
		reach      []int
	}{
		{"route domain 2's", "net route-domain /Common/rd2 { id 2 service-policy /Common/sp }\n" +
			"ltm nat /Common/n { originating-address 127.82.21.1%2 translation-address 127.82.20.1%2 }\n", true, nil},
		{"route domain 0's", "net route-domain /Common/0 { id 0 service-policy /Common/sp }\n" +
			"ltm nat /Common/n { originating-address 127.82.21.1 translation-address 127.82.20.1 }\n", true, nil},
		{"not route domain 0's in route domain 2", "net route-domain /Common/rd2 { id 2 }\nnet route-domain /Common/0 { id 0 service-policy /Common/sp }\n" +
			"ltm nat /Common/n { originating-address 127.82.21.1%2 translation-address 127.82.20.1%2 }\n", false, nil},
		{"its parent's", "net route-domain /Common/rd4 { id 4 service-policy /Common/sp }\nnet route-domain /Common/rd6 { id 6 parent rd4 strict disabled }\n" +
			"ltm nat /Common/n { originating-address 127.82.21.1%6 translation-address 127.82.20.1%6 }\n", true, []int{4}},
	} {
		dc, _, _, _ := translate(objects.Default, gtmConfig(t, pol+tc.conf), &ruleBinder{pending: map[*dataplane.Virtual]ruleList{}})
		if len(dc.NATs) != 1 {
			t.Errorf("%s: NATs %+v", tc.name, dc.NATs)
			continue
		}
		n := dc.NATs[0]
		if got := n.Timers != nil && n.Timers.Name == "/Common/tp"; got != tc.timers {
			t.Errorf("%s: the NAT's timers %+v, want the policy: %v", tc.name, n.Timers, tc.timers)
		}
		if !reflect.DeepEqual(n.RouteDomainReach, tc.reach) {
			t.Errorf("%s: the NAT's reach %v, want %v", tc.name, n.RouteDomainReach, tc.reach)
		}
	}
}

// TestVirtualSourceRouteDomain: a virtual's source written in its route
// domain (ADDRESS%ID/LEN) is the prefix without the ID, for the virtual
// (its Source) and for a deterministic LSN pool's subscribers alike.
func TestVirtualSourceRouteDomain(t *testing.T) {
	conf := "net route-domain /Common/rd2 { id 2 }\n" +
		"ltm lsn-pool /Common/det { mode deterministic members { 127.82.40.0/31 } translation-port-range 30000:30099 }\n" +
		"ltm virtual /Common/v { destination /Common/127.82.41.1%2:9000 source 127.82.42.0%2/30 ip-protocol tcp profiles { /Common/tcp { } } source-address-translation { type lsn pool /Common/det } }\n"
	cfg := gtmConfig(t, conf)
	dc, _, _, _ := translate(objects.Default, cfg, &ruleBinder{pending: map[*dataplane.Virtual]ruleList{}})
	v := dc.Virtuals["/Common/v"]
	if v == nil || v.Source.String() != "127.82.42.0/30" {
		t.Fatalf("the virtual's source: %+v", v)
	}
	if p := dc.LSN["/Common/det"]; p == nil || len(p.Subscribers) != 1 || p.Subscribers[0].String() != "127.82.42.0/30" {
		t.Errorf("the LSN pool's subscribers: %+v", p)
	}
	for _, tc := range []struct{ in, want string }{
		{"10.0.0.0%2/8", "10.0.0.0/8"}, {"10.0.0.1%2", "10.0.0.1"}, {"10.0.0.0/8", "10.0.0.0/8"}, {"2001:db8::%3/32", "2001:db8::/32"},
	} {
		if got := prefixWithoutRD(tc.in); got != tc.want {
			t.Errorf("prefixWithoutRD(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
