package dataplane

import (
	"strings"
	"testing"
)

// TestSessionBesidePersist: `session add uie KEY DATA` keeps the rule's
// data under a persistence key without making it a persistence record
// (F5: it "does not affect the persistence itself"): `persist uie KEY`
// balances and records the member it chose, every connection with the
// key goes there, and session lookup still answers the data. Deleting
// the session data leaves the persistence record, and the reverse.
func TestSessionBesidePersist(t *testing.T) {
	startServer(t, "127.152.4.2:80", "A")
	startServer(t, "127.152.4.3:80", "B")
	p, _ := newPlane(t)
	cfg := basic("127.152.4.1:80", "127.152.4.2:80", "127.152.4.3:80")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    switch [IP::client_addr] {
        127.152.4.20 { session delete uie user1 }
        127.152.4.21 { persist delete uie user1 }
        default { session add uie user1 {127.152.4.9 80} 300 }
    }
    persist uie user1 300
}
when SERVER_CONNECTED {
    clientside { TCP::respond "session=[session lookup uie user1] persist=[persist lookup uie user1 node]\n" }
}`)
	mustApply(t, p, cfg)
	ask := func(src string) (string, string) {
		t.Helper()
		c := dialFrom(t, src, "127.152.4.1:80")
		defer c.c.Close()
		head, err := c.r.ReadString('\n')
		if err != nil {
			t.Fatalf("from %s: %v", src, err)
		}
		return strings.TrimSpace(head), c.mustAsk("hello")
	}
	head, first := ask("127.152.4.10")
	member := map[string]string{"A Response": "127.152.4.2", "B Response": "127.152.4.3"}[first]
	if member == "" {
		t.Fatalf("first connection: %q", first)
	}
	if want := "session=127.152.4.9 80 persist=" + member; head != want {
		t.Errorf("first connection: %q, want %q", head, want)
	}
	for i := 0; i < 3; i++ {
		if h, got := ask("127.152.4.11"); got != first || h != "session=127.152.4.9 80 persist="+member {
			t.Errorf("connection %d: %q %q, want the persisted member %q beside the session data", i, h, got, first)
		}
	}
	// The session data goes; the persistence record stays.
	if h, got := ask("127.152.4.20"); got != first || h != "session= persist="+member {
		t.Errorf("after session delete: %q %q", h, got)
	}
	// The persistence record goes; the session data (added again by the
	// other clients) stays.
	ask("127.152.4.10")
	if h, _ := ask("127.152.4.21"); !strings.HasPrefix(h, "session=127.152.4.9 80 persist=127.152.4.") {
		t.Errorf("after persist delete: %q", h)
	}
}
