//go:build linux

package rawsock

import (
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestListenDialAccept runs a connection through the raw calls on
// loopback: the listener's and both ends' names, bytes both ways, the
// kept source port and a reset.
func TestListenDialAccept(t *testing.T) {
	lfd, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	laddr := Sockname(lfd)
	if !laddr.IsValid() || laddr.Port() == 0 {
		t.Fatalf("listener name %s", laddr)
	}
	if _, err := Listen(laddr, false); err == nil || err.Error() != "bind: address already in use" {
		t.Fatalf("second listen: %v", err)
	}
	src := netip.MustParseAddrPort("127.0.0.2:0")
	cfd, _, local, errno := Dial(src, laddr)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer unix.Close(cfd)
	if local.IsValid() {
		t.Errorf("port 0 asked, yet the source is said to be known: %s", local)
	}
	var sfd int
	var peer netip.AddrPort
	deadline := time.Now().Add(5 * time.Second)
	for {
		var e syscall.Errno
		sfd, peer, e = Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if e == 0 {
			break
		}
		if e != syscall.EAGAIN || time.Now().After(deadline) {
			t.Fatalf("accept: %v", e)
		}
		time.Sleep(time.Millisecond)
	}
	if peer.Addr() != src.Addr() || peer != Sockname(cfd) {
		t.Errorf("peer %s, client socket %s", peer, Sockname(cfd))
	}
	if n, err := WriteAll(cfd, []byte("ping")); n != 4 || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
	buf := make([]byte, 16)
	var n int
	for {
		n, err = Read(sfd, buf)
		if err != syscall.EAGAIN || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read %q %v", buf[:n], err)
	}
	Reset(sfd)
	for {
		_, err = Read(cfd, buf)
		if err != syscall.EAGAIN || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != syscall.ECONNRESET {
		t.Errorf("after a reset the client reads %v", err)
	}
}

// TestDialKeepsPort asks for a source port and gets it when it is free.
func TestDialKeepsPort(t *testing.T) {
	lfd, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	// A free port: bind, read the name, close.
	probe, err := Listen(netip.MustParseAddrPort("127.0.0.3:0"), false)
	if err != nil {
		t.Fatal(err)
	}
	want := Sockname(probe)
	unix.Close(probe)
	fd, _, local, errno := Dial(want, Sockname(lfd))
	if errno != 0 {
		t.Fatal(errno)
	}
	defer unix.Close(fd)
	if local != want || Sockname(fd) != want {
		t.Errorf("source %s (said %s), want %s", Sockname(fd), local, want)
	}
}

// TestListenUDPGroup: n sockets share one address (a port the first bind
// chose), each takes datagrams; a port held without SO_REUSEPORT refuses
// the group and leaves nothing bound.
func TestListenUDPGroup(t *testing.T) {
	cs, err := ListenUDPGroup("127.0.245.1:0", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 {
		t.Fatalf("%d sockets, want 3", len(cs))
	}
	addr := cs[0].LocalAddr().String()
	for _, c := range cs[1:] {
		if c.LocalAddr().String() != addr {
			t.Fatalf("sockets on %s and %s", addr, c.LocalAddr())
		}
	}
	// Senders from many ports: the kernel spreads them; every datagram
	// reaches one of the group.
	got := make(chan string, 32)
	for _, c := range cs {
		go func() {
			buf := make([]byte, 64)
			for {
				n, _, err := c.ReadFromUDP(buf)
				if err != nil {
					return
				}
				got <- string(buf[:n])
			}
		}()
	}
	for i := range 16 {
		s, err := net.Dial("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte{byte('a' + i)})
		s.Close()
	}
	for range 16 {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("a datagram reached none of the group")
		}
	}
	for _, c := range cs {
		c.Close()
	}
	// The port is free again; a plain socket on it refuses a group.
	hold, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("the group's port was not freed: %v", err)
	}
	defer hold.Close()
	if cs, err := ListenUDPGroup(addr, 2); err == nil {
		for _, c := range cs {
			c.Close()
		}
		t.Fatal("a port held without SO_REUSEPORT was bound")
	}
}

// With a group's sockets steered by CPU (SteerByCPU), a datagram sent from a
// thread held on one CPU (on loopback the sender's CPU receives it)
// reaches the socket whose index is that CPU's number modulo the sockets
// steered to, whatever the sender's port; steered to one socket, every
// datagram reaches the first. The program is replaced each time, in
// both directions.
func TestSteerByCPU(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Skip("no CPU affinity here:", err)
	}
	var cpus []int // one CPU of each parity, if there are
	for c := 0; c < 1024 && len(cpus) < 2; c++ {
		if allowed.IsSet(c) && (len(cpus) == 0 || cpus[0]%2 != c%2) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		t.Skip("needs two CPUs, one odd and one even; this process may use", allowed.Count())
	}
	conns, err := ListenUDPGroup("127.0.245.2:0", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	to := conns[0].LocalAddr().(*net.UDPAddr)
	for round, n := range []int{2, 1, 2, 1} {
		if err := SteerByCPU(conns, n); err != nil {
			t.Fatal(err)
		}
		for _, cpu := range cpus {
			sent := make(chan error, 1)
			go func() {
				// The thread ends with the goroutine (locked), its
				// affinity with it.
				runtime.LockOSThread()
				var one unix.CPUSet
				one.Set(cpu)
				if err := unix.SchedSetaffinity(0, &one); err != nil {
					sent <- err
					return
				}
				c, err := net.DialUDP("udp", nil, to)
				if err != nil {
					sent <- err
					return
				}
				defer c.Close()
				_, err = c.Write([]byte{byte(cpu)})
				sent <- err
			}()
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			w := cpu % n
			want := conns[w]
			want.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 8)
			got, err := want.Read(buf)
			if err != nil || got != 1 || int(buf[0]) != cpu {
				other := conns[1-w]
				other.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				_, oerr := other.Read(buf)
				t.Fatalf("round %d (%d sockets), CPU %d: socket %d read %d bytes (%v); the other socket: %v", round, n, cpu, w, got, err, oerr)
			}
		}
	}
}
