package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// The Diameter codes the monitor uses (RFC 6733).
const (
	diamCER = 257 // Capabilities-Exchange (request and answer)
	diamDPR = 282 // Disconnect-Peer

	avpHostIPAddress     = 257
	avpAuthAppID         = 258
	avpAcctAppID         = 259
	avpVendorSpecificApp = 260
	avpOriginHost        = 264
	avpVendorID          = 266
	avpResultCode        = 268
	avpProductName       = 269
	avpDisconnectCause   = 273
	avpErrorMessage      = 281
	avpOriginRealm       = 296

	diamRequest   = 0x80 // the header's R flag
	avpMandatory  = 0x40 // the AVP's M flag
	avpVendorFlag = 0x80 // the AVP's V flag
	diamSuccess   = 2001
	diamHeaderLen = 20
)

// diamResults names the Result-Codes a peer refusing a CER is likely to
// send, for the monitor's error.
var diamResults = map[uint32]string{
	2001: "DIAMETER_SUCCESS", 3002: "DIAMETER_UNABLE_TO_DELIVER", 3004: "DIAMETER_TOO_BUSY",
	3010: "DIAMETER_UNKNOWN_PEER", 5004: "DIAMETER_INVALID_AVP_VALUE", 5005: "DIAMETER_MISSING_AVP",
	5010: "DIAMETER_NO_COMMON_APPLICATION", 5012: "DIAMETER_UNABLE_TO_COMPLY", 5017: "DIAMETER_NO_COMMON_SECURITY",
}

// appendAVP appends one AVP (vendor 0: none), padded to 32 bits.
func appendAVP(b []byte, code uint32, flags byte, vendor uint32, data []byte) []byte {
	hl := 8
	if vendor != 0 {
		flags |= avpVendorFlag
		hl = 12
	}
	n := hl + len(data)
	b = binary.BigEndian.AppendUint32(b, code)
	b = append(b, flags, byte(n>>16), byte(n>>8), byte(n))
	if vendor != 0 {
		b = binary.BigEndian.AppendUint32(b, vendor)
	}
	b = append(b, data...)
	return append(b, make([]byte, (4-len(data)%4)%4)...)
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// diamAddress is an Address AVP's data: the address family (1 IPv4,
// 2 IPv6) and the address.
func diamAddress(a netip.Addr) []byte {
	a = a.Unmap()
	if a.Is4() {
		return append([]byte{0, 1}, a.AsSlice()...)
	}
	return append([]byte{0, 2}, a.AsSlice()...)
}

// diamMessage is a message with application id 0 (the base protocol's).
func diamMessage(flags byte, code, hopByHop, endToEnd uint32, avps []byte) []byte {
	n := diamHeaderLen + len(avps)
	b := []byte{1, byte(n >> 16), byte(n >> 8), byte(n), flags, byte(code >> 16), byte(code >> 8), byte(code), 0, 0, 0, 0}
	b = binary.BigEndian.AppendUint32(b, hopByHop)
	b = binary.BigEndian.AppendUint32(b, endToEnd)
	return append(b, avps...)
}

// diamMsg is a message read: its flags, command, hop-by-hop identifier
// and the AVPs of the base protocol (vendor 0) by code, first of each.
type diamMsg struct {
	flags    byte
	code     uint32
	hopByHop uint32
	avps     map[uint32][]byte
}

// readDiameter reads one message of at most maxReply bytes.
func readDiameter(r io.Reader) (*diamMsg, error) {
	h := make([]byte, diamHeaderLen)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, err
	}
	n := int(h[1])<<16 | int(h[2])<<8 | int(h[3])
	if h[0] != 1 || n < diamHeaderLen || n%4 != 0 {
		return nil, fmt.Errorf("Response is not a Diameter message (version %d, length %d)", h[0], n)
	}
	if n > maxReply {
		return nil, errTooLong
	}
	body := make([]byte, n-diamHeaderLen)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	m := &diamMsg{flags: h[4], code: uint32(h[5])<<16 | uint32(h[6])<<8 | uint32(h[7]),
		hopByHop: binary.BigEndian.Uint32(h[12:]), avps: map[uint32][]byte{}}
	for len(body) > 0 {
		if len(body) < 8 {
			return nil, errBadAVP
		}
		code, flags := binary.BigEndian.Uint32(body), body[4]
		l := int(body[5])<<16 | int(body[6])<<8 | int(body[7])
		hl := 8
		if flags&avpVendorFlag != 0 {
			hl = 12
		}
		if l < hl || l > len(body) {
			return nil, errBadAVP
		}
		if _, seen := m.avps[code]; !seen && hl == 8 {
			m.avps[code] = body[hl:l]
		}
		body = body[min(len(body), (l+3)&^3):]
	}
	return m, nil
}

var errBadAVP = errors.New("Response is not a Diameter message (an AVP overruns it)")
