package daemon

import (
	"testing"
)

// TestSNATVLANsHTTP: a VLAN-limited SNAT and NAT act on an HTTP
// virtual's server connections as on a standard virtual's, the client's
// arrival (lo, the VLAN loop) deciding, on the event loops and on
// goroutines (a rule that suspends).
func TestSNATVLANsHTTP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	never := make(chan struct{})
	slowHTTPMember(t, "127.242.0.21:30211", func() <-chan struct{} { return never })
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create net vlan loop interfaces { lo { } } tag 0"},
		{cmd: "create net vlan other"},
		{cmd: "create ltm pool ph members add { 127.242.0.21:30211 }"},
		{cmd: "create ltm virtual v_http destination 127.242.0.2:30210 pool ph profiles replace-all-with { tcp { } http { } }"},
		{cmd: "create ltm rule r_wait { when HTTP_REQUEST { after 1 } }"},
		{cmd: "create ltm virtual v_gor destination 127.242.0.2:30212 pool ph rules { r_wait } profiles replace-all-with { tcp { } http { } }"},
		{cmd: "create ltm snat s_wide origins add { 127.242.0.0/16 } translation 127.242.0.110"},
		{cmd: "create ltm snat s_lo origins add { 127.242.3.0/24 } translation 127.242.0.111 vlans add { loop } vlans-enabled",
			out: "is acted on for standard (TCP), UDP, HTTP and the other message-based virtuals' connections"},
		{cmd: "create ltm nat n1 originating-address 127.242.4.10 translation-address 127.242.0.112 vlans add { loop } vlans-enabled"},
	})
	type probe struct{ from, want string }
	check := func(state string, probes []probe) {
		t.Helper()
		for _, vip := range []string{"127.242.0.2:30210", "127.242.0.2:30212"} {
			for _, p := range probes {
				got, c := httpFrom(t, p.from, vip, "/")
				if c != nil {
					c.Close()
				}
				if got != p.want {
					t.Errorf("%s, %s from %s: the member saw %q, want %s", state, vip, p.from, got, p.want)
				}
			}
		}
	}
	check("enabled on loop", []probe{{"127.242.3.5", "127.242.0.111"}, {"127.242.4.10", "127.242.0.112"}, {"127.242.5.5", "127.242.0.110"}})
	runSteps(t, s, []step{
		{cmd: "modify ltm snat s_lo vlans-disabled"},
		{cmd: "modify ltm nat n1 vlans-disabled"},
	})
	check("disabled on loop", []probe{{"127.242.3.5", "127.242.0.110"}, {"127.242.4.10", "127.242.0.110"}})
	runSteps(t, s, []step{{cmd: "modify ltm snat s_lo vlans replace-all-with { other } vlans-enabled"}})
	check("enabled on another VLAN", []probe{{"127.242.3.5", "127.242.0.110"}})
}
