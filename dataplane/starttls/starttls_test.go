package starttls

import (
	"strconv"
	"strings"
	"testing"
)

// run plays a conversation: "C:" lines are the client's, "S:" the
// member's, "TLS" the handshake completing. It returns what the member
// and the client got, with "<TLS>" where the virtual starts TLS, and
// "<raw n>" or "<drop n>" where bytes pass or are dropped unread.
func run(p Protocol, m Mode, steps []string) (member, client string) {
	s := NewSession(p, m)
	var mb, cb strings.Builder
	for _, st := range steps {
		switch {
		case st == "TLS":
			s.TLSStarted()
		case strings.HasPrefix(st, "C:"):
			line := []byte(st[2:] + "\r\n")
			c := s.FromClient(line)
			if c.Forward {
				mb.Write(line)
			}
			if c.Raw > 0 {
				mb.WriteString("<raw " + itoa(c.Raw) + ">")
			}
			if c.Drop > 0 {
				mb.WriteString("<drop " + itoa(c.Drop) + ">")
			}
			if c.Reply {
				out, tls := s.Flush(nil)
				cb.Write(out)
				if tls {
					cb.WriteString("<TLS>")
				}
			}
		case strings.HasPrefix(st, "L:"): // an over-long client line
			if s.Long([]byte(st[2:])) {
				out, _ := s.Flush(nil)
				cb.Write(out)
			} else {
				mb.WriteString(st[2:] + "...")
			}
		case strings.HasPrefix(st, "S:"):
			out, raw, tls := s.FromServer(nil, []byte(st[2:]+"\r\n"))
			cb.Write(out)
			if raw > 0 {
				cb.WriteString("<raw " + itoa(raw) + ">")
			}
			if tls {
				cb.WriteString("<TLS>")
			}
		}
	}
	return mb.String(), cb.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// crlf joins lines as the wire has them.
func crlf(lines ...string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\r\n") + "\r\n"
}

func TestSessions(t *testing.T) {
	for _, tc := range []struct {
		name           string
		p              Protocol
		m              Mode
		steps          []string
		member, client string
	}{
		{"smtp ehlo gains STARTTLS, member's hidden", SMTP, Allow,
			[]string{"S:220 mx ESMTP", "C:EHLO c", "S:250-mx", "S:250-STARTTLS", "S:250-PIPELINING", "S:250 8BITMIME"},
			crlf("EHLO c"), crlf("220 mx ESMTP", "250-mx", "250-PIPELINING", "250-8BITMIME", "250 STARTTLS")},
		{"smtp one-line ehlo", SMTP, Allow,
			[]string{"S:220 mx", "C:EHLO c", "S:250 mx"},
			crlf("EHLO c"), crlf("220 mx", "250-mx", "250 STARTTLS")},
		{"smtp ehlo refused passes", SMTP, Allow,
			[]string{"S:220 mx", "C:EHLO c", "S:502 no"},
			crlf("EHLO c"), crlf("220 mx", "502 no")},
		{"smtp starttls answered here, after pending answers", SMTP, Allow,
			[]string{"S:220 mx", "C:NOOP", "C:STARTTLS", "S:250 ok", "TLS", "C:EHLO c", "S:250-mx", "S:250 STARTTLS", "C:STARTTLS"},
			crlf("NOOP", "EHLO c"), crlf("220 mx", "250 ok", "220 2.0.0 Ready to start TLS") + "<TLS>" + crlf("250 mx", "503 5.5.1 TLS already active")},
		{"smtp starttls with a word", SMTP, Allow,
			[]string{"S:220 mx", "C:STARTTLS now"},
			"", crlf("220 mx", "501 5.5.4 Syntax error (no parameters allowed)")},
		{"smtp require refuses mail before tls", SMTP, Require,
			[]string{"S:220 mx", "C:EHLO c", "S:250 mx", "C:MAIL FROM:<a@b>", "C:QUIT", "S:221 bye"},
			crlf("EHLO c", "QUIT"), crlf("220 mx", "250-mx", "250 STARTTLS", "530 5.7.0 Must issue a STARTTLS command first", "221 bye")},
		{"smtp require after tls lets mail", SMTP, Require,
			[]string{"S:220 mx", "C:STARTTLS", "TLS", "C:MAIL FROM:<a@b>", "S:250 ok"},
			crlf("MAIL FROM:<a@b>"), crlf("220 mx", "220 2.0.0 Ready to start TLS") + "<TLS>" + crlf("250 ok")},
		{"smtp pipelined refusal keeps its turn", SMTP, Require,
			[]string{"S:220 mx", "C:EHLO c", "C:MAIL FROM:<a@b>", "S:250 mx"},
			crlf("EHLO c"), crlf("220 mx", "250-mx", "250 STARTTLS", "530 5.7.0 Must issue a STARTTLS command first")},
		{"smtp body lines are not commands", SMTP, Allow,
			[]string{"S:220 mx", "C:DATA", "S:354 go", "C:STARTTLS", "C:EHLO x", "C:.", "S:250 queued", "C:STARTTLS"},
			crlf("DATA", "STARTTLS", "EHLO x", "."), crlf("220 mx", "354 go", "250 queued", "220 2.0.0 Ready to start TLS") + "<TLS>"},
		{"smtp auth answers are not commands", SMTP, Require,
			[]string{"S:220 mx", "C:STARTTLS", "TLS", "C:AUTH LOGIN", "S:334 VXNlcg==", "C:STARTTLS", "S:334 UGFzcw==", "C:cw==", "S:235 ok"},
			crlf("AUTH LOGIN", "STARTTLS", "cw=="), crlf("220 mx", "220 2.0.0 Ready to start TLS") + "<TLS>" + crlf("334 VXNlcg==", "334 UGFzcw==", "235 ok")},
		{"smtp bdat chunk passes unread", SMTP, Allow,
			[]string{"S:220 mx", "C:BDAT 7 LAST", "S:250 ok"},
			crlf("BDAT 7 LAST") + "<raw 7>", crlf("220 mx", "250 ok")},
		{"smtp long command refused before tls in require", SMTP, Require,
			[]string{"S:220 mx", "L:MAIL FROM:<aaaa"},
			"", crlf("220 mx", "500 5.5.2 Line too long")},
		{"smtp long line passes in allow", SMTP, Allow,
			[]string{"S:220 mx", "L:MAIL FROM:<aaaa"},
			"MAIL FROM:<aaaa...", crlf("220 mx")},
		{"smtp member without ehlo", SMTP, Allow,
			[]string{"S:220 mx", "C:EHLO c", "S:500 what", "C:HELO c", "S:250 mx"},
			crlf("EHLO c", "HELO c"), crlf("220 mx", "500 what", "250 mx")},

		{"imap greeting and capability gain STARTTLS", IMAP, Allow,
			[]string{"S:* OK [CAPABILITY IMAP4rev1 STARTTLS AUTH=PLAIN] ready", "C:a CAPABILITY", "S:* CAPABILITY IMAP4rev1 AUTH=PLAIN", "S:a OK done"},
			crlf("a CAPABILITY"), crlf("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN STARTTLS] ready", "* CAPABILITY IMAP4rev1 AUTH=PLAIN STARTTLS", "a OK done")},
		{"imap starttls and again", IMAP, Allow,
			[]string{"S:* OK ready", "C:a STARTTLS", "TLS", "C:b CAPABILITY", "S:* CAPABILITY IMAP4rev1 STARTTLS", "S:b OK done", "C:c STARTTLS"},
			crlf("b CAPABILITY"), crlf("* OK ready", "a OK Begin TLS negotiation now") + "<TLS>" + crlf("* CAPABILITY IMAP4rev1", "b OK done", "c BAD TLS is already active")},
		{"imap require refuses login, drops its non-synchronizing literal", IMAP, Require,
			[]string{"S:* OK ready", "C:a LOGIN {4+}", "C:b NOOP", "S:b OK"},
			"<drop 4>" + crlf("b NOOP"), crlf("* OK ready", "a BAD Must issue a STARTTLS command first", "b OK")},
		{"imap literal lines are not commands", IMAP, Allow,
			[]string{"S:* OK ready", "C:a LOGIN {8}", "S:+ go", "C:x STARTTLS", "S:a OK"},
			crlf("a LOGIN {8}") + "<raw 8>" + crlf("x STARTTLS"), crlf("* OK ready", "+ go", "a OK")},
		{"imap fetch literal from the member", IMAP, Allow,
			[]string{"S:* OK ready", "C:a FETCH 1 BODY[]", "S:* 1 FETCH (BODY[] {5}", "S:)", "S:a OK"},
			crlf("a FETCH 1 BODY[]"), crlf("* OK ready", "* 1 FETCH (BODY[] {5}") + "<raw 5>" + crlf(")", "a OK")},
		{"imap idle done is not a command", IMAP, Require,
			[]string{"S:* OK ready", "C:a STARTTLS", "TLS", "C:b IDLE", "S:+ idling", "C:DONE", "S:b OK", "C:c NOOP"},
			crlf("b IDLE", "DONE", "c NOOP"), crlf("* OK ready", "a OK Begin TLS negotiation now") + "<TLS>" + crlf("+ idling", "b OK")},
		{"imap require says LOGINDISABLED until TLS", IMAP, Require,
			[]string{"S:* OK [CAPABILITY IMAP4rev1] ready", "C:a STARTTLS", "TLS", "C:b CAPABILITY", "S:* CAPABILITY IMAP4rev1", "S:b OK"},
			crlf("b CAPABILITY"), crlf("* OK [CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED] ready", "a OK Begin TLS negotiation now") + "<TLS>" + crlf("* CAPABILITY IMAP4rev1", "b OK")},
		{"imap none offers nothing", IMAP, None,
			[]string{"S:* OK [CAPABILITY IMAP4rev1 STARTTLS] ready"},
			"", crlf("* OK [CAPABILITY IMAP4rev1] ready")},

		{"pop3 capa gains STLS", POP3, Allow,
			[]string{"S:+OK ready", "C:CAPA", "S:+OK caps", "S:USER", "S:STLS", "S:.", "C:STLS"},
			crlf("CAPA"), crlf("+OK ready", "+OK caps", "USER", "STLS", ".", "+OK Begin TLS negotiation") + "<TLS>"},
		{"pop3 retr body is not a status", POP3, Allow,
			[]string{"S:+OK ready", "C:RETR 1", "C:CAPA", "S:+OK msg", "S:-ERR not a status", "S:..", "S:.", "S:+OK caps", "S:.", "C:STLS", "TLS", "C:STLS", "C:CAPA", "S:+OK caps", "S:STLS", "S:."},
			crlf("RETR 1", "CAPA", "CAPA"), crlf("+OK ready", "+OK msg", "-ERR not a status", "..", ".", "+OK caps", "STLS", ".", "+OK Begin TLS negotiation") + "<TLS>" + crlf("-ERR Command not permitted when TLS active", "+OK caps", ".")},
		{"pop3 require refuses user", POP3, Require,
			[]string{"S:+OK ready", "C:USER a", "C:QUIT", "S:+OK bye"},
			crlf("QUIT"), crlf("+OK ready", "-ERR Must issue a STLS command first", "+OK bye")},
		{"pop3 auth answers pass", POP3, Require,
			[]string{"S:+OK ready", "C:STLS", "TLS", "C:AUTH PLAIN", "S:+ ", "C:STLS", "S:+OK in", "C:STAT"},
			crlf("AUTH PLAIN", "STLS", "STAT"), crlf("+OK ready", "+OK Begin TLS negotiation") + "<TLS>" + crlf("+ ", "+OK in")},
	} {
		member, client := run(tc.p, tc.m, tc.steps)
		if member != tc.member {
			t.Errorf("%s: member got %q, want %q", tc.name, member, tc.member)
		}
		if client != tc.client {
			t.Errorf("%s: client got %q, want %q", tc.name, client, tc.client)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, w := range []string{"none", "allow", "require"} {
		m, ok := ParseMode(w)
		if !ok || m.String() != w {
			t.Errorf("%s: %v %v", w, m, ok)
		}
	}
	if _, ok := ParseMode("disallow"); ok {
		t.Error("disallow parsed")
	}
}
