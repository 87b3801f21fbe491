package lb

import (
	"strings"
	"testing"
)

func names(b *Balancer, alg Algorithm, cands []Candidate, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteByte(byte('A' + cands[b.Pick(alg, cands)].Index))
	}
	return sb.String()
}

func TestSequences(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alg   Algorithm
		cands []Candidate
		n     int
		want  string
	}{
		{"round robin", RoundRobin, []Candidate{{Index: 0}, {Index: 1}, {Index: 2}}, 7, "ABCABCA"},
		{"ratio 3:1", Ratio, []Candidate{{Index: 0, Ratio: 3}, {Index: 1, Ratio: 1}}, 8, "ABAAABAA"},
		{"ratio 1:2:3", Ratio, []Candidate{{Index: 0, Ratio: 1}, {Index: 1, Ratio: 2}, {Index: 2, Ratio: 3}}, 6, "ABCBCC"},
		{"dynamic ratio 75:25", DynamicRatio, []Candidate{{Index: 0, Ratio: 75}, {Index: 1, Ratio: 25}}, 100, strings.Repeat("AB", 25) + strings.Repeat("A", 50)},
		{"ratio zero counts as one", Ratio, []Candidate{{Index: 0}, {Index: 1}}, 4, "ABAB"},
		{"least conns ties rotate", LeastConns, []Candidate{{Index: 0, Conns: 1}, {Index: 1, Conns: 1}, {Index: 2, Conns: 5}}, 4, "ABAB"},
		{"least conns fewest", LeastConns, []Candidate{{Index: 0, Conns: 3}, {Index: 1, Conns: 2}, {Index: 2, Conns: 5}}, 3, "BBB"},
		{"weighted least conns", WeightedLeastConns, []Candidate{{Index: 0, Conns: 5, Limit: 10}, {Index: 1, Conns: 3, Limit: 4}}, 2, "AA"},
		{"ratio least conns", RatioLeastConns, []Candidate{{Index: 0, Conns: 4, Ratio: 4}, {Index: 1, Conns: 2, Ratio: 1}}, 2, "AA"},
		{"observed", Observed, []Candidate{{Index: 0, Smoothed: 9}, {Index: 1, Smoothed: 2}}, 2, "BB"},
		{"predictive favours improving", Predictive, []Candidate{{Index: 0, Conns: 4, Smoothed: 8}, {Index: 1, Conns: 4, Smoothed: 2}}, 2, "AA"},
		{"fastest", Fastest, []Candidate{{Index: 0, Outstanding: 3}, {Index: 1, Outstanding: 0}}, 2, "BB"},
		{"single", LeastConns, []Candidate{{Index: 4}}, 2, "EE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Balancer
			if got := names(&b, tc.alg, tc.cands, tc.n); got != tc.want {
				t.Fatalf("picks = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPickEmpty(t *testing.T) {
	var b Balancer
	if got := b.Pick(RoundRobin, nil); got != -1 {
		t.Fatalf("Pick(nil) = %d, want -1", got)
	}
}

func TestActiveGroup(t *testing.T) {
	c := func(idx, prio int, ramp float64) Candidate { return Candidate{Index: idx, Priority: prio, Ramp: ramp} }
	all := []Candidate{c(0, 3, 0), c(1, 3, 0), c(2, 2, 0), c(3, 2, 0), c(4, 1, 0)}
	for _, tc := range []struct {
		name      string
		cands     []Candidate
		minActive int
		want      []int
	}{
		{"off", all, 0, []int{0, 1, 2, 3, 4}},
		{"top group suffices", all, 2, []int{0, 1}},
		{"cascade to second", all, 3, []int{0, 1, 2, 3}},
		{"not enough anywhere", all, 9, []int{0, 1, 2, 3, 4}},
		{"top group down", all[2:], 2, []int{2, 3}},
		{"ramping does not count", []Candidate{c(0, 3, 0.5), c(1, 3, 0), c(2, 1, 0)}, 2, []int{0, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ActiveGroup(tc.cands, tc.minActive, nil)
			var idx []int
			for _, g := range got {
				idx = append(idx, g.Index)
			}
			if len(idx) != len(tc.want) {
				t.Fatalf("group = %v, want %v", idx, tc.want)
			}
			for i := range idx {
				if idx[i] != tc.want[i] {
					t.Fatalf("group = %v, want %v", idx, tc.want)
				}
			}
		})
	}
}

// TestSlowRampShare checks that a member at 10% ramp receives a small share
// of round-robin picks but is not starved.
func TestSlowRampShare(t *testing.T) {
	var b Balancer
	cands := []Candidate{{Index: 0}, {Index: 1, Ramp: 0.1}}
	got := 0
	const n = 4000
	for i := 0; i < n; i++ {
		if b.Pick(RoundRobin, cands) == 1 {
			got++
		}
	}
	// Full share would be n/2; 10% of that is 200. Accept a wide band.
	if got < 60 || got > 600 {
		t.Fatalf("ramping member got %d of %d picks, want about 200", got, n)
	}
}

func BenchmarkPickRoundRobin(b *testing.B) {
	var bal Balancer
	cands := []Candidate{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 3}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		bal.Pick(RoundRobin, cands)
	}
}

func BenchmarkPickLeastConns(b *testing.B) {
	var bal Balancer
	cands := []Candidate{{Index: 0, Conns: 3}, {Index: 1, Conns: 2}, {Index: 2, Conns: 2}, {Index: 3, Conns: 9}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		bal.Pick(LeastConns, cands)
	}
}
