// Package gtpmsg reads and builds GTP messages: GTPv1-C and GTP-U (3GPP
// TS 29.060, 29.281), GTPv2-C (TS 29.274) and GTP' (TS 32.295). It is the
// one codec of the gtp monitor's Echo Requests and of the gtp profile on
// UDP virtuals, so that both agree on what a well-formed message is.
package gtpmsg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Message types the profile and the monitor name (TS 29.060 and 29.274
// number the first ones alike).
const (
	EchoRequest           = 1
	EchoResponse          = 2
	CreateSessionRequest  = 32 // GTPv2-C
	CreateSessionResponse = 33
	CreatePDPRequest      = 16 // GTPv1-C
	CreatePDPResponse     = 17
	GPDU                  = 255 // GTP-U: the payload is a user's packet
)

// Well-known information element types, for rules that name them and for
// decoding their values.
const (
	IEv1Cause    = 1
	IEv1IMSI     = 2
	IEv1Recovery = 14
	IEv1APN      = 131
	IEv1MSISDN   = 134
	IEv2IMSI     = 1
	IEv2Cause    = 2
	IEv2Recovery = 3
	IEv2APN      = 71
	IEv2MSISDN   = 76
)

// Header is a GTP header as read: only the fields of its version are set.
type Header struct {
	// Version is 0, 1 or 2; Prime is a GTP' header (protocol type 0).
	Version uint8
	Prime   bool
	Type    uint8
	// Length is the header's length field (what follows the mandatory
	// part: 8 bytes for v1, 4 for v2, 6 for GTP').
	Length uint16
	// HasTEID: v1 always, v2 when its T flag is set.
	HasTEID bool
	TEID    uint32
	// HasSeq: v1 when any of its E, S, PN flags is set (the optional
	// fields are there), v2 and GTP' always.
	HasSeq bool
	Seq    uint32
	// NPDU and NextExt are v1's optional N-PDU number and next extension
	// header type.
	NPDU    uint8
	NextExt uint8
	// Flags is the first byte as sent.
	Flags uint8
	// Piggyback: a v2 message with another message after it.
	Piggyback bool
	// HeaderLen is the header's size with its extension headers: where
	// the IEs (or a G-PDU's packet) start.
	HeaderLen int
}

// IE is one information element: v1's TV and TLV ones and v2's TLIV ones
// (Instance is 0 for v1).
type IE struct {
	Type     uint8
	Instance uint8
	Value    []byte
}

// Message is a parsed message: its header, its IEs, and for a G-PDU (or
// a message whose IEs are not GTP's) the payload after the header.
type Message struct {
	Header
	IEs     []IE
	Payload []byte
	// Size is the message's length in the datagram; what follows (a
	// piggybacked message) is not part of it.
	Size int
}

// ErrShort is a datagram too short for the header it starts.
var ErrShort = errors.New("GTP message is shorter than its header")

// v1TVLen are the value lengths of GTPv1's TV information elements
// (types below 128, TS 29.060 7.7); a type not listed cannot be stepped
// over, so a message holding one is refused.
var v1TVLen = [128]int8{
	1: 1, 2: 8, 3: 6, 4: 4, 5: 4, 8: 1, 9: 28, 11: 1, 12: 3, 13: 1, 14: 1, 15: 1,
	16: 4, 17: 4, 18: 5, 19: 1, 20: 1, 21: 1, 22: 9, 23: 1, 24: 1, 25: 2, 26: 2,
	27: 2, 28: 2, 29: 1, 126: 1, 127: 4,
}

// ParseHeader reads b's header.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < 4 {
		return h, ErrShort
	}
	h.Flags = b[0]
	h.Version = b[0] >> 5
	h.Type = b[1]
	h.Length = binary.BigEndian.Uint16(b[2:])
	if b[0]&0x10 == 0 && h.Version < 2 {
		// Protocol type 0: GTP' [M: a version 2 header is always taken
		// as GTPv2-C, whose bit 4 is the piggyback flag].
		h.Prime = true
	}
	switch {
	case h.Prime:
		if len(b) < 6 {
			return h, ErrShort
		}
		h.HasSeq, h.Seq = true, uint32(binary.BigEndian.Uint16(b[4:]))
		h.HeaderLen = 6
		if int(h.Length)+6 > len(b) {
			return h, fmt.Errorf("GTP' length %d is past the datagram's end", h.Length)
		}
	case h.Version == 1:
		if len(b) < 8 {
			return h, ErrShort
		}
		h.HasTEID, h.TEID = true, binary.BigEndian.Uint32(b[4:])
		h.HeaderLen = 8
		if int(h.Length)+8 > len(b) {
			return h, fmt.Errorf("GTPv1 length %d is past the datagram's end", h.Length)
		}
		if b[0]&0x07 != 0 {
			if h.Length < 4 {
				return h, ErrShort
			}
			h.HasSeq = b[0]&0x02 != 0
			h.Seq = uint32(binary.BigEndian.Uint16(b[8:]))
			h.NPDU, h.NextExt = b[10], b[11]
			h.HeaderLen = 12
			end := 8 + int(h.Length)
			for next := h.NextExt; next != 0 && b[0]&0x04 != 0; {
				if h.HeaderLen >= end {
					return h, errors.New("GTPv1 extension header past the message's end")
				}
				n := int(b[h.HeaderLen]) * 4
				if n == 0 || h.HeaderLen+n > end {
					return h, errors.New("GTPv1 extension header of a bad length")
				}
				next = b[h.HeaderLen+n-1]
				h.HeaderLen += n
			}
		}
	case h.Version == 2:
		h.Piggyback = b[0]&0x10 != 0
		h.HasTEID = b[0]&0x08 != 0
		h.HeaderLen = 8
		if h.HasTEID {
			h.HeaderLen = 12
		}
		if int(h.Length) < h.HeaderLen-4 || len(b) < h.HeaderLen {
			return h, ErrShort
		}
		if int(h.Length)+4 > len(b) {
			return h, fmt.Errorf("GTPv2 length %d is past the datagram's end", h.Length)
		}
		o := 4
		if h.HasTEID {
			h.TEID = binary.BigEndian.Uint32(b[4:])
			o = 8
		}
		h.HasSeq, h.Seq = true, uint32(b[o])<<16|uint32(b[o+1])<<8|uint32(b[o+2])
	default:
		return h, fmt.Errorf("GTP version %d is not supported", h.Version)
	}
	return h, nil
}

// Size is the message's length as its header gives it.
func (h *Header) Size() int {
	switch {
	case h.Prime:
		return 6 + int(h.Length)
	case h.Version == 1:
		return 8 + int(h.Length)
	}
	return 4 + int(h.Length)
}

// Parse reads the message at the start of b: its header and IEs (none
// for a G-PDU, whose packet is Payload). Values alias b.
func Parse(b []byte) (*Message, error) {
	m := &Message{}
	return m, m.parse(b)
}

func (m *Message) parse(b []byte) error {
	h, err := ParseHeader(b)
	if err != nil {
		return err
	}
	m.Header, m.IEs, m.Payload = h, m.IEs[:0], nil
	m.Size = h.Size()
	if h.HeaderLen > m.Size {
		return ErrShort
	}
	body := b[h.HeaderLen:m.Size]
	if !h.Prime && h.Version == 1 && h.Type == GPDU {
		m.Payload = body
		return nil
	}
	if h.Version == 2 && !h.Prime {
		for len(body) > 0 {
			if len(body) < 4 {
				return errors.New("GTPv2 IE header past the message's end")
			}
			n := int(binary.BigEndian.Uint16(body[1:]))
			if 4+n > len(body) {
				return fmt.Errorf("GTPv2 IE %d of length %d past the message's end", body[0], n)
			}
			m.IEs = append(m.IEs, IE{Type: body[0], Instance: body[3] & 0x0f, Value: body[4 : 4+n : 4+n]})
			body = body[4+n:]
		}
		return nil
	}
	for len(body) > 0 {
		t := body[0]
		var n, o int
		if t < 128 {
			n, o = int(v1TVLen[t]), 1
			if n == 0 {
				return fmt.Errorf("GTPv1 TV IE %d of unknown length", t)
			}
		} else {
			if len(body) < 3 {
				return errors.New("GTPv1 TLV IE header past the message's end")
			}
			n, o = int(binary.BigEndian.Uint16(body[1:])), 3
		}
		if o+n > len(body) {
			return fmt.Errorf("GTPv1 IE %d past the message's end", t)
		}
		m.IEs = append(m.IEs, IE{Type: t, Value: body[o : o+n : o+n]})
		body = body[o+n:]
	}
	return nil
}

// Check reports whether b starts with a well-formed GTP message, without
// keeping what it read (the profile's per-datagram check).
func Check(b []byte) error {
	var m Message
	var ies [16]IE
	m.IEs = ies[:0]
	return m.parse(b)
}

// Find is the n-th (from 0) IE of type t and instance inst (v2; 0 for v1).
func (m *Message) Find(t, inst uint8, n int) (IE, bool) {
	for _, ie := range m.IEs {
		if ie.Type == t && ie.Instance == inst {
			if n == 0 {
				return ie, true
			}
			n--
		}
	}
	return IE{}, false
}

// Count is the number of IEs of type t (any instance) or, with t < 0, of
// all.
func (m *Message) Count(t int) int {
	if t < 0 {
		return len(m.IEs)
	}
	n := 0
	for _, ie := range m.IEs {
		if int(ie.Type) == t {
			n++
		}
	}
	return n
}

// Append appends m built again (its header fields, its IEs or payload)
// to dst: the length field is computed, flags follow the fields set.
// A v1 message's extension headers are not kept [M].
func (m *Message) Append(dst []byte) []byte {
	start := len(dst)
	switch {
	case m.Prime:
		dst = append(dst, m.Version<<5|0x0e, m.Type, 0, 0, byte(m.Seq>>8), byte(m.Seq))
	case m.Version == 1:
		f := byte(0x30)
		if m.HasSeq {
			f |= 0x02
		}
		if m.NPDU != 0 {
			f |= 0x01
		}
		dst = append(dst, f, m.Type, 0, 0, byte(m.TEID>>24), byte(m.TEID>>16), byte(m.TEID>>8), byte(m.TEID))
		if f&0x03 != 0 {
			dst = append(dst, byte(m.Seq>>8), byte(m.Seq), m.NPDU, 0)
		}
	default:
		f := byte(0x40)
		if m.HasTEID {
			f |= 0x08
		}
		dst = append(dst, f, m.Type, 0, 0)
		if m.HasTEID {
			dst = binary.BigEndian.AppendUint32(dst, m.TEID)
		}
		dst = append(dst, byte(m.Seq>>16), byte(m.Seq>>8), byte(m.Seq), 0)
	}
	if m.Version == 1 && !m.Prime && m.Type == GPDU {
		dst = append(dst, m.Payload...)
	} else {
		for _, ie := range m.IEs {
			dst = AppendIE(dst, m.Version, m.Prime, ie)
		}
	}
	fixed := 4
	if m.Prime {
		fixed = 6
	} else if m.Version == 1 {
		fixed = 8
	}
	binary.BigEndian.PutUint16(dst[start+2:], uint16(len(dst)-start-fixed))
	return dst
}

// AppendIE appends ie encoded for a message of version v: v2's TLIV, v1's
// TV (types below 128, the value padded or cut to its fixed length) or
// TLV.
func AppendIE(dst []byte, v uint8, prime bool, ie IE) []byte {
	if v == 2 && !prime {
		dst = append(dst, ie.Type, byte(len(ie.Value)>>8), byte(len(ie.Value)), ie.Instance&0x0f)
		return append(dst, ie.Value...)
	}
	if ie.Type < 128 {
		n := int(v1TVLen[ie.Type])
		dst = append(dst, ie.Type)
		val := ie.Value[:min(n, len(ie.Value))]
		dst = append(dst, val...)
		for i := len(val); i < n; i++ {
			dst = append(dst, 0)
		}
		return dst
	}
	dst = append(dst, ie.Type, byte(len(ie.Value)>>8), byte(len(ie.Value)))
	return append(dst, ie.Value...)
}

// KnownTV reports whether v1 type t (below 128) has a known length: an
// IE a rule adds must be one.
func KnownTV(t uint8) bool { return t >= 128 || v1TVLen[t] != 0 }

// Echo builds an Echo Request of version 1 (GTPv1-C: the sequence number
// flag set, TEID 0) or 2 (GTPv2-C: no TEID, a Recovery IE with restart
// counter 0, which TS 29.274 requires in the request).
func Echo(version int, seq uint32) []byte {
	if version == 1 {
		m := Message{Header: Header{Version: 1, Type: EchoRequest, HasSeq: true, Seq: seq & 0xffff}}
		return m.Append(make([]byte, 0, 12))
	}
	m := Message{Header: Header{Version: 2, Type: EchoRequest, Seq: seq & 0xffffff},
		IEs: []IE{{Type: IEv2Recovery, Value: []byte{0}}}}
	return m.Append(make([]byte, 0, 13))
}

// EchoAnswers reports whether b is the Echo Response to the request of
// version and seq; the error says what else it is.
func EchoAnswers(b []byte, version int, seq uint32) error {
	if len(b) < 8 {
		return fmt.Errorf("GTP answer of %d bytes is too short", len(b))
	}
	if v := int(b[0] >> 5); v != version {
		return fmt.Errorf("GTP answer of version %d to a GTPv%d Echo Request", v, version)
	}
	if b[1] != EchoResponse {
		return fmt.Errorf("GTP answer of message type %d, not an Echo Response", b[1])
	}
	var got uint32
	if version == 1 {
		if len(b) < 12 || b[0]&0x02 == 0 {
			return errors.New("GTPv1 Echo Response without a sequence number")
		}
		got, seq = uint32(binary.BigEndian.Uint16(b[8:])), seq&0xffff
	} else {
		got, seq = uint32(b[4])<<16|uint32(b[5])<<8|uint32(b[6]), seq&0xffffff
	}
	if got != seq {
		return fmt.Errorf("GTP Echo Response to sequence number %d, not %d", got, seq)
	}
	return nil
}

// Answer builds the response of type typ to request req: the same
// version, sequence number and (v1) TEID 0 [M: a real peer answers with
// the TEID the request's sender gave, which this codec does not track],
// with ies.
func Answer(req *Message, typ uint8, ies ...IE) []byte {
	m := Message{Header: Header{Version: req.Version, Prime: req.Prime, Type: typ, HasSeq: req.HasSeq, Seq: req.Seq}, IEs: ies}
	if req.Version == 2 && req.HasTEID {
		m.HasTEID = true
	}
	return m.Append(nil)
}

// TBCD decodes telephony BCD digits (IMSI, MSISDN): two digits a byte,
// low nibble first, 0xf filling.
func TBCD(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		for _, d := range [2]byte{c & 0x0f, c >> 4} {
			if d > 9 {
				return s.String()
			}
			s.WriteByte('0' + d)
		}
	}
	return s.String()
}

// EncodeTBCD is TBCD's inverse; false when s has a non-digit.
func EncodeTBCD(s string) ([]byte, bool) {
	out := make([]byte, 0, (len(s)+1)/2)
	for i := 0; i < len(s); i += 2 {
		lo := s[i]
		hi := byte('0' + 0x0f)
		if i+1 < len(s) {
			hi = s[i+1]
		}
		if lo < '0' || lo > '9' || (hi < '0' || hi > '9') && hi != '0'+0x0f {
			return nil, false
		}
		out = append(out, (hi-'0')<<4|(lo-'0'))
	}
	return out, true
}

// APN decodes an APN's length-prefixed labels into a dotted name.
func APN(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		n := int(b[0])
		if n+1 > len(b) {
			s.Write(b[1:])
			break
		}
		if s.Len() > 0 {
			s.WriteByte('.')
		}
		s.Write(b[1 : 1+n])
		b = b[1+n:]
	}
	return s.String()
}

// EncodeAPN is APN's inverse.
func EncodeAPN(name string) []byte {
	var out []byte
	for _, l := range strings.Split(name, ".") {
		out = append(append(out, byte(len(l))), l...)
	}
	return out
}
