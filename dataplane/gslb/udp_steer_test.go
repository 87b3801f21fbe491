package gslb

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUDPSteerSwitches: a listener's queries go to its first socket
// while its reader keeps up (its batches mostly short) and to every
// socket once half the batches of a window are full; they go back to the
// first when a window's rate falls under half the rate that spread them.
// A window that spans an idle gap decides nothing.
func TestUDPSteerSwitches(t *testing.T) {
	type batch struct {
		shard, n int
		full     bool
		at       time.Duration // since the listener started
	}
	// run gives count batches from shard, every step from first on, of
	// n queries; every kth is full (k 0: none).
	run := func(shard, count, n, k int, first, step time.Duration) []batch {
		var bs []batch
		for i := range count {
			full := k > 0 && i%k == 0
			m := n
			if full {
				m = udpBatch
			}
			bs = append(bs, batch{shard, m, full, first + time.Duration(i)*step})
		}
		return bs
	}
	ms := time.Millisecond
	// A spreading window: 26 full batches in 50 ms, 832 queries, 16 640/s.
	spreading := run(0, 26, 0, 1, ms, 2*ms)
	cases := []struct {
		name    string
		batches []batch
		want    []int // the socket counts steered to, in order
	}{
		{"short batches stay on the first socket", run(0, 400, 3, 0, ms, ms), nil},
		{"a lone full batch does not spread", run(0, 30, 1, 30, ms, 2*ms), nil},
		{"a third of the batches full does not spread", run(0, 60, 4, 3, ms, ms), nil},
		{"half the batches full spreads", run(0, 60, 4, 2, ms, ms), []int{4}},
		{"every batch full spreads", spreading, []int{4}},
		{"two readers' batches judge together", append(run(0, 13, 4, 1, ms, 4*ms), run(1, 13, 4, 0, 2*ms, 4*ms)...), []int{4}},
		{"under half the spreading rate gathers them", append(slices.Clone(spreading), run(1, 30, 12, 0, 53*ms, 2*ms)...), []int{4, 1}}, // 6 000/s
		{"over half of it stays spread", append(slices.Clone(spreading), run(1, 30, 18, 0, 53*ms, 2*ms)...), []int{4}},                  // 9 000/s
		{"an idle gap is no judge: a full load resumes spread", append(slices.Clone(spreading), run(0, 80, 0, 1, time.Second, ms)...), []int{4}},
		{"a light load after an idle gap gathers them", append(slices.Clone(spreading), run(0, 80, 1, 0, time.Second, ms)...), []int{4, 1}},
		{"a full window after gathering spreads again", append(append(slices.Clone(spreading), run(1, 30, 12, 0, 53*ms, 2*ms)...), run(0, 50, 0, 1, 115*ms, ms)...), []int{4, 1, 4}},
	}
	t0 := time.Unix(1700000000, 0)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []int
			st := &udpSteer{set: func(n int) error { got = append(got, n); return nil }, n: 4, log: slog.New(slog.DiscardHandler), base: t0}
			slices.SortStableFunc(c.batches, func(a, b batch) int { return int(a.at - b.at) })
			for _, b := range c.batches {
				st.note(b.shard, b.n, b.full, t0.Add(b.at))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("steered to %v, want %v", got, c.want)
			}
		})
	}
}

// TestUDPSteerFailureLoggedOnce: a switch the kernel refuses is logged
// once, and later switches are still tried.
func TestUDPSteerFailureLoggedOnce(t *testing.T) {
	var log bytes.Buffer
	tries := 0
	t0 := time.Unix(1700000000, 0)
	st := &udpSteer{set: func(int) error { tries++; return errors.New("refused") }, n: 2, log: slog.New(slog.NewTextHandler(&log, nil)), base: t0}
	at := time.Duration(0)
	batches := func(count int, full bool) {
		for range count {
			at += time.Millisecond
			st.note(0, 1+31*btoi(full), full, t0.Add(at))
		}
	}
	batches(60, true)  // spread
	batches(60, false) // gather
	batches(60, true)  // spread
	if tries != 3 || strings.Count(log.String(), "not switched") != 1 {
		t.Errorf("%d switches tried, log:\n%s", tries, log.String())
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
