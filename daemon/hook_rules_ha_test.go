package daemon

import (
	"strconv"
	"strings"
	"testing"
)

// TestRuleHAStatusCPU: real clients ask two virtual servers whose rule
// answers HA::status and cpu usage: a standalone device is active; in a
// sync-failover group a virtual on a floating address follows its
// traffic group's state here, one on a traffic-group-local-only address
// the device's; cpu usage is a percent.
func TestRuleHAStatusCPU(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm virtual-address 127.185.30.2 traffic-group traffic-group-local-only",
		"create ltm rule ha {\nwhen CLIENT_ACCEPTED {\n  TCP::respond \"[HA::status active] [HA::status standby] [cpu usage 5secs] [cpu usage 1min] [cpu usage 5mins]\\n\"\n  TCP::close\n}\n}",
		"create ltm virtual floating destination 127.185.30.1:20080 rules { ha }",
		"create ltm virtual local destination 127.185.30.2:20080 rules { ha }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	ask := func(addr string) (string, []int) {
		t.Helper()
		f := strings.Fields(askVS(t, addr, "x"))
		if len(f) != 5 {
			t.Fatalf("%s answered %q", addr, f)
		}
		var cpu []int
		for _, w := range f[2:] {
			n, err := strconv.Atoi(w)
			if err != nil || n < 0 || n > 100 {
				t.Fatalf("%s: cpu usage %q", addr, w)
			}
			cpu = append(cpu, n)
		}
		return f[0] + " " + f[1], cpu
	}
	for _, tc := range []struct {
		name            string
		float           *floatState
		floating, local string
	}{
		{"standalone", nil, "1 0", "1 0"},
		{"active for traffic-group-1", &floatState{active: map[string]bool{"traffic-group-1": true}}, "1 0", "1 0"},
		{"standby for traffic-group-1, active for tg2", &floatState{active: map[string]bool{"traffic-group-1": false, "tg2": true}}, "0 1", "1 0"},
		{"standby", &floatState{active: map[string]bool{}}, "0 1", "0 1"},
	} {
		// The virtuals keep serving: the state is read per connection,
		// as when a failover happens under running virtuals.
		e.float.Store(tc.float)
		if got, _ := ask("127.185.30.1:20080"); got != tc.floating {
			t.Errorf("%s: floating virtual answers %q, want %q", tc.name, got, tc.floating)
		}
		if got, _ := ask("127.185.30.2:20080"); got != tc.local {
			t.Errorf("%s: local-only virtual answers %q, want %q", tc.name, got, tc.local)
		}
	}
	e.float.Store(nil)
}

// TestRuleCloneKept: a rule's clone pool on a virtual server openltm
// cannot clone from a rule (a dns profile's here) keeps the virtual with
// a warning and no traffic, rather than resetting each connection; on a
// standard, an http and a UDP virtual it runs, without a warning.
func TestRuleCloneKept(t *testing.T) {
	e, p := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool ids members add { 127.189.31.9:20001 }",
		"create ltm rule tap { when CLIENT_ACCEPTED { clone pool ids } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tc := range []struct {
		name, create string
		kept         string // the warning's kind; "" runs
	}{
		{"plain", "destination 127.189.31.1:20080", ""},
		{"web", "destination 127.189.31.2:20080 profiles replace-all-with { tcp http }", ""},
		{"dgram", "destination 127.189.31.3:20053 ip-protocol udp profiles replace-all-with { udp }", ""},
		{"resolver", "destination 127.189.31.4:20053 ip-protocol udp profiles replace-all-with { udp dns }", "a virtual server with a dns profile"},
	} {
		out, errText := run(t, s, "create ltm virtual "+tc.name+" "+tc.create+" rules { tap }")
		_, carries := p.Virtual("/Common/" + tc.name)
		if tc.kept == "" {
			if errText != "" || strings.Contains(out, "clone pool") || !carries {
				t.Errorf("%s: %q %q, carries traffic %v; want it running without a warning", tc.name, out, errText, carries)
			}
			continue
		}
		if errText != "" || !strings.Contains(out, "rule /Common/tap: clone pool on "+tc.kept+" is valid on BIG-IP but not implemented yet") || !strings.Contains(out, "kept, and it carries no traffic") || carries {
			t.Errorf("%s: %q %q, carries traffic %v; want it kept with a warning", tc.name, out, errText, carries)
		}
	}
}
