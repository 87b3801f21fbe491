package starttls

import "bytes"

// IMAP (RFC 3501 6.2.1, RFC 2595): the capability lists (CAPABILITY's
// answer, and a greeting's or a tagged OK's [CAPABILITY] code) gain
// STARTTLS; STARTTLS is answered "OK Begin TLS negotiation now". Literals
// pass unread both ways, and the client's lines after AUTHENTICATE or
// IDLE are answers, not commands, until the tagged answer.

// imapAllowed are the commands require mode lets through before TLS
// (those valid in any state).
func imapAllowed(cmd string) bool {
	switch cmd {
	case "CAPABILITY", "NOOP", "LOGOUT":
		return true
	}
	return false
}

// imapWords splits a line into its tag and (upper-case) command.
func imapWords(line []byte) (tag, cmd string, ok bool) {
	f := bytes.Fields(trimEOL(line))
	if len(f) < 2 {
		if len(f) == 1 {
			return string(f[0]), "", false
		}
		return "", "", false
	}
	return string(f[0]), string(bytes.ToUpper(f[1])), true
}

// literal is the count of a literal announced at the line's end ({n} or
// RFC 7888's {n+}), -1 when none is.
func literal(line []byte) int64 {
	t := trimEOL(line)
	if len(t) < 3 || t[len(t)-1] != '}' {
		return -1
	}
	i := bytes.LastIndexByte(t, '{')
	if i < 0 {
		return -1
	}
	n := t[i+1 : len(t)-1]
	n = bytes.TrimSuffix(n, []byte("+"))
	return atoi64(n)
}

func (s *Session) imapClient(line []byte) Client {
	if s.cmdCont { // the rest of a command after a literal
		n := literal(line)
		s.cmdCont = n >= 0
		return Client{Forward: true, Raw: max(n, 0)}
	}
	if s.clientAns { // an AUTHENTICATE answer, IDLE's DONE
		return Client{Forward: true}
	}
	tag, cmd, _ := imapWords(line)
	n := literal(line)
	if cmd == "STARTTLS" {
		if s.tls {
			return s.local(tag+" BAD TLS is already active\r\n", false)
		}
		return s.local(tag+" OK Begin TLS negotiation now\r\n", true)
	}
	if s.mode == Require && !s.tls && !imapAllowed(cmd) {
		if tag == "" {
			tag = "*"
		}
		c := s.local(tag+" BAD Must issue a STARTTLS command first\r\n", false)
		if n > 0 && bytes.HasSuffix(trimEOL(line), []byte("+}")) {
			c.Drop = n // a literal sent without waiting: read and dropped
		}
		return c
	}
	k := kOther
	switch cmd {
	case "CAPABILITY":
		k = kCapa
	case "AUTHENTICATE", "IDLE":
		k = kAuth
		s.clientAns = true
	}
	s.queue = append(s.queue, pending{kind: k, tag: tag})
	if n >= 0 {
		s.cmdCont = true
	}
	return Client{Forward: true, Raw: max(n, 0)}
}

func (s *Session) imapServer(dst, line []byte) ([]byte, int64) {
	raw := max(literal(line), 0)
	t := trimEOL(line)
	switch {
	case len(t) > 0 && t[0] == '+': // a continuation
		return append(dst, line...), raw
	case bytes.HasPrefix(t, []byte("* ")):
		if s.head() == kGreeting {
			s.pop()
		}
		return s.imapCaps(dst, line), raw
	}
	tag, status, ok := imapWords(line)
	if ok && (status == "OK" || status == "NO" || status == "BAD") {
		for i, p := range s.queue {
			if p.kind != kLocal && p.kind != kGreeting && p.tag == tag {
				if p.kind == kAuth {
					s.clientAns = false
				}
				s.queue = append(s.queue[:i], s.queue[i+1:]...)
				break
			}
		}
	}
	return s.imapCaps(dst, line), raw
}

// imapCaps writes a member line whose capability list, if it has one,
// loses the member's STARTTLS and gains the virtual's while it offers
// one, and LOGINDISABLED while require mode refuses LOGIN.
func (s *Session) imapCaps(dst, line []byte) []byte {
	t := trimEOL(line)
	up := bytes.ToUpper(t)
	var start, end int
	if i := bytes.Index(up, []byte("[CAPABILITY ")); i >= 0 {
		start = i + len("[CAPABILITY ")
		end = bytes.IndexByte(t[start:], ']')
		if end < 0 {
			return append(dst, line...)
		}
		end += start
	} else if bytes.HasPrefix(up, []byte("* CAPABILITY")) {
		start, end = len("* CAPABILITY"), len(t)
	} else {
		return append(dst, line...)
	}
	bracket := t[start-1] == ' '
	dst = append(dst, t[:start]...)
	n := 0
	add := func(a []byte) {
		if n > 0 || !bracket {
			dst = append(dst, ' ')
		}
		dst = append(dst, a...)
		n++
	}
	loginDisabled := false
	for _, a := range bytes.Fields(t[start:end]) {
		if !bytes.EqualFold(a, []byte("STARTTLS")) {
			add(a)
		}
		loginDisabled = loginDisabled || bytes.EqualFold(a, []byte("LOGINDISABLED"))
	}
	if s.offer() {
		add([]byte("STARTTLS"))
	}
	if s.mode == Require && !s.tls && !loginDisabled { // RFC 3501 6.2.3: LOGIN is refused
		add([]byte("LOGINDISABLED"))
	}
	dst = append(dst, t[end:]...)
	return append(dst, eolOf(line)...)
}
