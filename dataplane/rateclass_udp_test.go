package dataplane

import (
	"net"
	"testing"
	"time"
)

// udpRound sends n datagrams of size bytes to vs from one client socket
// and reads the member's n answers; it returns how long that took.
func udpRound(t *testing.T, vs string, n, size int) time.Duration {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := make([]byte, size)
	start := time.Now()
	for range n {
		if _, err := c.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	buf := make([]byte, 2048)
	for i := range n {
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("answer %d of %d: %v", i+1, n, err)
		}
	}
	return time.Since(start)
}

// TestRateClassUDP: a UDP virtual's rate-class, or a rule's rateclass,
// shapes its flows' datagrams in the class's direction on the class's
// buckets: 40 datagrams of 1000 bytes each way through a class of
// 160 kbps take at least what the rate implies, and the class counts
// the bytes of its direction only (the member's answers are 3 bytes
// longer: "S1:").
func TestRateClassUDP(t *testing.T) {
	t.Parallel() // a lower bound on time only; its own addresses and plane
	const n, size, bps = 40, 1000, 160e3
	up, down := uint64(n*size), uint64(n*(size+3))
	for i, tc := range []struct {
		name   string
		dir    int
		rule   bool
		passed uint64
	}{
		{"any", RateAny, false, up + down},
		{"to-server", RateToServer, false, up},
		{"to-client", RateToClient, false, down},
		{"rule rateclass", RateAny, true, up + down},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, member := "127.188.1."+itoa(10+2*i)+":25300", "127.188.1."+itoa(11+2*i)+":25300"
			startUDPMember(t, member, "S1")
			p, _ := newPlane(t)
			cfg := udpBasic(vs, member)
			cfg.RateClasses = map[string]*RateClass{"/Common/slow": {Name: "/Common/slow", Rate: bps, Ceiling: bps, Direction: tc.dir}}
			if tc.rule {
				rs, lg := compileRules(t, `when CLIENT_ACCEPTED { rateclass slow }`)
				lg.showOnFailure(t)
				cfg.Virtuals["/Common/vs"].Rules = rs
			} else {
				cfg.Virtuals["/Common/vs"].RateClass = "/Common/slow"
			}
			mustApply(t, p, cfg)
			took := udpRound(t, vs, n, size)
			if want := atLeast(int(min(up, down)), bps); took < want {
				t.Fatalf("%d datagrams through a %d bps class took %v, less than %v", n, uint64(bps), took, want)
			}
			st := p.bwc.Class("/Common/slow").ClassStats()
			if st.Bytes != tc.passed || st.Delayed == 0 || st.Dropped != 0 {
				t.Fatalf("class counters %+v, want %d bytes passed, some delayed, none dropped", st, tc.passed)
			}
		})
	}
}

// TestRateClassUDPDrops: a burst far above a UDP virtual's rate class
// (and its bwc-policy, which the class is chained after) passes in
// part and is dropped in part, the drops counted on the class as on
// the policy.
func TestRateClassUDPDrops(t *testing.T) {
	vs, member := "127.188.2.1:25300", "127.188.2.2:25300"
	startUDPMember(t, member, "S1")
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	cfg.BWC = map[string]*BWCPolicy{"/Common/wide": {Name: "/Common/wide", MaxRate: 100e6}}
	cfg.RateClasses = map[string]*RateClass{"/Common/slow": {Name: "/Common/slow", Rate: 400e3, Ceiling: 400e3}}
	cfg.Virtuals["/Common/vs"].BWC = "/Common/wide"
	cfg.Virtuals["/Common/vs"].RateClass = "/Common/slow"
	mustApply(t, p, cfg)
	udpBurst(t, nil, vs)
	cls := p.bwc.Class("/Common/slow")
	eventually(t, "datagrams dropped and passed on the class", func() bool {
		st := cls.ClassStats()
		return st.Dropped > 0 && st.Bytes > 0 && st.Dropped%1000 == 0
	})
}
