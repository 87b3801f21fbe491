package snatobj

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestGive: an address taken by a data path that picks it itself (a
// message routing transport-config's snatpool) is counted in Total
// Connections always, held only with a limit or an idle timeout, refused
// at its limit with nothing counted, and Refuse counts the refusal that
// show ltm snat-translation prints; no allocation.
func TestGive(t *testing.T) {
	lim, idle, plain := netip.MustParseAddr("127.247.20.1"), netip.MustParseAddr("127.247.20.2"), netip.MustParseAddr("127.247.20.3")
	var r Registry
	_, byPool, _ := r.Build(nil, map[string][]netip.Addr{"/Common/tc": {lim, idle, plain}}, nil,
		map[netip.Addr]config.SNATTranslation{lim: {ConnLimit: 1}, idle: {TCPIdle: 2e9}})
	xs := byPool["/Common/tc"]
	cases := []struct {
		name     string
		x        *Addr
		wantHeld bool
		wantOK   bool
		conns    uint64
	}{
		{"limit 1, first", xs[0], true, true, 1},
		{"limit 1, second refused", xs[0], false, false, 1},
		{"idle timeout only", xs[1], true, true, 1},
		{"no setting", xs[2], false, true, 1},
	}
	for _, c := range cases {
		h, ok := c.x.Give()
		if ok != c.wantOK || (h != nil) != c.wantHeld {
			t.Fatalf("%s: Give = %v, %v; want held %v ok %v", c.name, h, ok, c.wantHeld, c.wantOK)
		}
		if n, _ := r.AddrConns(c.x.Addr); n != c.conns {
			t.Fatalf("%s: %d connections counted, want %d", c.name, n, c.conns)
		}
		if !ok {
			c.x.Refuse()
		}
	}
	if l, ok := r.AddrCurrent(lim); !ok || l.Cur != 1 || l.Refused != 1 {
		t.Fatalf("limited %+v %v, want 1 current, 1 refused", l, ok)
	}
	xs[0].Release()
	if h, ok := xs[0].Give(); !ok || h == nil {
		t.Fatal("the address was not given again once released")
	}
	xs[0].Release()
	if n := testing.AllocsPerRun(100, func() {
		if h, ok := xs[0].Give(); ok {
			h.Release()
		}
	}); n != 0 {
		t.Fatalf("Give allocates %v", n)
	}
}
