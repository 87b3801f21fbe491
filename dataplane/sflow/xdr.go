package sflow

import (
	"encoding/binary"
	"net/netip"
)

// XDR (RFC 4506) as sFlow version 5 uses it: big-endian 32- and 64-bit
// integers, and opaque strings as a length and the bytes padded to four.

func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// appendString appends s as an XDR string<max>: longer ones are cut to
// max bytes, as the structure's bound says.
func appendString(b []byte, s []byte, max int) []byte {
	if len(s) > max {
		s = s[:max]
	}
	b = appendU32(b, uint32(len(s)))
	b = append(b, s...)
	for i := len(s); i%4 != 0; i++ {
		b = append(b, 0)
	}
	return b
}

// appendAddress appends an sFlow address: its type (1 IPv4, 2 IPv6) and
// its bytes; an invalid address is type 0 (unknown).
func appendAddress(b []byte, a netip.Addr) []byte {
	a = a.Unmap()
	switch {
	case a.Is4():
		v := a.As4()
		return append(appendU32(b, 1), v[:]...)
	case a.Is6():
		v := a.As16()
		return append(appendU32(b, 2), v[:]...)
	}
	return appendU32(b, 0)
}

// patchLen writes the length of what follows the 4 bytes at at into them:
// an opaque's length known once its contents are written.
func patchLen(b []byte, at int) {
	binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
}
