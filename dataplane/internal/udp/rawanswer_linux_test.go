package udp

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// TestUDPHeader: the headers an ip-forward flow's raw answers carry: the
// addresses, ports and lengths, and a UDP checksum that sums to all ones
// with the pseudo-header (RFC 768), for IPv4 and IPv6, even and odd
// payloads.
func TestUDPHeader(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		payload  string
	}{
		{"127.239.6.1:30081", "127.239.6.100:40000", "F81\n"},
		{"127.239.6.1:53", "127.239.6.100:1", "odd"},
		{"127.239.6.1:53", "127.239.6.100:1", ""},
		{"[fd00::1]:30081", "[fd00::64]:40000", "an IPv6 answer"},
		{"[fd00::1]:30081", "[fd00::64]:40000", "odd6!"},
	} {
		from, to, b := netip.MustParseAddrPort(tc.from), netip.MustParseAddrPort(tc.to), []byte(tc.payload)
		var h [rawHdrMax]byte
		n := udpHeader(&h, from, to, b)
		ip := 20
		if from.Addr().Is6() {
			ip = 40
		}
		if n != ip+8 {
			t.Fatalf("%s: %d header bytes", tc.from, n)
		}
		u := h[ip:n]
		if binary.BigEndian.Uint16(u[0:]) != from.Port() || binary.BigEndian.Uint16(u[2:]) != to.Port() || int(binary.BigEndian.Uint16(u[4:])) != 8+len(b) {
			t.Errorf("%s: UDP header % x", tc.from, u)
		}
		var pseudo []byte
		pseudo = append(pseudo, from.Addr().AsSlice()...)
		pseudo = append(pseudo, to.Addr().AsSlice()...)
		pseudo = append(pseudo, 0, 17, byte((8+len(b))>>8), byte(8+len(b)))
		sum := sum16(sum16(sum16(0, pseudo), u), b)
		for sum>>16 != 0 {
			sum = sum&0xffff + sum>>16
		}
		if sum != 0xffff {
			t.Errorf("%s -> %s %q: the checksum does not verify (%#x)", tc.from, tc.to, tc.payload, sum)
		}
		if ip == 20 && (h[0] != 0x45 || h[9] != 17 || netip.AddrFrom4([4]byte(h[12:16])) != from.Addr() || netip.AddrFrom4([4]byte(h[16:20])) != to.Addr()) {
			t.Errorf("%s: IPv4 header % x", tc.from, h[:20])
		}
		if ip == 40 && (h[0] != 0x60 || h[6] != 17 || int(binary.BigEndian.Uint16(h[4:])) != 8+len(b) || netip.AddrFrom16([16]byte(h[8:24])) != from.Addr()) {
			t.Errorf("%s: IPv6 header % x", tc.from, h[:40])
		}
	}
}
