// Package iiop reads GIOP, the message protocol of CORBA's IIOP (GIOP over
// TCP, OMG CORBA 3.x part 2, chapter 15), as far as a message-based load
// balancer needs: where each message ends, what kind it is, its request
// id, whether a request waits for a reply, and its object key. It never
// unmarshals operation arguments and never allocates: every result points
// into the message it was read from.
//
// The iiop profile's virtual (dataplane/mblb, iiopsession.go) frames the
// client's and the members' streams with Framer and balances each Request
// and LocateRequest with Parse's results.
package iiop

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderSize is the size of every GIOP message header: "GIOP", the
// version, the flags, the message type and the body size.
const HeaderSize = 12

// Type is a GIOP message type (the header's eighth byte).
type Type uint8

// The GIOP message types. Fragment exists from GIOP 1.1.
const (
	Request Type = iota
	Reply
	CancelRequest
	LocateRequest
	LocateReply
	CloseConnection
	MessageError
	Fragment
)

var typeNames = [...]string{"Request", "Reply", "CancelRequest", "LocateRequest", "LocateReply", "CloseConnection", "MessageError", "Fragment"}

// String names the type as the specification does.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// The header's flags byte (GIOP 1.1 and later; in 1.0 the byte is the
// byte-order boolean alone).
const (
	FlagLittleEndian  = 0x01
	FlagMoreFragments = 0x02
)

// Errors of a stream that is not GIOP or breaks its rules. Each ends the
// connection: once a boundary is lost nothing after it can be trusted.
var (
	ErrMagic     = errors.New("iiop: message does not start with GIOP")
	ErrVersion   = errors.New("iiop: GIOP version is not 1.0, 1.1 or 1.2")
	ErrFlags     = errors.New("iiop: flags not valid for the GIOP version")
	ErrType      = errors.New("iiop: message type not valid for the GIOP version")
	ErrTooLarge  = errors.New("iiop: message larger than the maximum message size")
	ErrTruncated = errors.New("iiop: message body does not hold the fields its type needs")
)

// Header is a GIOP message header.
type Header struct {
	Major, Minor uint8
	Flags        uint8
	Type         Type
	// Size is the body's size, the header not included.
	Size uint32
}

// Little reports whether the message is little-endian.
func (h Header) Little() bool { return h.Flags&FlagLittleEndian != 0 }

// More reports whether more fragments of the message follow (GIOP 1.1+).
func (h Header) More() bool { return h.Flags&FlagMoreFragments != 0 }

func (h Header) order() binary.ByteOrder {
	if h.Little() {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// ParseHeader reads the header at the start of b, which holds at least
// HeaderSize bytes, and checks it against its version: a 1.0 byte-order
// byte other than 0 or 1, a flag bit GIOP does not define, or a Fragment
// in 1.0 is refused.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, ErrTruncated
	}
	if b[0] != 'G' || b[1] != 'I' || b[2] != 'O' || b[3] != 'P' {
		return Header{}, ErrMagic
	}
	h := Header{Major: b[4], Minor: b[5], Flags: b[6], Type: Type(b[7])}
	if h.Major != 1 || h.Minor > 2 {
		return Header{}, ErrVersion
	}
	switch {
	case h.Minor == 0 && h.Flags > 1:
		return Header{}, ErrFlags
	case h.Flags&^(FlagLittleEndian|FlagMoreFragments) != 0:
		return Header{}, ErrFlags
	}
	if h.Type > Fragment || h.Minor == 0 && h.Type == Fragment {
		return Header{}, ErrType
	}
	h.Size = h.order().Uint32(b[8:12])
	return h, nil
}

// Framer finds where each GIOP message of a stream ends (it satisfies
// the message balancer's framer). It keeps no state.
type Framer struct {
	// Max is the largest message accepted, header included; 0: no limit.
	Max int
}

// Frame returns the size of the message at the start of buf and whether
// buf holds all of it; a bad header is an error.
func (f Framer) Frame(buf []byte) (int, bool, error) {
	if len(buf) < HeaderSize {
		// Refuse a stream that is not GIOP at its first bytes rather
		// than wait for a header that will never make sense.
		const magic = "GIOP"
		for i := 0; i < len(buf) && i < len(magic); i++ {
			if buf[i] != magic[i] {
				return 0, false, ErrMagic
			}
		}
		return 0, false, nil
	}
	h, err := ParseHeader(buf)
	if err != nil {
		return 0, false, err
	}
	total := int64(h.Size) + HeaderSize
	if f.Max > 0 && total > int64(f.Max) {
		return 0, false, ErrTooLarge
	}
	n := int(total)
	return n, len(buf) >= n, nil
}

// Message is what a balancer needs of one GIOP message.
type Message struct {
	Header
	// HasID: the message carries a request id (every type but
	// CloseConnection, MessageError and a GIOP 1.1 Fragment).
	HasID     bool
	RequestID uint32
	// IDAt is where the request id lies in the message (0 without
	// one), for SetRequestID.
	IDAt int
	// Expects: a Request that waits for a Reply (1.0/1.1
	// response_expected; 1.2 response_flags SYNC_WITH_SERVER or
	// SYNC_WITH_TARGET), or any LocateRequest.
	Expects bool
	// Key is a Request's or LocateRequest's object key (for 1.2, a
	// TargetAddress of KeyAddr; nil for ProfileAddr and ReferenceAddr).
	// It points into the message.
	Key []byte
	// Partial: the message is a first fragment whose key lies beyond it
	// (Key nil), or a Fragment.
	Partial bool
}

// cdr reads CDR primitives from a GIOP message, aligned relative to the
// message's start as GIOP requires.
type cdr struct {
	b   []byte
	off int
	o   binary.ByteOrder
	bad bool
}

func (c *cdr) align(n int) {
	if r := c.off % n; r != 0 {
		c.off += n - r
	}
}

func (c *cdr) ulong() uint32 {
	c.align(4)
	if c.bad || c.off+4 > len(c.b) {
		c.bad = true
		return 0
	}
	v := c.o.Uint32(c.b[c.off:])
	c.off += 4
	return v
}

func (c *cdr) ushort() uint16 {
	c.align(2)
	if c.bad || c.off+2 > len(c.b) {
		c.bad = true
		return 0
	}
	v := c.o.Uint16(c.b[c.off:])
	c.off += 2
	return v
}

func (c *cdr) octet() byte {
	if c.bad || c.off >= len(c.b) {
		c.bad = true
		return 0
	}
	v := c.b[c.off]
	c.off++
	return v
}

func (c *cdr) skip(n int) {
	if c.bad || n < 0 || c.off+n > len(c.b) {
		c.bad = true
		return
	}
	c.off += n
}

// octets reads a sequence<octet>: its length, then its bytes.
func (c *cdr) octets() []byte {
	n := c.ulong()
	if c.bad || uint64(n) > uint64(len(c.b)-c.off) {
		c.bad = true
		return nil
	}
	v := c.b[c.off : c.off+int(n)]
	c.off += int(n)
	return v
}

// serviceContexts skips an IOP::ServiceContextList.
func (c *cdr) serviceContexts() {
	n := c.ulong()
	for i := uint32(0); i < n && !c.bad; i++ {
		c.ulong()  // context_id
		c.octets() // context_data
	}
}

// Parse reads a whole message (as Framer cut it): its header, and for the
// types that have them its request id, whether a reply is expected and
// its object key. A body too short for the fields its type must carry (or
// a 1.2 TargetAddress of an unknown disposition) is ErrTruncated; a first
// fragment (more-fragments set) may end after the request id, and then
// has no Key and is Partial.
func Parse(b []byte) (Message, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return Message{}, err
	}
	if int64(len(b)) != int64(h.Size)+HeaderSize {
		return Message{}, ErrTruncated
	}
	m := Message{Header: h}
	c := cdr{b: b, off: HeaderSize, o: h.order()}
	v12 := h.Minor >= 2
	idOK := false
	id := func() {
		c.align(4)
		at := c.off
		m.RequestID, m.HasID = c.ulong(), true
		idOK = !c.bad
		if idOK {
			m.IDAt = at
		}
	}
	switch h.Type {
	case CloseConnection, MessageError:
		return m, nil
	case Fragment:
		m.Partial = true
		if v12 { // FragmentHeader_1_2: the request id
			id()
		}
	case CancelRequest, LocateReply:
		id()
	case Reply:
		if !v12 {
			c.serviceContexts()
		}
		id()
	case Request:
		if v12 {
			id()
			m.Expects = c.octet()&0x01 != 0
			c.skip(3)
			m.Key = c.target()
		} else {
			c.serviceContexts()
			id()
			m.Expects = c.octet() != 0
			if h.Minor == 1 {
				c.skip(3)
			}
			m.Key = c.octets()
		}
	case LocateRequest:
		m.Expects = true
		id()
		if v12 {
			m.Key = c.target()
		} else {
			m.Key = c.octets()
		}
	}
	if c.bad {
		// A first fragment may end anywhere after its request id: its
		// key (if any) is then in a later fragment.
		if h.More() && idOK {
			m.Key, m.Partial = nil, true
			return m, nil
		}
		return Message{}, ErrTruncated
	}
	return m, nil
}

// target reads a GIOP 1.2 TargetAddress: the object key of KeyAddr, nil
// for ProfileAddr and ReferenceAddr (not used for persistence [M]).
func (c *cdr) target() []byte {
	switch disp := c.ushort(); {
	case c.bad:
		return nil
	case disp == 0: // KeyAddr
		return c.octets()
	case disp > 2:
		c.bad = true
	}
	return nil
}

// SetRequestID writes id as the request id of b, the message m was
// parsed from, in the message's byte order; m.RequestID keeps the id it
// had. A message without a request id (CloseConnection, MessageError, a
// GIOP 1.1 Fragment) is left as it is. A proxy that shares one member
// connection among clients gives each request an id of its own there
// and the reply its client's id back.
func (m *Message) SetRequestID(b []byte, id uint32) {
	if m.IDAt >= HeaderSize && m.IDAt+4 <= len(b) {
		m.order().PutUint32(b[m.IDAt:], id)
	}
}
