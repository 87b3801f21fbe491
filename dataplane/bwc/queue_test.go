package bwc

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestQueue: a datagram flow's queue on a slow policy sends in order what
// it holds, drops and counts what is past its bound, and sends nothing
// after Close.
func TestQueue(t *testing.T) {
	var s Set
	s.Apply(map[string]*config.BWCPolicy{"/Common/slow": {Name: "/Common/slow", MaxRate: 8000}}) // 1000 bytes/s
	p := s.Policy("/Common/slow")
	b := p.Attach("")
	var got atomic.Int64
	var last atomic.Int64
	q := NewQueue(b, func(i int, d []byte) {
		if int64(i) != last.Load()+1 {
			t.Errorf("datagram %d after %d", i, last.Load())
		}
		last.Store(int64(i))
		got.Add(int64(len(d)))
	})
	d := make([]byte, 1000)
	sent, dropped := 0, 0
	for i := 1; i <= 200; i++ {
		if q.Send(i, d) {
			sent++
		} else {
			dropped++
		}
	}
	if dropped == 0 || sent == 0 {
		t.Fatalf("sent %d, dropped %d: want some of each past a 64 KB queue", sent, dropped)
	}
	if st := p.Stats(); st.DroppedPkts != uint64(dropped) || st.Dropped != uint64(dropped*len(d)) {
		t.Errorf("stats %+v, want %d datagrams dropped", st, dropped)
	}
	// The bucket's burst passes at once; the rest waits on the rate.
	deadline := time.Now().Add(10 * time.Second)
	for got.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got.Load() == 0 {
		t.Fatal("nothing sent")
	}
	q.Close()
	if q.Send(999, d) {
		t.Error("a closed queue took a datagram")
	}
	if st := p.Stats(); st.PassedPkts == 0 || st.PassedPkts > uint64(sent) {
		t.Errorf("passed %d packets of %d queued", st.PassedPkts, sent)
	}
}

// TestMeter: the current rate is the last whole second's bytes in bits.
func TestMeter(t *testing.T) {
	var m meter
	t0 := time.Unix(1000, 0)
	m.add(t0, 100)
	m.add(t0.Add(500*time.Millisecond), 150)
	if got := m.bps(t0.Add(time.Second)); got != 2000 {
		t.Errorf("rate a second on = %d, want 2000", got)
	}
	m.add(t0.Add(time.Second), 10)
	if got := m.bps(t0.Add(time.Second)); got != 2000 {
		t.Errorf("rate after the second turned = %d, want 2000", got)
	}
	if got := m.bps(t0.Add(5 * time.Second)); got != 0 {
		t.Errorf("rate after an idle while = %d, want 0", got)
	}
}

// TestFlowQueueBounds: a flow's own bucket and queue hold at most the
// packets SetMaxPackets allows, count the rest dropped, and report both.
func TestFlowQueueBounds(t *testing.T) {
	for _, c := range []struct {
		name             string
		rate             uint64
		maxPkts, send    int
		wantQueuedAtMost int
	}{
		{"packet bound", 1000, 3, 40, 3},
		{"byte bound", 1000, 0, 200, 66},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := FlowBucket(c.rate)
			q := NewQueue(b, func(int, []byte) {})
			defer q.Close()
			q.SetRate(c.rate)
			q.SetMaxPackets(c.maxPkts)
			d := make([]byte, 1000)
			dropped := 0
			for i := range c.send {
				if !q.Send(i, d) {
					dropped++
				}
			}
			st := q.Stats()
			if st.Pkts > c.wantQueuedAtMost || st.MaxPkts != c.maxPkts || dropped == 0 || st.Dropped != uint64(dropped) {
				t.Fatalf("stats %+v, dropped %d", st, dropped)
			}
		})
	}
}
