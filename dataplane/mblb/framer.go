package mblb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/iiop"
)

// Framing errors. They end the connection whose stream cannot be framed:
// once a boundary is lost, nothing after it can be trusted.
var (
	// ErrTooLarge means a message announced or accumulated more bytes than
	// the engine's MaxMessageSize.
	ErrTooLarge = errors.New("mblb: message larger than the maximum message size")
	// ErrBadLength means a length field announced a message shorter than
	// its own header, so the stream cannot be split.
	ErrBadLength = errors.New("mblb: length field smaller than the message header")
)

// Framer finds where the first message of a byte stream ends. The engine
// calls Frame with the bytes collected since the previous message ended;
// after a complete answer it removes exactly size bytes before the next
// call, otherwise it only appends, so a framer may remember how far it has
// already scanned.
type Framer interface {
	// Frame returns the size of the message at the start of buf and
	// whether buf already holds all of it. size is 0 while unknown; a
	// known size lets the engine read a large message straight into a
	// buffer of the right size.
	Frame(buf []byte) (size int, complete bool, err error)
}

// Mode says where message boundaries come from.
type Mode int

// The framing modes.
const (
	// PerRead treats what one read returns as one message: "one packet is
	// one transaction", as the field test did. It holds only for messages
	// below one segment and clients that wait for each answer.
	PerRead Mode = iota
	// Length reads the message size from a length field in its header.
	Length
	// Delimiter ends each message at (and including) a byte sequence.
	Delimiter
	// Rule lets an iRule find the boundaries (TCP::release and
	// TCP::notify in CLIENT_DATA and SERVER_DATA); sessions then need a
	// Rule.
	Rule
	// HTTP frames HTTP/1.1 requests and responses (the http profile):
	// each request is a message, and each response ends where HTTP says,
	// knowing which request it answers (HEAD).
	HTTP
	// SIP frames SIP messages (the sip profile, sip.go); a session
	// routes them itself (sipsession.go) instead of pairing answers.
	SIP
	// IIOP frames GIOP messages (the iiop profile, dataplane/iiop); a
	// session routes replies by request id (iiopsession.go).
	IIOP
)

// String names the mode as logs and errors show it.
func (m Mode) String() string {
	switch m {
	case PerRead:
		return "per-read"
	case Length:
		return "length"
	case Delimiter:
		return "delimiter"
	case Rule:
		return "rule"
	case HTTP:
		return "http"
	case SIP:
		return "sip"
	case IIOP:
		return "iiop"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// LengthField describes a binary header carrying the message size, the
// common shape of financial and telecom protocols (ISO 8583, SMPP, Diameter).
type LengthField struct {
	// Offset is the number of header bytes before the length field.
	Offset int
	// Size is the field's width in bytes: 1, 2, 4 or 8.
	Size int
	// LittleEndian reads the field least significant byte first; the
	// default is network order.
	LittleEndian bool
	// Adjust is added to the field's value, for protocols that count a
	// trailer or leave out a fixed part.
	Adjust int64
	// IncludesHeader says the value counts the whole message, header
	// included; otherwise it counts the bytes after the length field.
	IncludesHeader bool
}

// Framing is the declarative way to find message boundaries: an openltm
// extension that needs no iRule.
type Framing struct {
	Mode      Mode
	Length    LengthField
	Delimiter []byte
	// HTTP is the http profile's settings, for Mode HTTP.
	HTTP HTTPOptions
	// SIP is the sip profile's settings, for Mode SIP.
	SIP SIPOptions
	// IIOP is the iiop profile's settings, for Mode IIOP.
	IIOP IIOPOptions
}

// Validate reports a setting that could never frame a stream, so a bad
// profile is refused at commit instead of resetting every client.
func (f Framing) Validate() error {
	switch f.Mode {
	case PerRead, Rule:
		return nil
	case IIOP:
		if f.IIOP.Timeout < 0 {
			return fmt.Errorf("mblb: IIOP timeout %v is negative", f.IIOP.Timeout)
		}
		return nil
	case SIP:
		if f.SIP.MaxHeaderSize < 0 {
			return fmt.Errorf("mblb: SIP max header size %d is negative", f.SIP.MaxHeaderSize)
		}
		return nil
	case HTTP:
		if f.HTTP.MaxHeaderSize < 0 {
			return fmt.Errorf("mblb: max header size %d is negative", f.HTTP.MaxHeaderSize)
		}
		if f.HTTP.MaxRequests < 0 {
			return fmt.Errorf("mblb: max requests %d is negative", f.HTTP.MaxRequests)
		}
		return nil
	case Length:
		l := f.Length
		switch l.Size {
		case 1, 2, 4, 8:
		default:
			return fmt.Errorf("mblb: length field size %d: must be 1, 2, 4 or 8", l.Size)
		}
		if l.Offset < 0 || l.Offset > 1<<16 {
			return fmt.Errorf("mblb: length field offset %d: must be 0 to 65536", l.Offset)
		}
		return nil
	case Delimiter:
		if len(f.Delimiter) == 0 {
			return errors.New("mblb: delimiter framing needs a non-empty delimiter")
		}
		return nil
	}
	return fmt.Errorf("mblb: unknown framing mode %d", int(f.Mode))
}

// New returns a framer for one stream. Length and per-read framers keep no
// state; a delimiter framer remembers how far it scanned, so each stream
// needs its own.
func (f Framing) New(maxSize int) (Framer, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	switch f.Mode {
	case Length:
		return &LengthFramer{Field: f.Length, Max: maxSize}, nil
	case Delimiter:
		return &DelimiterFramer{Delim: bytes.Clone(f.Delimiter), Max: maxSize}, nil
	case Rule:
		return nil, nil
	case SIP:
		return &SIPFramer{Max: maxSize, MaxHeader: f.SIP.MaxHeaderSize}, nil
	case IIOP:
		return iiop.Framer{Max: maxSize}, nil
	case HTTP:
		return &httpx.RequestFramer{MaxHeader: f.HTTP.MaxHeaderSize, Max: maxSize, MaxFields: f.HTTP.maxHeaderCount(), Stream: true}, nil
	}
	return PerReadFramer{}, nil
}

// PerReadFramer makes every read one message.
type PerReadFramer struct{}

// Frame takes everything: the engine hands it exactly one read's bytes.
func (PerReadFramer) Frame(buf []byte) (int, bool, error) {
	return len(buf), len(buf) > 0, nil
}

// LengthFramer splits a stream by a length field.
type LengthFramer struct {
	Field LengthField
	// Max is the largest message accepted; 0 means no limit.
	Max int
}

// Frame reads the length field once enough header bytes are present.
func (l *LengthFramer) Frame(buf []byte) (int, bool, error) {
	f := &l.Field
	hdr := f.Offset + f.Size
	if len(buf) < hdr {
		return 0, false, nil
	}
	p := buf[f.Offset:hdr]
	var v uint64
	switch f.Size {
	case 1:
		v = uint64(p[0])
	case 2:
		if f.LittleEndian {
			v = uint64(binary.LittleEndian.Uint16(p))
		} else {
			v = uint64(binary.BigEndian.Uint16(p))
		}
	case 4:
		if f.LittleEndian {
			v = uint64(binary.LittleEndian.Uint32(p))
		} else {
			v = uint64(binary.BigEndian.Uint32(p))
		}
	case 8:
		if f.LittleEndian {
			v = binary.LittleEndian.Uint64(p)
		} else {
			v = binary.BigEndian.Uint64(p)
		}
	default:
		return 0, false, fmt.Errorf("mblb: length field size %d", f.Size)
	}
	// Work in int64 with explicit overflow checks: a hostile header must
	// give an error, never a wrapped size.
	const limit = int64(1) << 40
	if v > uint64(limit) {
		return 0, false, ErrTooLarge
	}
	total := int64(v) + f.Adjust
	if !f.IncludesHeader {
		total += int64(hdr)
	}
	if total < int64(hdr) || total <= 0 {
		return 0, false, ErrBadLength
	}
	if (l.Max > 0 && total > int64(l.Max)) || total > limit {
		return 0, false, ErrTooLarge
	}
	n := int(total)
	return n, len(buf) >= n, nil
}

// DelimiterFramer ends each message after a delimiter.
type DelimiterFramer struct {
	Delim []byte
	// Max is the largest message accepted; 0 means no limit.
	Max     int
	scanned int
}

// Frame scans only the bytes it has not seen yet, so a large message
// arriving in many reads costs linear time.
func (d *DelimiterFramer) Frame(buf []byte) (int, bool, error) {
	from := d.scanned - len(d.Delim) + 1
	if from < 0 {
		from = 0
	}
	if from > len(buf) {
		from = 0
	}
	if i := bytes.Index(buf[from:], d.Delim); i >= 0 {
		n := from + i + len(d.Delim)
		d.scanned = 0
		if d.Max > 0 && n > d.Max {
			return 0, false, ErrTooLarge
		}
		return n, true, nil
	}
	d.scanned = len(buf)
	if d.Max > 0 && len(buf) > d.Max {
		return 0, false, ErrTooLarge
	}
	return 0, false, nil
}
