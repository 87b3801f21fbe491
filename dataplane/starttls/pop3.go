package starttls

import "bytes"

// POP3 (RFC 2595 4, RFC 2449): CAPA's answer gains STLS; STLS is
// answered "+OK Begin TLS negotiation". Multi-line answers (RETR, TOP,
// LIST and UIDL without an argument, CAPA) are read to their closing
// dot so that a message line is never taken for a status.

// pop3Allowed are the commands require mode lets through before TLS.
func pop3Allowed(v string) bool { return v == "CAPA" || v == "QUIT" }

func (s *Session) pop3Client(line []byte) Client {
	if s.clientAns { // an AUTH answer
		return Client{Forward: true}
	}
	v, args := verb(line)
	if v == "STLS" {
		if s.tls {
			return s.local("-ERR Command not permitted when TLS active\r\n", false)
		}
		return s.local("+OK Begin TLS negotiation\r\n", true)
	}
	if s.mode == Require && !s.tls && !pop3Allowed(v) {
		return s.local("-ERR Must issue a STLS command first\r\n", false)
	}
	k := kOther
	switch v {
	case "CAPA":
		k = kCapa
	case "RETR", "TOP":
		k = kMulti
	case "LIST", "UIDL":
		if !args {
			k = kMulti
		}
	case "AUTH": // without a mechanism: the list of them (RFC 5034 4)
		if args {
			k = kAuth
			s.clientAns = true
		} else {
			k = kMulti
		}
	}
	s.queue = append(s.queue, pending{kind: k})
	return Client{Forward: true}
}

func (s *Session) pop3Server(dst, line []byte) []byte {
	t := trimEOL(line)
	if s.multi {
		switch {
		case string(t) == ".":
			if s.multiCapa && s.offer() {
				dst = append(dst, "STLS"...)
				dst = append(dst, eolOf(line)...)
			}
			s.multi, s.multiCapa = false, false
			s.pop()
		case s.multiCapa && bytes.EqualFold(bytes.TrimSpace(t), []byte("STLS")):
			return dst // the member's own: hidden
		}
		return append(dst, line...)
	}
	h := s.head()
	switch {
	case h == kAuth && len(t) > 0 && t[0] == '+' && !bytes.HasPrefix(t, []byte("+OK")):
		// a challenge: the client answers
	case bytes.HasPrefix(t, []byte("+OK")):
		if h == kMulti || h == kCapa {
			s.multi, s.multiCapa = true, h == kCapa
			break
		}
		if h == kAuth {
			s.clientAns = false
		}
		s.pop()
	case bytes.HasPrefix(t, []byte("-ERR")):
		if h == kAuth {
			s.clientAns = false
		}
		s.pop()
	}
	return append(dst, line...)
}
