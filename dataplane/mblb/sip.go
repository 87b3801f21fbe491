package mblb

import (
	"time"

	"github.com/openltm/openltm/dataplane/sipmsg"
)

// SIP framing (the sip profile): RFC 3261 §18.3 over a stream transport.
// A message is a start line and header fields up to an empty line, then
// exactly Content-Length bytes of body. CRLFs between messages are the
// keep-alives of RFC 5626 §4.4.1 and are not messages of their own.
// Reading the message is dataplane/sipmsg's.

// Errors of SIP framing. Either ends the connection: without a boundary
// nothing after it can be trusted.
var (
	// ErrBadSIP means the bytes do not start a SIP message.
	ErrBadSIP = sipmsg.ErrBad
	// ErrSIPLength means a Content-Length is not a number, or two of
	// them disagree.
	ErrSIPLength = sipmsg.ErrLength
)

// DefaultSIPMaxHeader bounds a SIP message's start line and header
// fields when SIPOptions.MaxHeaderSize is 0.
const DefaultSIPMaxHeader = 65536

// SIPOptions are the sip profile's settings the engine applies.
type SIPOptions struct {
	// MaxHeaderSize bounds the start line and header fields (0: 64 KiB);
	// a larger head resets the connection that sent it.
	MaxHeaderSize int
	// PersistHeader names the header field whose value keys sip_info
	// persistence (the profile's sip-info, Call-ID by default); "" when
	// the virtual has no sip_info persistence, and the engine then reads
	// no header for it.
	PersistHeader string
	// PerConnection: without an mblb profile, BIG-IP balances a SIP
	// connection once and sends all its messages to that member.
	PerConnection bool

	// The proxy's own header fields (sipproxy.go). Via puts a Via of
	// the virtual's into every request of a client before a member gets
	// it, and takes it off the answers (insert-via-header); SecureVia
	// names TLS as its transport (secure-via-header); UserVia is the
	// sent-protocol and sent-by a user gives instead of the virtual's
	// address (user-via-header, "" for none). RecordRoute puts a
	// Record-Route of the virtual's into requests that open a dialog
	// (insert-record-route-header).
	Via, SecureVia, RecordRoute bool
	UserVia                     string
	// TerminateOnBye ends the connection a BYE took once its final
	// answer has passed (terminate-on-bye): the member's, or the
	// client's when the connection is balanced once.
	TerminateOnBye bool
	// DialogAware sends every request of a known dialog (its Call-ID)
	// to the member the dialog began on (dialog-aware). A dialog not
	// answered within DialogTimeout, or idle SessionTimeout after it was
	// answered, is forgotten (dialog-establishment-timeout,
	// sip-session-timeout; 0: never).
	DialogAware                   bool
	DialogTimeout, SessionTimeout time.Duration
	// With DialogAware, MaxRegistrations bounds the addresses of record
	// one client connection keeps registered (max-registrations) and
	// MaxSessionsPerRegistration the dialogs each of them has open at
	// once (max-sessions-per-registration); a registration lasts its
	// Expires, at most RegistrationTimeout (registration-timeout). 0: no
	// bound. The virtual answers a request past a bound 503 itself.
	MaxRegistrations, MaxSessionsPerRegistration int
	RegistrationTimeout                          time.Duration
}

// The message reader, under the names the engine's callers use.
type (
	// SIPMessage is one framed SIP message read in place.
	SIPMessage = sipmsg.Message
	// SIPField is a header field name with its compact form.
	SIPField = sipmsg.Field
)

// ParseSIP reads a framed SIP message's start line.
func ParseSIP(b []byte) (SIPMessage, error) { return sipmsg.Parse(b) }

// NewSIPField names a header field: long or compact, any case.
func NewSIPField(name string) SIPField { return sipmsg.NewField(name) }

// IsSIPKeepAlive reports whether a framed message is only CRLFs.
func IsSIPKeepAlive(b []byte) bool { return sipmsg.IsKeepAlive(b) }

// SIPFramer cuts a stream into SIP messages. It remembers how far it has
// scanned a head that is not complete yet, so a message arriving in many
// reads costs linear time.
type SIPFramer struct {
	// Max is the largest message accepted; 0 means no limit.
	Max int
	// MaxHeader bounds the head (0: DefaultSIPMaxHeader).
	MaxHeader int
	scanned   int
	// size is the message's size once its head is read, until the
	// message is complete: the body's reads do not parse the head again.
	size int
}

// Frame returns the size of the SIP message (or the run of keep-alive
// CRLFs) at the start of buf.
func (f *SIPFramer) Frame(buf []byte) (int, bool, error) {
	if len(buf) == 0 {
		return 0, false, nil
	}
	if f.size > 0 {
		if len(buf) < f.size {
			return f.size, false, nil
		}
		n := f.size
		f.size = 0
		return n, true, nil
	}
	if buf[0] == '\r' || buf[0] == '\n' {
		f.scanned = 0
		n := 0
		for n < len(buf) && (buf[n] == '\r' || buf[n] == '\n') {
			n++
		}
		return n, true, nil
	}
	maxHead := f.MaxHeader
	if maxHead <= 0 {
		maxHead = DefaultSIPMaxHeader
	}
	from := f.scanned - 3
	if from < 0 || from > len(buf) {
		from = 0
	}
	hend := sipmsg.HeadEnd(buf, from)
	if hend < 0 {
		f.scanned = len(buf)
		if len(buf) > maxHead || (f.Max > 0 && len(buf) > f.Max) {
			f.scanned = 0
			return 0, false, ErrTooLarge
		}
		return 0, false, nil
	}
	f.scanned = 0
	if hend > maxHead {
		return 0, false, ErrTooLarge
	}
	cl, err := sipmsg.ContentLength(buf[:hend])
	if err != nil {
		return 0, false, err
	}
	if cl > 1<<40 {
		return 0, false, ErrTooLarge
	}
	total := hend + int(cl)
	if f.Max > 0 && total > f.Max {
		return 0, false, ErrTooLarge
	}
	if len(buf) < total {
		f.size = total
		return total, false, nil
	}
	return total, true, nil
}
