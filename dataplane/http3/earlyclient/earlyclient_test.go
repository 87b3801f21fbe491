package earlyclient

import "testing"

// long is a long header packet of type typ with payload length n (a
// 1-byte length) and the payload.
func long(typ byte, n int) []byte {
	b := []byte{0xc0 | typ<<4, 0, 0, 0, 1, 2, 0xaa, 0xbb, 0}
	if typ == kindInitial {
		b = append(b, 0) // no token
	}
	b = append(b, byte(n))
	return append(b, make([]byte, n)...)
}

func TestPacketKinds(t *testing.T) {
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	tests := []struct {
		name string
		b    []byte
		want int
	}{
		{"initial", long(kindInitial, 20), 1 << kindInitial},
		{"0-rtt", long(kindZeroRTT, 30), 1 << kindZeroRTT},
		{"initial then handshake", cat(long(kindInitial, 5), long(kindHandshake, 7)), 1<<kindInitial | 1<<kindHandshake},
		{"initial then 0-rtt", cat(long(kindInitial, 5), long(kindZeroRTT, 7)), 1<<kindInitial | 1<<kindZeroRTT},
		{"short", []byte{0x40, 1, 2, 3}, 1 << kindShort},
		{"initial then short", cat(long(kindInitial, 5), []byte{0x40, 9}), 1<<kindInitial | 1<<kindShort},
		{"truncated", long(kindZeroRTT, 30)[:12], 1<<kindZeroRTT | 1<<kindShort},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := packetKinds(tc.b); got != tc.want {
				t.Errorf("kinds %b, want %b", got, tc.want)
			}
		})
	}
}

func TestVarint(t *testing.T) {
	tests := []struct {
		b       []byte
		v, size int
	}{
		{[]byte{0x25}, 37, 1},
		{[]byte{0x7b, 0xbd}, 15293, 2},
		{[]byte{0x9d, 0x7f, 0x3e, 0x7d}, 494878333, 4},
		{[]byte{0x7b}, 0, 0}, // short
		{nil, 0, 0},
	}
	for _, tc := range tests {
		if v, n := varint(tc.b); v != tc.v || n != tc.size {
			t.Errorf("varint(%x) = %d, %d; want %d, %d", tc.b, v, n, tc.v, tc.size)
		}
	}
}
