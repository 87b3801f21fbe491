package state

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestSpreadHeavyKeys(t *testing.T) {
	tests := []struct {
		name  string
		conns map[string]int // client address -> connections
		top   string         // the heaviest key expected
		count uint64         // its count, within its error bound
	}{
		{"one address", map[string]int{"10.0.0.1": 50}, "10.0.0.1", 50},
		{"one heavy among many", func() map[string]int {
			m := map[string]int{"192.0.2.9": 300}
			for i := 0; i < 200; i++ {
				m[fmt.Sprintf("10.1.%d.%d", i/100, i%100)] = 1
			}
			return m
		}(), "192.0.2.9", 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Spread
			// Interleave so that the heavy key is evicted and comes back
			// if Space-Saving were wrong.
			left := map[string]int{}
			total := 0
			for k, n := range tc.conns {
				left[k] = n
				total += n
			}
			for total > 0 {
				for k := range left {
					if left[k] == 0 {
						continue
					}
					s.Conn(netip.MustParseAddr(k))
					left[k]--
					total--
				}
			}
			snap := s.Snapshot()
			if len(snap.Conns.Keys) == 0 || snap.Conns.Keys[0].Key != tc.top {
				t.Fatalf("heaviest = %+v, want %s", snap.Conns.Keys, tc.top)
			}
			h := snap.Conns.Keys[0]
			if h.Count < tc.count || h.Count-h.Err > tc.count {
				t.Errorf("%s counted %d (error %d), want %d within the error", h.Key, h.Count, h.Err, tc.count)
			}
			if len(snap.Conns.Keys) > TopSlots {
				t.Errorf("%d keys kept, want at most %d", len(snap.Conns.Keys), TopSlots)
			}
		})
	}
}

func TestSpreadRequests(t *testing.T) {
	var s Spread
	c := netip.MustParseAddr("127.0.0.1")
	for u := 0; u < 200; u++ {
		for r := 0; r < 3; r++ {
			s.Request(c, []byte("198.51.100.7"), UserHash([]byte(fmt.Sprintf("session=u%d", u))))
		}
	}
	s.Request(c, nil, 0)
	snap := s.Snapshot()
	if snap.Requests.Total != 601 || snap.Requests.Keys[0].Key != "127.0.0.1" {
		t.Errorf("requests = %+v", snap.Requests)
	}
	if snap.XFF.Total != 600 || snap.XFF.Keys[0].Key != "198.51.100.7" || snap.XFF.Keys[0].Count != 600 {
		t.Errorf("xff = %+v", snap.XFF)
	}
	if snap.Users < 190 || snap.Users > 210 || snap.UsersAtLeast {
		t.Errorf("users = %d (at least %v), want about 200", snap.Users, snap.UsersAtLeast)
	}
	if snap.WithUser != 600 {
		t.Errorf("with user = %d", snap.WithUser)
	}
	s.Reset()
	if snap := s.Snapshot(); snap.Requests.Total != 0 || snap.Users != 0 || len(snap.XFF.Keys) != 0 {
		t.Errorf("after reset: %+v", snap)
	}
}

func TestSpreadUsersSaturate(t *testing.T) {
	var s Spread
	c := netip.MustParseAddr("::1")
	for u := 0; u < 200000; u++ {
		s.Request(c, nil, UserHash(fmt.Appendf(nil, "u%d", u)))
	}
	snap := s.Snapshot()
	if !snap.UsersAtLeast || snap.Users < 30000 {
		t.Errorf("users = %d (at least %v): want a saturated lower bound", snap.Users, snap.UsersAtLeast)
	}
}

func TestSpreadLongXFFIsCut(t *testing.T) {
	var s Spread
	long := make([]byte, 200)
	for i := range long {
		long[i] = 'a'
	}
	s.Request(netip.MustParseAddr("10.0.0.1"), long, 0)
	if k := s.Snapshot().XFF.Keys[0].Key; len(k) != labelMax {
		t.Errorf("kept %d bytes of the value, want %d", len(k), labelMax)
	}
}

func TestSpreadAllocatesNothing(t *testing.T) {
	var s Spread
	a := netip.MustParseAddr("2001:db8::1")
	xff := []byte("203.0.113.5")
	u := UserHash([]byte("session=x"))
	if n := testing.AllocsPerRun(200, func() {
		s.Conn(a)
		s.Request(a, xff, u)
	}); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}

func BenchmarkSpreadRequest(b *testing.B) {
	var s Spread
	xff := []byte("203.0.113.5")
	u := UserHash([]byte("session=x"))
	addrs := make([]netip.Addr, 64)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{10, 0, byte(i), 1})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Request(addrs[i%len(addrs)], xff, u)
	}
}
