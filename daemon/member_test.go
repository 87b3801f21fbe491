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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				from := c.RemoteAddr().(*net.TCPAddr).AddrPort()
				io.WriteString(c, say(netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))+"\n")
				if hold {
					c.SetReadDeadline(time.Now().Add(30 * time.Second))
					io.Copy(io.Discard, c)
				}
			}()
		}
	}()
}

// fromHost and fromHostPort are fromMember's usual lines: the source
// address alone, or with its port.
func fromHost(from netip.AddrPort) string     { return from.Addr().String() }
func fromHostPort(from netip.AddrPort) string { return from.String() }
