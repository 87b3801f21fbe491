//go:build linux

package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAnyPortNetworkPortIPv6Unassigned: IPv6 networks on a port whose
// addresses no interface holds (fd00:249:1::/64, only a route of type
// local), their clients' neither (fd00:249:2::/64, the same): an L4
// and an http (mblb) network with automap and no self IP are served,
// each connection leaving for its member from the address its client
// reached; a udp
// network's leg to its member leaves from that address too, and its
// answers come from the address and port each client sent to. Without IPV6_FREEBIND on the listeners, the automap connection
// and the answering sockets, the commit fails ("cannot assign requested
// address") and nothing leaves from those addresses.
func TestAnyPortNetworkPortIPv6Unassigned(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, args := range [][]string{
		{"-6", "route", "add", "local", "fd00:249:1::/64", "dev", "lo"},
		{"-6", "route", "add", "local", "fd00:249:2::/64", "dev", "lo"},
		{"addr", "add", "fd00:250::2/128", "dev", "lo", "nodad"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Skipf("skipped: ip %v: %v %s", args, err, out)
		}
	}
	tm := startServer(t, "[fd00:250::2]:30122", "T6")
	um := startUDPMember(t, "[fd00:250::2]:30124", "U6")
	p, _ := loggedPlane(t)
	network := netip.MustParsePrefix("fd00:249:1::/64")
	cfg := basic("[fd00:249:1::]:30121", "[fd00:250::2]:30122")
	cfg.Virtuals["/Common/vs"].Network = network
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap}
	cfg.Pools["/Common/up"] = &Pool{Name: "/Common/up", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/fd00:250::2", Addr: ap("[fd00:250::2]:30124")}}}
	cfg.Virtuals["/Common/uvs"] = &Virtual{Name: "/Common/uvs", Destination: ap("[fd00:249:1::]:30123"), Network: network,
		Enabled: true, Protocol: ProtoUDP, TranslateAddress: true, TranslatePort: true, Pool: "/Common/up",
		SNAT: SNAT{Type: SNATAutomap}}
	hl, err := net.Listen("tcp", "[fd00:250::2]:30126")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.RemoteAddr) // where the member saw the request come from
	})}
	go hs.Serve(hl)
	t.Cleanup(func() { hs.Close() })
	cfg.Pools["/Common/hp"] = &Pool{Name: "/Common/hp", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/fd00:250::2", Addr: ap("[fd00:250::2]:30126")}}}
	cfg.Virtuals["/Common/hvs"] = &Virtual{Name: "/Common/hvs", Destination: ap("[fd00:249:1::]:30125"), Network: network,
		Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: "/Common/hp", SNAT: SNAT{Type: SNATAutomap},
		MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for i, tc := range []struct{ src, dst string }{
		{"fd00:249:2::9", "[fd00:249:1::8]:30125"},
		{"fd00:249:2::a", "[fd00:249:1::3:1]:30125"},
	} {
		d := net.Dialer{Timeout: 5 * time.Second, Control: sockopt.FreeBind6,
			LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(tc.src), 0))}
		c, err := d.Dial("tcp", tc.dst)
		if err != nil {
			t.Errorf("http %d: from %s to %s: %v", i, tc.src, tc.dst, err)
			continue
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: v6\r\n\r\n")
		var body []byte
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			body, err = io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
		}
		c.Close()
		if a, perr := netip.ParseAddrPort(string(body)); perr != nil || a.Addr() != ap(tc.dst).Addr() {
			t.Errorf("http %d: from %s to %s: the member saw %q (%v), want automap's source, the address the client reached", i, tc.src, tc.dst, body, err)
		}
	}
	for i, tc := range []struct{ src, dst string }{
		{"fd00:249:2::5", "[fd00:249:1::5]:30121"},
		{"fd00:249:2::6", "[fd00:249:1::1:9]:30121"},
	} {
		d := net.Dialer{Timeout: 5 * time.Second, Control: sockopt.FreeBind6,
			LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(tc.src), 0))}
		c, err := d.Dial("tcp", tc.dst)
		if err != nil {
			t.Errorf("%d: from %s to %s: %v", i, tc.src, tc.dst, err)
			continue
		}
		cl := &client{t: t, c: c.(*net.TCPConn), r: bufio.NewReader(c)}
		if got, err := cl.ask("hello"); got != "T6 Response" {
			t.Errorf("%d: from %s to %s: %q (%v), want T6 Response", i, tc.src, tc.dst, got, err)
		}
		c.Close()
		if r := tm.lastRemote(); r.Addr() != ap(tc.dst).Addr() {
			t.Errorf("%d: the member saw %v, want automap's source, the address the client reached (%s)", i, r, ap(tc.dst).Addr())
		}
	}
	for i, tc := range []struct{ src, dst string }{
		{"[fd00:249:2::7]:30131", "[fd00:249:1::6]:30123"},
		{"[fd00:249:2::8]:30132", "[fd00:249:1::2:7]:30123"},
	} {
		// Unconnected, so that an answer from another address or port
		// is read and told apart.
		lc := net.ListenConfig{Control: sockopt.FreeBind6}
		pc, err := lc.ListenPacket(t.Context(), "udp", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		u := pc.(*net.UDPConn)
		got, from := "", netip.AddrPort{}
		buf := make([]byte, 512)
		for try := 0; try < 5 && got == ""; try++ {
			u.WriteToUDPAddrPort([]byte("q"), ap(tc.dst))
			u.SetReadDeadline(time.Now().Add(time.Second))
			if n, f, err := u.ReadFromUDPAddrPort(buf); err == nil {
				got, from = string(buf[:n]), f
			}
		}
		u.Close()
		if got != "U6:q" || from != ap(tc.dst) {
			t.Errorf("%d: from %s to %s: %q from %v, want U6:q from %s", i, tc.src, tc.dst, got, from, tc.dst)
		}
		if srcs := um.sources(); len(srcs) == 0 || srcs[len(srcs)-1].Addr() != ap(tc.dst).Addr() {
			t.Errorf("%d: the member saw %v, want automap's source, the address the client reached (%s)", i, srcs, ap(tc.dst).Addr())
		}
	}
}
