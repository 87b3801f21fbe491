package daemon

import (
	"testing"
	"time"
)

// TestSNATVLANs: an ltm snat or ltm nat with vlans-enabled on the VLAN
// of lo (where this host's own connections and datagrams arrive)
// translates them, on a TCP and a UDP virtual; with
// vlans-disabled on it, it does not, the next SNAT of the network (or
// none) taking them; a VLAN that does not exist is refused with nothing
// changed; the commit says where the list acts.
func TestSNATVLANs(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.231.0.11:30001", fromHost, false)
	udpFromMember(t, "127.231.0.21:30011", fromHost)
	udpSeen := func(from string) string {
		got, c := udpSourceFrom(t, from, "127.231.0.2:30010", 3*time.Second)
		c.Close()
		return got
	}
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create net vlan loop interfaces { lo { } } tag 0"},
		{cmd: "create net vlan other"},
		{cmd: "create ltm pool p members add { 127.231.0.11:30001 }"},
		{cmd: "create ltm virtual v1 destination 127.231.0.1:30000 pool p profiles replace-all-with { tcp { } }"},
		{cmd: "create ltm pool pu members add { 127.231.0.21:30011 }"},
		{cmd: "create ltm virtual v_udp destination 127.231.0.2:30010 ip-protocol udp profiles replace-all-with { udp { } } pool pu"},
		{cmd: "create ltm snat s_wide origins add { 127.231.0.0/16 } translation 127.231.0.100"},
		{cmd: "create ltm snat s_lo origins add { 127.231.1.0/24 } translation 127.231.0.101 vlans add { loop } vlans-enabled",
			out: "vlans { loop } vlans-enabled is acted on for standard (TCP), UDP, HTTP and the other message-based virtuals' connections"},
		{cmd: "create ltm nat n1 originating-address 127.231.2.10 translation-address 127.231.0.110 vlans add { loop } vlans-enabled",
			out: "vlans { loop } vlans-enabled is acted on for the connections to translation-address 127.231.0.110"},
		{cmd: "create ltm snat z_bad origins add { 127.231.3.0/24 } automap vlans add { nosuch } vlans-enabled", err: "vlan nosuch does not exist"},
	})
	for _, p := range []natProbe{
		{"127.231.1.5", "127.231.0.1:30000", "127.231.0.101"},
		{"127.231.2.10", "127.231.0.1:30000", "127.231.0.110"},
		{"127.231.3.5", "127.231.0.1:30000", "127.231.0.100"},
	} {
		if got := sourceSeenFrom(t, p.from, p.vip); got != p.want {
			t.Errorf("enabled on loop: from %s, the member saw %s, want %s", p.from, got, p.want)
		}
	}
	if got := udpSeen("127.231.1.6"); got != "127.231.0.101" {
		t.Errorf("enabled on loop, udp: the member saw %q, want 127.231.0.101", got)
	}
	runSteps(t, s, []step{
		{cmd: "modify ltm snat s_lo vlans-disabled"},
		{cmd: "modify ltm nat n1 vlans-disabled"},
	})
	for _, p := range []natProbe{
		{"127.231.1.5", "127.231.0.1:30000", "127.231.0.100"},
		{"127.231.2.10", "127.231.0.1:30000", "127.231.0.100"},
	} {
		if got := sourceSeenFrom(t, p.from, p.vip); got != p.want {
			t.Errorf("disabled on loop: from %s, the member saw %s, want %s", p.from, got, p.want)
		}
	}
	if got := udpSeen("127.231.1.7"); got != "127.231.0.100" {
		t.Errorf("disabled on loop, udp: the member saw %q, want 127.231.0.100", got)
	}
	runSteps(t, s, []step{{cmd: "modify ltm snat s_lo vlans replace-all-with { other } vlans-enabled"}})
	if got := sourceSeenFrom(t, "127.231.1.5", "127.231.0.1:30000"); got != "127.231.0.100" {
		t.Errorf("enabled on another VLAN: the member saw %s, want the wide SNAT's", got)
	}
	if out, _ := run(t, s, "list ltm snat"); regexpMatch("z_bad", out) {
		t.Errorf("a refused snat was kept:\n%s", out)
	}
}
