package dataplane

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestExplicitProxySNATLimit: an explicit forward proxy's connection to
// an origin holds its ltm snat-translation address (connection-limit 1)
// for as long as it lasts: while a first client's CONNECT tunnel holds
// it, a second client's tunnel gets no origin connection; once the
// first has closed, the second's is made.
func TestExplicitProxySNATLimit(t *testing.T) {
	startL7Member(t, "127.238.12.31:30080", "POOL")
	startL7Member(t, "127.238.12.32:30080", "O1")
	ns := startNameserver(t, "127.238.12.53:0", map[string]string{"o1.test.": "127.238.12.32"})
	cfg := l7Config(t, "127.238.12.10:33128", false, mblb.HTTPOptions{}, "", "127.238.12.31:30080")
	cfg.Virtuals["/Common/vs"].MBLB.ExplicitProxy = &fwdproxy.Config{ConnectAllow: true,
		Resolver: fwdproxy.ResolverConfig{Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ns}}}, UDP: true}}
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATNone} // the SNAT objects decide
	xlat := netip.MustParseAddr("127.238.12.100")
	cfg.SNATs = []SNATObject{{Name: "/Common/s", Origins: []netip.Prefix{netip.MustParsePrefix("127.238.13.0/24")}, Addrs: []netip.Addr{xlat}}}
	cfg.SNATSettings = map[netip.Addr]SNATTranslation{xlat: {ConnLimit: 1}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	// tunnel opens a CONNECT tunnel from the address from and reports
	// its status (0: no answer), the connection left open.
	tunnel := func(from string) (int, net.Conn) {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", "127.238.12.10:33128")
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprint(c, "CONNECT o1.test:30080 HTTP/1.1\r\nHost: o1.test:30080\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"})
		if err != nil {
			return 0, c
		}
		return resp.StatusCode, c
	}
	st, first := tunnel("127.238.13.5")
	defer first.Close()
	if st != 200 {
		t.Fatalf("first tunnel: status %d, want 200", st)
	}
	if l, _ := p.SNATTranslationLimit(xlat); l.Cur != 1 {
		t.Errorf("the first tunnel's origin connection: %+v, want 1 current", l)
	}
	st, second := tunnel("127.238.13.6")
	second.Close()
	if st == 200 {
		t.Errorf("second tunnel while the first holds the address: status 200, want none made")
	}
	if l, _ := p.SNATTranslationLimit(xlat); l.Refused == 0 {
		t.Errorf("the refusal was not counted: %+v", l)
	}
	first.Close()
	l, _ := p.SNATTranslationLimit(xlat)
	for i := 0; i < 250 && l.Cur != 0; i++ {
		time.Sleep(20 * time.Millisecond)
		l, _ = p.SNATTranslationLimit(xlat)
	}
	if l.Cur != 0 {
		t.Fatalf("after the first tunnel closed: %+v, want 0 current", l)
	}
	st, third := tunnel("127.238.13.6")
	third.Close()
	if st != 200 {
		t.Errorf("second client after the address came back: status %d, want 200", st)
	}
}
