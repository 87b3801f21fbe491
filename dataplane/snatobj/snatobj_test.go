package snatobj

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// TestLookup: the most specific origin holding the address wins, over
// both families; an IPv4-mapped client is an IPv4 one; an address in no
// origin has none.
func TestLookup(t *testing.T) {
	var r Registry
	tab, _, _ := r.Build([]config.SNATObject{
		{Name: "all", Origins: prefixes("0.0.0.0/0"), Automap: true},
		{Name: "net", Origins: prefixes("127.218.1.0/24", "::ffff:127.218.9.0/120"), Addrs: addrs("127.218.0.100")},
		{Name: "host", Origins: prefixes("127.218.1.5/32"), Addrs: addrs("127.218.0.101")},
		{Name: "v6", Origins: prefixes("fd00:218::/48"), Addrs: addrs("fd00:218:1::1")},
	}, nil, nil, nil)
	for _, tc := range []struct{ client, want string }{
		{"127.218.1.5", "host"},
		{"127.218.1.6", "net"},
		{"::ffff:127.218.1.7", "net"},
		{"127.218.9.1", "net"},
		{"10.0.0.1", "all"},
		{"fd00:218:0:1::5", "v6"},
		{"fd00:219::5", ""},
	} {
		got := ""
		if e := tab.Lookup(netip.MustParseAddr(tc.client)); e != nil {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("Lookup(%s) = %q, want %q", tc.client, got, tc.want)
		}
	}
	a := netip.MustParseAddr("127.218.1.5")
	if n := testing.AllocsPerRun(100, func() { tab.Lookup(a) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
	if tab, _, _ := r.Build(nil, nil, nil, nil); tab != nil {
		t.Error("no SNAT objects: want a nil table")
	}
}

// TestPickAndCounters: a snatpool's addresses are given in turn, only
// of the server's family, each counted with the SNAT; the counters of
// what a commit keeps survive it, and a snatpool's addresses share
// them.
func TestPickAndCounters(t *testing.T) {
	var r Registry
	objs := []config.SNATObject{{Name: "s", Origins: prefixes("127.218.1.0/24"), Addrs: addrs("127.218.0.100", "127.218.0.101", "fd00::1")}}
	tab, _, _ := r.Build(objs, nil, nil, nil)
	e := tab.Lookup(netip.MustParseAddr("127.218.1.1"))
	seen := map[netip.Addr]int{}
	for i := 0; i < 3; i++ {
		a, _, _ := e.Pick(true, true, true)
		seen[a]++
	}
	if seen[netip.MustParseAddr("127.218.0.100")] == 0 || seen[netip.MustParseAddr("127.218.0.101")] == 0 || len(seen) != 2 {
		t.Errorf("IPv4 picks: %v", seen)
	}
	if a, _, _ := e.Pick(false, true, true); a != netip.MustParseAddr("fd00::1") {
		t.Errorf("IPv6 pick: %v", a)
	}
	if n, _ := r.SNATConns("s"); n != 4 {
		t.Errorf("SNAT connections %d, want 4", n)
	}
	before, _ := r.AddrConns(netip.MustParseAddr("127.218.0.101"))
	_, byPool, _ := r.Build(objs, map[string][]netip.Addr{"/Common/sp": addrs("127.218.0.101")}, nil, nil)
	byPool["/Common/sp"][0].C.Conns.Add(1)
	if n, ok := r.AddrConns(netip.MustParseAddr("127.218.0.101")); !ok || n != before+1 || before == 0 {
		t.Errorf("127.218.0.101: %d connections (%v), want %d + 1 across the commit", n, ok, before)
	}
	if n, _ := r.SNATConns("s"); n != 4 {
		t.Errorf("SNAT connections %d after a commit, want 4", n)
	}
	r.Build(nil, nil, nil, nil)
	if _, ok := r.SNATConns("s"); ok {
		t.Error("a deleted SNAT still has counters")
	}
	if _, ok := r.AddrConns(netip.MustParseAddr("127.218.0.100")); ok {
		t.Error("an address no longer used still has counters")
	}
	single := []config.SNATObject{{Name: "one", Origins: prefixes("127.218.2.0/24"), Addrs: addrs("fd00::1")}}
	tab, _, _ = r.Build(single, nil, nil, nil)
	if a, _, _ := tab.Lookup(netip.MustParseAddr("127.218.2.2")).Pick(true, true, true); a.IsValid() {
		t.Errorf("no IPv4 address: picked %v", a)
	}
}

// TestConnLimit: an address at its connection-limit is passed over for
// the snatpool's next one; with all of them full the pick fails with
// ErrFull; a release makes room again; an address without limit or idle
// timeout is not held; an uncounted or unheld pick ignores the limits;
// current and maximum are shown for limited addresses only.
func TestConnLimit(t *testing.T) {
	a1, a2, a3, a4 := netip.MustParseAddr("127.226.0.1"), netip.MustParseAddr("127.226.0.2"), netip.MustParseAddr("127.226.0.3"), netip.MustParseAddr("127.226.0.4")
	settings := map[netip.Addr]config.SNATTranslation{
		a1: {ConnLimit: 1},
		a3: {UDPIdle: 7 * time.Second},
		a2: {ConnLimit: 2, TCPIdle: 5 * time.Second},
	}
	objs := []config.SNATObject{
		{Name: "pool", Origins: prefixes("127.226.1.0/24"), Addrs: []netip.Addr{a1, a2}},
		{Name: "idle", Origins: prefixes("127.226.2.0/24"), Addrs: []netip.Addr{a3}},
		{Name: "free", Origins: prefixes("127.226.3.0/24"), Addrs: []netip.Addr{a4}},
	}
	var r Registry
	tab, _, _ := r.Build(objs, nil, nil, settings)
	e := tab.Lookup(netip.MustParseAddr("127.226.1.9"))
	type step struct {
		release int // release the hold of pick number release-1 first (0: none)
		want    netip.Addr
		full    bool
	}
	var holds []*Addr
	for i, st := range []step{
		{want: a1}, {want: a2}, {want: a2}, {full: true}, {full: true},
		{release: 1, want: a1}, {full: true},
		{release: 2, want: a2}, {full: true},
	} {
		if st.release > 0 {
			holds[st.release-1].Release()
		}
		e.next.Store(^uint32(0)) // each turn starts at a1
		a, h, err := e.Pick(true, true, true)
		holds = append(holds, h)
		switch {
		case st.full && (err != ErrFull || a.IsValid() || h != nil):
			t.Fatalf("pick %d: %v %v %v, want ErrFull", i, a, h, err)
		case !st.full && (err != nil || a != st.want || h == nil || h.Addr != a):
			t.Fatalf("pick %d: %v hold %v err %v, want %v held", i, a, h, err, st.want)
		}
	}
	if l, ok := r.AddrCurrent(a2); !ok || l.Cur != 2 || l.Max != 2 || l.Refused != 4 {
		t.Errorf("a2 %+v (%v), want 2 current, 2 max, 4 refused", l, ok)
	}
	if l, ok := r.AddrCurrent(a1); !ok || l.Cur != 1 {
		t.Errorf("a1 %+v (%v), want 1 current", l, ok)
	}
	if _, ok := r.AddrCurrent(a3); ok {
		t.Error("an address without a limit shows current connections")
	}
	if a, _, err := e.Pick(true, false, false); err != nil || !a.IsValid() {
		t.Errorf("uncounted pick: %v %v", a, err)
	}
	e.next.Store(^uint32(0))
	if a, h, err := e.Pick(true, true, false); err != nil || a != a1 || h != nil {
		t.Errorf("unheld pick: %v %v %v, want a1 past its limit, not held", a, h, err)
	}
	if n, _ := r.AddrConns(a1); n != 3 {
		t.Errorf("a1 total %d, want 3 (two held, one not)", n)
	}
	if l, _ := r.AddrCurrent(a1); l.Cur != 1 {
		t.Errorf("a1 current %d after an unheld pick, want 1", l.Cur)
	}
	f := tab.Lookup(netip.MustParseAddr("127.226.2.1"))
	if a, h, err := f.Pick(true, true, true); a != a3 || h == nil || err != nil {
		t.Errorf("an idle timeout and no limit: %v %v %v, want a3 held", a, h, err)
	} else if d, ok := h.UDPIdle(); !ok || d != 7*time.Second {
		t.Errorf("a3 UDP idle %v %v", d, ok)
	}
	free := tab.Lookup(netip.MustParseAddr("127.226.3.1"))
	if a, h, err := free.Pick(true, true, true); a != a4 || h != nil || err != nil {
		t.Errorf("no limit, no idle timeout: %v %v %v, want a4 not held", a, h, err)
	}
	if n := testing.AllocsPerRun(100, func() { free.Pick(true, true, true) }); n != 0 {
		t.Errorf("Pick allocates %v times", n)
	}
	if d, ok := holds[1].TCPIdle(); !ok || d != 5*time.Second {
		t.Errorf("TCP idle %v %v", d, ok)
	}
	if _, ok := holds[1].UDPIdle(); ok {
		t.Error("a2 has no UDP idle timeout")
	}
	if _, ok := holds[0].TCPIdle(); ok {
		t.Error("a1 has no TCP idle timeout")
	}
	// A commit that keeps the address keeps its count: the connection
	// held under the old commit gives it back to the same counter.
	tab, _, _ = r.Build(objs, nil, nil, settings)
	e = tab.Lookup(netip.MustParseAddr("127.226.1.9"))
	e.next.Store(^uint32(0))
	if a, _, err := e.Pick(true, true, true); err != ErrFull {
		t.Errorf("after a commit: %v %v, want ErrFull", a, err)
	}
	holds[5].Release() // a1's
	if a, _, err := e.Pick(true, true, true); a != a1 || err != nil {
		t.Errorf("after the release across a commit: %v %v, want a1", a, err)
	}
}

// TestConnLimitConcurrent: goroutines taking and giving back one
// address never hold more than its limit at once, and leave it at 0.
func TestConnLimitConcurrent(t *testing.T) {
	a := netip.MustParseAddr("127.226.0.1")
	var r Registry
	tab, _, _ := r.Build([]config.SNATObject{{Name: "s", Origins: prefixes("127.226.1.0/24"), Addrs: []netip.Addr{a}}}, nil, nil,
		map[netip.Addr]config.SNATTranslation{a: {ConnLimit: 3}})
	e := tab.Lookup(netip.MustParseAddr("127.226.1.1"))
	var held, over atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				_, h, err := e.Pick(true, true, true)
				if err != nil {
					continue
				}
				if held.Add(1) > 3 {
					over.Add(1)
				}
				held.Add(-1)
				h.Release()
			}
		}()
	}
	wg.Wait()
	if over.Load() != 0 {
		t.Errorf("more than the limit held %d times", over.Load())
	}
	if l, _ := r.AddrCurrent(a); l.Cur != 0 || l.Max < 1 || l.Max > 3 {
		t.Errorf("current %d max %d, want 0 and 1..3", l.Cur, l.Max)
	}
}
