//go:build linux

package dataplane

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/netip"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/dataplane/rtsp"
)

// TestAnyPortNetworkPortIPv6: an IPv6 network virtual on one port
// (fd00:249::/64 on 30101, delivered locally) takes that port of every
// address of the network and no other; a host virtual on that port of
// one of its addresses takes that address; show sys connection's client
// side is where the client went. The network's own address and the host
// virtual's are assigned (IPv6 binds only assigned addresses, where IPv4
// binds any address of a route of type local); the clients' are not.
func TestAnyPortNetworkPortIPv6(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, args := range [][]string{{"-6", "route", "add", "local", "fd00:249::/64", "dev", "lo"}, {"addr", "add", "fd00:250::2/128", "dev", "lo", "nodad"}, {"addr", "add", "fd00:249::/128", "dev", "lo", "nodad"}, {"addr", "add", "fd00:249::7/128", "dev", "lo", "nodad"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Skipf("skipped: ip %v: %v %s", args, err, out)
		}
	}
	nm := startServer(t, "[fd00:250::2]:30102", "N6")
	startServer(t, "[fd00:250::2]:30103", "H6")
	p, _ := loggedPlane(t)
	cfg := basic("[fd00:249::]:30101", "[fd00:250::2]:30102")
	cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("fd00:249::/64")
	cfg.Pools["/Common/ph"] = &Pool{Name: "/Common/ph", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/fd00:250::2", Addr: ap("[fd00:250::2]:30103")}}}
	cfg.Virtuals["/Common/host"] = &Virtual{Name: "/Common/host", Destination: ap("[fd00:249::7]:30101"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/ph", SNAT: SNAT{Type: SNATNone}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, tc := range []struct{ dst, want string }{
		{"[fd00:249::5]:30101", "N6 Response"},
		{"[fd00:249::1:9]:30101", "N6 Response"},
		{"[fd00:249::7]:30101", "H6 Response"}, // the host virtual on the port wins
		{"[fd00:249::5]:30104", ""},            // another port: refused
		{"[fd00:249::7]:30104", ""},
	} {
		got, err := askOnce(tc.dst)
		if tc.want == "" {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s: %q (%v), want refused", tc.dst, got, err)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.dst, got, err, tc.want)
		}
	}
	if r := nm.lastRemote(); !r.IsValid() || !r.Addr().Is6() {
		t.Errorf("the member saw %v, want an IPv6 client", r)
	}
	c, err := net.DialTimeout("tcp", "[fd00:249::9]:30101", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := &client{t: t, c: c.(*net.TCPConn), r: bufio.NewReader(c)}
	if got := cl.mustAsk("hold"); got != "N6 Response" {
		t.Errorf("held: %q", got)
	}
	found := false
	p.Connections(ConnFilter{}, func(r *Connection) bool {
		if r.Virtual == "/Common/vs" && r.CSServer.String() == "[fd00:249::9]:30101" {
			found = true
		}
		return true
	})
	if !found {
		t.Error("show sys connection: no row to [fd00:249::9]:30101")
	}
	c.Close()
	mustApply(t, p, basic("[fd00:249::7]:30101", "[fd00:250::2]:30103"))
	if _, err := askOnce("[fd00:249::5]:30101"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after the network virtual went: %v, want refused", err)
	}
}

// TestAnyPortNetworkPortUDPForwardSelf: a udp ip-forward network virtual
// on one port (127.249.224.0/20 on 30195) forwards a datagram to an
// address of its network to the program there, and drops (and counts) one
// to the network's own address on that port, its listener's own: it is
// not forwarded back to itself.
func TestAnyPortNetworkPortUDPForwardSelf(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	prog := startUDPMember(t, "127.249.230.5:30195", "F")
	p, _ := loggedPlane(t)
	cfg := &Config{Virtuals: map[string]*Virtual{"/Common/ufwd": {Name: "/Common/ufwd", Destination: ap("127.249.224.0:30195"),
		Network: netip.MustParsePrefix("127.249.224.0/20"), Enabled: true, Protocol: ProtoUDP, IPForward: true,
		SNAT: SNAT{Type: SNATNone}}}, Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	dropped := func() uint64 { return p.ProfileStats(ProfileUDP, "", []string{"/Common/ufwd"}).Conns.Dropped }
	if got := dialUDP(t, "127.249.1.100:0", "127.249.230.5:30195").mustAsk("a"); got != "F:a" {
		t.Errorf("forwarded: %q, want F:a", got)
	}
	for _, from := range prog.sources() {
		if from.Addr().String() != "127.249.230.5" {
			t.Errorf("forwarded from %v, want the address the client sent to", from)
		}
	}
	before := dropped()
	if before != 0 {
		t.Errorf("%d datagrams dropped before the one to the listener's own address", before)
	}
	u := dialUDP(t, "127.249.1.100:0", "127.249.224.0:30195")
	u.c.Write([]byte("self"))
	u.c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 512)
	if n, err := u.c.Read(buf); err == nil {
		t.Errorf("the listener's own address answered %q", buf[:n])
	}
	eventually(t, "the datagram to the listener's own address counted dropped", func() bool { return dropped() == 1 })
	if n := len(prog.sources()); n != 1 {
		t.Errorf("the program got %d datagrams, want 1 (the one to its own address)", n)
	}
	if v, _ := p.Virtual("/Common/ufwd"); v.ClientSide.PktsIn > 2 {
		t.Errorf("%d datagrams in, a loop", v.ClientSide.PktsIn)
	}
}

// TestAnyPortNetworkPortFTP: an ftp virtual on a network's port
// (127.249.0.0/16 on 30021) carries passive (PASV, EPSV) and active
// (PORT, EPRT) transfers for clients of two addresses of the network:
// the gateway's data listeners are on the address each client reached,
// on ports the network does not take, so the data connection is made
// with that address and the file reaches the client.
func TestAnyPortNetworkPortFTP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	file := bytes.Repeat([]byte("openltm ftp on a network's port\n"), 10000)
	m := startFTPMember(t, "127.250.1.11:30021", file)
	p, _ := loggedPlane(t)
	cfg := basic("127.249.0.0:30021", "127.250.1.11:30021")
	cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("127.249.0.0/16")
	cfg.Virtuals["/Common/vs"].FTP = &ftpalg.Options{Profile: "/Common/ftp", DataPort: 20, TranslateExtended: true}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, addr := range []string{"127.249.1.5", "127.249.77.6"} {
		for _, mode := range []string{"PASV", "EPSV", "PORT", "EPRT"} {
			ftpOnce(t, m, ap(addr+":30021"), mode, file, "the address the client reached")
		}
	}
}

// TestAnyPortNetworkPortRTSP: an rtsp virtual on a network's port
// (127.249.0.0/16 on 30554) sets up and plays a UDP session for clients
// of two addresses of the network: the Transport's source and the RTP
// come from the address each client reached, on the data channel's
// port, which the network does not take.
func TestAnyPortNetworkPortRTSP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	rtspMember(t, "127.250.10.11:30554", "member")
	p, _ := loggedPlane(t)
	cfg := basic("127.249.0.0:30554", "127.250.10.11:30554")
	cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("127.249.0.0/16")
	cfg.Virtuals["/Common/vs"].RTSP = &rtsp.Options{Profile: "/Common/rtsp", Idle: 30 * time.Second}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, addr := range []string{"127.249.10.1", "127.249.33.2"} {
		// rtspSession checks the source and the RTP's address and port.
		if payload, _, _ := rtspSession(t, "127.250.10.100", addr+":30554"); payload != "member" {
			t.Errorf("%s: media %q, want the member's", addr, payload)
		}
	}
}
