package dataplane

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tftp"
)

// TestTFTPProfileLSN: a tftp virtual with an lsn pool sends a client's
// request, and the ACKs to the member's transfer port, from a
// translation of the pool (the member logs where the request came
// from), with the pool's inbound-connections automatic too (the
// member's answers reach the leg, not an inbound socket); the
// translation is given back when the flow idles out. A pool with no port
// left answers nothing and counts the failure.
func TestTFTPProfileLSN(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var heard []string
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.216.0.41:21069")))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &tftp.Server{Dir: dir, Timeout: 500 * time.Millisecond, Retries: 10, Log: func(m string) {
		mu.Lock()
		heard = append(heard, m)
		mu.Unlock()
	}}
	go s.Serve(c)
	t.Cleanup(func() { c.Close() })
	small := tftpFile(3000)
	os.WriteFile(filepath.Join(dir, "small.bin"), small, 0o644)

	p, _ := newPlane(t)
	cfg := udpBasic("127.216.0.40:21069", "127.216.0.41:21069")
	cg := netip.MustParsePrefix("127.216.40.0/30")
	cfg.LSN = map[string]*LSNPool{
		"/Common/cg":    {Name: "/Common/cg", Mode: "napt", Members: []netip.Prefix{cg}, PortLow: 25000, PortHigh: 25999},
		"/Common/cg_in": {Name: "/Common/cg_in", Mode: "napt", Members: []netip.Prefix{cg}, PortLow: 26000, PortHigh: 26999, Inbound: "automatic"},
		"/Common/one":   {Name: "/Common/one", Mode: "napt", Members: []netip.Prefix{netip.MustParsePrefix("127.216.41.1/32")}, PortLow: 27000, PortHigh: 27000, Persist: "none"},
	}
	for i, pool := range []string{"/Common/cg", "/Common/cg_in", "/Common/one"} {
		v := *cfg.Virtuals["/Common/vs"]
		v.Name = "/Common/vs" + string(rune('a'+i))
		v.Destination = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 216, 0, byte(42 + i)}), 21069)
		v.TFTP = &TFTPProfile{}
		v.SNAT = SNAT{Type: SNATLSN, Pool: pool}
		v.IdleTimeout = time.Second
		cfg.Virtuals[v.Name] = &v
	}
	delete(cfg.Virtuals, "/Common/vs")
	mustApply(t, p, cfg)

	for _, tc := range []struct {
		name, vs, src, pool string
		lo, hi              uint16
	}{
		{"napt", "127.216.0.42:21069", "127.216.1.40", "/Common/cg", 25000, 25999},
		{"inbound automatic", "127.216.0.43:21069", "127.216.1.41", "/Common/cg_in", 26000, 26999},
		{"one port", "127.216.0.44:21069", "127.216.1.42", "/Common/one", 27000, 27000},
	} {
		lp := p.LSNPool(tc.pool)
		mu.Lock()
		heard = nil
		mu.Unlock()
		got, e := tftpGet(t, tc.vs, tc.src, "small.bin", 0)
		if e != nil || !bytes.Equal(got, small) {
			t.Errorf("%s: %d bytes, error %+v", tc.name, len(got), e)
		}
		mu.Lock()
		log := strings.Join(heard, "\n")
		mu.Unlock()
		from, ok := strings.CutPrefix(log, "RRQ small.bin from ")
		from, _, _ = strings.Cut(from, "\n")
		at, err := netip.ParseAddrPort(from)
		if !ok || err != nil || !(cg.Contains(at.Addr()) || tc.pool == "/Common/one" && at.Addr() == netip.MustParseAddr("127.216.41.1")) || at.Port() < tc.lo || at.Port() > tc.hi {
			t.Errorf("%s: the member heard %q, want a request from a translation of %s", tc.name, log, tc.pool)
		}
		if n := lp.Stats.Total.Load(); n != 1 {
			t.Errorf("%s: %d translations, want 1", tc.name, n)
		}
		if tc.pool == "/Common/one" {
			// Its port held by the first client's flow, a second client's
			// request is not sent; the pool counts the failure.
			cl, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.216.1.43:0")))
			if err != nil {
				t.Fatal(err)
			}
			cl.WriteToUDPAddrPort(tftp.Append(nil, &tftp.Packet{Op: tftp.RRQ, Filename: "small.bin", Mode: "octet"}), ap(tc.vs))
			cl.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			if _, _, err := cl.ReadFromUDPAddrPort(make([]byte, 1024)); err == nil {
				t.Errorf("one port held: a second client's request was answered")
			}
			cl.Close()
			if n := lp.Stats.Failures.Load(); n != 1 {
				t.Errorf("failures %d, want 1", n)
			}
		}
		deadline := time.Now().Add(15 * time.Second)
		for lp.Stats.Active.Load() != 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := lp.Stats.Active.Load(); n != 0 {
			t.Errorf("%s: %d translations still active after the flow idled out", tc.name, n)
		}
	}
}
