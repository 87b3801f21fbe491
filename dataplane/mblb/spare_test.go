package mblb

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestMinConnOwn: min-conn without OneConnect keeps connections open to
// each listed member before any client; a client's first message to a
// member takes one as its own (no connect of its own), and another is
// opened in its place; one the member closes is replaced; a member no
// longer listed (drained, disabled) keeps none.
func TestMinConnOwn(t *testing.T) {
	cases := []struct {
		name string
		n    int
	}{
		{"one per member", 1},
		{"two per member", 2},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m1 := startServer(t, fmt.Sprintf("127.70.4.%d:0", 10+i), "M1", wireLength)
			m2 := startServer(t, fmt.Sprintf("127.70.4.%d:0", 10+i), "M2", wireLength)
			pool := newTestPool(m1, m2)
			var onlyM1 atomic.Bool
			cfg := baseConfig(pool, nil)
			cfg.Request = lengthFraming
			cfg.MinConn = tc.n
			cfg.MinConnMembers = func() []Member {
				if onlyM1.Load() {
					return pool.members[:1]
				}
				return pool.members
			}
			vs := startVS(t, fmt.Sprintf("127.70.4.%d:0", 110+i), cfg)
			// The janitor refills and trims the spares on its tick (a
			// second by default): ticking often, the waits below end
			// sooner; what they wait for is the same.
			vs.e.wantTick(50 * time.Millisecond)
			n := tc.n
			waitFor(t, "the connections opened ahead", func() bool {
				return vs.e.Stats().SpareConnsOpened == uint64(2*n) && m1.openConns() == n && m2.openConns() == n
			})
			c := dialVS(t, vs, "c1", wireLength)
			for j, want := range []string{"M1|c1-0", "M2|c1-1", "M1|c1-2", "M2|c1-3"} {
				if got, err := c.call(reqName("c1", j)); err != nil || got != want {
					t.Fatalf("call %d: %q, %v; want %q", j, got, err, want)
				}
			}
			if st := vs.e.Stats(); st.SpareConnsTaken != 2 {
				t.Fatalf("connections taken: %d, want 2 (one per member, on the first message)", st.SpareConnsTaken)
			}
			// The two taken are replaced: n idle again beside the client's own.
			waitFor(t, "the taken ones replaced", func() bool {
				return vs.e.spare.idleCount() == 2*n && m1.openConns() == n+1 && m2.openConns() == n+1
			})
			if a1, a2 := m1.acceptedConns(), m2.acceptedConns(); a1 != n+1 || a2 != n+1 {
				t.Fatalf("connections accepted: %d and %d, want %d each (none dialled by the client)", a1, a2, n+1)
			}
			// M1 closes all its connections: the idle ones are replaced,
			// and the client's next message to M1 takes one of them.
			before := vs.e.Stats().SpareConnsOpened
			m1.closeConns()
			waitFor(t, "M1's closed ones replaced", func() bool {
				return vs.e.Stats().SpareConnsOpened >= before+uint64(n) && vs.e.spare.idleCount() == 2*n && m1.openConns() == n
			})
			if got, err := c.call("c1-4"); err != nil || got != "M1|c1-4" {
				t.Fatalf("call after M1's close: %q, %v", got, err)
			}
			// M2 no longer listed: its idle ones close; the client's own stays.
			onlyM1.Store(true)
			waitFor(t, "M2's idle ones closed", func() bool { return m2.openConns() == 1 })
			if got, err := c.call("c1-5"); err != nil || got != "M2|c1-5" {
				t.Fatalf("call to M2 on the client's own: %q, %v", got, err)
			}
		})
	}
}
