//go:build linux

package sklookup

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/internal/netnstest"
	"golang.org/x/sys/unix"
)

// inNetns runs the calling test again in a network namespace of its own:
// the steering attaches to a whole namespace. It reports true in that run.
func inNetns(t *testing.T) bool {
	t.Helper()
	return netnstest.Alone(t, "SKLOOKUP_NETNS")
}

// openSteer runs the calling test again in a network namespace of its
// own and, in that run, opens a Steer closed when the test ends; it is
// nil in the outer run (the test returns) and skips where the program
// cannot be loaded.
func openSteer(t *testing.T) *Steer {
	t.Helper()
	if !inNetns(t) {
		return nil
	}
	s, err := Open()
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func listen(t *testing.T, ap string) (*net.TCPListener, int) {
	t.Helper()
	var lc net.ListenConfig
	lc.SetMultipathTCP(false) // a Multipath TCP listener cannot go in a socket map
	l, err := lc.Listen(context.Background(), "tcp", ap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return l.(*net.TCPListener), int(f.Fd())
}

// accepted is the local address of the next connection l accepts, or
// an invalid one within a few seconds.
func accepted(l *net.TCPListener) netip.AddrPort {
	l.SetDeadline(time.Now().Add(5 * time.Second))
	c, err := l.Accept()
	if err != nil {
		return netip.AddrPort{}
	}
	defer c.Close()
	return netip.MustParseAddrPort(c.LocalAddr().String())
}

func TestSteer(t *testing.T) {
	s := openSteer(t)
	if s == nil {
		return
	}
	wl, wfd := listen(t, "127.212.0.1:0")
	sl, _ := listen(t, "127.212.0.1:30080")
	_, ofd := listen(t, "127.212.0.2:0")
	addr := netip.MustParseAddr("127.212.0.1")
	if err := s.Sync([]Wildcard{{Addr: addr, FD: wfd}, {Addr: netip.MustParseAddr("127.212.0.2"), FD: ofd}}, []Specific{{Addr: netip.MustParseAddrPort("127.212.0.1:30080")}}); err != nil {
		t.Fatal(err)
	}
	dial := func(src, dst string) error {
		d := net.Dialer{Timeout: 5 * time.Second}
		if src != "" {
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
		}
		c, err := d.Dial("tcp", dst)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, tc := range []struct {
		src, dst string
		on       *net.TCPListener // nil: refused
	}{
		{"", "127.212.0.1:30081", wl},
		{"", "127.212.0.1:443", wl},
		{"127.212.0.9", "127.212.0.1:30082", wl},
		{"", "127.212.0.1:30080", sl},             // the port-specific listener wins
		{"127.212.0.1", "127.212.0.1:30083", nil}, // the address talking to itself: not steered
		{"", "127.212.0.3:30081", nil},            // no wildcard there
	} {
		err := dial(tc.src, tc.dst)
		if tc.on == nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s -> %s: %v, want refused", tc.src, tc.dst, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s -> %s: %v", tc.src, tc.dst, err)
			continue
		}
		if got := accepted(tc.on); got.String() != tc.dst {
			t.Errorf("%s -> %s: accepted as %v", tc.src, tc.dst, got)
		}
	}
	// The second address goes: its ports are refused again; the first
	// stays.
	if err := s.Sync([]Wildcard{{Addr: addr, FD: wfd}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := dial("", "127.212.0.2:30081"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after the address went: %v", err)
	}
	if err := dial("", "127.212.0.1:30084"); err != nil || accepted(wl).Port() != 30084 {
		t.Errorf("the address that stayed: %v", err)
	}
	// Closed: nothing is steered.
	s.Close()
	if err := dial("", "127.212.0.1:30085"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after Close: %v", err)
	}
}

func TestKeyOf(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		port  uint16
		udp   bool
		fam   byte
		proto byte
		at8   byte
	}{
		{"127.212.0.1", 80, false, 2, 6, 127},
		{"::ffff:127.212.0.1", 0, true, 2, 17, 127},
		{"2001:db8::1", 443, false, 10, 6, 0x20},
	} {
		k := keyOf(netip.MustParseAddr(tc.addr), tc.port, tc.udp)
		if k[0] != 0xff || k[4] != tc.fam || k[6] != tc.proto || k[8] != byte(tc.port) || k[9] != byte(tc.port>>8) || k[12] != tc.at8 {
			t.Errorf("%s:%d: %x", tc.addr, tc.port, k)
		}
	}
}

// udpSocket is a UDP socket bound to ap that reports each datagram's
// original destination (IP_RECVORIGDSTADDR), as a UDP virtual on every
// port reads them.
func udpSocket(t *testing.T, ap string) (int, netip.AddrPort) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	a := netip.MustParseAddrPort(ap)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: a.Addr().As4(), Port: int(a.Port())}); err != nil {
		t.Fatal(err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVORIGDSTADDR, 1); err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 5})
	sa, _ := unix.Getsockname(fd)
	return fd, netip.AddrPortFrom(a.Addr(), uint16(sa.(*unix.SockaddrInet4).Port))
}

// recvDst is the payload of the next datagram on fd, its sender and its
// original destination (invalid when the kernel gave none), or an empty
// payload within a few seconds.
func recvDst(fd int) (string, netip.AddrPort, netip.AddrPort) {
	buf, oob := make([]byte, 512), make([]byte, 128)
	n, oobn, _, from, err := unix.Recvmsg(fd, buf, oob, 0)
	if err != nil {
		return "", netip.AddrPort{}, netip.AddrPort{}
	}
	var src, dst netip.AddrPort
	if f, ok := from.(*unix.SockaddrInet4); ok {
		src = netip.AddrPortFrom(netip.AddrFrom4(f.Addr), uint16(f.Port))
	}
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_ORIGDSTADDR && len(m.Data) >= 8 {
			dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(m.Data[4:8])), uint16(m.Data[2])<<8|uint16(m.Data[3]))
		}
	}
	return string(buf[:n]), src, dst
}

// TestSteerUDP: datagrams for every port of an address reach one UDP
// socket with their original destination (IP_ORIGDSTADDR), a
// port-specific UDP socket keeps its port, a TCP listener on a port does
// not keep datagrams from the wildcard, and a reply from a socket bound
// (SO_REUSEADDR) to the address and the port the client asked for leaves
// from that port while the client's next datagram still reaches the
// wildcard socket, which is how the UDP engine answers.
func TestSteerUDP(t *testing.T) {
	s := openSteer(t)
	if s == nil {
		return
	}
	wfd, wap := udpSocket(t, "127.215.0.1:0")
	sfd, _ := udpSocket(t, "127.215.0.1:30080")
	listen(t, "127.215.0.1:30082") // TCP: passes SYNs only
	addr := netip.MustParseAddr("127.215.0.1")
	if err := s.Sync([]Wildcard{{Addr: addr, FD: wfd, UDP: true}}, []Specific{
		{Addr: netip.MustParseAddrPort("127.215.0.1:30080"), UDP: true},
		{Addr: netip.MustParseAddrPort("127.215.0.1:30082")},
	}); err != nil {
		t.Fatal(err)
	}
	cfd, cap := udpSocket(t, "127.215.0.9:0")
	send := func(dst string) {
		t.Helper()
		d := netip.MustParseAddrPort(dst)
		if err := unix.Sendto(cfd, []byte("to "+dst), 0, &unix.SockaddrInet4{Addr: d.Addr().As4(), Port: int(d.Port())}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dst string
		on  int
	}{
		{"127.215.0.1:30081", wfd},
		{"127.215.0.1:53", wfd},
		{"127.215.0.1:30082", wfd}, // a TCP listener's port: datagrams still steered
		{"127.215.0.1:30080", sfd}, // the port-specific UDP socket wins
	} {
		send(tc.dst)
		got, src, dst := recvDst(tc.on)
		if got != "to "+tc.dst || src != cap || dst.String() != tc.dst {
			t.Errorf("%s: %q from %v to %v", tc.dst, got, src, dst)
		}
	}
	// The answer leaves from the port the client asked for.
	rfd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rfd)
	unix.SetsockoptInt(rfd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(rfd, &unix.SockaddrInet4{Addr: addr.As4(), Port: 30081}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Sendto(rfd, []byte("answer"), 0, &unix.SockaddrInet4{Addr: cap.Addr().As4(), Port: int(cap.Port())}); err != nil {
		t.Fatal(err)
	}
	if got, src, _ := recvDst(cfd); got != "answer" || src.String() != "127.215.0.1:30081" {
		t.Errorf("answer: %q from %v", got, src)
	}
	send("127.215.0.1:30081")
	if got, _, dst := recvDst(wfd); got != "to 127.215.0.1:30081" || dst.Port() != 30081 {
		t.Errorf("after the answer: %q to %v", got, dst)
	}
	if wap.Port() == 30081 {
		t.Errorf("the wildcard socket is on %v", wap)
	}
}

// TestSteerNet: a network's every address and port go to its socket,
// save what a host entry takes (an address on every port, a port-specific
// listener) and what a longer network takes; datagrams likewise; when
// the longer network goes, the shorter takes its addresses.
func TestSteerNet(t *testing.T) {
	s := openSteer(t)
	if s == nil {
		return
	}
	wl, wfd := listen(t, "127.215.5.0:0")
	hl, hfd := listen(t, "127.215.5.7:0")
	sl, _ := listen(t, "127.215.5.8:30080")
	nl, nfd := listen(t, "127.215.5.16:0")
	ufd, _ := udpSocket(t, "127.215.5.0:0")
	net24, net28 := netip.MustParsePrefix("127.215.5.0/24"), netip.MustParsePrefix("127.215.5.16/28")
	wild := []Wildcard{
		{Addr: net24.Addr(), FD: wfd, Net: net24},
		{Addr: netip.MustParseAddr("127.215.5.7"), FD: hfd},
		{Addr: net28.Addr(), FD: nfd, Net: net28},
		{Addr: net24.Addr(), FD: ufd, Net: net24, UDP: true},
	}
	specific := []Specific{{Addr: netip.MustParseAddrPort("127.215.5.8:30080")}}
	if err := s.Sync(wild, specific); err != nil {
		t.Fatal(err)
	}
	check := func(cases []struct {
		dst string
		on  *net.TCPListener
	}) {
		t.Helper()
		for _, tc := range cases {
			c, err := net.DialTimeout("tcp", tc.dst, 5*time.Second)
			if tc.on == nil {
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("%s: %v, want refused", tc.dst, err)
				}
				if c != nil {
					c.Close()
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", tc.dst, err)
				continue
			}
			c.Close()
			if got := accepted(tc.on); got.String() != tc.dst {
				t.Errorf("%s: accepted as %v", tc.dst, got)
			}
		}
	}
	type tcase = struct {
		dst string
		on  *net.TCPListener
	}
	check([]tcase{
		{"127.215.5.1:30081", wl},
		{"127.215.5.255:22", wl},
		{"127.215.5.7:30081", hl},  // the address on every port wins
		{"127.215.5.8:30080", sl},  // the port-specific listener wins
		{"127.215.5.8:30081", wl},  // its other ports are the network's
		{"127.215.5.17:443", nl},   // the longer network wins
		{"127.215.6.1:30081", nil}, // outside
	})
	cfd, _ := udpSocket(t, "127.215.5.200:0")
	if err := unix.Sendto(cfd, []byte("dg"), 0, &unix.SockaddrInet4{Addr: [4]byte{127, 215, 5, 3}, Port: 30090}); err != nil {
		t.Fatal(err)
	}
	if got, _, dst := recvDst(ufd); got != "dg" || dst.String() != "127.215.5.3:30090" {
		t.Errorf("datagram: %q to %v", got, dst)
	}
	// The longer network goes: the shorter takes its addresses.
	if err := s.Sync(wild[:2], specific); err != nil {
		t.Fatal(err)
	}
	check([]tcase{{"127.215.5.17:443", wl}, {"127.215.5.7:30082", hl}})
}

// TestSteerPass: a socket Pass names is reached by the kernel's own
// lookup while passed (Sync keeps it), twice passed it needs two
// Unpass, and once given back its port is the wildcard's again; a
// port Sync lists itself stays passed after its Pass is undone.
func TestSteerPass(t *testing.T) {
	s := openSteer(t)
	if s == nil {
		return
	}
	wl, wfd := listen(t, "127.239.0.1:0")
	dl, _ := listen(t, "127.239.0.1:30090")
	sl, _ := listen(t, "127.239.0.1:30091")
	addr := netip.MustParseAddr("127.239.0.1")
	wild := []Wildcard{{Addr: addr, FD: wfd}}
	own := []Specific{{Addr: netip.MustParseAddrPort("127.239.0.1:30091")}}
	if err := s.Sync(wild, own); err != nil {
		t.Fatal(err)
	}
	data := Specific{Addr: netip.MustParseAddrPort("127.239.0.1:30090")}
	reaches := func(step, dst string, on *net.TCPListener) {
		t.Helper()
		c, err := net.DialTimeout("tcp", dst, 5*time.Second)
		if err != nil {
			t.Errorf("%s: %s: %v", step, dst, err)
			return
		}
		c.Close()
		if got := accepted(on); got.String() != dst {
			t.Errorf("%s: %s accepted as %v on the wrong listener", step, dst, got)
		}
	}
	reaches("before Pass", "127.239.0.1:30090", wl)
	if err := s.Pass(data); err != nil {
		t.Fatal(err)
	}
	if err := s.Pass(data); err != nil {
		t.Fatal(err)
	}
	reaches("passed", "127.239.0.1:30090", dl)
	if err := s.Sync(wild, own); err != nil {
		t.Fatal(err)
	}
	reaches("passed, after a Sync", "127.239.0.1:30090", dl)
	s.Unpass(data)
	reaches("passed twice, given back once", "127.239.0.1:30090", dl)
	if n := s.PassedCount(); n != 1 {
		t.Errorf("%d passed, want 1", n)
	}
	s.Unpass(data)
	reaches("given back", "127.239.0.1:30090", wl)
	// Sync's own port passed and given back stays Sync's.
	ownPort := Specific{Addr: netip.MustParseAddrPort("127.239.0.1:30091")}
	if err := s.Pass(ownPort); err != nil {
		t.Fatal(err)
	}
	s.Unpass(ownPort)
	reaches("Sync's own port", "127.239.0.1:30091", sl)
	if n := s.PassedCount(); n != 0 {
		t.Errorf("%d passed, want 0", n)
	}
	if err := s.Pass(Specific{Addr: netip.AddrPortFrom(addr, 0)}); err == nil {
		t.Error("Pass of port 0: no error")
	}
}

// TestSteerNetPort: a network on one port takes that port of its
// addresses and no other; a host's port-specific listener and its
// address on every port win over it; a longer network on every port
// wins over it, a shorter one on every port loses to it and takes the
// other ports; a longer network on the port wins over a shorter one on
// the port, and over as long a one on every port; datagrams likewise, by protocol; when the network on the
// port goes, the network on every port takes its port.
func TestSteerNetPort(t *testing.T) {
	s := openSteer(t)
	if s == nil {
		return
	}
	pl, pfd := listen(t, "127.249.0.0:30080")   // 127.249.0.0/16 on 30080
	ll, lfd := listen(t, "127.249.9.0:30080")   // 127.249.9.0/24 on 30080
	al, afd := listen(t, "127.249.5.0:0")       // 127.249.5.0/24 on every port
	wl, wfd := listen(t, "127.248.0.0:0")       // 127.248.0.0/15 on every port
	hl, hfd := listen(t, "127.249.7.7:0")       // 127.249.7.7 on every port
	sl, _ := listen(t, "127.249.8.8:30080")     // 127.249.8.8:30080
	ufd, _ := udpSocket(t, "127.249.0.0:30053") // udp 127.249.0.0/16 on 30053
	el, efd := listen(t, "127.249.9.0:0")       // 127.249.9.0/24 on every port
	n16, n24, n5, n15 := netip.MustParsePrefix("127.249.0.0/16"), netip.MustParsePrefix("127.249.9.0/24"),
		netip.MustParsePrefix("127.249.5.0/24"), netip.MustParsePrefix("127.248.0.0/15")
	wild := []Wildcard{
		{Addr: n16.Addr(), FD: pfd, Net: n16, Port: 30080},
		{Addr: n24.Addr(), FD: lfd, Net: n24, Port: 30080},
		{Addr: n5.Addr(), FD: afd, Net: n5},
		{Addr: n15.Addr(), FD: wfd, Net: n15},
		{Addr: netip.MustParseAddr("127.249.7.7"), FD: hfd},
		{Addr: n16.Addr(), FD: ufd, Net: n16, Port: 30053, UDP: true},
		{Addr: n24.Addr(), FD: efd, Net: n24},
	}
	specific := []Specific{{Addr: netip.MustParseAddrPort("127.249.8.8:30080")}}
	if err := s.Sync(wild, specific); err != nil {
		t.Fatal(err)
	}
	type tcase = struct {
		dst string
		on  *net.TCPListener // nil: refused
	}
	check := func(step string, cases []tcase) {
		t.Helper()
		for _, tc := range cases {
			c, err := net.DialTimeout("tcp", tc.dst, 5*time.Second)
			if tc.on == nil {
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("%s: %s: %v, want refused", step, tc.dst, err)
				}
				if c != nil {
					c.Close()
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %s: %v", step, tc.dst, err)
				continue
			}
			c.Close()
			if got := accepted(tc.on); got.String() != tc.dst {
				t.Errorf("%s: %s: accepted as %v on the wrong listener", step, tc.dst, got)
			}
		}
	}
	check("all", []tcase{
		{"127.249.3.3:30080", pl},  // the network on the port
		{"127.249.3.3:30081", wl},  // its other ports: the shorter network on every port
		{"127.249.9.9:30080", ll},  // a longer network on the port, before as long a one on every port
		{"127.249.9.9:30081", el},  // as long a network on every port: its other ports
		{"127.249.5.5:30080", al},  // a longer network on every port
		{"127.249.7.7:30080", hl},  // an address on every port
		{"127.249.8.8:30080", sl},  // a port-specific listener
		{"127.249.8.8:30081", wl},  // its other ports
		{"127.250.0.1:30080", nil}, // outside every network
	})
	cfd, _ := udpSocket(t, "127.249.200.1:0")
	if err := unix.Sendto(cfd, []byte("dg"), 0, &unix.SockaddrInet4{Addr: [4]byte{127, 249, 3, 3}, Port: 30053}); err != nil {
		t.Fatal(err)
	}
	if got, _, dst := recvDst(ufd); got != "dg" || dst.String() != "127.249.3.3:30053" {
		t.Errorf("datagram: %q to %v", got, dst)
	}
	// The shorter network on every port is not a udp one: a datagram to
	// another port is not steered (nobody gets it).
	if err := unix.Sendto(cfd, []byte("other"), 0, &unix.SockaddrInet4{Addr: [4]byte{127, 249, 3, 3}, Port: 30054}); err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptTimeval(ufd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 300000})
	if got, _, _ := recvDst(ufd); got != "" {
		t.Errorf("datagram to another port reached the network on 30053: %q", got)
	}
	// The network on the port goes: the network on every port takes it.
	if err := s.Sync(append(wild[1:5:5], wild[6]), specific); err != nil {
		t.Fatal(err)
	}
	check("without the /16 on 30080", []tcase{{"127.249.3.3:30080", wl}, {"127.249.9.9:30080", ll}})
	if err := s.Sync([]Wildcard{{Addr: netip.MustParseAddr("127.249.7.7"), FD: hfd, Port: 30080}}, nil); err == nil {
		t.Error("a host wildcard on a port: no error")
	}
}

// TestSteerWildcard: the wildcard networks (0.0.0.0/0 on a port and on
// every port) take every address of the namespace, below what is more
// specific: a port-specific listener, an address on every port, a longer
// network on every port; the wildcard on the port before the wildcard on
// every port. The plane's own destinations passed over (a member's
// address and port, a member at port any: the address on every port)
// reach their own listeners, TCP and UDP, and only those ports; an
// address on every port still takes its address from such an entry.
func TestSteerWildcard(t *testing.T) {
	s := openSteer(t)
	if s == nil {
		return
	}
	all := netip.MustParsePrefix("0.0.0.0/0")
	net24 := netip.MustParsePrefix("127.253.6.0/24")
	wl, wfd := listen(t, "127.253.0.1:0")       // 0.0.0.0/0 on every port
	pl, pfd := listen(t, "127.253.0.2:0")       // 0.0.0.0/0 on 30080 (any socket will do)
	nl, nfd := listen(t, "127.253.6.0:0")       // 127.253.6.0/24 on every port
	hl, hfd := listen(t, "127.253.1.4:0")       // 127.253.1.4 on every port
	sl, _ := listen(t, "127.253.1.5:30080")     // a host virtual on 30080
	ml, _ := listen(t, "127.253.1.2:30001")     // a member
	al, _ := listen(t, "127.253.1.3:30003")     // a member at port any, here on 30003
	ufd, _ := udpSocket(t, "127.253.0.1:0")     // udp 0.0.0.0/0 on every port
	mfd, _ := udpSocket(t, "127.253.1.2:30001") // a udp member
	wild := []Wildcard{
		{Addr: all.Addr(), FD: wfd, Net: all},
		{Addr: all.Addr(), FD: pfd, Net: all, Port: 30080},
		{Addr: net24.Addr(), FD: nfd, Net: net24},
		{Addr: netip.MustParseAddr("127.253.1.4"), FD: hfd},
		{Addr: all.Addr(), FD: ufd, Net: all, UDP: true},
	}
	own := []Specific{
		{Addr: netip.MustParseAddrPort("127.253.1.5:30080")},
		{Addr: netip.MustParseAddrPort("127.253.1.2:30001")},
		{Addr: netip.MustParseAddrPort("127.253.1.2:30001"), UDP: true},
		{Addr: netip.MustParseAddrPort("127.253.1.3:0")},
		{Addr: netip.MustParseAddrPort("127.253.1.4:0")}, // the address on every port's own wins
	}
	if err := s.Sync(wild, own); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dst string
		l   *net.TCPListener
	}{
		{"127.253.9.9:30081", wl}, // the wildcard on every port
		{"127.253.9.9:30080", pl}, // the wildcard on the port before it
		{"127.253.6.1:30080", nl}, // a longer network on every port before that
		{"127.253.1.4:30080", hl}, // the address on every port
		{"127.253.1.5:30080", sl}, // the host listener on the port
		{"127.253.1.5:30081", wl},
		{"127.253.1.2:30001", ml}, // the member: not taken again
		{"127.253.1.2:30002", wl}, // its address's other ports are the wildcard's
		{"127.253.1.3:30003", al}, // the member at port any
	} {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.253.200.1")}}
		c, err := d.Dial("tcp", tc.dst)
		if err != nil {
			t.Errorf("%s: %v", tc.dst, err)
			continue
		}
		c.Close()
		if got := accepted(tc.l); got.String() != tc.dst {
			t.Errorf("%s: the listener expected accepted %v", tc.dst, got)
		}
	}
	// The member at port any: every port of its address is passed over,
	// refused where nothing listens.
	d := net.Dialer{Timeout: 5 * time.Second}
	if c, err := d.Dial("tcp", "127.253.1.3:30004"); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Errorf("127.253.1.3:30004: %v, want refused", err)
	}
	cfd, _ := udpSocket(t, "127.253.200.2:0")
	for _, tc := range []struct {
		dst string
		on  int
	}{
		{"127.253.1.2:30001", mfd}, // the udp member
		{"127.253.1.2:30002", ufd},
		{"127.253.9.9:53", ufd},
	} {
		a := netip.MustParseAddrPort(tc.dst)
		if err := unix.Sendto(cfd, []byte("to "+tc.dst), 0, &unix.SockaddrInet4{Addr: a.Addr().As4(), Port: int(a.Port())}); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := recvDst(tc.on); got != "to "+tc.dst {
			t.Errorf("udp %s: %q", tc.dst, got)
		}
	}
	// Without the member's entry, the wildcard takes its port.
	if err := s.Sync(wild, own[:1]); err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial("tcp", "127.253.1.2:30001")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := accepted(wl); got.String() != "127.253.1.2:30001" {
		t.Errorf("the member's port without its entry: the wildcard accepted %v", got)
	}
}
