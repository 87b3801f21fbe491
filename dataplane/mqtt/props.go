package mqtt

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// PropKind is how a 5.0 property's value is spelt on the wire (section
// 2.2.2.2).
type PropKind uint8

// The property value kinds.
const (
	PropByte PropKind = iota + 1
	PropU16
	PropU32
	PropVarint
	PropString
	PropBinary
	PropPair // user_property: a name and a value
)

// PropInfo describes one 5.0 property, so that rules can name it and
// an edit can refuse a value or a packet the specification does not
// allow.
type PropInfo struct {
	ID   byte
	Name string // the specification's name in lower case with underscores [M]
	Kind PropKind
	// Min and Max bound a number (Max 0: the kind's own bound).
	Min, Max uint32
	// In are the packet types whose variable header may carry it.
	In []Type
}

var acks = []Type{PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK, UNSUBACK, DISCONNECT, AUTH}

// Props are the 5.0 properties, by identifier.
var Props = []PropInfo{
	{0x01, "payload_format_indicator", PropByte, 0, 1, []Type{PUBLISH}},
	{0x02, "message_expiry_interval", PropU32, 0, 0, []Type{PUBLISH}},
	{0x03, "content_type", PropString, 0, 0, []Type{PUBLISH}},
	{0x08, "response_topic", PropString, 0, 0, []Type{PUBLISH}},
	{0x09, "correlation_data", PropBinary, 0, 0, []Type{PUBLISH}},
	{0x0b, "subscription_identifier", PropVarint, 1, 268435455, []Type{PUBLISH, SUBSCRIBE}},
	{0x11, "session_expiry_interval", PropU32, 0, 0, []Type{CONNECT, CONNACK, DISCONNECT}},
	{0x12, "assigned_client_identifier", PropString, 0, 0, []Type{CONNACK}},
	{0x13, "server_keep_alive", PropU16, 0, 0, []Type{CONNACK}},
	{0x15, "authentication_method", PropString, 0, 0, []Type{CONNECT, CONNACK, AUTH}},
	{0x16, "authentication_data", PropBinary, 0, 0, []Type{CONNECT, CONNACK, AUTH}},
	{0x17, "request_problem_information", PropByte, 0, 1, []Type{CONNECT}},
	{0x18, "will_delay_interval", PropU32, 0, 0, nil}, // the will's own properties
	{0x19, "request_response_information", PropByte, 0, 1, []Type{CONNECT}},
	{0x1a, "response_information", PropString, 0, 0, []Type{CONNACK}},
	{0x1c, "server_reference", PropString, 0, 0, []Type{CONNACK, DISCONNECT}},
	{0x1f, "reason_string", PropString, 0, 0, append([]Type{CONNACK}, acks...)},
	{0x21, "receive_maximum", PropU16, 1, 0, []Type{CONNECT, CONNACK}},
	{0x22, "topic_alias_maximum", PropU16, 0, 0, []Type{CONNECT, CONNACK}},
	{0x23, "topic_alias", PropU16, 1, 0, []Type{PUBLISH}},
	{0x24, "maximum_qos", PropByte, 0, 1, []Type{CONNACK}},
	{0x25, "retain_available", PropByte, 0, 1, []Type{CONNACK}},
	{0x26, "user_property", PropPair, 0, 0, []Type{CONNECT, CONNACK, PUBLISH, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, PUBACK, PUBREC, PUBREL, PUBCOMP, DISCONNECT, AUTH}},
	{0x27, "maximum_packet_size", PropU32, 1, 0, []Type{CONNECT, CONNACK}},
	{0x28, "wildcard_subscription_available", PropByte, 0, 1, []Type{CONNACK}},
	{0x29, "subscription_identifier_available", PropByte, 0, 1, []Type{CONNACK}},
	{0x2a, "shared_subscription_available", PropByte, 0, 1, []Type{CONNACK}},
}

// PropByName finds a property by its name.
func PropByName(name string) (*PropInfo, bool) {
	for i := range Props {
		if Props[i].Name == name {
			return &Props[i], true
		}
	}
	return nil, false
}

// propByID finds a property by its identifier.
func propByID(id byte) (*PropInfo, bool) {
	for i := range Props {
		if Props[i].ID == id {
			return &Props[i], true
		}
	}
	return nil, false
}

// Allowed reports whether t's variable header may carry the property.
func (pi *PropInfo) Allowed(t Type) bool {
	for _, x := range pi.In {
		if x == t {
			return true
		}
	}
	return false
}

// Bounds are a number property's smallest and largest values.
func (pi *PropInfo) Bounds() (lo, hi uint32) {
	hi = pi.Max
	if hi == 0 {
		switch pi.Kind {
		case PropByte:
			hi = 255
		case PropU16:
			hi = 65535
		case PropU32:
			hi = 1<<32 - 1
		case PropVarint:
			hi = 268435455
		}
	}
	return pi.Min, hi
}

// Prop is one property of a block: Num for the number kinds, Value for
// strings and binary data, Key and Value for a user property.
type Prop struct {
	Info       *PropInfo
	Num        uint32
	Key, Value string
}

// ParseProps splits a property block (Packet.Props: without its length)
// into its properties, in order; an unknown identifier or a value cut
// short is an error.
func ParseProps(b []byte) ([]Prop, error) {
	var out []Prop
	str := func() (string, error) {
		if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
			return "", malformed("property value cut short")
		}
		n := int(binary.BigEndian.Uint16(b))
		s := string(b[2 : 2+n])
		b = b[2+n:]
		return s, nil
	}
	for len(b) > 0 {
		pi, ok := propByID(b[0])
		if !ok {
			return nil, malformed("unknown property %#x", b[0])
		}
		b = b[1:]
		p := Prop{Info: pi}
		var err error
		switch pi.Kind {
		case PropByte:
			if len(b) < 1 {
				return nil, malformed("property value cut short")
			}
			p.Num, b = uint32(b[0]), b[1:]
		case PropU16:
			if len(b) < 2 {
				return nil, malformed("property value cut short")
			}
			p.Num, b = uint32(binary.BigEndian.Uint16(b)), b[2:]
		case PropU32:
			if len(b) < 4 {
				return nil, malformed("property value cut short")
			}
			p.Num, b = binary.BigEndian.Uint32(b), b[4:]
		case PropVarint:
			n, mul, i := 0, 1, 0
			for ; ; i++ {
				if i == 4 || i >= len(b) {
					return nil, malformed("property value cut short")
				}
				n += int(b[i]&0x7f) * mul
				mul <<= 7
				if b[i]&0x80 == 0 {
					break
				}
			}
			p.Num, b = uint32(n), b[i+1:]
		case PropString, PropBinary:
			p.Value, err = str()
		case PropPair:
			if p.Key, err = str(); err == nil {
				p.Value, err = str()
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// AppendProps encodes props as a block (without its length, which
// Encode writes), checking each value as an edit must.
func AppendProps(b []byte, props []Prop) ([]byte, error) {
	for _, p := range props {
		pi := p.Info
		b = append(b, pi.ID)
		switch pi.Kind {
		case PropByte, PropU16, PropU32, PropVarint:
			if lo, hi := pi.Bounds(); p.Num < lo || p.Num > hi {
				return nil, fmt.Errorf("%s must be %d to %d", pi.Name, lo, hi)
			}
		}
		switch pi.Kind {
		case PropByte:
			b = append(b, byte(p.Num))
		case PropU16:
			b = binary.BigEndian.AppendUint16(b, uint16(p.Num))
		case PropU32:
			b = binary.BigEndian.AppendUint32(b, p.Num)
		case PropVarint:
			b = appendVarint(b, int(p.Num))
		case PropString, PropBinary, PropPair:
			vals := []string{p.Value}
			if pi.Kind == PropPair {
				vals = []string{p.Key, p.Value}
			}
			for _, s := range vals {
				if len(s) > 65535 {
					return nil, fmt.Errorf("%s longer than 65535 bytes", pi.Name)
				}
				if pi.Kind != PropBinary && (!utf8.ValidString(s) || containsNUL([]byte(s))) {
					return nil, fmt.Errorf("%s is not valid UTF-8 without U+0000", pi.Name)
				}
				b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
				b = append(b, s...)
			}
		}
	}
	return b, nil
}
