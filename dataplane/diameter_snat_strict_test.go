package dataplane

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
)

// reuseDial connects from src to dst with SO_REUSEADDR set, so that
// another socket with it may bind src too (as preserve-strict's dial
// does) while this one holds the four-tuple to dst.
func reuseDial(t *testing.T, src, dst netip.AddrPort) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(src),
		Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
			}); err != nil {
				return err
			}
			return serr
		}}
	c, err := d.DialContext(context.Background(), "tcp", dst.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestDiameterProfileSNATStrict: an ltm snat's source-port
// preserve-strict on a diameter flow's other members: each member
// connection leaves the translation address from exactly the client's
// port (one four-tuple per member); when that port is in use towards
// member b there is no connection to b and every request goes to a,
// where preserve connects b from another port.
func TestDiameterProfileSNATStrict(t *testing.T) {
	t.Parallel()
	xlat := netip.MustParseAddr("127.247.40.100")
	for i, tc := range []struct {
		name     string
		strict   bool
		occupied bool // the client's port on xlat holds a connection to b
		wantB    string
	}{
		{"strict, port free", true, false, "client's port"},
		{"strict, port in use towards b", true, true, "none"},
		{"preserve, port in use towards b", false, true, "another port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := diamServer(t, fmt.Sprintf("127.247.40.91:%d", 23870+i), "member-a.example", false)
			b := diamServer(t, fmt.Sprintf("127.247.40.92:%d", 23870+i), "member-b.example", false)
			vsAddr := fmt.Sprintf("127.247.40.90:%d", 23870+i)
			p, _ := newPlane(t)
			cfg := basic(vsAddr, a.Addr(), b.Addr())
			delete(cfg.Virtuals, "/Common/vs")
			diamVirtual(t, cfg, "/Common/d", vsAddr, "/Common/pool", diameter.Options{}, "")
			cfg.SNATs = []SNATObject{{Name: "/Common/s", Origins: []netip.Prefix{netip.MustParsePrefix("127.247.40.0/24")}, Addrs: []netip.Addr{xlat}, StrictPort: tc.strict}}
			mustApply(t, p, cfg)

			client := netip.AddrPortFrom(netip.MustParseAddr("127.247.40.5"), uint16(31500+i))
			if tc.occupied {
				reuseDial(t, netip.AddrPortFrom(xlat, client.Port()), netip.MustParseAddrPort(b.Addr()))
			}
			nc := reuseDial(t, client, netip.MustParseAddrPort(vsAddr))
			c := diamtest.NewClient(nc)
			if cea, err := c.CER("client.example"); err != nil || cea.Result != diammsg.ResultSuccess {
				t.Fatalf("CER: %+v %v", cea, err)
			}
			var sessions []string
			for j := range 8 {
				sessions = append(sessions, fmt.Sprintf("client.example;strict;%d;%d", i, j))
			}
			ccrs(t, c, "client.example", sessions...)
			from := func(s *diamtest.Server) (ports map[uint16]bool) {
				ports = map[uint16]bool{}
				for _, g := range s.Got() {
					at, err := netip.ParseAddrPort(g.From)
					if err != nil || at.Addr() != xlat {
						t.Errorf("%s got code %d from %s, want %s", s.Name, g.Code, g.From, xlat)
					}
					ports[at.Port()] = true
				}
				return ports
			}
			pa, pb := from(a), from(b)
			if len(pa) != 1 || (tc.strict && !pa[client.Port()]) {
				t.Errorf("member a saw ports %v, want the client's %d", pa, client.Port())
			}
			var gotB string
			switch {
			case len(pb) == 0:
				gotB = "none"
			case len(pb) == 1 && pb[client.Port()]:
				gotB = "client's port"
			default:
				gotB = "another port"
			}
			if gotB != tc.wantB {
				t.Errorf("member b saw %v (%s), want %s", pb, gotB, tc.wantB)
			}
		})
	}
}
