package mblb

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// enabled is the testPool's enabled members, min-conn's Members.
func (p *testPool) enabled() []Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Member
	for _, m := range p.members {
		if !p.disabled[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// TestMinConn: with min-conn, the OneConnect pool opens connections to
// every member before any client asks, within max-size and the members'
// connection limits, and the clients' messages use them; a member that is
// disabled and drained is not kept warm.
func TestMinConn(t *testing.T) {
	cases := []struct {
		name    string
		minConn int
		maxSize int
		limit   int // connections a member may have (0: no limit)
		want    int // connections each member has before any client
	}{
		{name: "two per member", minConn: 2, want: 2},
		{name: "within max-size", minConn: 3, maxSize: 1, want: 1},
		{name: "within the connection limit", minConn: 3, limit: 2, want: 2},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m1 := startServer(t, fmt.Sprintf("127.33.2.%d:0", 10+i), "M1", wireLength)
			m2 := startServer(t, fmt.Sprintf("127.33.2.%d:0", 10+i), "M2", wireLength)
			pool := newTestPool(m1, m2)
			cfg := baseConfig(pool, nil)
			cfg.Request = lengthFraming
			oc := &OneConnect{MaxSize: tc.maxSize, MinConn: tc.minConn, Members: pool.enabled}
			var eng atomic.Pointer[Engine] // set once the engine runs
			if tc.limit > 0 {
				oc.Limited = func(Member) bool { return true }
				oc.MayOpen = func(m Member, idle, dialing int) bool {
					e := eng.Load()
					return e != nil && e.MemberStats(m.ID).Conns+int64(dialing) < int64(tc.limit)
				}
			}
			cfg.OneConnect = oc
			vs := startVS(t, fmt.Sprintf("127.33.2.%d:0", 110+i), cfg)
			eng.Store(vs.e)
			for _, m := range []*testServer{m1, m2} {
				waitFor(t, m.label+"'s connections", func() bool { return m.openConns() == tc.want })
			}
			// A member counts a connection when it accepts it; the engine
			// counts it once the dial has returned and the connection is
			// filed as idle, a moment later.
			waitFor(t, "the spare connections to be filed", func() bool { return vs.e.Stats().SpareConnsOpened >= uint64(2*tc.want) })
			if got := vs.e.Stats().SpareConnsOpened; got != uint64(2*tc.want) {
				t.Errorf("spare connections opened %d, want %d", got, 2*tc.want)
			}
			c := dialVS(t, vs, "c1", wireLength)
			for j := 0; j < 6; j++ {
				req := reqName("c1", j)
				a, err := c.call(req)
				if label, r := splitAnswer(a); err != nil || r != req || (label != "M1" && label != "M2") {
					t.Fatalf("answer %q, %v", a, err)
				}
			}
			if !onLoops {
				// The messages went on the connections opened ahead.
				for _, m := range []*testServer{m1, m2} {
					if got := m.acceptedConns(); got != tc.want {
						t.Errorf("%s accepted %d connections, want %d", m.label, got, tc.want)
					}
				}
			}
			// A loop's requests go on connections of its loop: those
			// opened before it are replaced, and each member keeps want.
			for _, m := range []*testServer{m1, m2} {
				waitFor(t, m.label+"'s connections after the client", func() bool { return m.openConns() == tc.want })
			}
			// M1 disabled and drained: its connections close, and none
			// opens again while M2's stay.
			pool.setDisabled(1, true)
			vs.e.DrainMembers(func(m Member) bool { return m.ID == 1 })
			waitFor(t, "M1's connections to close", func() bool { return m1.openConns() == 0 })
			before := m1.acceptedConns()
			for j := 6; j < 10; j++ {
				req := reqName("c1", j)
				if a, err := c.call(req); err != nil || a != "M2|"+req {
					t.Fatalf("answer %q, %v; want M2's", a, err)
				}
			}
			if got := m1.acceptedConns(); got != before {
				t.Errorf("M1 accepted %d connections after it was drained, want %d", got, before)
			}
			if got := m2.openConns(); got < tc.want {
				t.Errorf("M2 has %d connections, want at least %d", got, tc.want)
			}
		})
	}
}
