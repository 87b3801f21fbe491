package dataplane

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ftpalg"
)

// TestFTPProfileLSN: on an ftp virtual with an lsn pool, the member sees
// the control connection and every data connection come from the
// pool's addresses, and is told, for an active transfer (PORT, EPRT), a
// translation address and port of the pool for its listener (with the
// pool's inbound-connections automatic too: the member's connection
// reaches the gateway's listener, not an inbound one); each data
// translation is given back when its transfer ends. A pool with no port
// left for the listener answers the client's PORT 425, counted.
func TestFTPProfileLSN(t *testing.T) {
	t.Parallel()
	file := bytes.Repeat([]byte("openltm ftp lsn data\n"), 5000)
	m := startFTPMember(t, "127.216.0.31:21121", file)
	p, _ := newPlane(t)
	cfg := basic("127.216.0.21:21121", "127.216.0.31:21121")
	vs := cfg.Virtuals["/Common/vs"]
	vs.FTP = &ftpalg.Options{Profile: "/Common/ftp", TranslateExtended: true}
	vs.SNAT = SNAT{Type: SNATLSN, Pool: "/Common/cg"}
	in := basic("127.216.0.22:21121", "127.216.0.31:21121").Virtuals["/Common/vs"]
	in.Name = "/Common/vs_in"
	in.FTP = &ftpalg.Options{Profile: "/Common/ftp", TranslateExtended: true}
	in.SNAT = SNAT{Type: SNATLSN, Pool: "/Common/cg_in"}
	cfg.Virtuals[in.Name] = in
	one := basic("127.216.0.23:21121", "127.216.0.31:21121").Virtuals["/Common/vs"]
	one.Name = "/Common/vs_one"
	one.FTP = &ftpalg.Options{Profile: "/Common/ftp", TranslateExtended: true}
	one.SNAT = SNAT{Type: SNATLSN, Pool: "/Common/one"}
	cfg.Virtuals[one.Name] = one
	cg := netip.MustParsePrefix("127.216.30.0/30")
	cfg.LSN = map[string]*LSNPool{
		"/Common/cg":    {Name: "/Common/cg", Mode: "napt", Members: []netip.Prefix{cg}, PortLow: 25000, PortHigh: 25999},
		"/Common/cg_in": {Name: "/Common/cg_in", Mode: "napt", Members: []netip.Prefix{cg}, PortLow: 26000, PortHigh: 26999, Inbound: "automatic"},
		"/Common/one":   {Name: "/Common/one", Mode: "napt", Members: []netip.Prefix{netip.MustParsePrefix("127.216.31.1/32")}, PortLow: 27000, PortHigh: 27000, Persist: "none"},
	}
	mustApply(t, p, cfg)

	for _, c := range []struct {
		name, vs, pool string
		mode           string
		up             bool
		lo, hi         uint16
	}{
		{"pasv retr", "127.216.0.21:21121", "/Common/cg", "PASV", false, 25000, 25999},
		{"epsv stor", "127.216.0.21:21121", "/Common/cg", "EPSV", true, 25000, 25999},
		{"port retr", "127.216.0.21:21121", "/Common/cg", "PORT", false, 25000, 25999},
		{"eprt stor", "127.216.0.21:21121", "/Common/cg", "EPRT", true, 25000, 25999},
		{"port, inbound automatic", "127.216.0.22:21121", "/Common/cg_in", "PORT", false, 26000, 26999},
		{"eprt, inbound automatic", "127.216.0.22:21121", "/Common/cg_in", "EPRT", true, 26000, 26999},
	} {
		lp := p.LSNPool(c.pool)
		total := lp.Stats.Total.Load()
		m.mu.Lock()
		m.cmds, m.told, m.from, m.stored = nil, nil, nil, nil
		m.mu.Unlock()
		cl := ftpClient(t, c.vs)
		got, _ := transfer(t, cl, ap(c.vs), c.mode, c.up, file)
		if c.up {
			m.mu.Lock()
			got = m.stored
			m.mu.Unlock()
		}
		if !bytes.Equal(got, file) {
			t.Errorf("%s: %d bytes arrived, want %d", c.name, len(got), len(file))
		}
		m.mu.Lock()
		told, from := m.told, m.from
		m.mu.Unlock()
		active := c.mode == "PORT" || c.mode == "EPRT"
		if active && len(told) != 1 {
			t.Errorf("%s: the member was told %v, want one address", c.name, told)
		}
		for _, a := range told {
			if !cg.Contains(a.Addr()) || a.Port() < c.lo || a.Port() > c.hi {
				t.Errorf("%s: the member was told %v, want a translation of %s", c.name, a, c.pool)
			}
		}
		if len(from) != 2 || !cg.Contains(from[0]) || from[1] != from[0] {
			t.Errorf("%s: the member saw connections from %v, want two from one address of %s", c.name, from, cg)
		}
		// The control connection's translation and the data connection's.
		if n := lp.Stats.Total.Load() - total; n != 2 {
			t.Errorf("%s: %d translations, want 2", c.name, n)
		}
		cl.PrintfLine("QUIT")
		cl.ReadResponse(221)
		cl.Close()
		deadline := time.Now().Add(10 * time.Second)
		for lp.Stats.Active.Load() != 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := lp.Stats.Active.Load(); n != 0 {
			t.Errorf("%s: %d translations still active after the transfer", c.name, n)
		}
	}

	// One port, the control connection's: the listener gets none.
	lp := p.LSNPool("/Common/one")
	cl := ftpClient(t, "127.216.0.23:21121")
	cl.PrintfLine("PORT %s", ftpalg.FormatHostPort(ap("127.0.0.1:21999")))
	if code, msg, err := cl.ReadResponse(425); err != nil {
		t.Errorf("PORT with no port left: %d %s (%v), want 425", code, msg, err)
	}
	if n := lp.Stats.Failures.Load(); n != 1 {
		t.Errorf("failures %d, want 1", n)
	}
}
