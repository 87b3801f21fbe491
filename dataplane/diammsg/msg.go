package diammsg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// The command codes and AVP codes of the base protocol that openltm reads
// or writes (RFC 6733).
const (
	CmdCapabilitiesExchange = 257 // CER/CEA
	CmdDeviceWatchdog       = 280 // DWR/DWA
	CmdDisconnectPeer       = 282 // DPR/DPA

	AVPSessionID         = 263
	AVPHostIPAddress     = 257
	AVPAuthAppID         = 258
	AVPAcctAppID         = 259
	AVPVendorSpecificApp = 260
	AVPOriginHost        = 264
	AVPVendorID          = 266
	AVPResultCode        = 268
	AVPProductName       = 269
	AVPDisconnectCause   = 273
	AVPErrorMessage      = 281
	AVPDestinationRealm  = 283
	AVPDestinationHost   = 293
	AVPOriginRealm       = 296

	FlagRequest      = 0x80 // the header's R flag
	FlagProxiable    = 0x40 // the header's P flag
	FlagError        = 0x20 // the header's E flag
	FlagRetransmit   = 0x10 // the header's T flag
	AVPFlagVendor    = 0x80 // the AVP's V flag
	AVPFlagMandatory = 0x40 // the AVP's M flag

	ResultSuccess         = 2001 // DIAMETER_SUCCESS
	ResultUnableToDeliver = 3002 // DIAMETER_UNABLE_TO_DELIVER
	ResultTooBusy         = 3004 // DIAMETER_TOO_BUSY
	AVPFlagProtected      = 0x20 // the AVP's P flag

	HeaderLen = 20
	// DefaultMax bounds a message read when the reader names no bound.
	DefaultMax = 1 << 20
)

// ResultNames names the Result-Codes a peer refusing a request is likely
// to send, for logs and errors.
var ResultNames = map[uint32]string{
	2001: "DIAMETER_SUCCESS", 3002: "DIAMETER_UNABLE_TO_DELIVER", 3004: "DIAMETER_TOO_BUSY",
	3010: "DIAMETER_UNKNOWN_PEER", 5004: "DIAMETER_INVALID_AVP_VALUE", 5005: "DIAMETER_MISSING_AVP",
	5010: "DIAMETER_NO_COMMON_APPLICATION", 5012: "DIAMETER_UNABLE_TO_COMPLY", 5017: "DIAMETER_NO_COMMON_SECURITY",
}

// Errors of framing and parsing. A stream whose header is bad cannot be
// followed past it.
var (
	ErrTooLarge = errors.New("Diameter message larger than the maximum message size")
	ErrBadAVP   = errors.New("Diameter message malformed (an AVP overruns it)")
)

// HeaderError is a header that is not a Diameter message's.
type HeaderError struct {
	Version byte
	Length  int
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("not a Diameter message (version %d, length %d)", e.Version, e.Length)
}

// AppendAVP appends one AVP (vendor 0: none), padded to 32 bits.
func AppendAVP(b []byte, code uint32, flags byte, vendor uint32, data []byte) []byte {
	hl := 8
	if vendor != 0 {
		flags |= AVPFlagVendor
		hl = 12
	} else {
		flags &^= AVPFlagVendor
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

// U32 is an Unsigned32 AVP's data.
func U32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// Address is an Address AVP's data: the address family (1 IPv4, 2 IPv6)
// and the address.
func Address(a netip.Addr) []byte {
	a = a.Unmap()
	if a.Is4() {
		return append([]byte{0, 1}, a.AsSlice()...)
	}
	return append([]byte{0, 2}, a.AsSlice()...)
}

// AddressOf reads an Address AVP's data; false when it is not an IPv4 or
// IPv6 address.
func AddressOf(d []byte) (netip.Addr, bool) {
	if len(d) < 2 || d[0] != 0 {
		return netip.Addr{}, false
	}
	switch {
	case d[1] == 1 && len(d) == 6:
		return netip.AddrFrom4([4]byte(d[2:])), true
	case d[1] == 2 && len(d) == 18:
		return netip.AddrFrom16([16]byte(d[2:])), true
	}
	return netip.Addr{}, false
}

// Build is a whole message: its header and the AVPs (as AppendAVP wrote
// them).
func Build(flags byte, code, app, hopByHop, endToEnd uint32, avps []byte) []byte {
	n := HeaderLen + len(avps)
	b := make([]byte, 0, n)
	b = append(b, 1, byte(n>>16), byte(n>>8), byte(n), flags, byte(code>>16), byte(code>>8), byte(code))
	b = binary.BigEndian.AppendUint32(b, app)
	b = binary.BigEndian.AppendUint32(b, hopByHop)
	b = binary.BigEndian.AppendUint32(b, endToEnd)
	return append(b, avps...)
}

// AVP is one AVP of a message; Data aliases the message, Off is where
// the AVP starts in it and Size its padded length.
type AVP struct {
	Code   uint32
	Flags  byte
	Vendor uint32
	Data   []byte
	Off    int
	Size   int
}

// Msg is a message that Parse checked; Raw is the whole message.
type Msg struct {
	Raw []byte
}

// Flags is the header's command flags (R, P, E, T).
func (m Msg) Flags() byte { return m.Raw[4] }

// Request says whether the R flag is set.
func (m Msg) Request() bool { return m.Raw[4]&FlagRequest != 0 }

// Code is the command code.
func (m Msg) Code() uint32 { return uint32(m.Raw[5])<<16 | uint32(m.Raw[6])<<8 | uint32(m.Raw[7]) }

// AppID is the application id.
func (m Msg) AppID() uint32 { return binary.BigEndian.Uint32(m.Raw[8:]) }

// HopByHop is the hop-by-hop identifier that pairs an answer with its
// request on one connection.
func (m Msg) HopByHop() uint32 { return binary.BigEndian.Uint32(m.Raw[12:]) }

// EndToEnd is the end-to-end identifier.
func (m Msg) EndToEnd() uint32 { return binary.BigEndian.Uint32(m.Raw[16:]) }

// SetHopByHop rewrites the hop-by-hop identifier in place.
func (m Msg) SetHopByHop(v uint32) { binary.BigEndian.PutUint32(m.Raw[12:], v) }

// Each calls fn on each top-level AVP until it returns false.
func (m Msg) Each(fn func(a AVP) bool) {
	for off := HeaderLen; off < len(m.Raw); {
		a, ok := avpAt(m.Raw, off)
		if !ok || !fn(a) {
			return
		}
		off += a.Size
	}
}

// Find is the first top-level AVP of code (vendor 0, or the vendor
// named); false when there is none.
func (m Msg) Find(code, vendor uint32) (AVP, bool) {
	var found AVP
	var ok bool
	m.Each(func(a AVP) bool {
		if a.Code == code && a.Vendor == vendor {
			found, ok = a, true
			return false
		}
		return true
	})
	return found, ok
}

// Get is the data of the first top-level AVP of code (vendor 0); nil when
// there is none.
func (m Msg) Get(code uint32) []byte {
	a, ok := m.Find(code, 0)
	if !ok {
		return nil
	}
	return a.Data
}

// avpAt reads the AVP at off of a checked message.
func avpAt(b []byte, off int) (AVP, bool) {
	body := b[off:]
	if len(body) < 8 {
		return AVP{}, false
	}
	a := AVP{Code: binary.BigEndian.Uint32(body), Flags: body[4], Off: off}
	l := int(body[5])<<16 | int(body[6])<<8 | int(body[7])
	hl := 8
	if a.Flags&AVPFlagVendor != 0 {
		hl = 12
		if len(body) < 12 {
			return AVP{}, false
		}
		a.Vendor = binary.BigEndian.Uint32(body[8:])
	}
	if l < hl || l > len(body) {
		return AVP{}, false
	}
	a.Data = body[hl:l:l]
	a.Size = min(len(body), (l+3)&^3)
	return a, true
}

// Parse checks that raw is one whole message, its AVPs within it.
func Parse(raw []byte) (Msg, error) {
	if len(raw) < HeaderLen {
		return Msg{}, &HeaderError{Length: len(raw)}
	}
	n := int(raw[1])<<16 | int(raw[2])<<8 | int(raw[3])
	if raw[0] != 1 || n != len(raw) || n%4 != 0 {
		return Msg{}, &HeaderError{Version: raw[0], Length: n}
	}
	for off := HeaderLen; off < len(raw); {
		a, ok := avpAt(raw, off)
		if !ok {
			return Msg{}, ErrBadAVP
		}
		off += a.Size
	}
	return Msg{Raw: raw}, nil
}

// Grouped reads a Grouped AVP's data as its AVPs; false when they do not
// fill it exactly.
func Grouped(data []byte) ([]AVP, bool) {
	var out []AVP
	for off := 0; off < len(data); {
		a, ok := avpAt(data, off)
		if !ok {
			return nil, false
		}
		out = append(out, a)
		off += a.Size
	}
	return out, true
}

// Replace returns m with its AVP at a (from Each or Find) carrying data
// instead, appended to dst; the header's length follows. dst may not
// alias m.Raw.
func (m Msg) Replace(dst []byte, a AVP, data []byte) []byte {
	dst = append(dst, m.Raw[:a.Off]...)
	dst = AppendAVP(dst, a.Code, a.Flags, a.Vendor, data)
	dst = append(dst, m.Raw[a.Off+a.Size:]...)
	return fixLength(dst)
}

// Delete returns m without its AVP at a, appended to dst.
func (m Msg) Delete(dst []byte, a AVP) []byte {
	dst = append(dst, m.Raw[:a.Off]...)
	dst = append(dst, m.Raw[a.Off+a.Size:]...)
	return fixLength(dst)
}

// Insert returns m with one more AVP at its end, appended to dst.
func (m Msg) Insert(dst []byte, code uint32, flags byte, vendor uint32, data []byte) []byte {
	dst = append(dst, m.Raw...)
	dst = AppendAVP(dst, code, flags, vendor, data)
	return fixLength(dst)
}

// Set returns m with the first AVP of code (vendor 0) carrying data, or
// with one added (flagged mandatory) when it has none.
func (m Msg) Set(dst []byte, code uint32, data []byte) []byte {
	if a, ok := m.Find(code, 0); ok {
		return m.Replace(dst, a, data)
	}
	return m.Insert(dst, code, AVPFlagMandatory, 0, data)
}

func fixLength(b []byte) []byte {
	n := len(b)
	b[1], b[2], b[3] = byte(n>>16), byte(n>>8), byte(n)
	return b
}

// Reader cuts a byte stream into whole messages on the header's length.
// A read that fails part way (a deadline) resumes where it stopped on
// the next call.
type Reader struct {
	R    io.Reader
	Max  int // bound on a message's length; 0: DefaultMax
	buf  []byte
	have int // bytes in hand from the message's start on
	used int // the bytes of the message last handed out
}

// Next returns the next message, valid until the following call: io.EOF
// at a clean end between messages, io.ErrUnexpectedEOF inside one, a
// *HeaderError or ErrTooLarge when the stream cannot be framed.
func (r *Reader) Next() ([]byte, error) {
	max := r.Max
	if max <= 0 {
		max = DefaultMax
	}
	if r.used > 0 {
		r.have = copy(r.buf, r.buf[r.used:r.have])
		r.used = 0
	}
	if len(r.buf) < 4096 {
		r.buf = make([]byte, 4096)
	}
	for {
		need := 4
		if r.have >= 4 {
			h := r.buf
			n := int(h[1])<<16 | int(h[2])<<8 | int(h[3])
			if h[0] != 1 || n < HeaderLen || n%4 != 0 {
				return nil, &HeaderError{Version: h[0], Length: n}
			}
			if n > max {
				return nil, ErrTooLarge
			}
			if r.have >= n {
				// The message is whole: hand it out, keep what follows.
				r.used = n
				return r.buf[:n:n], nil
			}
			need = n
			if len(r.buf) < n {
				nb := make([]byte, n)
				copy(nb, r.buf[:r.have])
				r.buf = nb
			}
		}
		k, err := r.R.Read(r.buf[r.have:])
		r.have += k
		if k > 0 && r.have >= need {
			continue
		}
		if err != nil {
			if err == io.EOF && r.have > 0 {
				err = io.ErrUnexpectedEOF
			}
			if k > 0 && err != io.EOF && err != io.ErrUnexpectedEOF {
				continue // a deadline after some bytes: keep what came
			}
			return nil, err
		}
	}
}

// Malformed says whether err is a message the stream cannot be followed
// past (rather than the connection's end or failure).
func Malformed(err error) bool {
	var he *HeaderError
	return errors.As(err, &he) || err == ErrTooLarge || err == ErrBadAVP
}
