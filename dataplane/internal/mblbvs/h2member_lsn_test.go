package mblbvs

import (
	"crypto/tls"
	"net"
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/lsn"
)

func testLSNPools(t *testing.T, mode config.LSNMode) (*lsn.Pool, *lsn.Pool) {
	t.Helper()
	s := &lsn.Set{}
	s.Apply(map[string]*config.LSNPool{
		"/Common/a": {Name: "/Common/a", Mode: mode, Members: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/30")}, PortLow: 30000, PortHigh: 30999, BlockSize: 8, ClientBlockLimit: 1},
		"/Common/b": {Name: "/Common/b", Mode: mode, Members: []netip.Prefix{netip.MustParsePrefix("198.51.101.0/30")}, PortLow: 30000, PortHigh: 30999, BlockSize: 8, ClientBlockLimit: 1},
	})
	t.Cleanup(s.Close)
	return s.Pool("/Common/a"), s.Pool("/Common/b")
}

// TestLSNKey: the HTTP/2 member connections a request may share are
// those of its subscriber, through the same pool with the same LSN::
// wishes, to the same member over the same server-ssl settings.
func TestLSNKey(t *testing.T) {
	a, b := testLSNPools(t, config.LSNNAPT)
	sub := netip.MustParseAddr("10.0.0.1")
	m := netip.MustParseAddrPort("192.0.2.10:80")
	tc := &tls.Config{}
	base := lsnKey(a, nil, sub, m, nil)
	for _, tc := range []struct {
		name  string
		key   string
		share bool
	}{
		{"same subscriber, pool, member", lsnKey(a, nil, sub, m, nil), true},
		{"no wishes is the empty wish", lsnKey(a, &lsn.Want{}, sub, m, nil), true},
		{"v4-mapped subscriber", lsnKey(a, nil, netip.AddrFrom16(sub.As16()), m, nil), true},
		{"another subscriber", lsnKey(a, nil, netip.MustParseAddr("10.0.0.2"), m, nil), false},
		{"LSN::pool", lsnKey(b, nil, sub, m, nil), false},
		{"LSN::address", lsnKey(a, &lsn.Want{Addr: netip.MustParseAddr("198.51.100.3")}, sub, m, nil), false},
		{"LSN::port", lsnKey(a, &lsn.Want{Port: 30005}, sub, m, nil), false},
		{"LSN::inbound", lsnKey(a, &lsn.Want{Inbound: "enabled"}, sub, m, nil), false},
		{"another member", lsnKey(a, nil, sub, netip.MustParseAddrPort("192.0.2.11:80"), nil), false},
		{"server-ssl", lsnKey(a, nil, sub, m, tc), false},
	} {
		if got := tc.key == base; got != tc.share {
			t.Errorf("%s: shares with the base key %v, want %v (%q vs %q)", tc.name, got, tc.share, tc.key, base)
		}
	}
}

// TestLSNConnRelease: an HTTP/2 member connection's translation is found
// by its local address while it lasts (LSNTranslation, XLAT::) and given
// back once when it closes, whatever the pool's mode.
func TestLSNConnRelease(t *testing.T) {
	for _, mode := range []config.LSNMode{config.LSNNAPT, config.LSNPBA} {
		t.Run(string(mode), func(t *testing.T) {
			a, _ := testLSNPools(t, mode)
			client := netip.MustParseAddrPort("10.0.0.1:40000")
			tr, err := a.Translate(client, netip.MustParseAddrPort("192.0.2.10:80"), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			mv := &VS{}
			c1, c2 := net.Pipe()
			defer c2.Close()
			mv.lsnShared.Store(tr.Addr, tr)
			c := &lsnConn{Conn: c1, lsnHold: lsnHold{mv: mv, t: tr}}
			if got, ok := mv.lsnLeg(tr.Addr); !ok || got != tr {
				t.Fatalf("lsnLeg(%s) = %v, %v before close", tr.Addr, got, ok)
			}
			if n := a.Stats.Active.Load(); n != 1 {
				t.Fatalf("active translations %d before close, want 1", n)
			}
			for i := 0; i < 2; i++ { // x/net and a zombie cut may both close it
				c.Close()
			}
			if n := a.Stats.Active.Load(); n != 0 {
				t.Errorf("active translations %d after close, want 0", n)
			}
			if _, ok := mv.lsnLeg(tr.Addr); ok {
				t.Errorf("lsnLeg(%s) still found after close", tr.Addr)
			}
		})
	}
}
