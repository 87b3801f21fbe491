package dataplane

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// LB::mode replaces the pool's mode for the flow's decision: a round-robin
// pool with ratios 3:1 spreads 3:1 when the rule asks for ratio-member.
func TestRulesLBMode(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.77.2:9000", "S1")
	startServer(t, "127.0.77.3:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.77.1:9000", "127.0.77.2:9000", "127.0.77.3:9000")
	pool := cfg.Pools[cfg.Virtuals["/Common/vs"].Pool]
	pool.Members[0].Ratio = 3
	pool.Members[1].Ratio = 1
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { LB::mode ratio-member }`)
	mustApply(t, p, cfg)
	seen := map[string]int{}
	for i := 0; i < 8; i++ {
		seen[once(t, "127.0.77.1:9000")]++
	}
	if seen["S1 Response"] != 6 || seen["S2 Response"] != 2 {
		t.Fatalf("ratio-member through LB::mode: %v", seen)
	}

	// An unknown mode is a rule error: that connection is reset.
	cfg2 := basic("127.0.77.1:9000", "127.0.77.2:9000")
	cfg2.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { LB::mode fastest-ever }`)
	mustApply(t, p, cfg2)
	c, err := net.DialTimeout("tcp", "127.0.77.1:9000", 2*time.Second)
	if err != nil {
		// The reset can beat the end of connect on loopback: that is the
		// rule error's reset too.
		if strings.Contains(err.Error(), "reset") {
			return
		}
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		// The reset came first: the write reports it, and a read
		// after would only see the end of the stream.
		return
	}
	if b, err := io.ReadAll(c); err == nil || len(b) > 0 {
		t.Fatalf("an unknown LB::mode was accepted: %q %v", b, err)
	}
}
