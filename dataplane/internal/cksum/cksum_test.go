package cksum

import "testing"

func TestInternet(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want uint16
	}{
		// RFC 1071 section 3's example: the words 0001 f203 f4f5 f6f7
		// sum to ddf2 (with the carries folded), whose complement is 220d.
		{"RFC 1071", []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, 0x220d},
		{"odd length", []byte{0x01}, ^uint16(0x0100)},
		{"empty", nil, 0xffff},
		// An IPv4 header whose checksum field is filled sums to zero.
		{"IPv4 header", []byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7}, 0},
	} {
		if got := Internet(tc.in); got != tc.want {
			t.Errorf("%s: %#04x, want %#04x", tc.name, got, tc.want)
		}
	}
}
