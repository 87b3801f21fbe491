package mqtt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Type is a control packet's type, the high nibble of its first byte.
type Type uint8

// The control packet types (MQTT 3.1.1 section 2.2.1; AUTH is 5.0's).
const (
	CONNECT     Type = 1
	CONNACK     Type = 2
	PUBLISH     Type = 3
	PUBACK      Type = 4
	PUBREC      Type = 5
	PUBREL      Type = 6
	PUBCOMP     Type = 7
	SUBSCRIBE   Type = 8
	SUBACK      Type = 9
	UNSUBSCRIBE Type = 10
	UNSUBACK    Type = 11
	PINGREQ     Type = 12
	PINGRESP    Type = 13
	DISCONNECT  Type = 14
	AUTH        Type = 15
)

var typeNames = [...]string{"", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL",
	"PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}

// String is the name BIG-IP's MQTT::type returns.
func (t Type) String() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return fmt.Sprintf("RESERVED%d", t)
}

// TypeOf reads a type name as rules write it (any case).
func TypeOf(name string) (Type, bool) {
	for i, n := range typeNames {
		if i > 0 && len(n) == len(name) && equalFold(n, name) {
			return Type(i), true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// MaxRemaining is the largest remaining length four length bytes can
// carry (section 2.2.3): 256 MB less one.
const MaxRemaining = 268435455

// Protocol levels in CONNECT.
const (
	V31  = 3 // MQTT 3.1, protocol name "MQIsdp"
	V311 = 4
	V5   = 5
)

// Error is a malformed packet: what is wrong with it. The proxy resets
// the connection that sent it.
type Error struct{ Msg string }

func (e *Error) Error() string { return "mqtt: " + e.Msg }

func malformed(format string, a ...any) error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// ErrTooLarge is a packet whose remaining length passes the proxy's
// bound.
var ErrTooLarge = errors.New("mqtt: packet larger than the maximum")

// Subscription is one topic filter of a SUBSCRIBE (with its requested
// QoS, or 5.0's whole options byte) or an UNSUBSCRIBE (Options 0).
type Subscription struct {
	Topic   string
	Options uint8
}

// Packet is one decoded control packet. Fields that a type does not
// carry stay zero. Byte slices point into the buffer Decode was given
// until a rule replaces them.
type Packet struct {
	Type  Type
	Flags uint8 // the fixed header's low nibble

	// CONNECT
	ProtocolName    string
	ProtocolVersion uint8
	CleanSession    bool
	KeepAlive       uint16
	ClientID        string
	Will            bool
	WillQoS         uint8
	WillRetain      bool
	WillProps       []byte
	WillTopic       string
	WillMessage     []byte
	HasUsername     bool
	Username        string
	HasPassword     bool
	Password        []byte

	// CONNACK
	SessionPresent bool
	ReturnCode     uint8

	// PUBLISH (QoS, Dup and Retain are the fixed header's flags)
	Topic    string
	QoS      uint8
	Dup      bool
	Retain   bool
	PacketID uint16
	Payload  []byte

	// SUBSCRIBE, UNSUBSCRIBE
	Subscriptions []Subscription
	// SUBACK (and 5.0's UNSUBACK)
	ReturnCodes []byte

	// Props is a 5.0 variable header's property block, kept verbatim
	// (without its length).
	Props []byte
	// Rest is what follows the packet id of an acknowledgement, or the
	// whole variable header of a 5.0 DISCONNECT or AUTH: a reason code
	// and properties passed on as they came.
	Rest []byte
}

// Frame says how long the packet at the start of b is: n > 0 when it is
// all there, 0 when more bytes are needed. A remaining length past max
// (or past MaxRemaining, or spelt in more than four bytes) is an error.
func Frame(b []byte, max int) (n int, err error) {
	if len(b) < 2 {
		return 0, nil
	}
	rem, mul := 0, 1
	for i := 1; ; i++ {
		if i > 4 {
			return 0, malformed("remaining length longer than four bytes")
		}
		if i >= len(b) {
			return 0, nil
		}
		c := b[i]
		rem += int(c&0x7f) * mul
		mul <<= 7
		if c&0x80 == 0 {
			if max > 0 && rem > max {
				return 0, ErrTooLarge
			}
			n = i + 1 + rem
			if len(b) < n {
				return 0, nil
			}
			return n, nil
		}
	}
}

// Decode reads a whole packet (as Frame delimited it). version is the
// connection's protocol level, from its CONNECT (0 before one: a CONNECT
// says its own).
func Decode(raw []byte, version uint8) (*Packet, error) {
	p := new(Packet)
	return p, p.Decode(raw, version)
}

// Decode fills p from raw; see the function Decode.
func (p *Packet) Decode(raw []byte, version uint8) error {
	*p = Packet{}
	n, err := Frame(raw, 0)
	if err != nil {
		return err
	}
	if n == 0 || n != len(raw) {
		return malformed("truncated packet")
	}
	p.Type, p.Flags = Type(raw[0]>>4), raw[0]&0x0f
	i := 1
	for raw[i]&0x80 != 0 {
		i++
	}
	d := decoder{b: raw[i+1:]}
	switch p.Type {
	case PUBLISH:
		p.QoS, p.Dup, p.Retain = (p.Flags>>1)&3, p.Flags&8 != 0, p.Flags&1 != 0
		if p.QoS == 3 {
			return malformed("PUBLISH with QoS 3")
		}
	case PUBREL, SUBSCRIBE, UNSUBSCRIBE:
		if p.Flags != 2 {
			return malformed("%s with flags %#x", p.Type, p.Flags)
		}
	case 0:
		return malformed("reserved packet type 0")
	case AUTH:
		if version != V5 {
			return malformed("AUTH before MQTT 5.0")
		}
		fallthrough
	default:
		if p.Flags != 0 {
			return malformed("%s with flags %#x", p.Type, p.Flags)
		}
	}
	if p.Type == CONNECT {
		return p.decodeConnect(&d)
	}
	if version == 0 {
		version = V311
	}
	v5 := version == V5
	switch p.Type {
	case CONNACK:
		f := d.byte()
		p.ReturnCode = d.byte()
		if f&^1 != 0 {
			return malformed("CONNACK flags %#x", f)
		}
		p.SessionPresent = f&1 != 0
		if v5 && d.left() > 0 {
			p.Props = d.props()
		}
	case PUBLISH:
		p.Topic = d.str()
		if p.QoS > 0 {
			p.PacketID = d.u16()
			if d.err == nil && p.PacketID == 0 {
				return malformed("PUBLISH with packet id 0")
			}
		}
		if v5 {
			p.Props = d.props()
		}
		p.Payload = d.rest()
	case PUBACK, PUBREC, PUBREL, PUBCOMP, UNSUBACK:
		p.PacketID = d.u16()
		if p.Type == UNSUBACK && v5 {
			p.Props = d.props()
			p.ReturnCodes = d.rest()
		} else {
			p.Rest = d.rest()
			if !v5 && len(p.Rest) > 0 {
				return malformed("%s longer than its packet id", p.Type)
			}
		}
	case SUBSCRIBE, UNSUBSCRIBE:
		p.PacketID = d.u16()
		if d.err == nil && p.PacketID == 0 {
			return malformed("%s with packet id 0", p.Type)
		}
		if v5 {
			p.Props = d.props()
		}
		for d.err == nil && d.left() > 0 {
			s := Subscription{Topic: d.str()}
			if p.Type == SUBSCRIBE {
				s.Options = d.byte()
				if d.err == nil && (s.Options > 2 && !v5 || s.Options&3 == 3 || s.Options&0xc0 != 0) {
					return malformed("SUBSCRIBE options %#x", s.Options)
				}
			}
			p.Subscriptions = append(p.Subscriptions, s)
		}
		if d.err == nil && len(p.Subscriptions) == 0 {
			return malformed("%s without a topic filter", p.Type)
		}
	case SUBACK:
		p.PacketID = d.u16()
		if v5 {
			p.Props = d.props()
		}
		p.ReturnCodes = d.rest()
	case PINGREQ, PINGRESP:
	case DISCONNECT, AUTH:
		if v5 {
			p.Rest = d.rest()
		}
	}
	if d.err != nil {
		return malformed("%s: %v", p.Type, d.err)
	}
	if d.left() != 0 {
		return malformed("%s with %d bytes past its end", p.Type, d.left())
	}
	return nil
}

func (p *Packet) decodeConnect(d *decoder) error {
	p.ProtocolName = d.str()
	p.ProtocolVersion = d.byte()
	f := d.byte()
	p.KeepAlive = d.u16()
	if d.err != nil {
		return malformed("CONNECT: %v", d.err)
	}
	switch {
	case p.ProtocolName == "MQTT" && (p.ProtocolVersion == V311 || p.ProtocolVersion == V5):
	case p.ProtocolName == "MQIsdp" && p.ProtocolVersion == V31:
	default:
		// A protocol the proxy cannot parse resets the client [M].
		return malformed("CONNECT protocol %q level %d", p.ProtocolName, p.ProtocolVersion)
	}
	v5 := p.ProtocolVersion == V5
	if f&1 != 0 {
		return malformed("CONNECT reserved flag set")
	}
	p.CleanSession = f&2 != 0
	p.Will, p.WillQoS, p.WillRetain = f&4 != 0, (f>>3)&3, f&0x20 != 0
	p.HasPassword, p.HasUsername = f&0x40 != 0, f&0x80 != 0
	if !p.Will && (p.WillQoS != 0 || p.WillRetain) || p.WillQoS == 3 {
		return malformed("CONNECT will flags %#x", f)
	}
	if p.HasPassword && !p.HasUsername && !v5 {
		return malformed("CONNECT password without a user name")
	}
	if v5 {
		p.Props = d.props()
	}
	p.ClientID = d.str()
	if p.Will {
		if v5 {
			p.WillProps = d.props()
		}
		p.WillTopic = d.str()
		p.WillMessage = d.bin()
	}
	if p.HasUsername {
		p.Username = d.str()
	}
	if p.HasPassword {
		p.Password = d.bin()
	}
	if d.err != nil {
		return malformed("CONNECT: %v", d.err)
	}
	if d.left() != 0 {
		return malformed("CONNECT with %d bytes past its end", d.left())
	}
	return nil
}

type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("shorter than its fields")

func (d *decoder) left() int { return len(d.b) }

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.err = errShort
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if v := d.take(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (d *decoder) bin() []byte {
	n := d.u16()
	if d.err != nil {
		return nil
	}
	return d.take(int(n))
}

func (d *decoder) str() string {
	b := d.bin()
	if d.err == nil && (!utf8.Valid(b) || containsNUL(b)) {
		d.err = errors.New("a string is not well-formed UTF-8")
	}
	return string(b)
}

func containsNUL(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// props reads a 5.0 property block: a variable byte integer length and
// that many bytes.
func (d *decoder) props() []byte {
	n, mul := 0, 1
	for i := 0; ; i++ {
		if i == 4 {
			d.err = errors.New("property length longer than four bytes")
			return nil
		}
		c := d.byte()
		if d.err != nil {
			return nil
		}
		n += int(c&0x7f) * mul
		mul <<= 7
		if c&0x80 == 0 {
			break
		}
	}
	return d.take(n)
}

func (d *decoder) rest() []byte { return d.take(len(d.b)) }

// Encode appends p, as version's packet, to dst.
func (p *Packet) Encode(dst []byte, version uint8) []byte {
	if p.Type == CONNECT {
		version = p.ProtocolVersion
	}
	v5 := version == V5
	var body []byte
	flags := p.Flags
	switch p.Type {
	case CONNECT:
		body = appendStr(body, p.ProtocolName)
		body = append(body, p.ProtocolVersion)
		var f uint8
		if p.CleanSession {
			f |= 2
		}
		if p.Will {
			f |= 4 | p.WillQoS<<3
			if p.WillRetain {
				f |= 0x20
			}
		}
		if p.HasPassword {
			f |= 0x40
		}
		if p.HasUsername {
			f |= 0x80
		}
		body = append(body, f)
		body = binary.BigEndian.AppendUint16(body, p.KeepAlive)
		if v5 {
			body = appendProps(body, p.Props)
		}
		body = appendStr(body, p.ClientID)
		if p.Will {
			if v5 {
				body = appendProps(body, p.WillProps)
			}
			body = appendStr(body, p.WillTopic)
			body = appendStr(body, string(p.WillMessage))
		}
		if p.HasUsername {
			body = appendStr(body, p.Username)
		}
		if p.HasPassword {
			body = appendStr(body, string(p.Password))
		}
		flags = 0
	case CONNACK:
		var f uint8
		if p.SessionPresent {
			f = 1
		}
		body = append(body, f, p.ReturnCode)
		if v5 {
			body = appendProps(body, p.Props)
		}
		flags = 0
	case PUBLISH:
		flags = p.QoS << 1
		if p.Dup {
			flags |= 8
		}
		if p.Retain {
			flags |= 1
		}
		body = appendStr(body, p.Topic)
		if p.QoS > 0 {
			body = binary.BigEndian.AppendUint16(body, p.PacketID)
		}
		if v5 {
			body = appendProps(body, p.Props)
		}
		body = append(body, p.Payload...)
	case PUBACK, PUBREC, PUBREL, PUBCOMP, UNSUBACK:
		body = binary.BigEndian.AppendUint16(body, p.PacketID)
		if p.Type == UNSUBACK && v5 {
			body = appendProps(body, p.Props)
			body = append(body, p.ReturnCodes...)
		} else if v5 {
			body = append(body, p.Rest...)
		}
	case SUBSCRIBE, UNSUBSCRIBE:
		body = binary.BigEndian.AppendUint16(body, p.PacketID)
		if v5 {
			body = appendProps(body, p.Props)
		}
		for _, s := range p.Subscriptions {
			body = appendStr(body, s.Topic)
			if p.Type == SUBSCRIBE {
				body = append(body, s.Options)
			}
		}
	case SUBACK:
		body = binary.BigEndian.AppendUint16(body, p.PacketID)
		if v5 {
			body = appendProps(body, p.Props)
		}
		body = append(body, p.ReturnCodes...)
	case DISCONNECT, AUTH:
		if v5 {
			body = append(body, p.Rest...)
		}
	}
	switch p.Type {
	case PUBREL, SUBSCRIBE, UNSUBSCRIBE:
		flags = 2
	case PUBLISH:
	default:
		flags = 0
	}
	dst = append(dst, uint8(p.Type)<<4|flags)
	dst = appendVarint(dst, len(body))
	return append(dst, body...)
}

func appendStr(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendProps(b, props []byte) []byte {
	b = appendVarint(b, len(props))
	return append(b, props...)
}

func appendVarint(b []byte, n int) []byte {
	for {
		c := uint8(n & 0x7f)
		n >>= 7
		if n > 0 {
			c |= 0x80
		}
		b = append(b, c)
		if n == 0 {
			return b
		}
	}
}

// Check says whether p can be encoded as a well-formed packet: what a
// rule's edit or a packet a rule makes must pass before it is sent.
func (p *Packet) Check(version uint8) error {
	raw := p.Encode(nil, version)
	if len(raw) > 5+MaxRemaining {
		return ErrTooLarge
	}
	for _, s := range []string{p.ProtocolName, p.ClientID, p.WillTopic, p.Username, p.Topic} {
		if len(s) > 65535 {
			return malformed("a string longer than 65535 bytes")
		}
	}
	if len(p.WillMessage) > 65535 || len(p.Password) > 65535 {
		return malformed("a field longer than 65535 bytes")
	}
	var q Packet
	return q.Decode(raw, version)
}

// Reader frames packets off a stream. Its buffer keeps a partial packet
// across read errors (a read deadline the caller sets to watch for idle
// connections), so Next may be called again after one.
type Reader struct {
	R   io.Reader
	Max int // bound on a packet's remaining length; 0: MaxRemaining

	buf        []byte
	start, end int
}

// Next returns the next whole packet. The slice is valid until the
// next call.
func (r *Reader) Next() ([]byte, error) {
	if r.buf == nil {
		r.buf = make([]byte, 4096)
	}
	for {
		n, err := Frame(r.buf[r.start:r.end], r.Max)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			pkt := r.buf[r.start : r.start+n]
			r.start += n
			return pkt, nil
		}
		if r.start > 0 && r.start == r.end {
			r.start, r.end = 0, 0
		}
		if r.end == len(r.buf) {
			need := 2 * len(r.buf)
			if r.start > 0 && r.end-r.start < len(r.buf)/2 {
				need = len(r.buf)
			}
			nb := make([]byte, need)
			r.end = copy(nb, r.buf[r.start:r.end])
			r.start = 0
			r.buf = nb
		}
		m, err := r.R.Read(r.buf[r.end:])
		r.end += m
		if m > 0 {
			continue
		}
		if err == io.EOF && r.end > r.start {
			return nil, malformed("connection closed inside a packet")
		}
		if err != nil {
			return nil, err
		}
	}
}

// Buffered is how many bytes read off the stream wait in the reader
// (a partial packet, or packets not yet returned).
func (r *Reader) Buffered() int { return r.end - r.start }
