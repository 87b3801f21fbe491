package dataplane

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/snatobj"
)

// TestListenUDPSNATLimit: a rule's UDP listen relay holds its ltm
// snat-translation address as the flow that opened it does: at a
// connection-limit of 2 (the control connection's and the relay's) the
// relay reaches the server from the address, at 1 the control
// connection holds it and the relay is refused (nothing reaches the
// server, the refusal counted).
func TestListenUDPSNATLimit(t *testing.T) {
	startServer(t, "127.238.10.2:30021", "C")
	udpService(t, "127.238.10.3:30500", func(from netip.AddrPort, _ []byte) []byte { return []byte(from.Addr().String()) })
	xlat := netip.MustParseAddr("127.238.10.100")
	for _, tc := range []struct {
		name  string
		limit uint64
		want  string // the relay's answer: the source the server saw; "" none
	}{
		{"room for the relay", 2, "127.238.10.100"},
		{"full", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic("127.238.10.1:30021", "127.238.10.2:30021")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    set l [listen { proto 17; timeout 30; server 127.238.10.3 30500; allow [IP::client_addr] }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`)
			cfg.SNATs = []SNATObject{{Name: "/Common/s", Origins: []netip.Prefix{netip.MustParsePrefix("127.238.11.0/24")}, Addrs: []netip.Addr{xlat}}}
			cfg.SNATSettings = map[netip.Addr]SNATTranslation{xlat: {ConnLimit: tc.limit}}
			mustApply(t, p, cfg)
			ctl := dialFrom(t, "127.238.11.9", "127.238.10.1:30021")
			data := dataAddr(t, ctl)
			// The control connection's server side holds the address
			// first.
			var l snatobj.Limited
			for i := 0; i < 250 && l.Cur < 1; i++ {
				l, _ = p.SNATTranslationLimit(xlat)
				time.Sleep(20 * time.Millisecond)
			}
			if l.Cur != 1 {
				t.Fatalf("the control connection: %+v, want it holding the address", l)
			}
			uc, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(ap("127.238.11.9:0")), net.UDPAddrFromAddrPort(ap(data)))
			if err != nil {
				t.Fatal(err)
			}
			defer uc.Close()
			uc.Write([]byte("ping"))
			b := make([]byte, 64)
			if tc.want != "" {
				uc.SetDeadline(time.Now().Add(5 * time.Second))
				n, _ := uc.Read(b)
				if got := string(b[:n]); got != tc.want {
					t.Errorf("the relay's answer %q, want %q", got, tc.want)
				}
				if l, _ = p.SNATTranslationLimit(xlat); l.Cur != 2 || l.Refused != 0 {
					t.Errorf("%+v, want the control connection and the relay holding the address", l)
				}
				return
			}
			// Refused: counted when the datagram came, and nothing relayed.
			for i := 0; i < 250 && l.Refused == 0; i++ {
				time.Sleep(20 * time.Millisecond)
				l, _ = p.SNATTranslationLimit(xlat)
			}
			if l.Refused == 0 || l.Cur != 1 {
				t.Errorf("%+v, want the relay refused and the control connection holding the address", l)
			}
			uc.SetDeadline(time.Now().Add(200 * time.Millisecond))
			if n, err := uc.Read(b); err == nil {
				t.Errorf("a refused relay answered %q", b[:n])
			}
		})
	}
}

// TestListenUDPSNATStrict: source-port preserve-strict on a rule's UDP
// listen relay: the server sees the relay from exactly the peer's port
// on the translation address; with that port in use there the relay is
// not made (nothing reaches the server), where preserve takes another
// port.
func TestListenUDPSNATStrict(t *testing.T) {
	startServer(t, "127.250.20.2:30621", "C")
	udpService(t, "127.250.20.3:30600", func(from netip.AddrPort, _ []byte) []byte { return []byte(from.String()) })
	xlat := netip.MustParseAddr("127.250.20.100")
	const peer = "127.250.21.9:30611"
	for _, tc := range []struct {
		name   string
		strict bool
		busy   bool   // the peer's port is in use on the translation address
		want   string // the source the server saw; "" none, "other" another port
	}{
		{"strict", true, false, "127.250.20.100:30611"},
		{"strict, port in use", true, true, ""},
		{"preserve, port in use", false, true, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *Plane
			got, answered := strictRelay(t, xlat, peer, tc.busy, tc.want != "", func() string {
				p, _ = newPlane(t)
				cfg := basic("127.250.20.1:30621", "127.250.20.2:30621")
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    set l [listen { proto 17; timeout 30; server 127.250.20.3 30600; allow [IP::client_addr] }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`)
				cfg.SNATs = []SNATObject{{Name: "/Common/s", Origins: []netip.Prefix{netip.MustParsePrefix("127.250.21.0/24")}, Addrs: []netip.Addr{xlat}, StrictPort: tc.strict}}
				cfg.SNATSettings = map[netip.Addr]SNATTranslation{xlat: {ConnLimit: 5}}
				mustApply(t, p, cfg)
				return dataAddr(t, dialFrom(t, "127.250.21.9", "127.250.20.1:30621"))
			})
			if tc.want == "" {
				if answered {
					t.Errorf("a relay whose port is in use answered: the server saw %s", got)
				}
				// The relay's hold was given back: only the control
				// connection's remains.
				var l snatobj.Limited
				for i := 0; i < 250; i++ {
					if l, _ = p.SNATTranslationLimit(xlat); l.Cur == 1 {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if l.Cur != 1 {
					t.Errorf("%+v, want only the control connection holding the address", l)
				}
				return
			}
			switch {
			case !answered:
				t.Fatal("no answer through the relay")
			case got.Addr() != xlat:
				t.Errorf("the server saw %s, want the translation address", got)
			case tc.want == "other" && got.Port() == 30611:
				t.Errorf("the server saw %s, the port in use", got)
			case tc.want != "other" && got.String() != tc.want:
				t.Errorf("the server saw %s, want %s", got, tc.want)
			}
		})
	}
}

// TestListenUDPSNATStrictOnUDPVirtual: a UDP virtual's rule's UDP
// listen relay under preserve-strict leaves from exactly the peer's
// port on the translation address; with that port in use there no
// relay is made.
func TestListenUDPSNATStrictOnUDPVirtual(t *testing.T) {
	startUDPMember(t, "127.250.22.2:30702", "M")
	udpService(t, "127.250.22.3:30700", func(from netip.AddrPort, _ []byte) []byte { return []byte(from.String()) })
	xlat := netip.MustParseAddr("127.250.22.100")
	const peer = "127.250.23.9:30711"
	for _, busy := range []bool{false, true} {
		t.Run(map[bool]string{false: "port free", true: "port in use"}[busy], func(t *testing.T) {
			got, answered := strictRelay(t, xlat, peer, busy, !busy, func() string {
				p, _ := newPlane(t)
				cfg := udpBasic("127.250.22.1:30701", "127.250.22.2:30702")
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_DATA {
    set l [listen { proto 17; timeout 30; server 127.250.22.3 30700; allow [IP::client_addr] }]
    UDP::respond "DATA [lindex $l 0] [lindex $l 1]"
    UDP::drop
}`)
				cfg.SNATs = []SNATObject{{Name: "/Common/s", Origins: []netip.Prefix{netip.MustParsePrefix("127.250.23.0/24")}, Addrs: []netip.Addr{xlat}, StrictPort: true}}
				mustApply(t, p, cfg)
				c := dialUDP(t, "127.250.23.9:0", "127.250.22.1:30701")
				f := strings.Fields(c.mustAsk("open"))
				if len(f) != 3 || f[0] != "DATA" {
					t.Fatalf("rule's answer %q", f)
				}
				return net.JoinHostPort(f[1], f[2])
			})
			switch {
			case busy && answered:
				t.Errorf("a relay whose port is in use answered: the server saw %s", got)
			case !busy && !answered:
				t.Fatal("no answer through the relay")
			case !busy && got.String() != "127.250.22.100:30711":
				t.Errorf("the server saw %s, want 127.250.22.100:30711", got)
			}
		})
	}
}

// strictRelay runs one case of a rule's UDP listen relay under a SNAT's
// source-port setting, as the preserve-strict tests share it: with busy
// the peer's port is first taken on the translation address xlat (a
// plain UDP socket, held to the end of the test); open applies the
// configuration and returns the relay's address (host:port) the rule
// gave; the peer (an address:port) sends one datagram there. got is the
// source the server saw (its answer); answered is false when no answer
// came within 5 seconds (1 when none is expected: expect false).
func strictRelay(t *testing.T, xlat netip.Addr, peer string, busy, expect bool, open func() string) (got netip.AddrPort, answered bool) {
	t.Helper()
	if busy {
		b, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(xlat, ap(peer).Port())))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
	}
	data := open()
	uc, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(ap(peer)), net.UDPAddrFromAddrPort(ap(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	uc.Write([]byte("ping"))
	wait := time.Second
	if expect {
		wait = 5 * time.Second
	}
	uc.SetDeadline(time.Now().Add(wait))
	b := make([]byte, 64)
	n, err := uc.Read(b)
	if err != nil {
		return netip.AddrPort{}, false
	}
	got, err = netip.ParseAddrPort(string(b[:n]))
	if err != nil {
		t.Fatalf("the server answered %q, not an address:port", b[:n])
	}
	return got, true
}
