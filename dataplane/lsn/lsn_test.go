package lsn

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// clock is a settable clock for the timeouts.
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

func newTestPool(t *testing.T, pc config.LSNPool) (*Pool, *clock) {
	t.Helper()
	ck := &clock{t: time.Unix(1000, 0)}
	s := &Set{Now: ck.now}
	pc.Name = "/Common/p"
	if pc.PortLow == 0 {
		pc.PortLow, pc.PortHigh = 1025, 65535
	}
	s.Apply(map[string]*config.LSNPool{pc.Name: &pc})
	t.Cleanup(s.Close)
	return s.Pool(pc.Name), ck
}

var dst = netip.MustParseAddrPort("192.0.2.10:80")

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestDeterministicMapping(t *testing.T) {
	for _, tc := range []struct {
		name       string
		members    []string
		subs       []string
		lo, hi     uint16
		client     string
		addr       string
		wlo, whi   uint16
		notMapping bool
	}{
		{"first", []string{"198.51.100.0/31"}, []string{"10.0.0.0/30"}, 1000, 1099, "10.0.0.0", "198.51.100.0", 1000, 1049, false},
		{"second on one address", []string{"198.51.100.0/31"}, []string{"10.0.0.0/30"}, 1000, 1099, "10.0.0.1", "198.51.100.0", 1050, 1099, false},
		{"third on the next", []string{"198.51.100.0/31"}, []string{"10.0.0.0/30"}, 1000, 1099, "10.0.0.2", "198.51.100.1", 1000, 1049, false},
		{"two prefixes counted in order", []string{"198.51.100.0/31"}, []string{"10.0.0.0/31", "10.0.1.0/31"}, 1000, 1099, "10.0.1.1", "198.51.100.1", 1050, 1099, false},
		{"uneven share", []string{"198.51.100.0/32"}, []string{"10.0.0.0/30"}, 1, 10, "10.0.0.3", "198.51.100.0", 7, 8, false},
		{"outside", []string{"198.51.100.0/31"}, []string{"10.0.0.0/30"}, 1000, 1099, "10.0.9.9", "", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc := config.LSNPool{Mode: config.LSNDeterministic, PortLow: tc.lo, PortHigh: tc.hi}
			for _, m := range tc.members {
				pc.Members = append(pc.Members, netip.MustParsePrefix(m))
			}
			for _, s := range tc.subs {
				pc.Subscribers = append(pc.Subscribers, netip.MustParsePrefix(s))
			}
			p, _ := newTestPool(t, pc)
			a, lo, hi, ok := p.Mapping(netip.MustParseAddr(tc.client))
			if ok == tc.notMapping {
				t.Fatalf("mapping %v", ok)
			}
			if !ok {
				return
			}
			if a.String() != tc.addr || lo != tc.wlo || hi != tc.whi {
				t.Fatalf("got %s %d-%d, want %s %d-%d", a, lo, hi, tc.addr, tc.wlo, tc.whi)
			}
			for _, port := range []uint16{lo, hi} {
				if back, ok := p.Reverse(a, port); !ok || back.String() != tc.client {
					t.Errorf("reverse %s:%d = %s %v", a, port, back, ok)
				}
			}
			tr, err := p.Translate(netip.AddrPortFrom(netip.MustParseAddr(tc.client), 5000), dst, false, nil)
			if err != nil || tr.Addr.Addr() != a || tr.Addr.Port() < lo || tr.Addr.Port() > hi {
				t.Fatalf("translate %v %v", tr, err)
			}
			tr.Release()
		})
	}
}

func TestDeterministicBackup(t *testing.T) {
	p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNDeterministic, PortLow: 1000, PortHigh: 1001,
		Members:       []netip.Prefix{netip.MustParsePrefix("198.51.100.0/32")},
		BackupMembers: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/32")},
		Subscribers:   []netip.Prefix{netip.MustParsePrefix("10.0.0.0/32")}})
	var ts []*Translation
	for i := 0; i < 4; i++ {
		tr, err := p.Translate(plus(ap("10.0.0.0:5000"), i), dst, false, nil)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		ts = append(ts, tr)
	}
	if ts[0].Backup || ts[1].Backup || !ts[2].Backup || ts[2].Addr.Addr().String() != "203.0.113.0" {
		t.Fatalf("backup: %v %v %v", ts[0].Addr, ts[1].Addr, ts[2].Addr)
	}
	if p.Stats.BackupActive.Load() != 2 {
		t.Errorf("backup active %d", p.Stats.BackupActive.Load())
	}
	for _, tr := range ts {
		tr.Release()
	}
	if p.Stats.Active.Load() != 0 || p.Stats.PortsInUse.Load() != 0 {
		t.Errorf("after release: active %d ports %d", p.Stats.Active.Load(), p.Stats.PortsInUse.Load())
	}
}

func TestNAPTPersistence(t *testing.T) {
	p, ck := newTestPool(t, config.LSNPool{Mode: config.LSNNAPT, Persist: config.LSNPersistAddressPort, PersistTimeout: 10 * time.Second,
		Members: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/29")}})
	a, _ := p.Translate(ap("10.0.0.1:4000"), dst, false, nil)
	at := a.Addr
	a.Release()
	ck.add(5 * time.Second)
	p.Sweep()
	b, _ := p.Translate(ap("10.0.0.1:4000"), ap("192.0.2.11:80"), false, nil)
	if b.Addr != at {
		t.Fatalf("within the timeout: %s, want %s", b.Addr, at)
	}
	b.Release()
	ck.add(11 * time.Second)
	p.Sweep()
	if p.Stats.PortsInUse.Load() != 0 || p.Snapshot().Persistence != 0 {
		t.Fatalf("after the timeout: ports %d mappings %d", p.Stats.PortsInUse.Load(), p.Snapshot().Persistence)
	}
	// UDP and TCP keep separate mappings and ports.
	u, _ := p.Translate(ap("10.0.0.1:4000"), dst, true, nil)
	tc, _ := p.Translate(ap("10.0.0.1:4000"), dst, false, nil)
	if !u.UDP || tc.UDP {
		t.Fatal("protocols")
	}
	u.Release()
	tc.Release()
}

func TestNAPTExhaustion(t *testing.T) {
	p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNNAPT, Persist: config.LSNPersistNone, PortLow: 2000, PortHigh: 2002,
		Members: []netip.Prefix{netip.MustParsePrefix("198.51.100.7/32")}})
	seen := map[netip.AddrPort]bool{}
	var ts []*Translation
	for i := 0; i < 3; i++ {
		tr, err := p.Translate(plus(ap("10.0.0.1:4000"), i), dst, false, nil)
		if err != nil || seen[tr.Addr] {
			t.Fatalf("%d: %v %v", i, tr, err)
		}
		seen[tr.Addr] = true
		ts = append(ts, tr)
	}
	if _, err := p.Translate(ap("10.0.0.2:4000"), dst, false, nil); err != ErrExhausted {
		t.Fatalf("fourth: %v", err)
	}
	if p.Stats.Failures.Load() != 1 {
		t.Errorf("failures %d", p.Stats.Failures.Load())
	}
	ts[1].Release()
	tr, err := p.Translate(ap("10.0.0.2:4000"), dst, false, nil)
	if err != nil || tr.Addr != ts[1].Addr {
		t.Fatalf("after a release: %v %v", tr, err)
	}
	// Retry moves to another free port, or says there is none.
	if tr.Retry() {
		t.Fatal("retry with no free port")
	}
}

func TestPBABlocks(t *testing.T) {
	p, ck := newTestPool(t, config.LSNPool{Mode: config.LSNPBA, Persist: config.LSNPersistNone, PortLow: 3000, PortHigh: 3015,
		BlockSize: 4, ClientBlockLimit: 2, BlockIdle: 30 * time.Second, BlockLifetime: time.Minute,
		Members: []netip.Prefix{netip.MustParsePrefix("198.51.100.8/32")}})
	var ts []*Translation
	for i := 0; i < 8; i++ {
		tr, err := p.Translate(plus(ap("10.0.0.1:4000"), i), dst, false, nil)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		ts = append(ts, tr)
	}
	if p.Stats.BlocksActive.Load() != 2 {
		t.Fatalf("blocks %d, want 2", p.Stats.BlocksActive.Load())
	}
	if _, err := p.Translate(ap("10.0.0.1:4100"), dst, false, nil); err != ErrExhausted {
		t.Fatalf("past client-block-limit: %v", err)
	}
	// Another subscriber gets blocks of its own.
	o, err := p.Translate(ap("10.0.0.2:4000"), dst, false, nil)
	if err != nil || (o.Addr.Port()-3000)/4 == (ts[0].Addr.Port()-3000)/4 || (o.Addr.Port()-3000)/4 == (ts[7].Addr.Port()-3000)/4 {
		t.Fatalf("second subscriber: %v %v", o, err)
	}
	o.Release()
	// Past its lifetime a block with connections is a zombie: no new
	// connection takes its ports; it ends with its last connection.
	ck.add(61 * time.Second)
	p.Sweep()
	if p.Stats.BlocksZombie.Load() != 2 {
		t.Fatalf("zombies %d, want 2", p.Stats.BlocksZombie.Load())
	}
	for _, tr := range ts {
		tr.Release()
	}
	p.Sweep()
	if p.Stats.BlocksActive.Load() != 0 || p.Stats.BlocksZombie.Load() != 0 {
		t.Fatalf("after the last connections: blocks %d zombies %d", p.Stats.BlocksActive.Load(), p.Stats.BlocksZombie.Load())
	}
}

func TestClientConnectionLimit(t *testing.T) {
	p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNNAPT, Persist: config.LSNPersistNone, ClientConnLimit: 2,
		Members: []netip.Prefix{netip.MustParsePrefix("198.51.100.9/32")}})
	a, _ := p.Translate(ap("10.0.0.1:1"), dst, false, nil)
	p.Translate(ap("10.0.0.1:2"), dst, false, nil)
	if _, err := p.Translate(ap("10.0.0.1:3"), dst, false, nil); err != ErrClientLimit {
		t.Fatalf("third: %v", err)
	}
	a.Release()
	if _, err := p.Translate(ap("10.0.0.1:3"), dst, false, nil); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}

func TestAddrSpace(t *testing.T) {
	s := newAddrSpace([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/31"), netip.MustParsePrefix("10.0.1.0/30"), netip.MustParsePrefix("2001:db8::/126")})
	if s.n != 10 {
		t.Fatalf("n %d", s.n)
	}
	for i := uint64(0); i < s.n; i++ {
		a, ok := s.at(i)
		j, ok2 := s.index(a)
		if !ok || !ok2 || j != i {
			t.Errorf("%d: %s %d", i, a, j)
		}
	}
	if a, _ := s.at(9); a.String() != "2001:db8::3" {
		t.Errorf("last %s", a)
	}
	if s.contains(netip.MustParseAddr("10.0.0.2")) {
		t.Error("10.0.0.2 is not in the space")
	}
}

func plus(a netip.AddrPort, i int) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr(), a.Port()+uint16(i))
}

// TestValidRanges: the endpoints a subscriber may take are its blocks
// (pba), its range (deterministic) or the pool's port range on its
// translation address (napt).
func TestValidRanges(t *testing.T) {
	member := []netip.Prefix{netip.MustParsePrefix("198.51.100.8/32")}
	t.Run("napt", func(t *testing.T) {
		p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNNAPT, PortLow: 3000, PortHigh: 3999, Members: member})
		tr, err := p.Translate(ap("10.0.0.1:4000"), dst, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.ValidRanges(); len(got) != 1 || got[0] != (ValidRange{netip.MustParseAddr("198.51.100.8"), 3000, 3999}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("pba", func(t *testing.T) {
		p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNPBA, Persist: config.LSNPersistNone, PortLow: 3000, PortHigh: 3015,
			BlockSize: 4, ClientBlockLimit: 2, BlockIdle: 30 * time.Second, Members: member})
		var last *Translation
		for i := 0; i < 5; i++ { // four fill the first block, the fifth takes a second
			tr, err := p.Translate(plus(ap("10.0.0.1:4000"), i), dst, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			last = tr
		}
		got := last.ValidRanges()
		if len(got) != 2 || got[0].High-got[0].Low != 3 || got[1].High-got[1].Low != 3 || got[0].Low == got[1].Low {
			t.Fatalf("%v, want two blocks of 4", got)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNDeterministic, PortLow: 1000, PortHigh: 1099, Members: member,
			Subscribers: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/31")}})
		tr, err := p.Translate(ap("10.0.0.1:4000"), dst, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.ValidRanges(); len(got) != 1 || got[0] != (ValidRange{netip.MustParseAddr("198.51.100.8"), 1050, 1099}) {
			t.Fatalf("%v", got)
		}
	})
}
