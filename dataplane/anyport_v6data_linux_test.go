//go:build linux

package dataplane

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/rtsp"
)

// Addresses of the tests below, in a network namespace of their own:
// v6DataNet and v6DataAny are IPv6 networks served through routes of
// type local only (none of their addresses is assigned, their own
// included), v6DataMember a member's address and v6DataClient a
// client's, both assigned.
const (
	v6DataNet    = "fd00:249:201:1::/64"
	v6DataAny    = "fd00:249:201:2::/64"
	v6DataMember = "fd00:249:201:ff::2"
	v6DataClient = "fd00:249:201:ff::3"
)

// v6DataSetup makes the namespace's routes and addresses for the tests
// below, or skips the test where ip cannot.
func v6DataSetup(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{
		{"-6", "route", "add", "local", v6DataNet, "dev", "lo"},
		{"-6", "route", "add", "local", v6DataAny, "dev", "lo"},
		{"addr", "add", v6DataMember + "/128", "dev", "lo", "nodad"},
		{"addr", "add", v6DataClient + "/128", "dev", "lo", "nodad"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Skipf("skipped: ip %v: %v %s", args, err, out)
		}
	}
}

// TestAnyPortNetworkPortFTPIPv6Unassigned: an ftp virtual on the port of
// an IPv6 network none of whose addresses is assigned (fd00:249:201:1::/64
// on 30141), with automap and no self IP, carries passive (EPSV) and
// active (EPRT) transfers for clients of two of its addresses: the
// client's data connection is with the address it reached (the gateway's
// data listener bound there, its active data connection leaving from
// there), and the member sees the control and data connections come
// from that address too (automap's source).
func TestAnyPortNetworkPortFTPIPv6Unassigned(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	v6DataSetup(t)
	file := bytes.Repeat([]byte("openltm ftp on an unassigned IPv6 network\n"), 5000)
	m := startFTPMember(t, "["+v6DataMember+"]:30141", file)
	p, _ := loggedPlane(t)
	cfg := basic("[fd00:249:201:1::]:30141", "["+v6DataMember+"]:30141")
	v := cfg.Virtuals["/Common/vs"]
	v.Network = netip.MustParsePrefix(v6DataNet)
	v.SNAT = SNAT{Type: SNATAutomap}
	v.FTP = &ftpalg.Options{Profile: "/Common/ftp", DataPort: 20, TranslateExtended: true}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	client := netip.MustParseAddr(v6DataClient)
	for _, addr := range []string{"fd00:249:201:1::5", "fd00:249:201:1::3:7"} {
		vs := netip.AddrPortFrom(netip.MustParseAddr(addr), 30141)
		for _, mode := range []string{"EPSV", "EPRT"} {
			m.mu.Lock()
			m.from = nil
			m.mu.Unlock()
			cl := ftpClientFrom(t, client, vs.String())
			got, peer := transferAt(t, cl, vs, mode, false, nil, client)
			if !bytes.Equal(got, file) {
				t.Errorf("%v, %s: %d bytes arrived, want %d", vs, mode, len(got), len(file))
			}
			if peer.Addr() != vs.Addr() {
				t.Errorf("%v, %s: the data connection was with %v, not the address the client reached", vs, mode, peer)
			}
			cl.PrintfLine("QUIT")
			cl.ReadResponse(221)
			cl.Close()
			m.mu.Lock()
			from := append([]netip.Addr(nil), m.from...)
			m.mu.Unlock()
			if len(from) != 2 {
				t.Errorf("%v, %s: the member saw connections from %v, want a control and a data connection", vs, mode, from)
			}
			for _, f := range from {
				if f != vs.Addr() {
					t.Errorf("%v, %s: the member saw a connection from %v, want automap's source, the address the client reached", vs, mode, f)
				}
			}
		}
	}
}

// TestAnyPortNetworkPortRTSPIPv6Unassigned: an rtsp virtual on the port
// of an IPv6 network none of whose addresses is assigned
// (fd00:249:201:1::/64 on 30142), with automap, sets up and plays a UDP
// session for clients of two of its addresses: the Transport's source and
// the RTP come from the address each client reached (the client-side data
// channel bound there; without IPV6_FREEBIND the channel takes another
// address), and the member's RTP, sent to where its SETUP came from,
// reaches the gateway's server-side channel.
func TestAnyPortNetworkPortRTSPIPv6Unassigned(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	v6DataSetup(t)
	rtspMember(t, "["+v6DataMember+"]:30142", "member6")
	p, _ := loggedPlane(t)
	cfg := basic("[fd00:249:201:1::]:30142", "["+v6DataMember+"]:30142")
	v := cfg.Virtuals["/Common/vs"]
	v.Network = netip.MustParsePrefix(v6DataNet)
	v.SNAT = SNAT{Type: SNATAutomap}
	v.RTSP = &rtsp.Options{Profile: "/Common/rtsp", Idle: 30 * time.Second}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, addr := range []string{"fd00:249:201:1::9", "fd00:249:201:1::4:2"} {
		// rtspSession checks the source and the RTP's address and port.
		if payload, _, _ := rtspSession(t, v6DataClient, "["+addr+"]:30142"); payload != "member6" {
			t.Errorf("%s: media %q, want the member's", addr, payload)
		}
	}
}

// TestAnyPortNetworkUDPForwardIPv6Unassigned: udp ip-forward virtuals
// that are IPv6 networks none of whose addresses is assigned, one on a
// port (fd00:249:201:1::/64 on 30143) and one on every port
// (fd00:249:201:2::/64), forward each client's datagram to the program
// on the address and port it sent to (bound there with IPV6_FREEBIND),
// the leg leaving from that address, and the program's answer reaches
// the client from that address and port.
func TestAnyPortNetworkUDPForwardIPv6Unassigned(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	v6DataSetup(t)
	p, _ := loggedPlane(t)
	fwd := func(name, dst, network string) *Virtual {
		return &Virtual{Name: name, Destination: ap(dst), Network: netip.MustParsePrefix(network), Enabled: true,
			Protocol: ProtoUDP, IPForward: true, SNAT: SNAT{Type: SNATNone}}
	}
	cfg := &Config{Virtuals: map[string]*Virtual{
		"/Common/port": fwd("/Common/port", "[fd00:249:201:1::]:30143", v6DataNet),
		"/Common/any":  fwd("/Common/any", "[fd00:249:201:2::]:0", v6DataAny),
	}, Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, dst := range []string{"[fd00:249:201:1::6]:30143", "[fd00:249:201:1::2:8]:30143", "[fd00:249:201:2::4]:30144"} {
		to := ap(dst)
		prog := startUDPMemberFree(t, to, "F")
		lc := net.ListenConfig{}
		pc, err := lc.ListenPacket(t.Context(), "udp", "["+v6DataClient+"]:0")
		if err != nil {
			t.Fatal(err)
		}
		// Unconnected, so that an answer from another address or port
		// is read and told apart.
		u := pc.(*net.UDPConn)
		got, from := "", netip.AddrPort{}
		buf := make([]byte, 512)
		for try := 0; try < 5 && got == ""; try++ {
			u.WriteToUDPAddrPort([]byte("q"), to)
			u.SetReadDeadline(time.Now().Add(time.Second))
			if n, f, err := u.ReadFromUDPAddrPort(buf); err == nil {
				got, from = string(buf[:n]), f
			}
		}
		u.Close()
		if got != "F:q" || from != to {
			t.Errorf("to %s: %q from %v, want F:q from %s", dst, got, from, dst)
		}
		srcs := prog.sources()
		if len(srcs) == 0 {
			t.Errorf("to %s: the program got nothing", dst)
		}
		for _, s := range srcs {
			if s.Addr() != to.Addr() {
				t.Errorf("to %s: the program saw a datagram from %v, want the leg from the address the client sent to", dst, s)
			}
		}
	}
}

// startUDPMemberFree is startUDPMember bound with IPV6_FREEBIND, for an
// address no interface holds.
func startUDPMemberFree(t *testing.T, addr netip.AddrPort, label string) *udpMember {
	t.Helper()
	lc := net.ListenConfig{Control: sockopt.FreeBind6}
	pc, err := lc.ListenPacket(t.Context(), "udp", addr.String())
	if err != nil {
		t.Fatalf("program %s: %v", addr, err)
	}
	return serveUDPMember(t, pc.(*net.UDPConn), label)
}

// TestAnyPortNetworkTCPForwardIPv6Unassigned: a tcp ip-forward virtual
// that is an IPv6 network on a port none of whose addresses is assigned
// (fd00:249:201:1::/64 on 30145) connects each client to the program on
// the address it reached (bound there with IPV6_FREEBIND), leaving from
// that address, for clients of two of its addresses.
func TestAnyPortNetworkTCPForwardIPv6Unassigned(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	v6DataSetup(t)
	p, _ := loggedPlane(t)
	cfg := &Config{Virtuals: map[string]*Virtual{"/Common/fwd": {Name: "/Common/fwd", Destination: ap("[fd00:249:201:1::]:30145"),
		Network: netip.MustParsePrefix(v6DataNet), Enabled: true, IPForward: true, SNAT: SNAT{Type: SNATNone}}},
		Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, dst := range []string{"[fd00:249:201:1::7]:30145", "[fd00:249:201:1::5:3]:30145"} {
		lc := net.ListenConfig{Control: sockopt.FreeBind6}
		ln, err := lc.Listen(t.Context(), "tcp", dst)
		if err != nil {
			t.Fatalf("program %s: %v", dst, err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(c.RemoteAddr().String())) // where the program saw the connection come from
			c.Close()
		}()
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(v6DataClient), 0))}
		c, err := d.Dial("tcp", dst)
		if err != nil {
			ln.Close()
			t.Fatalf("to %s: %v", dst, err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(io.LimitReader(c, 256))
		c.Close()
		ln.Close()
		if from, perr := netip.ParseAddrPort(string(b)); perr != nil || from.Addr() != ap(dst).Addr() {
			t.Errorf("to %s: the program saw %q (%v), want the connection from the address the client reached", dst, b, err)
		}
	}
}
