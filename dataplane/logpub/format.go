package logpub

import (
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/syslog"
)

// Format is how a formatted destination (splunk, arcsight) rewrites each
// message before its forward-to destination takes it.
type Format uint8

const (
	// Unformatted passes messages as they are.
	Unformatted Format = iota
	// Splunk writes key="value" pairs separated by commas, as BIG-IP's
	// splunk destination does.
	Splunk
	// ArcSight writes ArcSight's Common Event Format (CEF:0|...).
	ArcSight
)

// A message reads as: an optional <PRI>, an optional BIG-IP message id
// ("01260013:4: "), then either key=value pairs (values bare or in
// double quotes) or free text. The pairs are the event's fields; free
// text is one field, msg. [M: BIG-IP formats only its modules' own
// events for these destinations and drops HSL::send's lines; openltm
// formats every message a publisher gives them, its own (TLS handshake
// failures, DNS query logs) and iRules' alike.]

// field is one key and value of a message.
// quoted: v came in double quotes, with its escapes (\" and \\) kept.
type field struct {
	k, v   []byte
	quoted bool
}

// parsed is a message taken apart; the slices point into the message.
type parsed struct {
	pri    int
	id     []byte
	fields []field
}

// parse takes msg apart into p (its fields slice reused).
func parse(msg []byte, p *parsed) {
	pri, body := syslog.SplitPRI(msg)
	p.pri, p.id, p.fields = pri, nil, p.fields[:0]
	body = syslog.TrimEOL(body)
	// A BIG-IP message id: eight hex digits, ':', a level digit, ':'.
	if len(body) >= 12 && body[8] == ':' && body[10] == ':' && isHex(body[:8]) {
		p.id = body[:8]
		body = body[11:]
		if len(body) > 0 && body[0] == ' ' {
			body = body[1:]
		}
	}
	if !pairs(body, p) {
		p.fields = append(p.fields[:0], field{k: []byte("msg"), v: body})
	}
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// pairs reads body as key=value pairs separated by spaces or commas;
// false when it is not made of them alone.
func pairs(body []byte, p *parsed) bool {
	i := 0
	for {
		for i < len(body) && (body[i] == ' ' || body[i] == ',') {
			i++
		}
		if i == len(body) {
			return len(p.fields) > 0
		}
		k := i
		for i < len(body) && isKey(body[i]) {
			i++
		}
		if i == k || i == len(body) || body[i] != '=' {
			return false
		}
		key := body[k:i]
		i++
		var val []byte
		if i < len(body) && body[i] == '"' {
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(body) {
				return false
			}
			p.fields = append(p.fields, field{k: key, v: body[i+1 : j], quoted: true})
			i = j + 1
			continue
		} else {
			j := i
			for j < len(body) && body[j] != ' ' && body[j] != ',' {
				j++
			}
			val, i = body[i:j], j
		}
		p.fields = append(p.fields, field{k: key, v: val})
	}
}

func isKey(c byte) bool {
	return c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// appendSplunk writes the event as Splunk's pairs: date_time, hostname,
// severity and the message id first, then the message's fields, every
// value quoted ("\" and "\\" escaped) [M: the leading fields are the
// ones BIG-IP's formatted events start with].
func appendSplunk(dst []byte, now time.Time, host string, p *parsed) []byte {
	dst = appendPRI(dst, p.pri)
	dst = append(dst, `date_time="`...)
	dst = now.UTC().AppendFormat(dst, "Jan 02 2006 15:04:05")
	dst = append(dst, `",hostname="`...)
	dst = appendQuoted(dst, []byte(host))
	dst = append(dst, `",severity="`...)
	dst = append(dst, severityWord(p.pri)...)
	dst = append(dst, '"')
	if p.id != nil {
		dst = append(dst, `,message_id="`...)
		dst = append(dst, p.id...)
		dst = append(dst, '"')
	}
	for _, f := range p.fields {
		dst = append(dst, ',')
		dst = append(dst, f.k...)
		dst = append(dst, `="`...)
		if f.quoted {
			dst = append(dst, f.v...)
		} else {
			dst = appendQuoted(dst, f.v)
		}
		dst = append(dst, '"')
	}
	return dst
}

func appendQuoted(dst, v []byte) []byte {
	for _, c := range v {
		if c == '"' || c == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	return dst
}

func appendPRI(dst []byte, pri int) []byte {
	if pri < 0 {
		return dst
	}
	dst = append(dst, '<')
	dst = strconv.AppendInt(dst, int64(pri), 10)
	return append(dst, '>')
}

func severityWord(pri int) string {
	if pri < 0 {
		return "info"
	}
	return syslog.SeverityWords[pri&7]
}

// cefSeverity maps syslog severities to CEF's 0 to 10 [M]: emerg 10,
// alert 9, crit 8, err 7, warning 5, notice 4, info 3, debug 1.
var cefSeverity = [8]string{"10", "9", "8", "7", "5", "4", "3", "1"}

// CEF's device fields [M: the vendor is F5 and the product Local Traffic
// Manager, so that a SIEM's BIG-IP parsers take the events].
const (
	cefVendor  = "F5"
	cefProduct = "Local Traffic Manager"
)

// appendCEF writes the event in CEF: CEF:0|vendor|product|version|
// signature id (the message id, 0 without one)|name|severity|extension,
// the extension being rt (milliseconds since the epoch), dvchost and the
// message's fields; header fields escape "|" and "\", extension values
// "=", "\" and line ends (the CEF specification).
func appendCEF(dst []byte, now time.Time, host, version string, p *parsed) []byte {
	dst = appendPRI(dst, p.pri)
	dst = append(dst, "CEF:0|"+cefVendor+"|"+cefProduct+"|"...)
	dst = appendCEFHeader(dst, version)
	dst = append(dst, '|')
	if p.id != nil {
		dst = append(dst, p.id...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, "|Log Message|"...)
	sev := 6
	if p.pri >= 0 {
		sev = p.pri & 7
	}
	dst = append(dst, cefSeverity[sev]...)
	dst = append(dst, "|rt="...)
	dst = strconv.AppendInt(dst, now.UnixMilli(), 10)
	dst = append(dst, " dvchost="...)
	dst = appendCEFValue(dst, []byte(host), false)
	for _, f := range p.fields {
		dst = append(dst, ' ')
		dst = append(dst, f.k...)
		dst = append(dst, '=')
		dst = appendCEFValue(dst, f.v, f.quoted)
	}
	return dst
}

func appendCEFHeader(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '|' || s[i] == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, s[i])
	}
	return dst
}

// appendCEFValue escapes v for the extension; a quoted value's own
// escapes (\" and \\) are undone first.
func appendCEFValue(dst, v []byte, quoted bool) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if quoted && c == '\\' && i+1 < len(v) {
			i++
			c = v[i]
		}
		switch c {
		case '=', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
