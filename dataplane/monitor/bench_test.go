package monitor

import "testing"

// BenchmarkPassiveSucceeded is the per-connection cost of an inband
// monitor on a member that is up.
func BenchmarkPassiveSucceeded(b *testing.B) {
	p := NewPassive(&Spec{Type: Inband}, nil)
	defer p.Stop()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p.Succeeded()
		}
	})
}

// BenchmarkPassiveFailed is the cost of reporting a failed connection with
// BIG-IP's default limits (the member goes down at the third).
func BenchmarkPassiveFailed(b *testing.B) {
	lim := DefaultInband
	lim.RetryTime = 0
	p := NewPassive(&Spec{Type: Inband, Inband: &lim}, nil)
	defer p.Stop()
	b.ReportAllocs()
	for b.Loop() {
		p.Failed()
	}
}
