// Package starttls reads the SMTP, IMAP, POP3 and LDAP conversations of
// a virtual with an smtps, imap, pop3 or client-ldap profile, so that the
// virtual can offer STARTTLS (POP3's STLS) on the member's behalf: the
// capability answers gain the extension, the client's STARTTLS is
// answered here, and the member keeps a plaintext conversation that
// never sees it. LDAP's framing, its StartTLS answered for client-ldap
// and sent to the member for server-ldap, are ldap.go's.
//
// A Session holds one connection's protocol state; it does no I/O. The
// caller hands it each complete line a side sent and writes what it
// says: the bytes for the member, the bytes for the client (the member's
// answers, rewritten, and the virtual's own answers in their turn), and
// how many bytes after the line pass unread (an IMAP literal, an SMTP
// BDAT chunk).
package starttls

import (
	"bytes"
	"strconv"
)

// Protocol is the mail protocol a profile reads.
type Protocol uint8

// The protocols, one per profile kind.
const (
	SMTP Protocol = iota // ltm profile smtps
	IMAP                 // ltm profile imap
	POP3                 // ltm profile pop3
	LDAP                 // ltm profile client-ldap (ldap.go)
)

// String is the protocol's name as its iRule namespace spells it.
func (p Protocol) String() string {
	switch p {
	case IMAP:
		return "IMAP"
	case POP3:
		return "POP3"
	case LDAP:
		return "LDAP"
	}
	return "SMTPS"
}

// Kind is the profile kind that reads the protocol, as tmsh names it.
func (p Protocol) Kind() string {
	switch p {
	case IMAP:
		return "imap"
	case POP3:
		return "pop3"
	case LDAP:
		return "client-ldap"
	}
	return "smtps"
}

// Mode is the profile's activation-mode: whether the virtual offers
// STARTTLS and whether it insists on it.
type Mode uint8

// The activation modes.
const (
	// None never activates TLS: the conversation passes untouched.
	None Mode = iota
	// Allow offers STARTTLS; a client that does not ask goes on in
	// plaintext.
	Allow
	// Require offers STARTTLS and refuses other commands (but those that
	// only greet, ask for capabilities or leave) until TLS runs.
	Require
)

// ParseMode reads an activation-mode word.
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "none":
		return None, true
	case "allow":
		return Allow, true
	case "require":
		return Require, true
	}
	return None, false
}

// String is the mode's word in tmsh and iRules.
func (m Mode) String() string {
	switch m {
	case Allow:
		return "allow"
	case Require:
		return "require"
	}
	return "none"
}

// Options are a virtual's profile as the dataplane applies it.
type Options struct {
	// Profile names the profile, for logs.
	Profile  string
	Protocol Protocol
	Mode     Mode
}

// LineMax bounds a line the session parses; a longer one passes (or, as
// a command refused before TLS, is refused) unparsed.
const LineMax = 8 << 10

// maxBuffered bounds the lines of an SMTP EHLO answer held to be
// rewritten whole; past it the answer passes as the member wrote it.
const maxBuffered = 256

// kind is what a client command awaits.
type kind uint8

const (
	kOther    kind = iota
	kGreeting      // the member's greeting
	kCapa          // EHLO, CAPABILITY, CAPA: the answer is rewritten
	kData          // SMTP DATA: 354 opens the body
	kAuth          // SMTP/POP3 AUTH, IMAP AUTHENTICATE and IDLE: the client's lines are answers until the end
	kMulti         // a POP3 command with a multi-line answer
	kLocal         // answered by the virtual: reply is written in its turn
)

// pending is one command awaiting its answer, in the order sent.
type pending struct {
	kind  kind
	tag   string // IMAP
	reply string // kLocal
	tls   bool   // kLocal: the answer to STARTTLS, after which TLS starts
}

// Client is what to do with one client line.
type Client struct {
	// Forward: the line goes to the member.
	Forward bool
	// Reply: the virtual answered the line; Flush gives the answer when
	// its turn comes.
	Reply bool
	// StartTLS: the answer is STARTTLS's; once it is written the client's
	// next bytes are its TLS handshake, and any it sent before the
	// answer are discarded (they were not encrypted).
	StartTLS bool
	// Raw is how many bytes after the line pass to the member unread.
	Raw int64
	// Drop is how many bytes after a refused line are read and dropped
	// (an IMAP literal the client sent without waiting for a go-ahead).
	Drop int64
}

// Session is one connection's conversation state. It is not safe for
// concurrent use: the caller serializes its two directions.
type Session struct {
	proto Protocol
	mode  Mode
	tls   bool // TLS runs on the client side

	queue []pending

	body       bool // SMTP: the client sends a message body (after 354)
	clientAns  bool // the client's lines answer a challenge (AUTH, IDLE)
	cmdCont    bool // IMAP: the client's command goes on after a literal
	multi      bool // POP3: in a multi-line answer
	multiCapa  bool // ... to CAPA
	held       [][]byte
	heldTooBig bool
}

// NewSession starts a connection's state: the member's greeting is the
// first answer awaited.
func NewSession(p Protocol, m Mode) *Session {
	return &Session{proto: p, mode: m, queue: []pending{{kind: kGreeting}}}
}

// TLSStarted records that the client's TLS handshake completed: the
// virtual no longer offers STARTTLS, and refuses it again.
func (s *Session) TLSStarted() {
	s.tls = true
	s.queue = s.queue[:0]
	s.body, s.clientAns, s.cmdCont, s.multi = false, false, false, false
}

// TLS reports whether the client's side runs TLS.
func (s *Session) TLS() bool { return s.tls }

// offer reports whether capability answers gain STARTTLS.
func (s *Session) offer() bool { return s.mode != None && !s.tls }

// local queues the virtual's own answer.
func (s *Session) local(reply string, tls bool) Client {
	s.queue = append(s.queue, pending{kind: kLocal, reply: reply, tls: tls})
	return Client{Reply: true, StartTLS: tls}
}

// Flush appends to dst the virtual's answers whose turn has come (every
// answer the member owed before them was written), and reports whether
// STARTTLS's was one: the caller starts TLS after writing them.
func (s *Session) Flush(dst []byte) ([]byte, bool) {
	tls := false
	for len(s.queue) > 0 && s.queue[0].kind == kLocal {
		p := s.queue[0]
		s.queue = s.queue[1:]
		dst = append(dst, p.reply...)
		tls = tls || p.tls
	}
	return dst, tls
}

// Long answers a client line longer than LineMax, of which only the
// start was read: false lets it pass to the member; true means it was
// refused (Flush has the answer) and the caller drops the rest of it.
// Before TLS in require mode a command the virtual cannot read is not
// let through.
func (s *Session) Long(head []byte) bool {
	if s.mode != Require || s.tls || s.body || s.clientAns || s.cmdCont {
		return false
	}
	switch s.proto {
	case SMTP:
		s.local("500 5.5.2 Line too long\r\n", false)
	case IMAP:
		tag, _, _ := imapWords(head)
		if tag == "" {
			tag = "*"
		}
		s.local(tag+" BAD Line too long\r\n", false)
	default:
		s.local("-ERR Line too long\r\n", false)
	}
	return true
}

// FromClient reads one complete client line (with its line ending).
func (s *Session) FromClient(line []byte) Client {
	switch s.proto {
	case IMAP:
		return s.imapClient(line)
	case POP3:
		return s.pop3Client(line)
	}
	return s.smtpClient(line)
}

// FromServer reads one complete member line and appends to dst what the
// client gets for it (nothing while an answer is held to be rewritten,
// several lines when it is let go), then the virtual's answers whose
// turn came. raw is how many bytes after the line pass unread; tls that
// STARTTLS's answer was written.
func (s *Session) FromServer(dst, line []byte) (out []byte, raw int64, tls bool) {
	switch s.proto {
	case IMAP:
		dst, raw = s.imapServer(dst, line)
	case POP3:
		dst = s.pop3Server(dst, line)
	default:
		dst = s.smtpServer(dst, line)
	}
	out, tls = s.Flush(dst)
	return out, raw, tls
}

// verb is the line's first word in upper case, and whether more follows.
func verb(line []byte) (string, bool) {
	line = trimEOL(line)
	i := bytes.IndexByte(line, ' ')
	rest := false
	if i >= 0 {
		rest = len(bytes.TrimSpace(line[i:])) > 0
		line = line[:i]
	}
	return string(bytes.ToUpper(line)), rest
}

// trimEOL drops a line's CRLF (or bare LF).
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// eolOf is the line's own ending, kept when a line is rewritten.
func eolOf(b []byte) string {
	if bytes.HasSuffix(b, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// pop removes the first pending entry.
func (s *Session) pop() {
	if len(s.queue) > 0 {
		s.queue = s.queue[1:]
	}
}

// head is the first pending entry's kind (kOther when none waits: an
// answer nobody asked for passes as it is).
func (s *Session) head() kind {
	if len(s.queue) == 0 {
		return kOther
	}
	return s.queue[0].kind
}

// atoi64 parses a non-negative decimal count; -1 when it is not one.
func atoi64(b []byte) int64 {
	if len(b) == 0 || len(b) > 18 {
		return -1
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
