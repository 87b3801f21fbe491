package daemon

import (
	"strings"
	"testing"
)

// TestNATRouteDomain: ltm nat, ltm snat, ltm snatpool and ltm
// snat-translation take addresses written ADDRESS%ID; an ID no route
// domain has, or a NAT or SNAT across two route domains, is refused
// with nothing changed; list prints them as written; and a NAT or SNAT
// in route domain 2 translates the clients of the virtuals in route
// domain 2 only, those of route domain 0 taking what they would
// without it.
func TestNATRouteDomain(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.60.5.11:30001", fromHost, false)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net route-domain rd2 id 2",
		"create ltm pool p members add { 127.60.5.11:30001 }",
		"create ltm virtual v0 destination 127.60.4.1:30000 pool p profiles replace-all-with { tcp { } }",
		"create ltm virtual v2 destination 127.60.4.2%2:30000 pool p profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	runSteps(t, s, []step{
		{cmd: "create ltm nat n2 originating-address 127.60.6.10%2 translation-address 127.60.4.10%2"},
		{cmd: "create ltm snat s2 origins add { 127.60.7.0%2/24 } translation 127.60.4.20%2"},
		{cmd: "create ltm snat s0 origins add { 127.60.7.0/25 } translation 127.60.4.21"},
		{cmd: "create ltm snatpool sp2 members add { 127.60.4.30%2 }"},
		{cmd: "create ltm snat-translation 127.60.4.31%2 address 127.60.4.31%2"},
		{cmd: "create ltm nat z_bad originating-address 127.60.6.11%9 translation-address 127.60.4.11%9", err: "route domain 9 does not exist"},
		{cmd: "create ltm nat z_bad originating-address 127.60.6.11%2 translation-address 127.60.4.11", err: "are in different route domains (2 and 0)"},
		{cmd: "create ltm nat z_bad originating-address 127.60.6.11%x translation-address 127.60.4.11", err: "is not an IP address"},
		{cmd: "create ltm snat z_bad origins add { 127.60.8.0%9/24 } translation 127.60.4.22", err: "ltm snat /Common/z_bad: origin 127.60.8.0%9: route domain 9 does not exist"},
		{cmd: "create ltm snat z_bad origins add { 127.60.8.0%2/24 127.60.9.0/24 } translation 127.60.4.22", err: "ltm snat /Common/z_bad: origins are in route domains 2 and 0"},
		{cmd: "create ltm snat z_bad origins add { 127.60.8.0/24 } translation 127.60.4.22%9", err: "127.60.4.22%9: route domain 9 does not exist"},
		{cmd: "create ltm snatpool z_bad members add { 127.60.4.32%9 }", err: "127.60.4.32%9: route domain 9 does not exist"},
		{cmd: "create ltm snat-translation z_bad address 127.60.4.33%9", err: "127.60.4.33%9: route domain 9 does not exist"},
		{cmd: "delete net route-domain rd2", err: "route domain 2 does not exist"},
	})
	out, _ := run(t, s, "list ltm nat n2")
	if !strings.Contains(out, "originating-address 127.60.6.10%2\n") || !strings.Contains(out, "translation-address 127.60.4.10%2\n") {
		t.Errorf("list ltm nat n2:\n%s", out)
	}
	out, _ = run(t, s, "list ltm snat s2")
	if !strings.Contains(out, "127.60.7.0%2/24") || !strings.Contains(out, "translation 127.60.4.20%2") {
		t.Errorf("list ltm snat s2:\n%s", out)
	}
	if out, _ := run(t, s, "list ltm"); strings.Contains(out, "z_bad") {
		t.Errorf("a refused object was kept:\n%s", out)
	}
	// The way out: the NAT's and the SNAT's clients through v2 (route
	// domain 2) leave from their translation addresses; through v0
	// (route domain 0) the NAT's client keeps its address, and the
	// SNAT's client keeps its own, or takes s0 (route domain 0, a more
	// specific origin) where s0 holds it; through v2, s2 is taken
	// though s0 is more specific, s0 being in another route domain.
	for _, p := range []natProbe{
		{"127.60.6.10", "127.60.4.2:30000", "127.60.4.10"},
		{"127.60.6.10", "127.60.4.1:30000", "127.60.6.10"},
		{"127.60.7.200", "127.60.4.2:30000", "127.60.4.20"},
		{"127.60.7.200", "127.60.4.1:30000", "127.60.7.200"},
		{"127.60.7.5", "127.60.4.2:30000", "127.60.4.20"},
		{"127.60.7.5", "127.60.4.1:30000", "127.60.4.21"},
	} {
		if got := sourceSeenFrom(t, p.from, p.vip); got != p.want {
			t.Errorf("from %s to %s, the member saw %s, want %s", p.from, p.vip, got, p.want)
		}
	}
}
