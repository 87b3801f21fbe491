package dataplane

import (
	"strings"

	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/evict"
)

// TestFlowEvictionRecentRate: bias-fast ranks by a connection's recent
// rate (evict.RateWindow), not its rate since it opened. Client 0 sends
// 64 KiB at once and then nothing; client 1 sends a line every 300 ms
// for longer than the window; client 2 nothing. When a fourth client
// finds the virtual full, client 1 (the fastest of late) is reset, not
// client 0, which over its whole life is the fastest.
func TestFlowEvictionRecentRate(t *testing.T) {
	vsAddr := "127.196.10.1:30240"
	member := "127.196.11.1:30250"
	startServer(t, member, "S1")
	p, _ := newPlane(t)
	cfg := basic(vsAddr, member)
	v := cfg.Virtuals["/Common/vs"]
	v.ConnectionLimit = 3
	v.Eviction = &EvictionPolicy{High: 100, Low: 75, BiasFast: true}
	mustApply(t, p, cfg)
	var cl []*client
	for k := 0; k < 3; k++ {
		cl = append(cl, dialVS(t, vsAddr))
		eventually(t, "the client's flow", func() bool { return p.ConnectionCount() == k+1 })
		msg := "hi"
		if k == 0 {
			msg = strings.Repeat("x", 64<<10)
		}
		cl[k].mustAsk(msg)
	}
	// Client 1 trickles for longer than the window (and a sample or
	// two more), bounded in count.
	until := time.Now().Add(evict.RateWindow + 1500*time.Millisecond)
	for i := 0; i < 100 && time.Now().Before(until); i++ {
		cl[1].mustAsk(strings.Repeat("y", 200))
		time.Sleep(300 * time.Millisecond)
	}
	if fourth, err := tryAskErr(vsAddr); err != nil || fourth != "S1 Response" {
		t.Fatalf("the fourth client: %q, %v; want admitted", fourth, err)
	}
	for k, x := range cl {
		_, err := x.ask("after")
		if (err != nil) != (k == 1) {
			t.Errorf("client %d: error %v; want evicted %v", k, err, k == 1)
		}
	}
}
