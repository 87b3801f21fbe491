// Package dhcp reads and edits DHCPv4 (RFC 2131, 2132, 3046) and DHCPv6
// (RFC 8415) messages in place of their wire bytes, for the dhcpv4 and
// dhcpv6 profiles' relay on UDP virtuals and the DHCPv4::, DHCPv6:: and
// DHCP:: iRule commands. It keeps no state and allocates only when a
// message is edited, so a relay pays one parse per datagram.
package dhcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// DHCPv4 (BOOTP) layout: a 236-byte fixed header, the magic cookie, then
// options up to End.
const (
	// V4HeaderLen is the fixed BOOTP header, before the magic cookie.
	V4HeaderLen = 236
	// V4MinLen is the shortest DHCP message: header and cookie.
	V4MinLen = V4HeaderLen + 4

	// OpRequest (BOOTREQUEST) is what clients and relays send servers.
	OpRequest = 1
	// OpReply (BOOTREPLY) is what servers answer.
	OpReply = 2

	OptPad          = 0
	OptOverload     = 52
	OptMessageType  = 53
	OptRelayAgent   = 82 // relay agent information (RFC 3046)
	OptEnd          = 255
	SubCircuitID    = 1 // option 82's suboptions
	SubRemoteID     = 2
	MaxV4HopsLimit  = 16 // RFC 1542's ceiling on max-hops
	v4CookieOffset  = V4HeaderLen
	v4OptionsOffset = V4MinLen
)

var magicCookie = [4]byte{99, 130, 83, 99}

var (
	// ErrShort is a datagram too short for the message it claims to be.
	ErrShort = errors.New("dhcp: message too short")
	// ErrCookie is a BOOTP message without the DHCP magic cookie.
	ErrCookie = errors.New("dhcp: no DHCP magic cookie")
	// ErrOp is an op field that is neither BOOTREQUEST nor BOOTREPLY.
	ErrOp = errors.New("dhcp: op is neither BOOTREQUEST (1) nor BOOTREPLY (2)")
	// ErrOptions is an option that runs past the end of the datagram.
	ErrOptions = errors.New("dhcp: malformed options")
	// ErrHops is a request that has passed through as many relays as the
	// profile allows (max-hops, RFC 8415's HOP_COUNT_LIMIT for DHCPv6).
	ErrHops = errors.New("dhcp: too many relay hops")
	// ErrNotRequest is a server's message where a client's is relayed.
	ErrNotRequest = errors.New("dhcp: not a client's message")
)

// CheckV4 reports whether b is a DHCPv4 message: header, cookie, op, and
// options that each fit (an End is not required: RFC 2131 servers send
// messages padded to 300 bytes, and some forget it).
func CheckV4(b []byte) error {
	if len(b) < V4MinLen {
		return ErrShort
	}
	if [4]byte(b[v4CookieOffset:v4OptionsOffset]) != magicCookie {
		return ErrCookie
	}
	if b[0] != OpRequest && b[0] != OpReply {
		return ErrOp
	}
	_, err := v4Options(b, func(code uint8, at, n int) bool { return true })
	return err
}

// v4Options walks b's options, calling fn with each code, the offset of
// its code byte and its data's length, until fn returns false or End;
// end is the offset of End (len(b) when there is none).
func v4Options(b []byte, fn func(code uint8, at, n int) bool) (end int, err error) {
	i := v4OptionsOffset
	for i < len(b) {
		c := b[i]
		switch c {
		case OptPad:
			i++
			continue
		case OptEnd:
			return i, nil
		}
		if i+2 > len(b) || i+2+int(b[i+1]) > len(b) {
			return 0, ErrOptions
		}
		n := int(b[i+1])
		if !fn(c, i, n) {
			return i, nil
		}
		i += 2 + n
	}
	return len(b), nil
}

// Op is the message's op field (OpRequest, OpReply).
func Op(b []byte) uint8 { return b[0] }

// Htype is the hardware address type (1: Ethernet).
func Htype(b []byte) uint8 { return b[1] }

// Hlen is the hardware address length.
func Hlen(b []byte) uint8 { return b[2] }

// Hops is the number of relays the message passed through.
func Hops(b []byte) uint8 { return b[3] }

// Xid is the client's transaction id.
func Xid(b []byte) uint32 { return binary.BigEndian.Uint32(b[4:]) }

// Secs is the seconds since the client began.
func Secs(b []byte) uint16 { return binary.BigEndian.Uint16(b[8:]) }

// Flags holds the broadcast bit (0x8000).
func Flags(b []byte) uint16 { return binary.BigEndian.Uint16(b[10:]) }

func addr4(b []byte, at int) netip.Addr { return netip.AddrFrom4([4]byte(b[at : at+4])) }

// Ciaddr is the client's own address (renewing, rebinding, inform).
func Ciaddr(b []byte) netip.Addr { return addr4(b, 12) }

// Yiaddr is the address a server offers or assigns.
func Yiaddr(b []byte) netip.Addr { return addr4(b, 16) }

// Siaddr is the next server's address (BOOTP).
func Siaddr(b []byte) netip.Addr { return addr4(b, 20) }

// Giaddr is the relay agent's address, 0.0.0.0 before any relay.
func Giaddr(b []byte) netip.Addr { return addr4(b, 24) }

// Chaddr is the client's hardware address: hlen bytes (at most 16).
func Chaddr(b []byte) []byte { return b[28 : 28+min(int(b[2]), 16)] }

// FormatMAC writes a hardware address as BIG-IP prints one,
// colon-separated lowercase hex.
func FormatMAC(hw []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(hw)*3)
	for i, c := range hw {
		if i > 0 {
			out = append(out, ':')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// V4Option is the data of b's first option code, and whether it has one.
func V4Option(b []byte, code uint8) ([]byte, bool) {
	var v []byte
	found := false
	v4Options(b, func(c uint8, at, n int) bool {
		if c == code {
			v, found = b[at+2:at+2+n], true
			return false
		}
		return true
	})
	return v, found
}

// MessageType is option 53's value (1 DHCPDISCOVER ... 8 DHCPINFORM), 0
// for a BOOTP message without one.
func MessageType(b []byte) uint8 {
	if v, ok := V4Option(b, OptMessageType); ok && len(v) == 1 {
		return v[0]
	}
	return 0
}

// V4DeleteOption is b without any option code (a copy when it had one;
// b itself, untouched, otherwise).
func V4DeleteOption(b []byte, code uint8) []byte {
	var spans [][2]int
	v4Options(b, func(c uint8, at, n int) bool {
		if c == code {
			spans = append(spans, [2]int{at, at + 2 + n})
		}
		return true
	})
	return cutSpans(b, spans)
}

// cutSpans is b without the byte ranges spans (in order, not
// overlapping): a copy when there are any, b itself otherwise.
func cutSpans(b []byte, spans [][2]int) []byte {
	if len(spans) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	prev := 0
	for _, s := range spans {
		out = append(out, b[prev:s[0]]...)
		prev = s[1]
	}
	return append(out, b[prev:]...)
}

// V4SetOption is a copy of b whose option code is v: any earlier one
// removed, the new one placed before End (appended with an End when b
// has none). Data longer than 255 bytes is refused (RFC 3396 splitting
// is not done).
func V4SetOption(b []byte, code uint8, v []byte) ([]byte, error) {
	if code == OptPad || code == OptEnd {
		return nil, fmt.Errorf("dhcp: option %d cannot be set", code)
	}
	if len(v) > 255 {
		return nil, fmt.Errorf("dhcp: option %d: %d bytes of data, at most 255", code, len(v))
	}
	b = V4DeleteOption(b, code)
	end, err := v4Options(b, func(uint8, int, int) bool { return true })
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(v)+3)
	out = append(out, b[:end]...)
	out = append(out, code, byte(len(v)))
	out = append(out, v...)
	out = append(out, OptEnd)
	if end < len(b) {
		out = append(out, b[end+1:]...) // the padding after End
	}
	return out, nil
}

// Suboption is one suboption of the relay agent information option.
type Suboption struct {
	Code  uint8
	Value []byte
}

// RelayAgentInfo encodes suboptions as option 82's data.
func RelayAgentInfo(subs []Suboption) []byte {
	var out []byte
	for _, s := range subs {
		out = append(out, s.Code, byte(len(s.Value)))
		out = append(out, s.Value...)
	}
	return out
}

// V4Relay is what a relay agent does to a client's request.
type V4Relay struct {
	// Giaddr is written when the request has none (a first relay).
	Giaddr netip.Addr
	// MaxHops: a request that already passed through this many relays
	// is dropped (ErrHops).
	MaxHops uint8
	// AgentInfo, when not nil, is option 82's data, added to a request
	// that has no option 82 (RFC 3046 §2.1.1: a relay does not add one
	// to a request that carries one).
	AgentInfo []byte
}

// RelayV4 is request b as relay r sends it on: hops counted, giaddr
// set, option 82 added. b is not modified.
func RelayV4(b []byte, r V4Relay) ([]byte, error) {
	if b[0] != OpRequest {
		return nil, ErrNotRequest
	}
	if Hops(b) >= r.MaxHops {
		return nil, ErrHops
	}
	var out []byte
	if r.AgentInfo != nil {
		if _, had := V4Option(b, OptRelayAgent); !had {
			var err error
			if out, err = V4SetOption(b, OptRelayAgent, r.AgentInfo); err != nil {
				return nil, err
			}
		}
	}
	if out == nil {
		out = append([]byte(nil), b...)
	}
	out[3]++
	if Giaddr(out) == netip.IPv4Unspecified() && r.Giaddr.Is4() {
		a := r.Giaddr.As4()
		copy(out[24:28], a[:])
	}
	return out, nil
}
