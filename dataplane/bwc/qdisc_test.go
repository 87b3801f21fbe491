package bwc

import (
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestDropper: a drop policy's decisions for a queue held at a steady
// length (the average then converges on it), counted over many
// arrivals: red drops nothing below min-threshold, everything at or
// past max-threshold, and between them some but not all; fred spares a
// flow with fewer datagrams queued than fred-min-drop and drops every
// datagram of one at fred-max-drop; red-hard-limit drops at once.
func TestDropper(t *testing.T) {
	red := config.RateDrop{Type: config.DropRED, MinThreshold: 10, MaxThreshold: 30, MaxProbability: 20, InverseWeight: 64}
	fred := red
	fred.Type, fred.MinDrop, fred.MaxDrop = config.DropFRED, 4, 25
	hard := red
	hard.HardLimit = 5
	for _, tc := range []struct {
		name                  string
		d                     config.RateDrop
		qlen, flowLen, active int
		minDrops, maxDrops    int // of 1000 arrivals after the average settled
	}{
		{"red below min-threshold", red, 5, 5, 1, 0, 0},
		{"red past max-threshold", red, 40, 40, 1, 1000, 1000},
		{"red between thresholds", red, 20, 20, 1, 1, 999},
		{"fred spares a light flow", fred, 20, 2, 4, 0, 0},
		{"fred between thresholds, heavy flow", fred, 20, 18, 2, 1, 999},
		{"fred drops a flow at fred-max-drop", fred, 20, 25, 2, 1000, 1000},
		{"fred past max-threshold spares a light flow", fred, 40, 1, 4, 0, 0},
		{"red-hard-limit", hard, 5, 5, 1, 1000, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDropper(tc.d, 100, 1e6)
			now := time.Now()
			for range 2000 { // let the average settle on qlen
				d.arrive(now, tc.qlen, tc.flowLen, tc.active)
			}
			drops := 0
			for range 1000 {
				if d.arrive(now, tc.qlen, tc.flowLen, tc.active) {
					drops++
				}
			}
			if drops < tc.minDrops || drops > tc.maxDrops {
				t.Fatalf("%d drops of 1000 (average %.1f), want %d to %d", drops, d.avg, tc.minDrops, tc.maxDrops)
			}
		})
	}
	if newDropper(config.RateDrop{}, 100, 1e6) != nil {
		t.Fatal("tail has a dropper: a full queue alone should drop")
	}
}

// TestDropperDefaultsAndIdle: a red policy with no numbers takes
// max-threshold half the queue's room and min-threshold a third of it,
// and its average decays while the queue is idle.
func TestDropperDefaultsAndIdle(t *testing.T) {
	d := newDropper(config.RateDrop{Type: config.DropRED}, 60, 1e5)
	if d.maxTh != 30 || d.minTh != 10 || d.maxP != 0.1 || d.w != 1.0/512 {
		t.Fatalf("defaults: min %v max %v p %v w %v", d.minTh, d.maxTh, d.maxP, d.w)
	}
	now := time.Now()
	for range 5000 {
		d.arrive(now, 40, 40, 1)
	}
	if d.avg < 35 {
		t.Fatalf("average %.1f after a long queue of 40", d.avg)
	}
	d.emptied(now)
	d.arrive(now.Add(30*time.Second), 0, 0, 1) // 3000 typical datagrams' time
	if d.avg > 1 {
		t.Fatalf("average %.1f after 30 s idle, want it decayed", d.avg)
	}
}

// TestClassFIFO: a pfifo class's flows share one queue, whose datagrams
// leave in the order they came whatever flow they are of, and past
// pfifo-min-packets the arriving one is dropped and counted as a full
// queue's.
func TestClassFIFO(t *testing.T) {
	var s Set
	s.ApplyClasses(map[string]*config.RateClass{"/Common/c": {Name: "/Common/c", Rate: 80e6, Ceiling: 80e6,
		Queue: config.RateQueue{FIFO: true, Limit: 4}}})
	cls := s.Class("/Common/c")
	var mu sync.Mutex
	var got []string
	out := func(name string, d []byte) {
		mu.Lock()
		got = append(got, name+string(d))
		mu.Unlock()
	}
	a := NewQueueDir(cls.Attach(""), true, out)
	b := NewQueueDir(cls.Attach(""), true, out)
	if a.x == nil || a.x.fifo == nil || a.x.fifo != b.x.fifo {
		t.Fatal("the class's flows do not share its pfifo queue")
	}
	f := a.x.fifo
	f.mu.Lock() // hold the queue so that none leaves while it fills
	f.running = true
	f.mu.Unlock()
	sent := 0
	for i, q := range []*Queue[string]{a, b, a, b, a} {
		if q.Send("ab"[i%2:i%2+1], []byte{byte('0' + i)}) {
			sent++
		}
	}
	if sent != 4 {
		t.Fatalf("%d of 5 queued past a limit of 4", sent)
	}
	if st := cls.ClassStats(); st.DroppedFull != 1 || st.QueuePkts != 4 {
		t.Fatalf("stats %+v, want 1 full drop and 4 queued", st)
	}
	go f.drain()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"a0", "b1", "a2", "b3"}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("sent %q, want %q", got, want)
	}
}

// TestClassStreamsShare measures what sfq would add for streams: two
// connections writing a proxy buffer (16 KB) at a time as fast as a
// class of 1 mbps lets them each get a fair share already, since each
// holds one reservation of the class's bucket at a time and the bucket
// serves them in the order they ask (the shares are logged; the test
// asserts each got at least a quarter).
func TestClassStreamsShare(t *testing.T) {
	var s Set
	s.ApplyClasses(map[string]*config.RateClass{"/Common/c": {Name: "/Common/c", Rate: 1e6, Ceiling: 1e6}})
	cls := s.Class("/Common/c")
	var sent [2]int
	var wg sync.WaitGroup
	stop := time.Now().Add(2 * time.Second)
	for i := range sent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := cls.Attach("")
			for n := 0; n < 1000 && time.Now().Before(stop); n++ {
				b.WaitDir(16<<10, false)
				sent[i] += 16 << 10
			}
		}()
	}
	wg.Wait()
	total := sent[0] + sent[1]
	t.Logf("shares: %d and %d bytes", sent[0], sent[1])
	for i, n := range sent {
		if n*4 < total {
			t.Fatalf("connection %d sent %d of %d bytes: less than a quarter", i, n, total)
		}
	}
}
