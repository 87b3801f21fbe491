package mblb

import (
	"fmt"
	"testing"
	"time"
)

// openConns is how many of the member's connections are still open on
// its side.
func (s *testServer) openConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// TestDrainMembers: a member a commit disables or removes is drained.
// Its connections carry nothing new; an answer owed on one still comes
// within ShutdownTimeout, after which the connection closes; past the
// timeout (or at once with 0) the connection goes and the request is
// answered by another member, or the client is reset without retries.
// M1 and M2 are real members on loopback; M1 answers after delay.
func TestDrainMembers(t *testing.T) {
	cases := []struct {
		name       string
		timeout    time.Duration
		delay      time.Duration // M1's answer delay
		pending    bool          // a request is on M1 when it is drained
		oneConnect bool
		noRetry    bool
		want       string // label of the pending request's answer; "" a reset
		retries    uint64
	}{
		{name: "idle own connection closes at once", timeout: 5 * time.Second},
		{name: "idle pooled connection closes at once", timeout: 5 * time.Second, oneConnect: true},
		{name: "answer owed comes within the timeout", timeout: 10 * time.Second, delay: 300 * time.Millisecond, pending: true, want: "M1"},
		{name: "pooled: answer owed comes within the timeout", timeout: 10 * time.Second, delay: 300 * time.Millisecond, pending: true, oneConnect: true, want: "M1"},
		{name: "timeout passes: another member answers", timeout: 200 * time.Millisecond, delay: 2 * time.Second, pending: true, want: "M2", retries: 1},
		{name: "timeout 0: another member answers at once", delay: 2 * time.Second, pending: true, want: "M2", retries: 1},
		{name: "timeout passes without retries: client reset", timeout: 200 * time.Millisecond, delay: 2 * time.Second, pending: true, noRetry: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case its own addresses, members and engine
			m1 := startServer(t, fmt.Sprintf("127.33.1.%d:0", 10+i), "M1", wireLength)
			m2 := startServer(t, fmt.Sprintf("127.33.1.%d:0", 10+i), "M2", wireLength)
			pool := newTestPool(m1, m2)
			cfg := baseConfig(pool, nil)
			cfg.Request = lengthFraming
			cfg.ShutdownTimeout = tc.timeout
			cfg.DisableRetry = tc.noRetry
			if tc.oneConnect {
				cfg.OneConnect = &OneConnect{}
			}
			vs := startVS(t, fmt.Sprintf("127.33.1.%d:0", 110+i), cfg)
			c := dialVS(t, vs, "c1", wireLength)
			// The first request opens a connection to M1 (round robin).
			if a, err := c.call("c1-0"); err != nil || a != "M1|c1-0" {
				t.Fatalf("first answer %q, %v", a, err)
			}
			if tc.pending {
				m1.delay.Store(int64(tc.delay))
				pool.mu.Lock()
				pool.next = 0 // M1 again
				pool.mu.Unlock()
				if err := c.send([]byte("c1-1")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the request on M1", func() bool { return m1.msgs.Load() == 2 })
			}
			pool.setDisabled(1, true)
			n := vs.e.DrainMembers(func(m Member) bool { return m.ID == 1 })
			if n != 1 {
				t.Fatalf("drained %d connections, want 1", n)
			}
			if tc.pending {
				b, err := c.recv()
				switch {
				case tc.want == "" && err == nil:
					t.Fatalf("answer %q, want a reset", b)
				case tc.want == "" && !isReset(err):
					t.Fatalf("error %v, want a reset", err)
				case tc.want != "" && (err != nil || string(b) != tc.want+"|c1-1"):
					t.Fatalf("answer %q, %v; want %s's", b, err, tc.want)
				}
			}
			waitFor(t, "M1's connection to close", func() bool { return m1.openConns() == 0 })
			if got := vs.e.Stats().Retries; got != tc.retries {
				t.Errorf("retries %d, want %d", got, tc.retries)
			}
			if tc.want == "" && tc.pending {
				return // the client is gone
			}
			// Nothing new goes to M1 any more, and no connection opens to it.
			for j := 2; j < 6; j++ {
				req := reqName("c1", j)
				if a, err := c.call(req); err != nil || a != "M2|"+req {
					t.Fatalf("answer %q, %v; want M2's", a, err)
				}
			}
			if got := m1.acceptedConns(); got != 1 {
				t.Errorf("M1 accepted %d connections, want 1", got)
			}
		})
	}
}
