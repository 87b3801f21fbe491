// Package cksum holds the Internet checksum that the ICMP messages the
// dataplane builds itself carry: the gateway-icmp monitor's echo
// requests and the packet filters' port unreachables.
package cksum

// Internet is the RFC 1071 checksum of b: the one's complement of the
// one's complement sum of its 16-bit words (a last odd byte padded with
// zero). A message whose checksum field holds it sums to zero.
func Internet(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
