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
