package dataplane

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
)

// udpSocketsOn counts the UDP sockets bound to a (IPv4 loopback) address,
// from /proc/net/udp.
func udpSocketsOn(t *testing.T, a string) int {
	t.Helper()
	f, err := os.Open("/proc/net/udp")
	if err != nil {
		t.Skipf("no /proc/net/udp: %v", err)
	}
	defer f.Close()
	p := ap(a)
	ip := p.Addr().As4()
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], p.Port())
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 1 && fs[1] == want {
			n++
		}
	}
	return n
}

// TestUDPSocketPerCPU: a UDP virtual's address has a socket per CPU
// (SO_REUSEPORT, at most 8), every client is served and keeps its member
// whichever socket the kernel gives it, and removing the virtual closes
// them all. A port another socket holds without SO_REUSEPORT refuses the
// virtual.
func TestUDPSocketPerCPU(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.38.2:5300", "S1")
	startUDPMember(t, "127.41.38.3:5300", "S2")
	p, _ := newPlane(t)
	const vs = "127.41.38.1:53"
	mustApply(t, p, udpBasic(vs, "127.41.38.2:5300", "127.41.38.3:5300"))
	if got, want := udpSocketsOn(t, vs), min(runtime.GOMAXPROCS(0), 8); got != want {
		t.Fatalf("%d sockets on %s, want %d", got, vs, want)
	}
	const clients = 16 // spread over the sockets by the kernel's hash
	cs := make([]*udpClient, clients)
	first := make([]string, clients)
	for i := range cs {
		cs[i] = dialUDP(t, "", vs)
		first[i] = label(cs[i].mustAsk("q"))
	}
	for round := 0; round < 3; round++ {
		for i, c := range cs {
			if got := label(c.mustAsk("again")); got != first[i] {
				t.Fatalf("client %d went to %s, then %s", i, first[i], got)
			}
		}
	}
	n := p.Connections(ConnFilter{Protocol: "udp"}, func(*Connection) bool { return true })
	if n != clients {
		t.Fatalf("%d udp flows for %d clients", n, clients)
	}
	mustApply(t, p, basic("127.41.38.9:80", "127.41.38.2:80"))
	if got := udpSocketsOn(t, vs); got != 0 {
		t.Fatalf("%d sockets left on %s after the virtual went", got, vs)
	}
	// A plain socket on the port: the virtual cannot bind it.
	hold, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatalf("the port was not freed: %v", err)
	}
	defer hold.Close()
	if err := p.Apply(nil, udpBasic(vs, "127.41.38.2:5300")); err == nil {
		t.Fatal("a port held without SO_REUSEPORT was bound")
	}
}
