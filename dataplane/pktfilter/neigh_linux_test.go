package pktfilter

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
)

// ndMsg builds an RTM_NEWNEIGH body: struct ndmsg, NDA_DST, NDA_LLADDR.
func ndMsg(state uint16, dst netip.Addr, mac []byte) []byte {
	b := make([]byte, sizeofNdMsg)
	binary.NativeEndian.PutUint16(b[8:10], state)
	attr := func(typ uint16, v []byte) {
		h := make([]byte, 4)
		binary.NativeEndian.PutUint16(h[0:2], uint16(4+len(v)))
		binary.NativeEndian.PutUint16(h[2:4], typ)
		b = append(b, h...)
		b = append(b, v...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	attr(ndaDst, dst.AsSlice())
	if mac != nil {
		attr(ndaLLAddr, mac)
	}
	return b
}

// TestNeighMAC: the neighbour table's messages as the kernel sends them:
// a usable entry gives its MAC, an incomplete or failed one or another
// address none; malformed messages none.
func TestNeighMAC(t *testing.T) {
	mac := []byte{0x02, 0x42, 0xac, 0x11, 0, 2}
	a4, a6 := netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("2001:db8::7")
	for _, c := range []struct {
		name string
		msg  []byte
		a    netip.Addr
		want []byte
	}{
		{"reachable", ndMsg(0x02, a4, mac), a4, mac},
		{"stale", ndMsg(0x04, a4, mac), a4, mac},
		{"ipv6", ndMsg(0x02, a6, mac), a6, mac},
		{"another address", ndMsg(0x02, a4, mac), netip.MustParseAddr("192.0.2.8"), nil},
		{"incomplete", ndMsg(0x01, a4, nil), a4, nil},
		{"failed", ndMsg(0x20, a4, mac), a4, nil},
		{"no lladdr", ndMsg(0x02, a4, nil), a4, nil},
		{"short", []byte{1, 2, 3}, a4, nil},
		{"bad attribute length", append(ndMsg(0x02, a4, mac)[:sizeofNdMsg], 0xff, 0, 1, 0), a4, nil},
	} {
		if got := neighMAC(c.msg, c.a); !bytes.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, net.HardwareAddr(got), net.HardwareAddr(c.want))
		}
	}
	if Neighbour(netip.MustParseAddr("127.192.0.1")) != nil {
		t.Error("a loopback address has a MAC")
	}
}
