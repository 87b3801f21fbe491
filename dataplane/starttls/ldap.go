package starttls

import (
	"errors"
	"slices"
)

// LDAP (RFC 4511, RFC 4513 3): the client's StartTLS extended request
// (OID 1.3.6.1.4.1.1466.20037) is answered by the virtual (client-ldap)
// or sent by it to the member (server-ldap). The conversation is a
// stream of BER-encoded LDAPMessages,
//
//	LDAPMessage ::= SEQUENCE { messageID INTEGER, protocolOp CHOICE, controls [0] OPTIONAL }
//
// of which only the framing, the messageID and the protocolOp's tag are
// read; every message passes whole and untouched, the ExtendedRequest's
// name being the one field read inside an operation. LDAP allows only the
// definite length form (RFC 4511 5.1), which bounds each message before a
// byte of its body is read.

// StartTLSOID is the StartTLS extended operation's name (RFC 4511 4.14).
const StartTLSOID = "1.3.6.1.4.1.1466.20037"

// LDAPHeadMax is how much of a message's start is enough to read its
// messageID and operation (a tag, a length, an INTEGER of at most eight
// bytes, then the operation's tag); LDAPWholeMax bounds an
// ExtendedRequest read whole for its name: a longer one is not StartTLS.
const (
	LDAPHeadMax  = 2 + 4 + 2 + 8 + 1
	LDAPWholeMax = 4 << 10
)

// ldapMsgMax bounds a message's declared length: a larger one is taken
// for garbage, not LDAP [M: 2 GiB, far past what a directory sends].
const ldapMsgMax = 1<<31 - 1

// ErrLDAPFraming is a byte stream that is not a sequence of LDAPMessages
// (no SEQUENCE tag, the indefinite or an over-long length form).
var ErrLDAPFraming = errors.New("not an LDAP message")

// LDAP protocolOp tags ([APPLICATION n], constructed unless noted).
const (
	ldapBindReq     = 0x60
	ldapBindResp    = 0x61
	ldapUnbindReq   = 0x42 // primitive NULL
	ldapSearchReq   = 0x63
	ldapSearchDone  = 0x65
	ldapModifyReq   = 0x66
	ldapModifyResp  = 0x67
	ldapAddReq      = 0x68
	ldapAddResp     = 0x69
	ldapDelReq      = 0x4a // primitive LDAPDN
	ldapDelResp     = 0x6b
	ldapModDNReq    = 0x6c
	ldapModDNResp   = 0x6d
	ldapCompareReq  = 0x6e
	ldapCompareResp = 0x6f
	ldapAbandonReq  = 0x50 // primitive MessageID
	ldapExtReq      = 0x77
	ldapExtResp     = 0x78
)

// LDAP result codes the virtual answers with.
const (
	LDAPSuccess                = 0
	LDAPOperationsError        = 1
	LDAPProtocolError          = 2
	LDAPConfidentialityRequire = 13
)

// LDAPFrame reports the whole length of the LDAPMessage that b starts
// with: 0 while b holds too little of its header to tell, an
// ErrLDAPFraming when b does not start one.
func LDAPFrame(b []byte) (int64, error) {
	if len(b) < 2 {
		return 0, nil
	}
	if b[0] != 0x30 {
		return 0, ErrLDAPFraming
	}
	hdr, n, ok := berLength(b[1:])
	switch {
	case !ok:
		return 0, ErrLDAPFraming
	case hdr == 0:
		return 0, nil
	}
	return int64(1+hdr) + n, nil
}

// berLength reads a definite BER length of at most four bytes: the
// bytes it took (0 while b is too short) and the length.
func berLength(b []byte) (hdr int, n int64, ok bool) {
	if len(b) == 0 {
		return 0, 0, true
	}
	if b[0] < 0x80 {
		return 1, int64(b[0]), true
	}
	k := int(b[0] & 0x7f)
	if k == 0 || k > 4 { // indefinite, or longer than any LDAP message
		return 0, 0, false
	}
	if len(b) < 1+k {
		return 0, 0, true
	}
	for _, c := range b[1 : 1+k] {
		n = n<<8 | int64(c)
	}
	if n > ldapMsgMax {
		return 0, 0, false
	}
	return 1 + k, n, true
}

// ldapElem reads one BER element (a one-byte tag) at b's start: its tag,
// its contents, and what follows it.
func ldapElem(b []byte) (tag byte, body, rest []byte, ok bool) {
	if len(b) < 2 {
		return 0, nil, nil, false
	}
	hdr, n, ok := berLength(b[1:])
	if !ok || hdr == 0 || int64(len(b)-1-hdr) < n {
		return 0, nil, nil, false
	}
	body = b[1+hdr : 1+hdr+int(n)]
	return b[0], body, b[1+hdr+int(n):], true
}

// LDAPHead reads a message's messageID and protocolOp tag from its start
// (LDAPHeadMax bytes suffice; the operation itself need not be whole).
func LDAPHead(b []byte) (id int64, op byte, ok bool) {
	if len(b) < 2 || b[0] != 0x30 {
		return 0, 0, false
	}
	hdr, _, ok := berLength(b[1:])
	if !ok || hdr == 0 {
		return 0, 0, false
	}
	tag, idb, rest, ok := ldapElem(b[1+hdr:])
	if !ok || tag != 0x02 || len(idb) == 0 || len(idb) > 4 || len(rest) == 0 {
		return 0, 0, false
	}
	for _, c := range idb { // MessageID ::= INTEGER (0 .. maxInt)
		id = id<<8 | int64(c)
	}
	if idb[0]&0x80 != 0 {
		return 0, 0, false
	}
	return id, rest[0], true
}

// ldapExtName is an ExtendedRequest's requestName, or an
// ExtendedResponse's responseName, read from the whole message m.
func ldapExtName(m []byte, nameTag byte) (string, bool) {
	_, seq, _, ok := ldapElem(m)
	if !ok {
		return "", false
	}
	_, _, rest, ok := ldapElem(seq) // messageID
	if !ok {
		return "", false
	}
	_, op, _, ok := ldapElem(rest)
	for ok && len(op) > 0 {
		var tag byte
		var body []byte
		tag, body, op, ok = ldapElem(op)
		if ok && tag == nameTag {
			return string(body), true
		}
	}
	return "", false
}

// LDAPResult reads an answer's messageID, protocolOp tag and resultCode
// from a whole message.
func LDAPResult(m []byte) (id int64, op byte, code int, ok bool) {
	id, op, ok = LDAPHead(m)
	if !ok {
		return 0, 0, 0, false
	}
	_, seq, _, _ := ldapElem(m)
	_, _, rest, _ := ldapElem(seq)
	_, body, _, ok := ldapElem(rest)
	if !ok {
		return 0, 0, 0, false
	}
	tag, c, _, ok := ldapElem(body)
	if !ok || tag != 0x0a || len(c) == 0 || len(c) > 4 {
		return 0, 0, 0, false
	}
	for _, b := range c {
		code = code<<8 | int(b)
	}
	return id, op, code, true
}

// berAppend appends one element with a definite length.
func berAppend(dst []byte, tag byte, body []byte) []byte {
	dst = append(dst, tag)
	switch n := len(body); {
	case n < 0x80:
		dst = append(dst, byte(n))
	case n < 0x100:
		dst = append(dst, 0x81, byte(n))
	default:
		dst = append(dst, 0x82, byte(n>>8), byte(n))
	}
	return append(dst, body...)
}

// berInt is a non-negative INTEGER's (or ENUMERATED's) contents.
func berInt(n int64) []byte {
	var b []byte
	for {
		b = append([]byte{byte(n)}, b...)
		n >>= 8
		if n == 0 {
			break
		}
	}
	if b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// LDAPMessage is an LDAPMessage carrying op (its tag and contents).
func LDAPMessage(id int64, opTag byte, op []byte) []byte {
	body := berAppend(nil, 0x02, berInt(id))
	body = berAppend(body, opTag, op)
	return berAppend(nil, 0x30, body)
}

// LDAPResponse is an answer of type opTag (BindResponse, SearchResultDone,
// ExtendedResponse...) with its LDAPResult; name, when set, is an
// ExtendedResponse's responseName.
func LDAPResponse(id int64, opTag byte, code int, msg, name string) []byte {
	op := berAppend(nil, 0x0a, berInt(int64(code)))
	op = berAppend(op, 0x04, nil) // matchedDN
	op = berAppend(op, 0x04, []byte(msg))
	if name != "" {
		op = berAppend(op, 0x8a, []byte(name))
	}
	return LDAPMessage(id, opTag, op)
}

// LDAPStartTLSRequest is the StartTLS request the virtual sends a member
// (server-ldap).
func LDAPStartTLSRequest(id int64) []byte {
	return LDAPMessage(id, ldapExtReq, berAppend(nil, 0x80, []byte(StartTLSOID)))
}

// LDAPStartTLSAnswer reads the member's answer to LDAPStartTLSRequest(id):
// ok is false when m is not that answer; code is its resultCode.
func LDAPStartTLSAnswer(m []byte, id int64) (code int, ok bool) {
	gid, op, code, ok := LDAPResult(m)
	if !ok || op != ldapExtResp || gid != id {
		return 0, false
	}
	return code, true
}

// ldapAnswerTag is the response type that answers a request (0 for
// those without an answer: unbind, abandon).
func ldapAnswerTag(op byte) byte {
	switch op {
	case ldapBindReq:
		return ldapBindResp
	case ldapSearchReq:
		return ldapSearchDone
	case ldapModifyReq:
		return ldapModifyResp
	case ldapAddReq:
		return ldapAddResp
	case ldapDelReq:
		return ldapDelResp
	case ldapModDNReq:
		return ldapModDNResp
	case ldapCompareReq:
		return ldapCompareResp
	case ldapExtReq:
		return ldapExtResp
	}
	return 0
}

// ldapFinal reports whether a member's message ends its operation (a
// search's entries and references, an intermediate response, and a
// notice of disconnection with messageID 0 do not).
func ldapFinal(op byte) bool {
	switch op {
	case ldapBindResp, ldapSearchDone, ldapModifyResp, ldapAddResp, ldapDelResp, ldapModDNResp, ldapCompareResp, ldapExtResp:
		return true
	}
	return false
}

// ServerLDAP is a virtual's server-ldap profile as the dataplane applies
// it: the virtual sends StartTLS to the member and runs the server-ssl
// handshake once the member agreed, before any of the client's bytes.
type ServerLDAP struct {
	// Profile names the profile, for logs.
	Profile string
	// Mode: none sends no StartTLS and keeps the member in plaintext;
	// allow goes on in plaintext when the member declines StartTLS;
	// require resets the connection then [M].
	Mode Mode
}

// ldapTracked bounds the operations a session follows: past it new ones
// are not counted, and StartTLS may be answered while they run [M].
const ldapTracked = 256

// LDAPClient is what to do with one client message.
type LDAPClient struct {
	// Forward: the message goes to the member.
	Forward bool
	// Reply is the virtual's own answer (the message does not go to the
	// member); with StartTLS, the answer to StartTLS, after which the
	// client's next bytes are its TLS handshake and any it sent before
	// the answer are dropped.
	Reply    []byte
	StartTLS bool
}

// LDAPSession is one client-ldap connection's state. It is not safe for
// concurrent use: the caller serializes its two directions.
type LDAPSession struct {
	mode Mode
	tls  bool
	// open are the messageIDs of the operations the member has not
	// ended: StartTLS is refused while any runs (RFC 4511 4.14.1).
	open []int64
}

// NewLDAPSession starts a connection's state.
func NewLDAPSession(m Mode) *LDAPSession { return &LDAPSession{mode: m} }

// TLSStarted records that the client's TLS handshake completed: a second
// StartTLS is refused.
func (s *LDAPSession) TLSStarted() { s.tls = true }

// TLS reports whether the client's side runs TLS.
func (s *LDAPSession) TLS() bool { return s.tls }

// FromClient reads one client message: m is the whole message when whole,
// else its first bytes (at least LDAPHeadMax, or all there is). A message
// the session cannot read passes to the member, which answers it.
func (s *LDAPSession) FromClient(m []byte, whole bool) LDAPClient {
	id, op, ok := LDAPHead(m)
	if !ok {
		return LDAPClient{Forward: true}
	}
	if op == ldapExtReq && whole {
		if name, _ := ldapExtName(m, 0x80); name == StartTLSOID {
			switch {
			case s.tls:
				return LDAPClient{Reply: LDAPResponse(id, ldapExtResp, LDAPOperationsError, "TLS already active", StartTLSOID)}
			case len(s.open) > 0:
				return LDAPClient{Reply: LDAPResponse(id, ldapExtResp, LDAPOperationsError, "operations are outstanding", StartTLSOID)}
			}
			return LDAPClient{Reply: LDAPResponse(id, ldapExtResp, LDAPSuccess, "", StartTLSOID), StartTLS: true}
		}
	}
	if s.mode == Require && !s.tls {
		switch op {
		case ldapUnbindReq, ldapAbandonReq:
		default:
			if t := ldapAnswerTag(op); t != 0 {
				return LDAPClient{Reply: LDAPResponse(id, t, LDAPConfidentialityRequire, "StartTLS is required", "")}
			}
			return LDAPClient{} // not a request: dropped
		}
	}
	switch {
	case op == ldapAbandonReq:
		if aid, ok := ldapAbandoned(m); ok {
			s.end(aid)
		}
	case ldapAnswerTag(op) != 0 && len(s.open) < ldapTracked && !slices.Contains(s.open, id):
		s.open = append(s.open, id)
	}
	return LDAPClient{Forward: true}
}

// ldapAbandoned is the messageID an AbandonRequest names.
func ldapAbandoned(m []byte) (int64, bool) {
	_, seq, _, ok := ldapElem(m)
	if !ok {
		return 0, false
	}
	_, _, rest, ok := ldapElem(seq)
	if !ok {
		return 0, false
	}
	tag, body, _, ok := ldapElem(rest)
	if !ok || tag != ldapAbandonReq || len(body) == 0 || len(body) > 4 {
		return 0, false
	}
	var id int64
	for _, c := range body {
		id = id<<8 | int64(c)
	}
	return id, true
}

// end forgets an operation.
func (s *LDAPSession) end(id int64) {
	if i := slices.Index(s.open, id); i >= 0 {
		s.open = slices.Delete(s.open, i, i+1)
	}
}

// FromServer reads the start of one member message (at least
// LDAPHeadMax bytes, or all there is); the message passes to the client
// as it is.
func (s *LDAPSession) FromServer(head []byte) {
	if id, op, ok := LDAPHead(head); ok && id != 0 && ldapFinal(op) {
		s.end(id)
	}
}
