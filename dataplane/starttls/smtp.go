package starttls

import "bytes"

// SMTP (RFC 3207): the EHLO answer gains "250 STARTTLS"; STARTTLS is
// answered 220 and the client's next bytes are its handshake. Other
// answers pass as the member wrote them, and the client's message body
// (after DATA's 354) and BDAT chunks pass unread.

// smtpAllowed are the commands require mode lets through before TLS.
func smtpAllowed(v string) bool {
	switch v {
	case "EHLO", "HELO", "NOOP", "RSET", "QUIT":
		return true
	}
	return false
}

func (s *Session) smtpClient(line []byte) Client {
	if s.body {
		if string(trimEOL(line)) == "." {
			s.body = false
		}
		return Client{Forward: true}
	}
	if s.clientAns { // the answer to a 334 challenge; the member asks again or ends
		s.clientAns = false
		return Client{Forward: true}
	}
	v, args := verb(line)
	if v == "STARTTLS" {
		switch {
		case s.tls:
			return s.local("503 5.5.1 TLS already active\r\n", false)
		case args:
			return s.local("501 5.5.4 Syntax error (no parameters allowed)\r\n", false)
		}
		return s.local("220 2.0.0 Ready to start TLS\r\n", true)
	}
	if s.mode == Require && !s.tls && !smtpAllowed(v) {
		return s.local("530 5.7.0 Must issue a STARTTLS command first\r\n", false)
	}
	k, raw := kOther, int64(0)
	switch v {
	case "EHLO":
		k = kCapa
	case "DATA":
		k = kData
	case "AUTH":
		k = kAuth
	case "BDAT": // RFC 3030: BDAT size [LAST], then size bytes
		f := bytes.Fields(trimEOL(line))
		if len(f) >= 2 {
			if n := atoi64(f[1]); n > 0 {
				raw = n
			}
		}
	}
	s.queue = append(s.queue, pending{kind: k})
	return Client{Forward: true, Raw: raw}
}

// smtpReply splits an SMTP answer line: its code, and whether it is the
// answer's last line (a space, or nothing, after the code).
func smtpReply(line []byte) (code int, final, ok bool) {
	t := trimEOL(line)
	if len(t) < 3 || !digit(t[0]) || !digit(t[1]) || !digit(t[2]) {
		return 0, false, false
	}
	code = int(t[0]-'0')*100 + int(t[1]-'0')*10 + int(t[2]-'0')
	switch {
	case len(t) == 3 || t[3] == ' ':
		return code, true, true
	case t[3] == '-':
		return code, false, true
	}
	return 0, false, false
}

func digit(b byte) bool { return b >= '0' && b <= '9' }

func (s *Session) smtpServer(dst, line []byte) []byte {
	code, final, ok := smtpReply(line)
	if !ok {
		return append(dst, line...)
	}
	h := s.head()
	if h == kCapa && !s.heldTooBig {
		s.held = append(s.held, append([]byte(nil), line...))
		if !final {
			if len(s.held) > maxBuffered { // let it pass as written
				for _, l := range s.held {
					dst = append(dst, l...)
				}
				s.held, s.heldTooBig = s.held[:0], true
			}
			return dst
		}
		dst = s.ehloAnswer(dst, code)
		s.held = s.held[:0]
		s.pop()
		return dst
	}
	if !final {
		return append(dst, line...)
	}
	switch {
	case h == kAuth && code == 334:
		s.clientAns = true
	case h == kData && code == 354:
		s.body = true
		s.queue[0].kind = kOther // the answer after the body ends it
	default:
		s.heldTooBig = false
		s.pop()
	}
	return append(dst, line...)
}

// ehloAnswer writes the EHLO answer held: a 250's keywords lose the
// member's STARTTLS and gain the virtual's while it offers one; the
// first line (the member's name) stays.
func (s *Session) ehloAnswer(dst []byte, code int) []byte {
	if code != 250 {
		for _, l := range s.held {
			dst = append(dst, l...)
		}
		return dst
	}
	texts := make([][]byte, 0, len(s.held)+1)
	for i, l := range s.held {
		t := trimEOL(l)
		if len(t) > 4 {
			t = t[4:]
		} else {
			t = nil
		}
		if i > 0 {
			if k, _ := verb(t); k == "STARTTLS" {
				continue
			}
		}
		texts = append(texts, t)
	}
	if s.offer() {
		texts = append(texts, []byte("STARTTLS"))
	}
	eol := eolOf(s.held[len(s.held)-1])
	for i, t := range texts {
		sep := byte('-')
		if i == len(texts)-1 {
			sep = ' '
		}
		dst = append(dst, '2', '5', '0', sep)
		dst = append(dst, t...)
		dst = append(dst, eol...)
	}
	return dst
}
