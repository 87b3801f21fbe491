package icmpecho

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// An echo to the loopback address is answered by the kernel; an exchange
// whose deadline passes before the reply is read ends as ErrNoReply. Raw
// sockets need root or CAP_NET_RAW: without them the test skips.
func TestExchange(t *testing.T) {
	for _, tc := range []struct {
		dst  string
		wait time.Duration
		want error
	}{
		{"127.0.0.1", time.Second, nil},
		{"::1", time.Second, nil},
		{"127.0.0.1", 0, ErrNoReply},
	} {
		dst := netip.MustParseAddr(tc.dst)
		pc, err := net.ListenPacket(Network(dst), "")
		if err != nil {
			t.Skipf("no raw ICMP socket for %s: %v", tc.dst, err)
		}
		pc.SetReadDeadline(time.Now().Add(tc.wait))
		err = Exchange(pc, dst, "openltm")
		pc.Close()
		if err != tc.want {
			t.Errorf("%s within %v: %v, want %v", tc.dst, tc.wait, err, tc.want)
		}
	}
}
