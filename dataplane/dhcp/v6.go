package dhcp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// DHCPv6 (RFC 8415): a client's or server's message is a type and a
// transaction id, then options; a relay's (Relay-Forward, Relay-Reply)
// is a type, a hop count, the link and peer addresses, then options,
// one of which (Relay Message) carries the message relayed.
const (
	MsgSolicit   = 1
	MsgAdvertise = 2
	MsgReply     = 7
	MsgRelayForw = 12
	MsgRelayRepl = 13

	OptRelayMsg     = 9
	OptInterfaceID  = 18
	OptRemoteID     = 37 // RFC 4649
	OptSubscriberID = 38 // RFC 4580

	// HopCountLimit is RFC 8415's HOP_COUNT_LIMIT: a Relay-Forward that
	// already passed through this many relays is not relayed again.
	HopCountLimit = 8

	v6ClientHeader = 4
	v6RelayHeader  = 34
)

// IsRelayV6 reports whether message type t is a relay's.
func IsRelayV6(t uint8) bool { return t == MsgRelayForw || t == MsgRelayRepl }

// v6Start is where b's options begin.
func v6Start(b []byte) int {
	if IsRelayV6(b[0]) {
		return v6RelayHeader
	}
	return v6ClientHeader
}

// CheckV6 reports whether b is a DHCPv6 message: a header of its type's
// length and options that each fit.
func CheckV6(b []byte) error {
	if len(b) < v6ClientHeader || IsRelayV6(b[0]) && len(b) < v6RelayHeader {
		return ErrShort
	}
	if b[0] == 0 {
		return fmt.Errorf("dhcp: DHCPv6 message type 0")
	}
	return v6Options(b, func(uint16, int, int) bool { return true })
}

// v6Options walks b's options: fn gets each code, the offset of its
// header and its data's length, until it returns false.
func v6Options(b []byte, fn func(code uint16, at, n int) bool) error {
	for i := v6Start(b); i < len(b); {
		if i+4 > len(b) {
			return ErrOptions
		}
		code, n := binary.BigEndian.Uint16(b[i:]), int(binary.BigEndian.Uint16(b[i+2:]))
		if i+4+n > len(b) {
			return ErrOptions
		}
		if !fn(code, i, n) {
			return nil
		}
		i += 4 + n
	}
	return nil
}

// MsgTypeV6 is the message type.
func MsgTypeV6(b []byte) uint8 { return b[0] }

// TransactionID is a client's or server's transaction id (0 for a
// relay's message, which has none).
func TransactionID(b []byte) uint32 {
	if IsRelayV6(b[0]) {
		return 0
	}
	return uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// HopCount is a relay message's hop count (0 for others).
func HopCount(b []byte) uint8 {
	if IsRelayV6(b[0]) {
		return b[1]
	}
	return 0
}

// LinkAddress is a relay message's link-address (invalid for others).
func LinkAddress(b []byte) netip.Addr {
	if IsRelayV6(b[0]) {
		return netip.AddrFrom16([16]byte(b[2:18]))
	}
	return netip.Addr{}
}

// PeerAddress is a relay message's peer-address (invalid for others).
func PeerAddress(b []byte) netip.Addr {
	if IsRelayV6(b[0]) {
		return netip.AddrFrom16([16]byte(b[18:34]))
	}
	return netip.Addr{}
}

// V6Option is the data of b's first top-level option code.
func V6Option(b []byte, code uint16) ([]byte, bool) {
	var v []byte
	found := false
	v6Options(b, func(c uint16, at, n int) bool {
		if c == code {
			v, found = b[at+4:at+4+n], true
			return false
		}
		return true
	})
	return v, found
}

// V6DeleteOption is b without any top-level option code (b itself when
// it has none).
func V6DeleteOption(b []byte, code uint16) []byte {
	var spans [][2]int
	v6Options(b, func(c uint16, at, n int) bool {
		if c == code {
			spans = append(spans, [2]int{at, at + 4 + n})
		}
		return true
	})
	return cutSpans(b, spans) // v4.go
}

// V6SetOption is a copy of b whose option code is v, any earlier one
// removed and the new one last.
func V6SetOption(b []byte, code uint16, v []byte) ([]byte, error) {
	if len(v) > 0xffff {
		return nil, fmt.Errorf("dhcp: option %d: %d bytes of data, at most 65535", code, len(v))
	}
	b = V6DeleteOption(b, code)
	out := make([]byte, 0, len(b)+4+len(v))
	out = append(out, b...)
	return appendV6Option(out, code, v), nil
}

func appendV6Option(out []byte, code uint16, v []byte) []byte {
	out = binary.BigEndian.AppendUint16(out, code)
	out = binary.BigEndian.AppendUint16(out, uint16(len(v)))
	return append(out, v...)
}

// V6Opt is one option a relay adds to its Relay-Forward.
type V6Opt struct {
	Code uint16
	Data []byte
}

// RelayForward wraps msg, received from peer, in a Relay-Forward from
// link (RFC 8415 §19.1.1): hop count 0 for a client's message, one more
// than msg's for another relay's, which must not have reached
// HopCountLimit. extra options follow the Relay Message option.
func RelayForward(msg []byte, link, peer netip.Addr, extra ...V6Opt) ([]byte, error) {
	t := msg[0]
	if t == MsgRelayRepl || t == MsgAdvertise || t == MsgReply {
		return nil, ErrNotRequest
	}
	hop := uint8(0)
	if t == MsgRelayForw {
		if msg[1] >= HopCountLimit {
			return nil, ErrHops
		}
		hop = msg[1] + 1
	}
	n := v6RelayHeader + 4 + len(msg)
	for _, o := range extra {
		n += 4 + len(o.Data)
	}
	out := make([]byte, 0, n)
	out = append(out, MsgRelayForw, hop)
	l, p := as16(link), as16(peer)
	out = append(out, l[:]...)
	out = append(out, p[:]...)
	out = appendV6Option(out, OptRelayMsg, msg)
	for _, o := range extra {
		out = appendV6Option(out, o.Code, o.Data)
	}
	return out, nil
}

// as16 is a as DHCPv6 carries an address: IPv4 as IPv4-mapped, none as ::.
func as16(a netip.Addr) [16]byte {
	if !a.IsValid() {
		return [16]byte{}
	}
	return a.As16()
}

// RelayReplyMessage is the message a Relay-Reply carries to the peer (RFC
// 8415 §19.2), and the peer's address.
func RelayReplyMessage(b []byte) ([]byte, netip.Addr, error) {
	if err := CheckV6(b); err != nil {
		return nil, netip.Addr{}, err
	}
	if b[0] != MsgRelayRepl {
		return nil, netip.Addr{}, fmt.Errorf("dhcp: DHCPv6 message type %d is not a Relay-Reply", b[0])
	}
	m, ok := V6Option(b, OptRelayMsg)
	if !ok || len(m) == 0 {
		return nil, netip.Addr{}, fmt.Errorf("dhcp: Relay-Reply without a Relay Message option")
	}
	return m, PeerAddress(b), nil
}
