// Package wsframe is the WebSocket framing (RFC 6455 section 5) that
// BIG-IP's websocket profile applies to a connection an HTTP virtual
// upgraded: frame headers read and written, payloads masked and unmasked,
// and a Relay that passes one direction's frames on while the rules
// (WS_CLIENT_FRAME, WS::collect, WS::frame, ...) look at them.
//
// Why its own package: the HTTP engine (dataplane/mblb) only knows that a
// connection became a tunnel; the rules engine only knows Tcl. The frame
// layer between them is pure byte work that is tested here on its own,
// with fake streams, frame by frame.
package wsframe

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The opcodes of RFC 6455 section 5.2. WS::frame type answers them as
// numbers, as BIG-IP does.
const (
	OpContinuation = 0x0
	OpText         = 0x1
	OpBinary       = 0x2
	OpClose        = 0x8
	OpPing         = 0x9
	OpPong         = 0xA
)

// MaxHeaderLen is the longest frame header: 2 bytes, an 8-byte extended
// length and a 4-byte mask key.
const MaxHeaderLen = 14

// Header is one frame's header as it travels.
type Header struct {
	Fin    bool
	RSV    uint8 // RSV1..RSV3 as the three low bits (RSV1 = 4: permessage-deflate)
	Opcode uint8
	Masked bool
	Key    [4]byte
	Length uint64
}

// ErrProtocol is a frame the relay refuses to pass on: the connection is
// reset, as a proxy that cannot frame the stream must not guess.
var ErrProtocol = errors.New("websocket: protocol error")

// IsControl reports a control frame (close, ping, pong): these may come
// between the fragments of a message and are never fragmented.
func (h *Header) IsControl() bool { return h.Opcode&0x8 != 0 }

// Parse reads the header at the start of b. n is its length in bytes, 0
// when b holds only part of it (read more). A header RFC 6455 forbids (a
// 64-bit length with its top bit set, a control frame over 125 bytes or
// fragmented, a reserved opcode) is ErrProtocol.
func Parse(b []byte) (h Header, n int, err error) {
	if len(b) < 2 {
		return h, 0, nil
	}
	h.Fin = b[0]&0x80 != 0
	h.RSV = (b[0] >> 4) & 0x7
	h.Opcode = b[0] & 0x0F
	h.Masked = b[1]&0x80 != 0
	n = 2
	switch l := b[1] & 0x7F; l {
	case 126:
		if len(b) < 4 {
			return h, 0, nil
		}
		h.Length = uint64(binary.BigEndian.Uint16(b[2:4]))
		n = 4
	case 127:
		if len(b) < 10 {
			return h, 0, nil
		}
		h.Length = binary.BigEndian.Uint64(b[2:10])
		if h.Length>>63 != 0 {
			return h, 0, fmt.Errorf("%w: frame length %d has its top bit set", ErrProtocol, h.Length)
		}
		n = 10
	default:
		h.Length = uint64(l)
	}
	if h.Masked {
		if len(b) < n+4 {
			return h, 0, nil
		}
		copy(h.Key[:], b[n:n+4])
		n += 4
	}
	switch {
	case h.Opcode > OpBinary && h.Opcode < OpClose, h.Opcode > OpPong:
		return h, 0, fmt.Errorf("%w: reserved opcode %#x", ErrProtocol, h.Opcode)
	case h.IsControl() && (h.Length > 125 || !h.Fin):
		return h, 0, fmt.Errorf("%w: control frame %#x of %d bytes, fin %v", ErrProtocol, h.Opcode, h.Length, h.Fin)
	}
	return h, n, nil
}

// Append writes h to dst in its shortest form.
func (h *Header) Append(dst []byte) []byte {
	b0 := h.Opcode&0x0F | (h.RSV&0x7)<<4
	if h.Fin {
		b0 |= 0x80
	}
	var m byte
	if h.Masked {
		m = 0x80
	}
	switch {
	case h.Length < 126:
		dst = append(dst, b0, m|byte(h.Length))
	case h.Length <= 0xFFFF:
		dst = append(dst, b0, m|126, byte(h.Length>>8), byte(h.Length))
	default:
		dst = append(dst, b0, m|127)
		dst = binary.BigEndian.AppendUint64(dst, h.Length)
	}
	if h.Masked {
		dst = append(dst, h.Key[:]...)
	}
	return dst
}

// Mask XORs b with key, b starting at offset pos of the payload. Masking
// and unmasking are the same operation; two keys in a row are their XOR
// (re-masking a payload with another key is one pass with KeyXOR).
func Mask(key [4]byte, pos uint64, b []byte) {
	if key == ([4]byte{}) {
		return
	}
	k := pos & 3
	i := 0
	// Align to the key, then eight bytes at a time.
	for ; i < len(b) && k != 0; i++ {
		b[i] ^= key[k]
		k = (k + 1) & 3
	}
	if len(b)-i >= 8 {
		k4 := uint64(binary.LittleEndian.Uint32(key[:]))
		k8 := k4 | k4<<32
		for ; len(b)-i >= 8; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k8)
		}
	}
	for ; i < len(b); i++ {
		b[i] ^= key[k]
		k = (k + 1) & 3
	}
}

// KeyXOR is the key that turns a payload masked with a into one masked
// with b.
func KeyXOR(a, b [4]byte) [4]byte {
	return [4]byte{a[0] ^ b[0], a[1] ^ b[1], a[2] ^ b[2], a[3] ^ b[3]}
}

// KeyOf is the mask key a number names (WS::frame insert's MASK, and
// what WS::frame mask answers): its 32 bits, most significant first [M].
func KeyOf(n uint32) [4]byte {
	var k [4]byte
	binary.BigEndian.PutUint32(k[:], n)
	return k
}

// KeyNumber is the number of a mask key, as KeyOf reads it.
func KeyNumber(k [4]byte) uint32 { return binary.BigEndian.Uint32(k[:]) }

// ClosePayload is a close frame's payload: the status code, then the
// reason, cut to fit a control frame (125 bytes).
func ClosePayload(code uint16, reason string) []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(reason)), code)
	if len(reason) > 123 {
		reason = reason[:123]
	}
	return append(b, reason...)
}
