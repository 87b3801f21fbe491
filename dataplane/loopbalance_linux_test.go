package dataplane

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// A burst of connections is spread over the event loops, whichever loop
// wakes for the accepts, and each loop's count of its clients comes back
// to zero when they leave: for plain L4 flows and for clients of an HTTP
// virtual (message-balanced, on the loops).
func TestAcceptBurstSpreadsOverLoops(t *testing.T) {
	startServer(t, "127.0.190.11:80", "S1")
	cases := []struct {
		name string
		vs   string
		mblb *MBLB
	}{
		{"plain", "127.0.190.1:80", nil},
		{"http", "127.0.190.2:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic(c.vs, "127.0.190.11:80")
			if c.mblb != nil {
				cfg = mblbConfig(c.vs, c.mblb, "127.0.190.11:80")
			}
			mustApply(t, p, cfg)
			const n = 40
			conns := make([]net.Conn, 0, n)
			defer func() {
				for _, cn := range conns {
					cn.Close()
				}
			}()
			for range n {
				cn, err := net.DialTimeout("tcp", c.vs, 2*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, cn)
			}
			loads := waitLoads(t, p, func(l []int) bool { return sum(l) == n })
			if len(loads) > 1 && slices.Max(loads)-slices.Min(loads) > 2 {
				t.Errorf("loads %v: a burst of %d connections is not spread over the loops", loads, n)
			}
			for _, cn := range conns {
				cn.Close()
			}
			conns = nil
			waitLoads(t, p, func(l []int) bool { return sum(l) == 0 })
		})
	}
}

func sum(l []int) int {
	s := 0
	for _, v := range l {
		s += v
	}
	return s
}

// waitLoads polls the loops' client counts until ok holds (5 s at most).
func waitLoads(t *testing.T, p *Plane, ok func([]int) bool) []int {
	t.Helper()
	var l []int
	for range 250 {
		if l = p.l4.LoopLoads(); ok(l) {
			return l
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("loop loads %v after 5 s", l)
	return nil
}
