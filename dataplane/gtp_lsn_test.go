package dataplane

import (
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/openltm/openltm/dataplane/gtpmsg"
)

// TestGTPLSN: a gtp virtual with an lsn pool sends each message to its
// member from a translation of the pool (the member records where its
// messages came from), the flow's legs translated as any UDP virtual's.
func TestGTPLSN(t *testing.T) {
	var mu sync.Mutex
	var from []netip.AddrPort
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap("127.216.0.111:22123")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, f, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			mu.Lock()
			from = append(from, f)
			mu.Unlock()
			if a := gtpmsg.Respond(buf[:n], "M1"); a != nil {
				c.WriteToUDPAddrPort(a, f)
			}
		}
	}()
	p, _ := newPlane(t)
	cfg := udpBasic("127.216.0.110:22123", "127.216.0.111:22123")
	cfg.Virtuals["/Common/vs"].GTP = &GTPProfile{IngressMax: 100}
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATLSN, Pool: "/Common/cg"}
	cg := netip.MustParsePrefix("127.216.110.0/30")
	cfg.LSN = map[string]*LSNPool{"/Common/cg": {Name: "/Common/cg", Mode: "napt", Members: []netip.Prefix{cg}, PortLow: 31000, PortHigh: 31999}}
	mustApply(t, p, cfg)
	cl := gtpDial(t, "127.216.1.110", "127.216.0.110:22123")
	for i := 1; i <= 3; i++ {
		req := gtpmsg.Echo(2, uint32(i))
		if i > 1 {
			req = createSession("001010000000001", "internet", uint32(i))
		}
		if a := gtpAsk(t, cl, req); a == nil || gtpmsg.Label(a) != "M1" {
			t.Fatalf("request %d: answer %+v", i, a)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(from) == 0 {
		t.Fatal("the member heard nothing")
	}
	for _, f := range from {
		if !cg.Contains(f.Addr()) || f.Port() < 31000 || f.Port() > 31999 {
			t.Errorf("the member heard a message from %s, want a translation of the pool", f)
		}
	}
	if n := p.LSNPool("/Common/cg").Stats.Total.Load(); n == 0 {
		t.Error("the pool made no translation")
	}
}
