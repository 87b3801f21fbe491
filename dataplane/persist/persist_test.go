package persist

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func ip(s string) netip.Addr     { return netip.MustParseAddr(s) }

// clock is an injectable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTable() (*Table, *clock) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	return &Table{Now: c.now}, c
}

func TestAddrKeyMask(t *testing.T) {
	for _, tc := range []struct{ addr, mask, want string }{
		{"10.1.10.50", "", "10.1.10.50"},
		{"10.1.10.50", "255.255.255.0", "10.1.10.0"},
		{"10.1.10.50", "255.255.0.0", "10.1.0.0"},
		{"::ffff:10.1.10.50", "255.255.255.0", "10.1.10.0"},
		{"2001:db8::1:2", "ffff:ffff:ffff:ffff::", "2001:db8::"},
		{"2001:db8::1:2", "255.255.255.0", "2001:db8::1:2"}, // mask of the other family: whole address
	} {
		var m netip.Addr
		if tc.mask != "" {
			m = ip(tc.mask)
		}
		if got := AddrKey(SourceAddress, ip(tc.addr), m).String(); got != tc.want {
			t.Errorf("AddrKey(%s, %s) = %s, want %s", tc.addr, tc.mask, got, tc.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
		ok   bool
	}{
		{"source-address", SourceAddress, true},
		{"source_addr", SourceAddress, true},
		{"uie", Universal, true},
		{"universal", Universal, true},
		{"dest_addr", DestAddress, true},
		{"ssl-session-id", SSLSessionID, true},
		{"ssl", SSLSessionID, true},
		{"msrdp", MSRDP, true},
		{"sip", SIP, true},
		{"sip_info", SIP, true},
		{"carpx", 0, false},
	} {
		m, ok := ParseMode(tc.in)
		if m != tc.want || ok != tc.ok {
			t.Errorf("ParseMode(%q) = %v %v", tc.in, m, ok)
		}
	}
	if SourceAddress.String() != "source-address" || Universal.String() != "universal" || SSLSessionID.String() != "ssl-session-id" {
		t.Error("mode names")
	}
}

func TestScopes(t *testing.T) {
	vsA := Scope{Virtual: "/Common/a", VirtualAddr: ap("10.0.0.1:80"), Pool: "/Common/p"}
	k := AddrKey(SourceAddress, ip("192.0.2.7"), netip.Addr{})
	for _, tc := range []struct {
		name  string
		scope Scope
		want  bool
	}{
		{"same virtual and pool", vsA, true},
		{"other pool", Scope{Virtual: "/Common/a", VirtualAddr: ap("10.0.0.1:80"), Pool: "/Common/q"}, false},
		{"other pool, across pools", Scope{Virtual: "/Common/a", VirtualAddr: ap("10.0.0.1:80"), Pool: "/Common/q", AcrossPools: true}, true},
		{"same address other port", Scope{Virtual: "/Common/b", VirtualAddr: ap("10.0.0.1:443"), Pool: "/Common/p"}, false},
		{"same address other port, across services", Scope{Virtual: "/Common/b", VirtualAddr: ap("10.0.0.1:443"), Pool: "/Common/p", AcrossServices: true}, true},
		{"other address, across services", Scope{Virtual: "/Common/c", VirtualAddr: ap("10.0.0.2:80"), Pool: "/Common/p", AcrossServices: true}, false},
		{"other address, across virtuals", Scope{Virtual: "/Common/c", VirtualAddr: ap("10.0.0.2:80"), Pool: "/Common/p", AcrossVirtuals: true}, true},
		{"across virtuals, other pool", Scope{Virtual: "/Common/c", VirtualAddr: ap("10.0.0.2:80"), Pool: "/Common/q", AcrossVirtuals: true}, true},
		{"across services, other pool", Scope{Virtual: "/Common/b", VirtualAddr: ap("10.0.0.1:443"), Pool: "/Common/q", AcrossServices: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, _ := newTable()
			tb.Add(k, vsA, ap("10.1.1.1:80"), ip("192.0.2.7"), time.Minute)
			r, ok := tb.Lookup(k, tc.scope)
			if ok != tc.want {
				t.Fatalf("Lookup ok = %v, want %v", ok, tc.want)
			}
			if ok && r.Member != ap("10.1.1.1:80") {
				t.Fatalf("member %v", r.Member)
			}
			// Another mode with the same address never matches.
			if _, ok := tb.Lookup(AddrKey(DestAddress, ip("192.0.2.7"), netip.Addr{}), tc.scope); ok {
				t.Fatal("a dest-address lookup found a source-address record")
			}
		})
	}
}

func TestExpiryAndRefresh(t *testing.T) {
	tb, c := newTable()
	s := Scope{Virtual: "/Common/v", Pool: "/Common/p"}
	k := StringKey(Universal, "session-42")
	tb.Add(k, s, ap("10.1.1.1:80"), netip.Addr{}, 180*time.Second)
	c.add(179 * time.Second)
	if _, ok := tb.Lookup(k, s); !ok {
		t.Fatal("expired before its timeout")
	}
	tb.Add(k, s, ap("10.1.1.1:80"), netip.Addr{}, 180*time.Second) // used again: refreshed
	c.add(179 * time.Second)
	if _, ok := tb.Lookup(k, s); !ok {
		t.Fatal("a refreshed record expired")
	}
	tb.Touch(k, s)
	c.add(179 * time.Second)
	if _, ok := tb.Lookup(k, s); !ok {
		t.Fatal("a touched record expired")
	}
	c.add(time.Second)
	if _, ok := tb.Lookup(k, s); ok {
		t.Fatal("still there timeout seconds after last use")
	}
	if n := tb.Walk(Filter{}, func(*Record) bool { return true }); n != 0 {
		t.Fatalf("walk shows %d expired records", n)
	}
	tb.Sweep()
	if tb.Len() != 0 {
		t.Fatalf("Len %d after sweep", tb.Len())
	}
	// Timeout 0 is indefinite.
	tb.Add(k, s, ap("10.1.1.1:80"), netip.Addr{}, 0)
	c.add(1000 * time.Hour)
	if r, ok := tb.Lookup(k, s); !ok || !r.Expires.IsZero() {
		t.Fatal("an indefinite record expired")
	}
}

func TestAddReplacesMember(t *testing.T) {
	tb, _ := newTable()
	s := Scope{Virtual: "/Common/v", Pool: "/Common/p"}
	k := AddrKey(SourceAddress, ip("192.0.2.9"), netip.Addr{})
	tb.Add(k, s, ap("10.1.1.1:80"), ip("192.0.2.9"), time.Minute)
	tb.Add(k, s, ap("10.1.1.2:80"), ip("192.0.2.9"), time.Minute)
	if tb.Len() != 1 {
		t.Fatalf("Len %d, want one record per key, virtual and pool", tb.Len())
	}
	r, _ := tb.Lookup(k, s)
	if r.Member != ap("10.1.1.2:80") {
		t.Fatalf("member %v", r.Member)
	}
	// Across virtuals, the most recently used record wins.
	s2 := Scope{Virtual: "/Common/w", Pool: "/Common/p"}
	tb.Add(k, s2, ap("10.1.1.3:80"), ip("192.0.2.9"), time.Minute)
	r, _ = tb.Lookup(k, Scope{Virtual: "/Common/x", Pool: "/Common/p", AcrossVirtuals: true})
	if r.Member != ap("10.1.1.3:80") {
		t.Fatalf("across virtuals: member %v, want the latest", r.Member)
	}
	if n := tb.Delete(k, Scope{Virtual: "/Common/x", Pool: "/Common/p", AcrossVirtuals: true}); n != 2 {
		t.Fatalf("Delete removed %d", n)
	}
	if tb.Len() != 0 {
		t.Fatalf("Len %d", tb.Len())
	}
}

func TestBoundedSize(t *testing.T) {
	tb, c := newTable()
	tb.Max = numShards * 4 // four per shard
	s := Scope{Virtual: "/Common/v", Pool: "/Common/p"}
	for i := 0; i < 10_000; i++ {
		c.add(time.Millisecond)
		tb.Add(StringKey(Universal, fmt.Sprint(i)), s, ap("10.1.1.1:80"), netip.Addr{}, time.Hour)
	}
	if tb.Len() > tb.Max {
		t.Fatalf("Len %d over Max %d", tb.Len(), tb.Max)
	}
	if tb.Evicted() == 0 {
		t.Fatal("nothing evicted")
	}
	// The newest record is always kept.
	if _, ok := tb.Lookup(StringKey(Universal, "9999"), s); !ok {
		t.Fatal("the newest record was evicted")
	}
	// Expired records make room before live ones are evicted.
	ev := tb.Evicted()
	c.add(2 * time.Hour)
	tb.Add(StringKey(Universal, "new"), s, ap("10.1.1.1:80"), netip.Addr{}, time.Hour)
	if tb.Evicted() != ev {
		t.Fatalf("evicted %d live records while expired ones were there", tb.Evicted()-ev)
	}
}

func TestWalkFiltersAndDelete(t *testing.T) {
	tb, _ := newTable()
	v1 := Scope{Virtual: "/Common/v1", VirtualAddr: ap("10.0.0.1:80"), Pool: "/Common/p1"}
	v2 := Scope{Virtual: "/Common/v2", VirtualAddr: ap("10.0.0.2:80"), Pool: "/Common/p2"}
	tb.Add(AddrKey(SourceAddress, ip("192.0.2.1"), netip.Addr{}), v1, ap("10.1.1.1:80"), ip("192.0.2.1"), time.Minute)
	tb.Add(AddrKey(SourceAddress, ip("192.0.2.2"), netip.Addr{}), v1, ap("10.1.1.2:80"), ip("192.0.2.2"), time.Minute)
	tb.Add(AddrKey(SourceAddress, ip("192.0.2.77"), ip("255.255.255.0")), v2, ap("10.1.2.1:8080"), ip("192.0.2.77"), time.Minute)
	tb.Add(StringKey(Universal, "abc"), v2, ap("10.1.2.2:8080"), ip("192.0.2.3"), time.Minute)
	for _, tc := range []struct {
		name string
		f    Filter
		want int
	}{
		{"all", Filter{}, 4},
		{"mode", Filter{Mode: Universal}, 1},
		{"key", Filter{Key: "192.0.2.0"}, 1},
		{"key string", Filter{Key: "abc"}, 1},
		{"client", Filter{ClientAddr: ip("192.0.2.2")}, 1},
		{"client of a masked record", Filter{ClientAddr: ip("192.0.2.77")}, 1},
		{"node addr", Filter{NodeAddr: ip("10.1.1.1")}, 1},
		{"node port", Filter{NodePort: 8080}, 2},
		{"pool", Filter{Pool: "/Common/p1"}, 2},
		{"virtual", Filter{Virtual: "/Common/v2"}, 2},
		{"virtual and mode", Filter{Virtual: "/Common/v2", Mode: SourceAddress}, 1},
		{"none", Filter{Pool: "/Common/nope"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := tb.Walk(tc.f, func(*Record) bool { return true }); n != tc.want {
				t.Fatalf("Walk returned %d, want %d", n, tc.want)
			}
		})
	}
	if n := tb.Walk(Filter{}, func(*Record) bool { return false }); n != 1 {
		t.Fatalf("a stopped walk gave %d records", n)
	}
	if n := tb.DeleteMatching(Filter{Virtual: "/Common/v1"}); n != 2 {
		t.Fatalf("DeleteMatching removed %d", n)
	}
	if tb.Len() != 2 {
		t.Fatalf("Len %d", tb.Len())
	}
}

func TestConcurrentUse(t *testing.T) {
	tb := &Table{Max: 1000}
	s := Scope{Virtual: "/Common/v", Pool: "/Common/p"}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := AddrKey(SourceAddress, netip.AddrFrom4([4]byte{10, byte(g), byte(i >> 8), byte(i)}), netip.Addr{})
				tb.Add(k, s, ap("10.1.1.1:80"), k.Addr, time.Minute)
				tb.Lookup(k, s)
				if i%100 == 0 {
					tb.Walk(Filter{}, func(*Record) bool { return true })
				}
			}
		}(g)
	}
	wg.Wait()
	if tb.Len() > 1000+numShards {
		t.Fatalf("Len %d", tb.Len())
	}
}

func BenchmarkLookupAdd(b *testing.B) {
	tb := &Table{}
	s := Scope{Virtual: "/Common/v", Pool: "/Common/p"}
	keys := make([]Key, 4096)
	for i := range keys {
		keys[i] = AddrKey(SourceAddress, netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), netip.Addr{})
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			k := keys[i%len(keys)]
			if _, ok := tb.Lookup(k, s); !ok {
				tb.Add(k, s, ap("10.1.1.1:80"), k.Addr, time.Minute)
			} else {
				tb.Touch(k, s)
			}
			i++
		}
	})
}
