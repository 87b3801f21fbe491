package dataplane

import "testing"

func TestTrafficAdd(t *testing.T) {
	var sum Traffic
	sum.Add(Traffic{BitsIn: 1, BitsOut: 2, PktsIn: 3, PktsOut: 4, CurConns: 5, MaxConns: 6, TotConns: 7})
	sum.Add(Traffic{BitsIn: 10, BitsOut: 20, PktsIn: 30, PktsOut: 40, CurConns: 50, MaxConns: 60, TotConns: 70})
	if want := (Traffic{BitsIn: 11, BitsOut: 22, PktsIn: 33, PktsOut: 44, CurConns: 55, MaxConns: 66, TotConns: 77}); sum != want {
		t.Fatalf("sum %+v, want %+v", sum, want)
	}
}

// TestTrafficSince: counters read from an earlier reading of the same
// counters, as reset-stats of a virtual address shows them.
func TestTrafficSince(t *testing.T) {
	z := Traffic{BitsIn: 800, BitsOut: 1600, PktsIn: 10, PktsOut: 12, CurConns: 2, MaxConns: 5, TotConns: 8}
	for _, tc := range []struct {
		name string
		now  Traffic
		want Traffic
	}{
		{"unchanged", z, Traffic{CurConns: 2, MaxConns: 2}},
		{"more traffic, a new maximum", Traffic{BitsIn: 1000, BitsOut: 2000, PktsIn: 14, PktsOut: 16, CurConns: 6, MaxConns: 6, TotConns: 12},
			Traffic{BitsIn: 200, BitsOut: 400, PktsIn: 4, PktsOut: 4, CurConns: 6, MaxConns: 6, TotConns: 4}},
		{"the counters were reset since", Traffic{BitsIn: 80, PktsIn: 1, CurConns: 1, MaxConns: 1, TotConns: 1},
			Traffic{BitsIn: 80, PktsIn: 1, CurConns: 1, MaxConns: 1, TotConns: 1}},
	} {
		if got := tc.now.Since(z); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
