package daemon

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// fromMember is a TCP member that greets each connection with one line
// naming where it came from (say turns the client's address and port
// into the line), so a test reads the translation the virtual made.
// With hold it keeps the connection until the client closes it (at most
// 30 seconds), as a test of held translations needs; without, it closes
// at once.
func fromMember(t *testing.T, addr string, say func(from netip.AddrPort) string, hold bool) {
	t.Helper()
	serveEach(t, addr, func(c net.Conn) {
		from := c.RemoteAddr().(*net.TCPAddr).AddrPort()
		io.WriteString(c, say(netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))+"\n")
		if hold {
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			io.Copy(io.Discard, c)
		}
	})
}

// udpFromMember is fromMember for UDP: each datagram is answered with
// say of where it came from.
func udpFromMember(t *testing.T, addr string, say func(from netip.AddrPort) string) {
	t.Helper()
	pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			_, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			pc.WriteToUDPAddrPort([]byte(say(netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))), from)
		}
	}()
}

// serveEach listens on addr for as long as the test runs and hands each
// connection to handle (acceptEach); the test's members are this with
// what each says.
func serveEach(t *testing.T, addr string, handle func(c net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	acceptEach(ln, handle)
	return ln
}

// acceptEach hands every connection ln accepts to handle, on a goroutine
// of its own that closes the connection after, until ln is closed.
func acceptEach(ln net.Listener, handle func(c net.Conn)) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
}

// fromHost and fromHostPort are fromMember's usual lines: the source
// address alone, or with its port.
func fromHost(from netip.AddrPort) string     { return from.Addr().String() }
func fromHostPort(from netip.AddrPort) string { return from.String() }
