// Package tftp reads TFTP packets (RFC 1350, with the option extension
// of RFC 2347 and the blksize, timeout and tsize options of RFC 2348 and
// RFC 2349) for the tftp profile of UDP virtuals: the virtual must know a
// request (which opens a transfer at the member's port 69) from the
// transfer's own datagrams (which go to the member's transfer port).
// Options are read, never changed: the member and the client agree on
// them through the virtual.
package tftp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Opcode is a TFTP packet's first two bytes.
type Opcode uint16

// The opcodes of RFC 1350 and RFC 2347 (OACK).
const (
	RRQ   Opcode = 1
	WRQ   Opcode = 2
	DATA  Opcode = 3
	ACK   Opcode = 4
	ERROR Opcode = 5
	OACK  Opcode = 6
)

var opNames = [...]string{RRQ: "RRQ", WRQ: "WRQ", DATA: "DATA", ACK: "ACK", ERROR: "ERROR", OACK: "OACK"}

func (o Opcode) String() string {
	if o >= RRQ && o <= OACK {
		return opNames[o]
	}
	return "opcode " + strconv.Itoa(int(o))
}

// Op is a packet's opcode without parsing the rest, so the relay can
// tell a request from a transfer datagram at no cost; 0 when b is too
// short to hold one.
func Op(b []byte) Opcode {
	if len(b) < 2 {
		return 0
	}
	return Opcode(binary.BigEndian.Uint16(b))
}

// IsRequest reports whether b opens a transfer (RRQ or WRQ).
func IsRequest(b []byte) bool {
	op := Op(b)
	return op == RRQ || op == WRQ
}

// Option is one RFC 2347 option of a request or an OACK, as sent (the
// name's case kept).
type Option struct {
	Name, Value string
}

// Packet is one TFTP packet read in full: what tests, logs and rules
// look at. Only the fields of its opcode are set.
type Packet struct {
	Op       Opcode
	Filename string   // RRQ, WRQ
	Mode     string   // RRQ, WRQ: netascii, octet or mail, as sent
	Options  []Option // RRQ, WRQ, OACK
	Block    uint16   // DATA, ACK: wraps past 65535 on long transfers
	Data     []byte   // DATA: aliases the datagram
	ErrCode  uint16   // ERROR
	ErrMsg   string   // ERROR
}

// The errors of Parse; a request the virtual cannot read is dropped, as
// the member would drop it.
var (
	ErrShort   = errors.New("tftp: packet too short")
	ErrOpcode  = errors.New("tftp: unknown opcode")
	ErrField   = errors.New("tftp: field not terminated by a zero byte")
	ErrMode    = errors.New("tftp: unknown transfer mode")
	ErrOption  = errors.New("tftp: option without a value")
	ErrEmpty   = errors.New("tftp: empty file name")
	ErrTooLong = errors.New("tftp: ACK or DATA header too long")
)

// Parse reads one packet. The strings it returns are copies; Data
// aliases b.
func Parse(b []byte) (Packet, error) {
	var p Packet
	if len(b) < 2 {
		return p, ErrShort
	}
	p.Op = Op(b)
	rest := b[2:]
	switch p.Op {
	case RRQ, WRQ:
		var err error
		var fields []string
		if fields, err = strs(rest); err != nil {
			return p, err
		}
		if len(fields) < 2 {
			return p, ErrShort
		}
		if fields[0] == "" {
			return p, ErrEmpty
		}
		p.Filename, p.Mode = fields[0], fields[1]
		switch strings.ToLower(p.Mode) {
		case "netascii", "octet", "mail":
		default:
			return p, fmt.Errorf("%w %q", ErrMode, p.Mode)
		}
		if p.Options, err = options(fields[2:]); err != nil {
			return p, err
		}
	case OACK:
		fields, err := strs(rest)
		if err != nil {
			return p, err
		}
		if p.Options, err = options(fields); err != nil {
			return p, err
		}
	case DATA:
		if len(rest) < 2 {
			return p, ErrShort
		}
		p.Block, p.Data = binary.BigEndian.Uint16(rest), rest[2:]
	case ACK:
		if len(rest) < 2 {
			return p, ErrShort
		}
		if len(rest) > 2 {
			return p, ErrTooLong
		}
		p.Block = binary.BigEndian.Uint16(rest)
	case ERROR:
		if len(rest) < 3 {
			return p, ErrShort
		}
		p.ErrCode = binary.BigEndian.Uint16(rest)
		msg := rest[2:]
		i := bytes.IndexByte(msg, 0)
		if i < 0 {
			return p, ErrField
		}
		p.ErrMsg = string(msg[:i])
	default:
		return p, fmt.Errorf("%w %d", ErrOpcode, p.Op)
	}
	return p, nil
}

// strs splits zero-terminated strings; the last must be terminated.
func strs(b []byte) ([]string, error) {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, ErrField
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out, nil
}

func options(f []string) ([]Option, error) {
	if len(f)%2 != 0 {
		return nil, ErrOption
	}
	var out []Option
	for i := 0; i < len(f); i += 2 {
		out = append(out, Option{Name: f[i], Value: f[i+1]})
	}
	return out, nil
}

// Option returns the value of option name (case-insensitive, as RFC 2347
// asks), and whether the packet has it.
func (p *Packet) Option(name string) (string, bool) {
	for _, o := range p.Options {
		if strings.EqualFold(o.Name, name) {
			return o.Value, true
		}
	}
	return "", false
}

// BlockSize is the transfer's block size: the blksize option (RFC 2348,
// 8 to 65464) when the packet carries a valid one, else 512.
func (p *Packet) BlockSize() int {
	if v, ok := p.Option("blksize"); ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 8 && n <= 65464 {
			return n
		}
	}
	return 512
}

// Append builds a packet from p's fields, for members and clients in
// tests and tools.
func Append(dst []byte, p *Packet) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(p.Op))
	switch p.Op {
	case RRQ, WRQ:
		dst = append(append(dst, p.Filename...), 0)
		dst = append(append(dst, p.Mode...), 0)
		fallthrough
	case OACK:
		for _, o := range p.Options {
			dst = append(append(dst, o.Name...), 0)
			dst = append(append(dst, o.Value...), 0)
		}
	case DATA:
		dst = binary.BigEndian.AppendUint16(dst, p.Block)
		dst = append(dst, p.Data...)
	case ACK:
		dst = binary.BigEndian.AppendUint16(dst, p.Block)
	case ERROR:
		dst = binary.BigEndian.AppendUint16(dst, p.ErrCode)
		dst = append(append(dst, p.ErrMsg...), 0)
	}
	return dst
}
