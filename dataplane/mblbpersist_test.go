package dataplane

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// Per-message persistence on a message-based virtual: each message's
// `persist uie <user>` keeps that user's messages on one member, whatever
// client connection they arrive on, and the records are in the table.
func TestMBLBPersistPerMessage(t *testing.T) {
	p, _ := newPlane(t)
	startServer(t, "127.0.91.11:9000", "S1")
	startServer(t, "127.0.91.12:9000", "S2")
	rule := `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    persist uie [getfield [TCP::payload] " " 1]
    TCP::release
    TCP::notify request
    TCP::collect
}
`
	cfg := mblbConfig("127.0.91.1:9000", &MBLB{Request: mblb.Framing{Mode: mblb.Rule}}, "127.0.91.11:9000", "127.0.91.12:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	mustApply(t, p, cfg)

	a, b := dialVS(t, "127.0.91.1:9000"), dialVS(t, "127.0.91.1:9000")
	first := map[string]string{}
	for i := 0; i < 3; i++ {
		for _, user := range []string{"U1", "U2", "U3", "U4"} {
			c := a
			if i%2 == 1 {
				c = b // the same user on another client connection
			}
			got := c.mustAsk(user + " message")
			if first[user] == "" {
				first[user] = got
			} else if got != first[user] {
				t.Fatalf("%s moved from %s to %s", user, first[user], got)
			}
		}
	}
	servers := map[string]bool{}
	for _, s := range first {
		servers[s] = true
	}
	if len(servers) != 2 {
		t.Fatalf("four users all on one member: %v", first)
	}
	n := 0
	p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
		if !strings.Contains(r.Key.String(), "U") {
			t.Errorf("record keyed %q, want a user", r.Key.String())
		}
		n++
		return true
	})
	if n != 4 {
		t.Fatalf("%d persistence records, want 4 (one per user)", n)
	}
}
