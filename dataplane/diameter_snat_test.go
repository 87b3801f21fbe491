package dataplane

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diameter/diamtest"
)

// TestDiameterProfileSNATLimit: a diameter flow's connection to its
// other member holds the ltm snat-translation address as the flow's own
// does: at a connection-limit of 2 both members are connected from the
// address and take requests, at 1 the other member's connection is
// refused (counted) and every request goes to the first; either way the
// address is given back when the client leaves.
func TestDiameterProfileSNATLimit(t *testing.T) {
	t.Parallel()
	a := diamServer(t, "127.238.9.91:23869", "member-a.example", false)
	b := diamServer(t, "127.238.9.92:23869", "member-b.example", false)
	xlat := netip.MustParseAddr("127.238.9.100")
	for _, tc := range []struct {
		name    string
		limit   uint64
		both    bool // both members take requests
		refused bool
	}{
		{"room for both", 2, true, false},
		{"room for one", 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic("127.238.9.90:23869", a.Addr(), b.Addr())
			delete(cfg.Virtuals, "/Common/vs")
			diamVirtual(t, cfg, "/Common/d", "127.238.9.90:23869", "/Common/pool", diameter.Options{}, "")
			cfg.SNATs = []SNATObject{{Name: "/Common/s", Origins: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, Addrs: []netip.Addr{xlat}}}
			cfg.SNATSettings = map[netip.Addr]SNATTranslation{xlat: {ConnLimit: tc.limit}}
			mustApply(t, p, cfg)

			c, _ := diamClient(t, "127.238.9.90:23869", "client.example")
			var sessions []string
			for i := range 8 {
				sessions = append(sessions, fmt.Sprintf("client.example;snat;%s;%d", tc.name, i))
			}
			by := map[string]int{}
			for _, a := range ccrs(t, c, "client.example", sessions...) {
				by[a.Origin]++
			}
			if both := by["member-a.example"] > 0 && by["member-b.example"] > 0; both != tc.both || len(by) == 0 {
				t.Errorf("answers by member %v, want both members: %v", by, tc.both)
			}
			for _, s := range []*diamtest.Server{a, b} {
				for _, g := range s.Got() {
					if at, err := netip.ParseAddrPort(g.From); err != nil || at.Addr() != xlat {
						t.Errorf("%s got code %d from %s, want %s", s.Name, g.Code, g.From, xlat)
					}
				}
			}
			l, _ := p.SNATTranslationLimit(xlat)
			if l.Cur != int64(tc.limit) || (l.Refused > 0) != tc.refused {
				t.Errorf("while the client is connected: %+v, want %d current, refused %v", l, tc.limit, tc.refused)
			}
			c.Close()
			for i := 0; i < 500 && l.Cur != 0; i++ {
				time.Sleep(20 * time.Millisecond)
				l, _ = p.SNATTranslationLimit(xlat)
			}
			if l.Cur != 0 {
				t.Errorf("%d connections hold the address after the client left", l.Cur)
			}
		})
	}
}
