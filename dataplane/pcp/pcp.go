// Package pcp reads and writes Port Control Protocol messages (RFC
// 6887), for the PCP server of an lsn pool (dataplane/lsn): the common
// header, the MAP and PEER opcodes' fields, the options, and the result
// codes a request is answered with.
package pcp

import (
	"encoding/binary"
	"net/netip"
)

// Version is the PCP version served (RFC 6887).
const Version = 2

// Port is PCP's UDP port.
const Port = 5351

// MaxSize is the largest PCP message.
const MaxSize = 1100

// The opcodes.
const (
	OpAnnounce = 0
	OpMap      = 1
	OpPeer     = 2
)

// The options.
const (
	OptThirdParty    = 1
	OptPreferFailure = 2
	OptFilter        = 3
)

// Result codes (RFC 6887 section 7.4).
const (
	Success              = 0
	UnsuppVersion        = 1
	NotAuthorized        = 2
	MalformedRequest     = 3
	UnsuppOpcode         = 4
	UnsuppOption         = 5
	MalformedOption      = 6
	NetworkFailure       = 7
	NoResources          = 8
	UnsuppProtocol       = 9
	UserExQuota          = 10
	CannotProvideExt     = 11
	AddressMismatch      = 12
	ExcessiveRemotePeers = 13
)

// headerLen is the common header's size, mapLen and peerLen the
// opcodes' payloads'.
const (
	headerLen = 24
	mapLen    = 36
	peerLen   = 56
)

// Request is one PCP request as read.
type Request struct {
	Version  uint8
	Opcode   uint8
	Lifetime uint32
	// Client is the PCP client's address (IPv4 unmapped).
	Client netip.Addr
	// The MAP and PEER fields.
	Nonce        [12]byte
	Protocol     uint8
	InternalPort uint16
	ExtPort      uint16     // suggested
	ExtAddr      netip.Addr // suggested (unmapped; unspecified: none)
	PeerPort     uint16     // PEER
	PeerAddr     netip.Addr // PEER
	// ThirdParty is the THIRD_PARTY option's internal address (invalid:
	// none); PreferFailure is the PREFER_FAILURE option.
	ThirdParty    netip.Addr
	PreferFailure bool
	// Options is the options' bytes, echoed in the answer.
	Options []byte
}

// Parse reads a request. ok is false when the message is to be dropped
// unanswered (shorter than 2 octets, or a response); otherwise code is
// the result code it is to be answered with when it is not Success.
func Parse(b []byte) (r Request, code uint8, ok bool) {
	if len(b) < 2 || b[1]&0x80 != 0 {
		return r, 0, false
	}
	r.Version, r.Opcode = b[0], b[1]&0x7f
	if r.Version != Version {
		return r, UnsuppVersion, true
	}
	if len(b) < headerLen || len(b) > MaxSize || len(b)%4 != 0 {
		return r, MalformedRequest, true
	}
	r.Lifetime = binary.BigEndian.Uint32(b[4:])
	r.Client = addr16(b[8:24])
	rest := b[headerLen:]
	switch r.Opcode {
	case OpAnnounce:
	case OpMap, OpPeer:
		n := mapLen
		if r.Opcode == OpPeer {
			n = peerLen
		}
		if len(rest) < n {
			return r, MalformedRequest, true
		}
		copy(r.Nonce[:], rest[:12])
		r.Protocol = rest[12]
		r.InternalPort = binary.BigEndian.Uint16(rest[16:])
		r.ExtPort = binary.BigEndian.Uint16(rest[18:])
		r.ExtAddr = addr16(rest[20:36])
		if r.Opcode == OpPeer {
			r.PeerPort = binary.BigEndian.Uint16(rest[36:])
			r.PeerAddr = addr16(rest[40:56])
		}
		rest = rest[n:]
	default:
		return r, UnsuppOpcode, true
	}
	r.Options = rest
	for len(rest) > 0 {
		if len(rest) < 4 {
			return r, MalformedOption, true
		}
		code, l := rest[0], int(binary.BigEndian.Uint16(rest[2:]))
		padded := (l + 3) &^ 3
		if 4+padded > len(rest) {
			return r, MalformedOption, true
		}
		data := rest[4 : 4+l]
		switch {
		case code == OptThirdParty && r.Opcode != OpAnnounce:
			if l != 16 || r.ThirdParty.IsValid() {
				return r, MalformedOption, true
			}
			r.ThirdParty = addr16(data)
		case code == OptPreferFailure && r.Opcode == OpMap:
			if l != 0 {
				return r, MalformedOption, true
			}
			r.PreferFailure = true
		case code < 128:
			// Mandatory and unknown, or FILTER (RFC 6887 section 13.3:
			// optional to support), which would narrow who may use a
			// mapping and openltm does not apply.
			return r, UnsuppOption, true // mandatory and unknown
		}
		rest = rest[4+padded:]
	}
	return r, Success, true
}

// Response is the answer to a request.
type Response struct {
	Opcode   uint8
	Result   uint8
	Lifetime uint32
	Epoch    uint32
	// The MAP and PEER fields: the request's, with the assigned
	// external port and address.
	Req     *Request
	ExtPort uint16
	ExtAddr netip.Addr
}

// Append writes the response (RFC 6887 section 7.2) after b.
func (p *Response) Append(b []byte) []byte {
	var h [headerLen]byte
	h[0] = Version
	h[1] = 0x80 | p.Opcode
	h[3] = p.Result
	binary.BigEndian.PutUint32(h[4:], p.Lifetime)
	binary.BigEndian.PutUint32(h[8:], p.Epoch)
	b = append(b, h[:]...)
	r := p.Req
	if r == nil || r.Version != Version || (p.Opcode != OpMap && p.Opcode != OpPeer) {
		return b
	}
	n := mapLen
	if p.Opcode == OpPeer {
		n = peerLen
	}
	start := len(b)
	b = append(b, make([]byte, n)...)
	pl := b[start:]
	copy(pl, r.Nonce[:])
	pl[12] = r.Protocol
	binary.BigEndian.PutUint16(pl[16:], r.InternalPort)
	ext, port := p.ExtAddr, p.ExtPort
	if !ext.IsValid() {
		ext, port = r.ExtAddr, r.ExtPort
	}
	binary.BigEndian.PutUint16(pl[18:], port)
	put16(pl[20:36], ext)
	if p.Opcode == OpPeer {
		binary.BigEndian.PutUint16(pl[36:], r.PeerPort)
		put16(pl[40:56], r.PeerAddr)
	}
	if len(b)+len(r.Options) <= MaxSize {
		b = append(b, r.Options...)
	}
	return b
}

// addr16 reads a 16-octet address; an IPv4-mapped one is unmapped.
func addr16(b []byte) netip.Addr {
	return netip.AddrFrom16([16]byte(b[:16])).Unmap()
}

// put16 writes a as 16 octets (IPv4 mapped); invalid: all zeroes.
func put16(b []byte, a netip.Addr) {
	if !a.IsValid() {
		return
	}
	x := a.As16()
	copy(b, x[:])
}

// Unspecified reports whether a suggested address is none: the all-zeroes
// address of either family (or invalid).
func Unspecified(a netip.Addr) bool { return !a.IsValid() || a.IsUnspecified() }

// ResultName is the RFC's name of a result code, for logs and show.
func ResultName(code uint8) string {
	names := [...]string{"SUCCESS", "UNSUPP_VERSION", "NOT_AUTHORIZED", "MALFORMED_REQUEST", "UNSUPP_OPCODE",
		"UNSUPP_OPTION", "MALFORMED_OPTION", "NETWORK_FAILURE", "NO_RESOURCES", "UNSUPP_PROTOCOL",
		"USER_EX_QUOTA", "CANNOT_PROVIDE_EXTERNAL", "ADDRESS_MISMATCH", "EXCESSIVE_REMOTE_PEERS"}
	if int(code) < len(names) {
		return names[code]
	}
	return "UNKNOWN"
}
