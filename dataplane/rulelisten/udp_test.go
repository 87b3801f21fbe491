package rulelisten

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestOpenUDP: the first allowed peer's datagrams reach the server and
// its answers come back from the listener; a stranger's datagram is
// dropped; the relay ends when both sides are quiet for idle.
func TestOpenUDP(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.152.6.3")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	got := make(chan string, 8)
	go func() {
		b := make([]byte, 2048)
		for {
			n, from, err := srv.ReadFromUDPAddrPort(b)
			if err != nil {
				return
			}
			got <- string(b[:n])
			srv.WriteToUDPAddrPort(append([]byte("re "), b[:n]...), from)
		}
	}()
	server := netip.MustParseAddrPort(srv.LocalAddr().String())
	l, err := OpenUDP(Spec{Bind: netip.MustParseAddrPort("127.152.6.1:0"), Allow: netip.MustParseAddr("127.152.6.2"), Timeout: 30 * time.Second},
		server, func(netip.AddrPort) netip.AddrPort { return netip.AddrPortFrom(netip.MustParseAddr("127.152.6.1"), 0) }, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(src string) *net.UDPConn {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)}, net.UDPAddrFromAddrPort(l.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	stranger, peer := dial("127.152.6.9"), dial("127.152.6.2")
	stranger.Write([]byte("stranger"))
	b := make([]byte, 2048)
	for _, msg := range []string{"one", "two"} {
		peer.SetDeadline(time.Now().Add(10 * time.Second))
		peer.Write([]byte(msg))
		n, err := peer.Read(b)
		if err != nil || string(b[:n]) != "re "+msg {
			t.Fatalf("%s: %q %v", msg, b[:n], err)
		}
		if s := <-got; s != msg {
			t.Fatalf("the server got %q, want %q", s, msg)
		}
	}
	select {
	case <-l.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("the relay did not end when both sides were quiet")
	}
	select {
	case s := <-got:
		t.Errorf("the server got %q too", s)
	default:
	}
}
