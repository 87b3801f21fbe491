package dataplane

import (
	"bufio"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// The virtual's own source-port (preserve, preserve-strict, change) as
// members see it. With automap and no self IP, the server connections
// leave from the virtual's address, where the client's port is free
// unless the test takes it first (busy).

// srcportCase is one client connection: the virtual's setting, whether
// the client's port is first taken on the translation address, and what
// the member must see ("kept": the client's port; "other": another
// port; "": nothing, the connection fails).
type srcportCase struct {
	name          string
	change, stric bool
	busy          bool
	want          string
}

var srcportCases = []srcportCase{
	{"preserve", false, false, false, "kept"},
	{"preserve, port in use", false, false, true, "other"},
	{"change", true, false, false, "other"},
	{"preserve-strict", false, true, false, "kept"},
	{"preserve-strict, port in use", false, true, true, ""},
}

// freePort is the first port from *next (at most 200 tried) that no
// socket, TIME_WAIT ones of an earlier run included, holds on any of
// addrs for TCP or UDP; *next moves past it, so each case has its own.
func freePort(t *testing.T, next *uint16, addrs ...netip.Addr) uint16 {
	t.Helper()
	for i := 0; i < 200; i++ {
		p := *next
		*next++
		free := true
		for _, a := range addrs {
			l, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, p)))
			if err != nil {
				free = false
				break
			}
			l.Close()
			u, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(a, p)))
			if err != nil {
				free = false
				break
			}
			u.Close()
		}
		if free {
			return p
		}
	}
	t.Fatalf("no free port on %v", addrs)
	return 0
}

// TestVirtualSourcePortTCP: a TCP virtual's source-port with automap:
// preserve keeps the client's port (another when it is in use), change
// takes another, preserve-strict keeps it or resets the client.
func TestVirtualSourcePortTCP(t *testing.T) {
	const vs, member, client = "127.247.230.1:30801", "127.247.230.2:30802", "127.247.230.9"
	srv := startServer(t, member, "M")
	xlat := ap(vs).Addr()
	next := uint16(30900)
	for _, tc := range srcportCases {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t, &next, xlat, ap(client+":0").Addr())
			p, _ := loggedPlane(t)
			cfg := basic(vs, member)
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap, ChangePort: tc.change, StrictPort: tc.stric}
			mustApply(t, p, cfg)
			srcportTCPCase(t, tc, srv, vs, ap(client+":0").Addr(), xlat, port)
		})
	}
}

// TestVirtualSourcePortUDP: a UDP virtual's source-port with automap, as
// TestVirtualSourcePortTCP: preserve-strict with the port in use makes
// no server flow (nothing reaches the member).
func TestVirtualSourcePortUDP(t *testing.T) {
	const vs, member, client = "127.247.231.1:30821", "127.247.231.2:30822", "127.247.231.9"
	m := startUDPMember(t, member, "M")
	xlat := ap(vs).Addr()
	next := uint16(31200)
	for _, tc := range srcportCases {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t, &next, xlat, ap(client+":0").Addr())
			p, _ := loggedPlane(t)
			cfg := udpBasic(vs, member)
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap, ChangePort: tc.change, StrictPort: tc.stric}
			mustApply(t, p, cfg)
			srcportUDPCase(t, tc, m, vs, ap(client+":0").Addr(), xlat, port)
		})
	}
}

// srcportTCPCase runs one of srcportCases over TCP against the virtual
// vs the plane serves: the client dials from client:port (a listener
// holding xlat:port first, under tc.busy) and the member srv must see
// the source tc.want says, or no connection when the client is to be
// reset.
func srcportTCPCase(t *testing.T, tc srcportCase, srv *server, vs string, client, xlat netip.Addr, port uint16) {
	t.Helper()
	if tc.busy {
		l, err := net.Listen("tcp", netip.AddrPortFrom(xlat, port).String())
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	before := srv.lastRemote()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(client, port))}
	line, err := srcportAsk(d, vs)
	got := srv.lastRemote()
	if tc.want == "" { // a reset may reach the dialer before connect returns
		if err == nil {
			t.Errorf("answered %q (the member saw %s), want the connection reset", strings.TrimSpace(line), got)
		}
		if got != before {
			t.Errorf("the member saw a connection from %s", got)
		}
		return
	}
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	checkSrcport(t, got, xlat, port, tc.want)
}

// srcportUDPCase is srcportTCPCase over UDP: a datagram from
// client:port to vs, the member m seeing its source, or nothing (no
// server flow) when none is to be made.
func srcportUDPCase(t *testing.T, tc srcportCase, m *udpMember, vs string, client, xlat netip.Addr, port uint16) {
	t.Helper()
	if tc.busy {
		b, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(xlat, port)))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
	}
	n := len(m.sources())
	u := dialUDP(t, netip.AddrPortFrom(client, port).String(), vs)
	if tc.want == "" {
		if a := u.ask("hello"); a != "" {
			t.Errorf("answered %q, want no server flow", a)
		}
		if s := m.sources(); len(s) != n {
			t.Errorf("the member saw %s", s[n:])
		}
		return
	}
	u.mustAsk("hello")
	s := m.sources()
	checkSrcport(t, s[len(s)-1], xlat, port, tc.want)
}

// checkSrcport: the member saw got, from xlat with the client's port
// (want "kept") or another ("other").
func checkSrcport(t *testing.T, got netip.AddrPort, xlat netip.Addr, port uint16, want string) {
	t.Helper()
	switch {
	case got.Addr() != xlat:
		t.Errorf("the member saw %s, want the automap address %s", got, xlat)
	case want == "kept" && got.Port() != port:
		t.Errorf("the member saw %s, want the client's port %d", got, port)
	case want == "other" && got.Port() == port:
		t.Errorf("the member saw %s, the client's port, want another", got)
	}
}

// TestVirtualSourcePortNoneAndSNAT: with source-address-translation none
// the server connection leaves from the client's address, where a
// client on this machine holds its own port: preserve-strict resets it
// (preserve and change take another port); an ltm snat that translates
// the client decides by its own source-port, not the virtual's [M].
func TestVirtualSourcePortNoneAndSNAT(t *testing.T) {
	const vs, member = "127.247.232.1:30831", "127.247.232.2:30832"
	srv := startServer(t, member, "M")
	xlat := netip.MustParseAddr("127.247.232.100")
	next := uint16(31400)
	for _, tc := range []struct {
		name          string
		client        string
		change, stric bool
		want          string // "reset", "client" (the client's address, another port), "snat" (the ltm snat's address, the client's port)
	}{
		{"preserve-strict", "127.247.232.9", false, true, "reset"},
		{"change", "127.247.232.9", true, false, "client"},
		{"preserve", "127.247.232.9", false, false, "client"},
		{"change, ltm snat preserve", "127.247.233.9", true, false, "snat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := loggedPlane(t)
			cfg := basic(vs, member)
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATNone, ChangePort: tc.change, StrictPort: tc.stric}
			cfg.SNATs = []SNATObject{{Name: "/Common/s", Origins: []netip.Prefix{netip.MustParsePrefix("127.247.233.0/24")}, Addrs: []netip.Addr{xlat}}}
			mustApply(t, p, cfg)
			before := srv.lastRemote()
			ca := netip.MustParseAddr(tc.client)
			cl := netip.AddrPortFrom(ca, freePort(t, &next, ca, xlat))
			d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(cl)}
			line, err := srcportAsk(d, vs)
			got := srv.lastRemote()
			switch {
			case tc.want == "reset":
				if err == nil || got != before {
					t.Errorf("answered %q, the member saw %s: want the connection reset", strings.TrimSpace(line), got)
				}
			case err != nil:
				t.Fatalf("no answer: %v", err)
			case tc.want == "client" && (got.Addr() != cl.Addr() || got.Port() == cl.Port()):
				t.Errorf("the member saw %s, want the client's address with another port", got)
			case tc.want == "snat" && got != netip.AddrPortFrom(xlat, cl.Port()):
				t.Errorf("the member saw %s, want %s", got, netip.AddrPortFrom(xlat, cl.Port()))
			}
		})
	}
}

// srcportAsk dials vs with d, sends one line and returns the answer line;
// a failed dial (a reset may come before connect returns) is the error.
func srcportAsk(d net.Dialer, vs string) (string, error) {
	c, err := d.Dial("tcp", vs)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	c.Write([]byte("hello\n"))
	return bufio.NewReader(c).ReadString('\n')
}
