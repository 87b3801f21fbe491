package syslog

import (
	"fmt"
	"strconv"
	"time"
)

// Format is the header a message gets on its way to a remote syslog
// server: a log publisher's remote-syslog destination chooses it, and
// `sys syslog` remote servers always get RFC 5424.
type Format uint8

const (
	// RFC5424 is `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG`.
	RFC5424 Format = iota
	// RFC3164 is BSD syslog: `<PRI>Mmm dd hh:mm:ss HOSTNAME TAG: MSG`.
	RFC3164
	// LegacyBIGIP is the line BIG-IP's own log files hold, behind a PRI:
	// `<PRI>Mmm dd hh:mm:ss HOSTNAME SEVERITY TAG: MSG`.
	LegacyBIGIP
)

// ParseFormat reads a format as tmsh writes it.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "rfc5424", "":
		return RFC5424, nil
	case "rfc3164":
		return RFC3164, nil
	case "legacy-bigip":
		return LegacyBIGIP, nil
	}
	return 0, fmt.Errorf("format %q: must be rfc5424, rfc3164 or legacy-bigip", s)
}

// Header is what a remote-syslog destination or a `sys syslog` remote
// server puts before each message; one writer, so both send the same
// header for the same settings.
type Header struct {
	Format Format
	// Facility and Severity make the PRI of a message that has none of
	// its own (a message that starts with <PRI> keeps it).
	Facility, Severity int
	// Hostname names this system ("-" when empty).
	Hostname string
	// App is RFC 5424's APP-NAME and RFC 3164's TAG.
	App string
	// ProcID is RFC 5424's PROCID ("-" when empty).
	ProcID string
	// MsgID is RFC 5424's MSGID ("-" when empty).
	MsgID string
	// Framed ends each message with a newline, as syslog over TCP
	// (RFC 6587's non-transparent framing) needs.
	Framed bool
}

// SplitPRI separates a leading <PRI> (0 to 191) and the one space after
// it from msg; pri is -1 when msg has none. iRules often write one
// (HSL::send $h "<190> ..."), and the syslog header must not repeat it.
func SplitPRI(msg []byte) (pri int, rest []byte) {
	if len(msg) < 3 || msg[0] != '<' {
		return -1, msg
	}
	n := 0
	i := 1
	for ; i < len(msg) && i <= 4 && msg[i] >= '0' && msg[i] <= '9'; i++ {
		n = n*10 + int(msg[i]-'0')
	}
	if i == 1 || i > 4 || i >= len(msg) || msg[i] != '>' || n > 191 {
		return -1, msg
	}
	rest = msg[i+1:]
	if len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return n, rest
}

// TrimEOL drops one trailing newline (and a CR before it).
func TrimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// Append appends msg with the header to dst.
func (h *Header) Append(dst []byte, now time.Time, msg []byte) []byte {
	pri, body := SplitPRI(msg)
	if pri < 0 {
		pri = h.Facility*8 + h.Severity
	}
	body = TrimEOL(body)
	host := h.Hostname
	if host == "" {
		host = "-"
	}
	app := h.App
	dst = append(dst, '<')
	dst = strconv.AppendInt(dst, int64(pri), 10)
	dst = append(dst, '>')
	switch h.Format {
	case RFC3164, LegacyBIGIP:
		dst = now.AppendFormat(dst, time.Stamp)
		dst = append(dst, ' ')
		dst = append(dst, host...)
		dst = append(dst, ' ')
		if h.Format == LegacyBIGIP {
			dst = append(dst, SeverityWords[pri&7]...)
			dst = append(dst, ' ')
		}
		if app != "" {
			dst = append(dst, app...)
			dst = append(dst, ": "...)
		}
	default:
		if app == "" {
			app = "-"
		}
		msgID := h.MsgID
		if msgID == "" {
			msgID = "-"
		}
		dst = append(dst, "1 "...)
		dst = now.UTC().AppendFormat(dst, "2006-01-02T15:04:05.999999Z07:00")
		dst = append(dst, ' ')
		dst = append(dst, host...)
		dst = append(dst, ' ')
		procID := h.ProcID
		if procID == "" {
			procID = "-"
		}
		dst = append(dst, app...)
		dst = append(dst, ' ')
		dst = append(dst, procID...)
		dst = append(dst, ' ')
		dst = append(dst, msgID...)
		dst = append(dst, " - "...)
	}
	dst = append(dst, body...)
	if h.Framed {
		dst = append(dst, '\n')
	}
	return dst
}
