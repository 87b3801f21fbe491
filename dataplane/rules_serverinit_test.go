package dataplane

import (
	"net"
	"strings"
	"testing"
)

// SERVER_INIT on a standard virtual, with real clients and a member
// that answers each line with the address the connection came from: it
// runs after LB_SELECTED and before the member's SYN, its snat sets
// that connection's source, and choosing a member again there is a Tcl
// error that resets the client.
func TestRulesServerInit(t *testing.T) {
	t.Parallel()
	serveConns(t, "127.130.1.2:9000", func(c net.Conn) {
		from := c.RemoteAddr().(*net.TCPAddr).IP.String()
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if _, err := c.Write([]byte(from + "\n")); err != nil {
				return
			}
		}
	})
	for _, tc := range []struct {
		name, rule, want string
		reset            bool
	}{
		{"snat in SERVER_INIT", `
when LB_SELECTED { set picked [LB::server addr] }
when SERVER_INIT {
	if { $picked eq "127.130.1.2" } { snat 127.130.1.77 }
	log local0. "init [LB::server addr]"
}`, "127.130.1.77", false},
		{"no rule for it", `when CLIENT_ACCEPTED { }`, "127.130.1.9", false},
		{"snat none there", `
when CLIENT_ACCEPTED { snat 127.130.1.77 }
when SERVER_INIT { snat none }`, "127.130.1.9", false},
		{"pool there is refused", `when SERVER_INIT { pool /Common/pool }`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic("127.130.1.1:8000", "127.130.1.2:9000")
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, tc.rule)
			mustApply(t, p, cfg)
			if tc.reset {
				// The reset may reach the dialer before connect returns
				// (tryAsk counts either as refused).
				if err := tryAsk("127.130.1.9", "127.130.1.1:8000"); err == nil {
					t.Fatal("answered after a pool command in SERVER_INIT")
				}
				eventually(t, "the Tcl error logged", func() bool { return strings.Contains(lg.String(), "not valid in SERVER_INIT") })
				return
			}
			c := dialFrom(t, "127.130.1.9", "127.130.1.1:8000")
			got, err := c.ask("hi")
			if err != nil || got != tc.want {
				t.Fatalf("member saw %q (%v), want %q; log: %s", got, err, tc.want, lg)
			}
			if strings.Contains(tc.rule, "log local0.") && !strings.Contains(lg.String(), "init 127.130.1.2") {
				t.Fatalf("SERVER_INIT did not see the chosen member: %s", lg)
			}
		})
	}
}
