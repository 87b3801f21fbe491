package dataplane

import (
	"net"
	"strings"
	"testing"
)

// TestRulesLinkHops: LINK::lasthop and LINK::nexthop on a real client's
// connection through a standard virtual to a real member, all on the
// loopback interface: the broadcast address for the next hop before
// the server connection, the loopback's all-zero address and type
// LOOPBACK after it, from either side.
func TestRulesLinkHops(t *testing.T) {
	t.Parallel()
	serveConns(t, "127.130.3.2:9000", rawEcho)
	p, _ := newPlane(t)
	cfg := basic("127.130.3.1:8000", "127.130.3.2:9000")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { log local0. "accepted [LINK::lasthop] [LINK::lasthop type] [LINK::nexthop] [LINK::nexthop type]" }
when SERVER_CONNECTED {
	log local0. "connected [LINK::lasthop] [LINK::nexthop type] [clientside {LINK::nexthop}] [clientside {LINK::lasthop name}]"
}`)
	mustApply(t, p, cfg)
	c := dialFrom(t, "127.130.3.9", "127.130.3.1:8000")
	if got := c.mustAsk("hi"); got != "hi" {
		t.Fatalf("echo %q", got)
	}
	lo := "lo"
	if ifs, err := net.Interfaces(); err == nil {
		for _, i := range ifs {
			if i.Flags&net.FlagLoopback != 0 {
				lo = i.Name
			}
		}
	}
	for _, want := range []string{
		"accepted 00:00:00:00:00:00 LOOPBACK ff:ff:ff:ff:ff:ff UNKNOWN",
		"connected 00:00:00:00:00:00 LOOPBACK 00:00:00:00:00:00 " + lo,
	} {
		if !strings.Contains(lg.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, lg)
		}
	}
}
