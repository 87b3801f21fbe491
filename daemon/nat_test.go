package daemon

import (
	"regexp"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestNATObjects: an ltm nat forwards connections to its translation
// address to the same port of its originating address, the client's
// address kept (where the plane can take every port of an address);
// the originating address's connections through a virtual leave from
// the translation address, before a SNAT object; what BIG-IP refuses is
// refused with nothing changed; settings kept and not acted on are
// warned of; list and show print the NAT.
func TestNATObjects(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.219.5.11:30001", fromHost, false) // a pool member
	fromMember(t, "127.219.6.10:30001", fromHost, false) // the originating address's service
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.219.5.11:30001 }",
		"create ltm virtual v1 destination 127.219.4.1:30000 pool p profiles replace-all-with { tcp { } }",
		"create ltm virtual v_any destination 127.219.4.2:any pool p profiles replace-all-with { tcp { } }",
		"create ltm pool p_nonat allow-nat no members add { 127.219.5.11:30001 }",
		"create ltm virtual v_nonat destination 127.219.4.5:30000 pool p_nonat profiles replace-all-with { tcp { } }",
		"create ltm pool p_nosnat allow-snat no members add { 127.219.5.11:30001 }",
		"create ltm virtual v_nosnat destination 127.219.4.6:30000 pool p_nosnat profiles replace-all-with { tcp { } }",
		"create ltm snat s_net origins add { 127.219.6.0/24 } translation 127.219.4.100",
		"create ltm snatpool sp members add { 127.219.4.101 }",
		"create net vlan internal",
		"create net self self1 address 127.219.4.200/24 vlan internal",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	inbound := dataplane.AnyPortSupport() == nil
	runSteps(t, s, []step{
		{cmd: "create ltm nat n1 originating-address 127.219.6.10 translation-address 127.219.4.10"},
		{cmd: "create ltm nat z_bad translation-address 127.219.4.11", err: "originating-address is required"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11", err: "translation-address is required"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address fd00:219::11", err: "different address families"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address 127.219.4.10", err: "translation-address 127.219.4.10 is already the translation address of ltm nat /Common/n1"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.10 translation-address 127.219.4.12", err: "originating-address 127.219.6.10 is already the originating address of ltm nat /Common/n1"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address 127.219.4.100", err: "translation-address 127.219.4.100 is already the translation address of ltm snat /Common/s_net"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address 127.219.4.101", err: "is already a member of ltm snatpool /Common/sp"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address 127.219.4.200", err: "is already the self IP /Common/self1"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address 127.219.4.2", err: "is already the address ltm virtual /Common/v_any takes on every port"},
		{cmd: "create ltm virtual-address 127.219.4.3 address 127.219.4.3", out: ""},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address 127.219.4.3", err: "is already the ltm virtual-address /Common/127.219.4.3"},
		{cmd: "create ltm nat z_bad originating-address 127.219.6.11 translation-address 127.219.6.11", err: "are both 127.219.6.11"},
		{cmd: "create ltm nat n2 originating-address 127.219.6.12 translation-address 127.219.4.12 arp disabled traffic-group traffic-group-local-only vlans-enabled vlans { internal }",
			out: `property "arp" is kept and saved back; openltm does not act on it (openltm answers no ARP for its addresses)`},
		{cmd: "modify ltm nat n2 disabled"},
	})
	if out, _ := run(t, s, "list ltm nat"); strings.Contains(out, "z_bad") || !strings.Contains(out, "ltm nat n1 {\n    originating-address 127.219.6.10\n") ||
		!strings.Contains(out, "translation-address 127.219.4.10") || !strings.Contains(out, "disabled") {
		t.Errorf("list ltm nat:\n%s", out)
	}
	// The way out: the originating address through v1 leaves from the
	// translation address, before the SNAT of its network; its
	// neighbour takes the SNAT; a disabled NAT translates nothing. A
	// pool with allow-nat no takes the SNAT of the network instead; one
	// with allow-snat no takes the NAT still, and no SNAT.
	for _, p := range []natProbe{
		{"127.219.6.10", "127.219.4.1:30000", "127.219.4.10"},
		{"127.219.6.9", "127.219.4.1:30000", "127.219.4.100"},
		{"127.219.6.12", "127.219.4.1:30000", "127.219.4.100"},
		{"127.219.6.10", "127.219.4.5:30000", "127.219.4.100"},
		{"127.219.6.10", "127.219.4.6:30000", "127.219.4.10"},
		{"127.219.6.9", "127.219.4.6:30000", "127.219.6.9"},
	} {
		if got := sourceSeenFrom(t, p.from, p.vip); got != p.want {
			t.Errorf("from %s to %s, the member saw %s, want %s", p.from, p.vip, got, p.want)
		}
	}
	if inbound {
		// The way in: the translation address on the originating
		// address's port, the client's address kept.
		if got := sourceSeenFrom(t, "127.219.7.5", "127.219.4.10:30001"); got != "127.219.7.5" {
			t.Errorf("to the translation address: the originating address saw %s, want the client's", got)
		}
	}
	out, errText := run(t, s, "show ltm nat n1")
	if errText != "" || !strings.Contains(out, "Ltm::NAT: n1") || !regexpMatch(`Outbound\n  Total Connections +2\n`, out) {
		t.Errorf("show ltm nat n1: %s\n%s", errText, out)
	}
	if inbound && !regexpMatch(`Inbound\n(?s:.*)  Total Connections +1\n`, out) {
		t.Errorf("show ltm nat n1: no inbound connection counted:\n%s", out)
	}
	// Disabled and enabled again: the counters go on.
	runSteps(t, s, []step{{cmd: "modify ltm nat n1 disabled"}, {cmd: "modify ltm nat n1 enabled"}})
	if out, _ := run(t, s, "show ltm nat n1"); !regexpMatch(`Outbound\n  Total Connections +2\n`, out) ||
		inbound && !regexpMatch(`Inbound\n(?s:.*)  Total Connections +1\n`, out) {
		t.Errorf("show ltm nat n1 after disable and enable:\n%s", out)
	}
	runSteps(t, s, []step{{cmd: "reset-stats ltm nat n1"}})
	if out, _ := run(t, s, "show ltm nat n1"); !regexpMatch(`Outbound\n  Total Connections +0\n`, out) || !regexpMatch(`Inbound\n(?s:.*)  Total Connections +0\n`, out) {
		t.Errorf("after reset-stats ltm nat n1:\n%s", out)
	}
	if out, _ := run(t, s, "show ltm nat n2"); !strings.Contains(out, "disabled") {
		t.Errorf("show ltm nat n2:\n%s", out)
	}
	if out, _ := run(t, s, "show ltm virtual"); strings.Contains(out, "Server: ltm nat") {
		t.Errorf("show ltm virtual lists a NAT's own virtual:\n%s", out)
	}
	runSteps(t, s, []step{{cmd: "delete ltm nat n1"}})
	if got := sourceSeenFrom(t, "127.219.6.10", "127.219.4.1:30000"); got != "127.219.4.100" {
		t.Errorf("after delete: the member saw %s, want the SNAT's address", got)
	}
}

type natProbe struct{ from, vip, want string }

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestDrawNATStats: the block says why a NAT carries no inbound
// traffic: not run at all, or kept for the way out only; a disabled
// NAT needs no reason.
func TestDrawNATStats(t *testing.T) {
	for _, tc := range []struct {
		name    string
		state   string
		running bool
		st      dataplane.NATStats
		want    string // "" : no Reason line
	}{
		{"forwarding", "enabled", true, dataplane.NATStats{Inbound: true, Out: 2}, ""},
		{"outbound only", "enabled", true, dataplane.NATStats{Out: 2}, "are not forwarded: openltm cannot take every port"},
		{"disabled", "disabled", true, dataplane.NATStats{Out: 2}, ""},
		{"not run", "enabled", false, dataplane.NATStats{}, "openltm does not run it"},
	} {
		var b strings.Builder
		if err := drawNATStats(&b, "/Common/n1", tc.state, tc.running, tc.st); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "Ltm::NAT: n1\n") || !strings.Contains(out, "  State                   : "+tc.state+"\n") {
			t.Errorf("%s: header:\n%s", tc.name, out)
		}
		if tc.want == "" && strings.Contains(out, "Reason") || tc.want != "" && !strings.Contains(out, tc.want) {
			t.Errorf("%s: want reason %q:\n%s", tc.name, tc.want, out)
		}
		if !regexpMatch(`Outbound\n  Total Connections +`+map[bool]string{true: "2", false: "0"}[tc.st.Out == 2]+`\n`, out) {
			t.Errorf("%s: outbound count:\n%s", tc.name, out)
		}
	}
}
