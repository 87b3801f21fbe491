package rulelisten

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestAllows(t *testing.T) {
	peer := netip.MustParseAddrPort("127.152.3.2:5000")
	for _, c := range []struct {
		spec Spec
		want bool
	}{
		{Spec{}, true},
		{Spec{Allow: netip.MustParseAddr("127.152.3.2")}, true},
		{Spec{Allow: netip.MustParseAddr("::ffff:127.152.3.2")}, true},
		{Spec{Allow: netip.MustParseAddr("127.152.3.3")}, false},
		{Spec{Allow: netip.MustParseAddr("127.152.3.2"), AllowPort: 5000}, true},
		{Spec{Allow: netip.MustParseAddr("127.152.3.2"), AllowPort: 5001}, false},
		{Spec{AllowPort: 5000}, true},
	} {
		if got := Allows(c.spec, peer); got != c.want {
			t.Errorf("Allows(%+v) = %v, want %v", c.spec, got, c.want)
		}
	}
}

// TestOpen: one connection, from the allowed address, is served; a
// stranger's is reset first; the listener is closed after, and one
// nobody connects to closes at its timeout or on Close.
func TestOpen(t *testing.T) {
	served := make(chan string, 1)
	l, err := Open(Spec{Bind: netip.MustParseAddrPort("127.152.3.1:0"), Allow: netip.MustParseAddr("127.152.3.2"), Timeout: 30 * time.Second},
		func(c *net.TCPConn) {
			defer c.Close()
			b, _ := io.ReadAll(c)
			served <- string(b)
		})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(src string) (net.Conn, error) {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		return d.Dial("tcp", l.Addr().String())
	}
	if c, err := dial("127.152.3.9"); err == nil {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("a stranger's connection was not reset")
		}
		c.Close()
	}
	c, err := dial("127.152.3.2")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "data")
	c.Close()
	select {
	case got := <-served:
		if got != "data" {
			t.Errorf("served %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the allowed connection was not served")
	}
	<-l.Done()
	if c, err := dial("127.152.3.2"); err == nil {
		c.Close()
		t.Error("the listener took a second connection")
	}

	for _, how := range []string{"timeout", "close"} {
		timeout := 200 * time.Millisecond
		if how == "close" {
			timeout = time.Hour
		}
		l, err := Open(Spec{Bind: netip.MustParseAddrPort("127.152.3.1:0"), Timeout: timeout}, func(c *net.TCPConn) { c.Close() })
		if err != nil {
			t.Fatal(err)
		}
		if how == "close" {
			l.Close()
			l.Close()
		}
		select {
		case <-l.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the listener still waits", how)
		}
	}
}
