package rawsock

import (
	"net"
	"net/netip"
	"testing"
)

func TestSockaddrRoundTrip(t *testing.T) {
	for _, s := range []string{"127.0.0.1:80", "10.1.2.3:65535", "[::1]:8080", "[2001:db8::7]:1", "[::ffff:10.0.0.1]:443"} {
		ap := netip.MustParseAddrPort(s)
		var r Sockaddr
		r.Set(ap)
		want := netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		if got := r.AddrPort(); got != want {
			t.Errorf("%s: got %s, want %s", s, got, want)
		}
	}
	var zero Sockaddr
	if got := zero.AddrPort(); got.IsValid() {
		t.Errorf("no family: got %s", got)
	}
}

func TestAddrPortOf(t *testing.T) {
	for _, c := range []struct {
		in   net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 80}, "10.0.0.1:80"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.1"), Port: 80}, "10.0.0.1:80"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 9}, "[::1]:9"},
		{&net.UDPAddr{IP: net.ParseIP("10.0.0.1"), Port: 53}, "invalid AddrPort"},
	} {
		if got := AddrPortOf(c.in).String(); got != c.want {
			t.Errorf("%v: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestUnwrapOp(t *testing.T) {
	_, err := net.Listen("tcp", "256.0.0.1:1")
	if err == nil {
		t.Fatal("listen on an invalid address succeeded")
	}
	if got := UnwrapOp(err); got == err {
		t.Errorf("not unwrapped: %v", got)
	}
}
