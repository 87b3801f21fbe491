package iiop

import "encoding/binary"

// Builders of the messages a test client or member sends (cmd/tcpkit's
// iiop modes and the tests). Each appends one whole message to dst.

// enc writes CDR aligned relative to the message's start.
type enc struct {
	b     []byte
	start int
	o     binary.AppendByteOrder
	po    binary.ByteOrder
}

func newEnc(dst []byte, minor uint8, little bool, t Type) *enc {
	e := &enc{b: dst, start: len(dst), o: binary.BigEndian, po: binary.BigEndian}
	flags := uint8(0)
	if little {
		flags = FlagLittleEndian
		e.o, e.po = binary.LittleEndian, binary.LittleEndian
	}
	e.b = append(e.b, 'G', 'I', 'O', 'P', 1, minor, flags, byte(t), 0, 0, 0, 0)
	return e
}

func (e *enc) align(n int) {
	for (len(e.b)-e.start)%n != 0 {
		e.b = append(e.b, 0)
	}
}

func (e *enc) ulong(v uint32) {
	e.align(4)
	e.b = e.o.AppendUint32(e.b, v)
}

func (e *enc) ushort(v uint16) {
	e.align(2)
	e.b = e.o.AppendUint16(e.b, v)
}

func (e *enc) octets(v []byte) {
	e.ulong(uint32(len(v)))
	e.b = append(e.b, v...)
}

func (e *enc) str(s string) {
	e.ulong(uint32(len(s) + 1))
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
}

// done fills in the body size.
func (e *enc) done() []byte {
	e.po.PutUint32(e.b[e.start+8:], uint32(len(e.b)-e.start-HeaderSize))
	return e.b
}

// body aligns a 1.2 body on 8 as GIOP requires, then appends it.
func (e *enc) body(minor uint8, b []byte) {
	if len(b) == 0 {
		return
	}
	if minor >= 2 {
		e.align(8)
	}
	e.b = append(e.b, b...)
}

// AppendRequest appends a Request of GIOP 1.minor for object key, with
// operation op and body (already marshalled arguments); expects asks for
// a reply. No service contexts; an empty principal before 1.2.
func AppendRequest(dst []byte, minor uint8, little bool, id uint32, expects bool, key []byte, op string, body []byte) []byte {
	e := newEnc(dst, minor, little, Request)
	if minor >= 2 {
		e.ulong(id)
		flags := byte(0)
		if expects {
			flags = 3 // SYNC_WITH_TARGET
		}
		e.b = append(e.b, flags, 0, 0, 0)
		e.ushort(0) // KeyAddr
		e.octets(key)
		e.str(op)
		e.ulong(0) // service contexts
	} else {
		e.ulong(0) // service contexts
		e.ulong(id)
		b := byte(0)
		if expects {
			b = 1
		}
		e.b = append(e.b, b)
		if minor == 1 {
			e.b = append(e.b, 0, 0, 0)
		}
		e.octets(key)
		e.str(op)
		e.ulong(0) // requesting_principal
	}
	e.body(minor, body)
	return e.done()
}

// AppendLocateRequest appends a LocateRequest for object key.
func AppendLocateRequest(dst []byte, minor uint8, little bool, id uint32, key []byte) []byte {
	e := newEnc(dst, minor, little, LocateRequest)
	e.ulong(id)
	if minor >= 2 {
		e.ushort(0)
	}
	e.octets(key)
	return e.done()
}

// AppendReply appends a Reply to request id with reply status (0,
// NO_EXCEPTION) and body.
func AppendReply(dst []byte, minor uint8, little bool, id, status uint32, body []byte) []byte {
	e := newEnc(dst, minor, little, Reply)
	if minor >= 2 {
		e.ulong(id)
		e.ulong(status)
		e.ulong(0) // service contexts
	} else {
		e.ulong(0)
		e.ulong(id)
		e.ulong(status)
	}
	e.body(minor, body)
	return e.done()
}

// AppendLocateReply appends a LocateReply with status (1, OBJECT_HERE).
func AppendLocateReply(dst []byte, minor uint8, little bool, id, status uint32) []byte {
	e := newEnc(dst, minor, little, LocateReply)
	e.ulong(id)
	e.ulong(status)
	return e.done()
}

// AppendCancelRequest appends a CancelRequest for request id.
func AppendCancelRequest(dst []byte, minor uint8, little bool, id uint32) []byte {
	e := newEnc(dst, minor, little, CancelRequest)
	e.ulong(id)
	return e.done()
}

// AppendHeaderOnly appends a CloseConnection or MessageError.
func AppendHeaderOnly(dst []byte, minor uint8, little bool, t Type) []byte {
	return newEnc(dst, minor, little, t).done()
}

// AppendFragment appends a Fragment carrying part; for 1.2 the fragment
// header's request id comes first. more sets more-fragments.
func AppendFragment(dst []byte, minor uint8, little bool, id uint32, more bool, part []byte) []byte {
	e := newEnc(dst, minor, little, Fragment)
	if more {
		e.b[e.start+6] |= FlagMoreFragments
	}
	if minor >= 2 {
		e.ulong(id)
	}
	e.b = append(e.b, part...)
	return e.done()
}

// Split cuts a whole message into a first fragment of the first n body
// bytes (more-fragments set) and the rest of its body, for a Fragment.
// GIOP 1.1 and later only.
func Split(msg []byte, n int) (first []byte, rest []byte) {
	first = append([]byte(nil), msg[:HeaderSize+n]...)
	first[6] |= FlagMoreFragments
	o := Header{Flags: first[6]}.order()
	o.PutUint32(first[8:], uint32(n))
	return first, msg[HeaderSize+n:]
}

// RequestOperation returns a Request's operation name (for members that
// answer by operation), "" when the message is not a whole Request.
func RequestOperation(b []byte) string {
	m, err := Parse(b)
	if err != nil || m.Type != Request || m.Partial {
		return ""
	}
	c := cdr{b: b, off: HeaderSize, o: m.order()}
	if m.Minor >= 2 {
		c.ulong()
		c.skip(4)
		c.target()
	} else {
		c.serviceContexts()
		c.ulong()
		c.skip(1)
		if m.Minor == 1 {
			c.skip(3)
		}
		c.octets()
	}
	op := c.octets()
	if c.bad || len(op) == 0 {
		return ""
	}
	return string(op[:len(op)-1])
}

// ReplyBody returns the body of a whole Reply after its header: what a
// member answered (a test member's name).
func ReplyBody(b []byte) []byte {
	m, err := Parse(b)
	if err != nil || m.Type != Reply {
		return nil
	}
	c := cdr{b: b, off: HeaderSize, o: m.order()}
	if m.Minor >= 2 {
		c.ulong()
		c.ulong()
		c.serviceContexts()
		if c.off < len(b) {
			c.align(8)
		}
	} else {
		c.serviceContexts()
		c.ulong()
		c.ulong()
	}
	if c.bad || c.off > len(b) {
		return nil
	}
	return b[c.off:]
}

// Reply statuses and completion statuses of a system exception.
const (
	ReplySystemException  = 2 // Reply: SYSTEM_EXCEPTION
	LocateSystemException = 4 // GIOP 1.2 LocateReply: LOC_SYSTEM_EXCEPTION
	LocateUnknownObject   = 0 // LocateReply: UNKNOWN_OBJECT
	CompletedYes          = 0
	CompletedNo           = 1
	CompletedMaybe        = 2
	CommFailure           = "IDL:omg.org/CORBA/COMM_FAILURE:1.0"
)

// AppendSystemException appends the answer a proxy gives to request id
// of a client when it cannot pass the request on: a Reply with
// SYSTEM_EXCEPTION (repository id repo, minor code and completion
// status), or for a LocateRequest (locate) a GIOP 1.2 LocateReply with
// LOC_SYSTEM_EXCEPTION, or before 1.2, which has no such status, one
// with UNKNOWN_OBJECT.
func AppendSystemException(dst []byte, minor uint8, little bool, id uint32, locate bool, repo string, code, completed uint32) []byte {
	if locate && minor < 2 {
		return AppendLocateReply(dst, minor, little, id, LocateUnknownObject)
	}
	var e *enc
	switch {
	case locate:
		e = newEnc(dst, minor, little, LocateReply)
		e.ulong(id)
		e.ulong(LocateSystemException)
	case minor >= 2:
		e = newEnc(dst, minor, little, Reply)
		e.ulong(id)
		e.ulong(ReplySystemException)
		e.ulong(0) // service contexts
		e.align(8)
	default:
		e = newEnc(dst, minor, little, Reply)
		e.ulong(0) // service contexts
		e.ulong(id)
		e.ulong(ReplySystemException)
	}
	e.str(repo)
	e.ulong(code)
	e.ulong(completed)
	return e.done()
}

// SystemException reads a Reply with SYSTEM_EXCEPTION (or a 1.2
// LocateReply with LOC_SYSTEM_EXCEPTION): its repository id, minor code
// and completion status; false for any other message.
func SystemException(b []byte) (repo string, code, completed uint32, ok bool) {
	m, err := Parse(b)
	if err != nil || m.Partial {
		return "", 0, 0, false
	}
	c := cdr{b: b, off: HeaderSize, o: m.order()}
	switch {
	case m.Type == LocateReply && m.Minor >= 2:
		c.ulong()
		if c.ulong() != LocateSystemException {
			return "", 0, 0, false
		}
	case m.Type == Reply && m.Minor >= 2:
		c.ulong()
		if c.ulong() != ReplySystemException {
			return "", 0, 0, false
		}
		c.serviceContexts()
		c.align(8)
	case m.Type == Reply:
		c.serviceContexts()
		c.ulong()
		if c.ulong() != ReplySystemException {
			return "", 0, 0, false
		}
	default:
		return "", 0, 0, false
	}
	name := c.octets()
	code, completed = c.ulong(), c.ulong()
	if c.bad || c.off > len(b) || len(name) == 0 || name[len(name)-1] != 0 {
		return "", 0, 0, false
	}
	return string(name[:len(name)-1]), code, completed, true
}
