package dataplane

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lightShare runs two UDP clients through vs at once: a heavy one
// sending 1000-byte datagrams as fast as it can, and a light one sending
// 20 datagrams of 100 bytes, 50 ms apart, while the heavy one floods. It
// returns how many of the light client's 20 were answered.
func lightShare(t *testing.T, vs string) int {
	t.Helper()
	heavy, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatal(err)
	}
	defer heavy.Close()
	light, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatal(err)
	}
	defer light.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the heavy client's answers, read so that none backs up
		defer wg.Done()
		buf := make([]byte, 2048)
		for !stop.Load() {
			heavy.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			heavy.Read(buf)
		}
	}()
	go func() {
		defer wg.Done()
		d := make([]byte, 1000)
		for i := 0; i < 200000 && !stop.Load(); i++ {
			heavy.Write(d)
			if i%20 == 19 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	time.Sleep(300 * time.Millisecond) // the heavy flow fills its queue first
	d := make([]byte, 100)
	for range 20 {
		if _, err := light.Write(d); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := 0
	buf := make([]byte, 2048)
	for got < 20 {
		light.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := light.Read(buf); err != nil {
			break
		}
		got++
	}
	return got
}

// TestRateClassUDPQueues: a rate class's queue discipline decides whose
// datagrams a UDP virtual's busy class sends. With sfq (BIG-IP's
// default) each flow queues on its own and the class serves them in
// turn, so a light flow beside a flooding one gets its datagrams
// through; pfifo is one queue for the class, which the flood keeps
// full, and the class counts what it drops. The shares are logged; the
// test asserts only sfq's lower bound.
func TestRateClassUDPQueues(t *testing.T) {
	for i, tc := range []struct {
		name     string
		q        RateQueue
		minLight int
	}{
		{"sfq", RateQueue{}, 15},
		{"pfifo", RateQueue{FIFO: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, member := "127.190.3."+itoa(10+2*i)+":25310", "127.190.3."+itoa(11+2*i)+":25310"
			startUDPMember(t, member, "S1")
			p, _ := newPlane(t)
			cfg := udpBasic(vs, member)
			cfg.RateClasses = map[string]*RateClass{"/Common/c": {Name: "/Common/c", Rate: 200e3, Ceiling: 200e3,
				Direction: RateToServer, Queue: tc.q}}
			cfg.Virtuals["/Common/vs"].RateClass = "/Common/c"
			mustApply(t, p, cfg)
			got := lightShare(t, vs)
			st := p.bwc.Class("/Common/c").ClassStats()
			t.Logf("%s: light flow %d of 20 answered; class dropped %d datagrams (full queue)", tc.name, got, st.DroppedFull)
			if got < tc.minLight {
				t.Fatalf("light flow: %d of 20 answered beside a flood, want at least %d", got, tc.minLight)
			}
			if st.DroppedFull == 0 || st.DroppedEarly != 0 {
				t.Fatalf("class counters %+v: want full-queue drops of the flood, no early drops (tail)", st)
			}
		})
	}
}

// TestRateClassUDPDropPolicy: a class's drop policy drops a burst's
// datagrams before its queue is full: red and fred count early drops
// on the class (with pfifo's one queue and sfq's per-flow ones), tail
// only full-queue drops; behind a bwc-policy too, whether the virtual
// or a rule's rateclass puts the flow in the class. The class shapes what goes to the server, so
// that the member's answers (udpBurst waits for one) do not meet the
// average the burst raised.
func TestRateClassUDPDropPolicy(t *testing.T) {
	red := RateDrop{Type: DropRED, MinThreshold: 4, MaxThreshold: 16, MaxProbability: 50, InverseWeight: 64}
	fred := red
	fred.Type = DropFRED
	for i, tc := range []struct {
		name  string
		q     RateQueue
		d     RateDrop
		early bool
		// policy puts the virtual under a wide bwc-policy, which the
		// class is chained after; rule puts the flow in the class with
		// the rule command rateclass.
		policy, rule bool
	}{
		{"pfifo tail", RateQueue{FIFO: true}, RateDrop{}, false, false, false},
		{"pfifo red", RateQueue{FIFO: true}, red, true, false, false},
		{"pfifo fred", RateQueue{FIFO: true}, fred, true, false, false},
		{"sfq red", RateQueue{}, red, true, false, false},
		{"bwc-policy then pfifo red", RateQueue{FIFO: true}, red, true, true, false},
		{"bwc-policy, rule rateclass, pfifo red", RateQueue{FIFO: true}, red, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, member := "127.190.4."+itoa(10+2*i)+":25320", "127.190.4."+itoa(11+2*i)+":25320"
			startUDPMember(t, member, "S1")
			p, _ := newPlane(t)
			cfg := udpBasic(vs, member)
			cfg.RateClasses = map[string]*RateClass{"/Common/c": {Name: "/Common/c", Rate: 400e3, Ceiling: 400e3,
				Direction: RateToServer, Queue: tc.q, Drop: tc.d}}
			if tc.policy {
				cfg.BWC = map[string]*BWCPolicy{"/Common/wide": {Name: "/Common/wide", MaxRate: 100e6}}
				cfg.Virtuals["/Common/vs"].BWC = "/Common/wide"
			}
			if tc.rule {
				rs, lg := compileRules(t, `when CLIENT_ACCEPTED { rateclass c }`)
				lg.showOnFailure(t)
				cfg.Virtuals["/Common/vs"].Rules = rs
			} else {
				cfg.Virtuals["/Common/vs"].RateClass = "/Common/c"
			}
			mustApply(t, p, cfg)
			udpBurst(t, nil, vs) // 300 datagrams of 1000 bytes at once
			cls := p.bwc.Class("/Common/c")
			eventually(t, "datagrams dropped and passed on the class", func() bool {
				st := cls.ClassStats()
				return st.Bytes > 0 && st.DroppedFull+st.DroppedEarly > 0
			})
			st := cls.ClassStats()
			t.Logf("%s: %+v", tc.name, st)
			if tc.early && st.DroppedEarly == 0 {
				t.Fatalf("%s: no early drop of a 300-datagram burst: %+v", tc.name, st)
			}
			if !tc.early && st.DroppedEarly != 0 {
				t.Fatalf("%s: %d early drops under tail", tc.name, st.DroppedEarly)
			}
		})
	}
}
