package dataplane

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diameter/diamtest"
)

// TestDiameterProfileLSN: a diameter virtual with an lsn pool connects
// the client's flow to each member it balances requests over from a
// translation of the pool of its own (the first member's the flow's,
// the others' beside it); every member sees the pool's addresses, and
// the translations are given back when the client leaves.
func TestDiameterProfileLSN(t *testing.T) {
	t.Parallel()
	a := diamServer(t, "127.216.0.91:23868", "member-a.example", false)
	b := diamServer(t, "127.216.0.92:23868", "member-b.example", false)
	p, _ := newPlane(t)
	cfg := basic("127.216.0.90:23868", a.Addr(), b.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	diamVirtual(t, cfg, "/Common/d", "127.216.0.90:23868", "/Common/pool", diameter.Options{}, "")
	cfg.Virtuals["/Common/d"].SNAT = SNAT{Type: SNATLSN, Pool: "/Common/cg"}
	cg := netip.MustParsePrefix("127.216.90.0/30")
	cfg.LSN = map[string]*LSNPool{"/Common/cg": {Name: "/Common/cg", Mode: "napt", Members: []netip.Prefix{cg}, PortLow: 30000, PortHigh: 30999}}
	mustApply(t, p, cfg)
	lp := p.LSNPool("/Common/cg")

	c, _ := diamClient(t, "127.216.0.90:23868", "client.example")
	var sessions []string
	for i := range 8 {
		sessions = append(sessions, fmt.Sprintf("client.example;lsn;%d", i))
	}
	by := map[string]int{}
	for _, a := range ccrs(t, c, "client.example", sessions...) {
		by[a.Origin]++
	}
	if by["member-a.example"] == 0 || by["member-b.example"] == 0 {
		t.Fatalf("answers by member %v, want both", by)
	}
	for _, s := range []*diamtest.Server{a, b} {
		for _, g := range s.Got() {
			at, err := netip.ParseAddrPort(g.From)
			if err != nil || !cg.Contains(at.Addr()) || at.Port() < 30000 || at.Port() > 30999 {
				t.Errorf("%s got code %d from %s, want a translation of the pool", s.Name, g.Code, g.From)
			}
		}
	}
	if n := lp.Stats.Active.Load(); n != 2 {
		t.Errorf("%d translations active, want 2: one per member connection", n)
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for lp.Stats.Active.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := lp.Stats.Active.Load(); n != 0 {
		t.Errorf("%d translations active after the client left", n)
	}
}
