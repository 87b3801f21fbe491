// Package reqlog is BIG-IP's request-log profile's templates: a line per
// request and per response, written from `$NAME` variables (F5's
// $CLIENT_IP, $HTTP_REQUEST, $DATE_NCSA, ...) and header values (`$Host`,
// `${User-agent}`: any name that is not a variable), which the HTTP
// engine sends to a logging pool over high-speed logging.
//
// Why its own package: a template is parsed once, when the profile is
// committed, into literal runs and variable references, and expanded per
// message into a reused buffer; the engine only fills a Record.
package reqlog

import (
	"bytes"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// Record is what one request or response line may say.
type Record struct {
	Client, Virtual, Server, SNAT netip.AddrPort
	VirtualName, PoolName         string
	Hostname                      string
	// Request is the request's head (start line and fields, as the
	// member got it); Response the response's, nil in a request line.
	Request, Response []byte
	// KeepAlive: the client connection stays open after this exchange.
	KeepAlive bool
	// ResponseSize is the response's length in bytes, head included.
	ResponseSize int64
	// Start is when the request was sent on; Now when the line is
	// written (the time the date and time variables give).
	Start, Now time.Time
}

type piece struct {
	lit  string
	v    variable
	name string // a header's name, in lower case (v == varHeader)
}

// Template is a parsed request-log template.
type Template struct {
	pieces []piece
	// Unknown lists the $NAMEs that are neither F5 variables openltm
	// knows nor ordinary header names (all capitals and underscores):
	// they are read as headers, which they are not likely to be, so the
	// daemon warns of them.
	Unknown []string
}

type variable uint8

const (
	varLiteral variable = iota
	varHeader
	varClientIP
	varClientPort
	varVirtualIP
	varVirtualPort
	varVirtualName
	varPoolName
	varServerIP
	varServerPort
	varSNATIP
	varSNATPort
	varHostname
	varMethod
	varURI
	varPath
	varQuery
	varVersion
	varKeepAlive
	varRequest
	varStatCode
	varStatus
	varResponseSize
	varResponseMsecs
	varResponseUsecs
	varDateNCSA
	varDateHTTP
	varDateD
	varDateDD
	varDateDay
	varDateDY
	varDateMM
	varDateMon
	varDateMonth
	varDateYY
	varDateYYYY
	varTimeAMPM
	varTimeH12
	varTimeHH12
	varTimeHRS
	varTimeHH24
	varTimeMM
	varTimeSS
	varTimeHMS
	varTimeMsecs
	varTimeUsecs
	varTimeOffset
	varTimeUnix
	varTimeZone
	varNull
)

// variables are F5's names for the values a template may use.
var variables = map[string]variable{
	"CLIENT_IP": varClientIP, "CLIENT_PORT": varClientPort,
	"VIRTUAL_IP": varVirtualIP, "VIRTUAL_PORT": varVirtualPort, "VIRTUAL_NAME": varVirtualName,
	"VIRTUAL_POOL_NAME": varPoolName, "SERVER_IP": varServerIP, "SERVER_PORT": varServerPort,
	"SNAT_IP": varSNATIP, "SNAT_PORT": varSNATPort, "BIGIP_HOSTNAME": varHostname,
	"HTTP_METHOD": varMethod, "HTTP_URI": varURI, "HTTP_PATH": varPath, "HTTP_QUERY": varQuery,
	"HTTP_VERSION": varVersion, "HTTP_KEEPALIVE": varKeepAlive, "HTTP_REQUEST": varRequest,
	"HTTP_STATCODE": varStatCode, "HTTP_STATUS": varStatus,
	"RESPONSE_SIZE": varResponseSize, "RESPONSE_MSECS": varResponseMsecs, "RESPONSE_USECS": varResponseUsecs,
	"DATE_NCSA": varDateNCSA, "DATE_HTTP": varDateHTTP, "DATE_D": varDateD, "DATE_DD": varDateDD,
	"DATE_DAY": varDateDay, "DATE_DY": varDateDY, "DATE_MM": varDateMM, "DATE_MON": varDateMon,
	"DATE_MONTH": varDateMonth, "DATE_YY": varDateYY, "DATE_YYYY": varDateYYYY,
	"TIME_AMPM": varTimeAMPM, "TIME_H12": varTimeH12, "TIME_HH12": varTimeHH12, "TIME_HRS": varTimeHRS,
	"TIME_HH24": varTimeHH24, "TIME_MM": varTimeMM, "TIME_SS": varTimeSS, "TIME_HMS": varTimeHMS,
	"TIME_MSECS": varTimeMsecs, "TIME_USECS": varTimeUsecs, "TIME_OFFSET": varTimeOffset,
	"TIME_UNIX": varTimeUnix, "TIME_ZONE": varTimeZone, "NULL": varNull,
}

// Parse reads a template: literal text with `$NAME` (letters, digits
// and underscores) and `${NAME}` (any characters but `}`) references; a
// `$` not followed by either is literal. A name that is an F5 variable
// is that variable, any other a header of the message (a response line
// looks in the response first, then in the request [M]).
func Parse(s string) *Template {
	t := &Template{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.pieces = append(t.pieces, piece{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			lit.WriteByte(c)
			continue
		}
		var name string
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				lit.WriteByte(c)
				continue
			}
			name = s[i+2 : i+2+end]
			i += 2 + end
		} else {
			j := i + 1
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			if j == i+1 {
				lit.WriteByte(c)
				continue
			}
			name = s[i+1 : j]
			i = j - 1
		}
		flush()
		if v, ok := variables[name]; ok {
			t.pieces = append(t.pieces, piece{v: v})
			continue
		}
		if strings.ToUpper(name) == name && strings.ContainsRune(name, '_') {
			t.Unknown = append(t.Unknown, name)
		}
		t.pieces = append(t.pieces, piece{v: varHeader, name: strings.ToLower(name)})
	}
	flush()
	return t
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Append writes the line for r to dst.
func (t *Template) Append(dst []byte, r *Record) []byte {
	for i := range t.pieces {
		p := &t.pieces[i]
		if p.v == varLiteral {
			dst = append(dst, p.lit...)
			continue
		}
		dst = r.appendVar(dst, p)
	}
	return dst
}

func appendAddr(dst []byte, ap netip.AddrPort) []byte {
	if !ap.IsValid() {
		return dst
	}
	return ap.Addr().Unmap().AppendTo(dst)
}

func appendPort(dst []byte, ap netip.AddrPort) []byte {
	if !ap.IsValid() {
		return dst
	}
	return strconv.AppendUint(dst, uint64(ap.Port()), 10)
}

func (r *Record) appendVar(dst []byte, p *piece) []byte {
	method, uri, version := requestLine(r.Request)
	now := r.Now
	switch p.v {
	case varHeader:
		if v := header(r.Response, p.name); v != nil {
			return append(dst, v...)
		}
		return append(dst, header(r.Request, p.name)...)
	case varClientIP:
		return appendAddr(dst, r.Client)
	case varClientPort:
		return appendPort(dst, r.Client)
	case varVirtualIP:
		return appendAddr(dst, r.Virtual)
	case varVirtualPort:
		return appendPort(dst, r.Virtual)
	case varVirtualName:
		return append(dst, r.VirtualName...)
	case varPoolName:
		return append(dst, r.PoolName...)
	case varServerIP:
		return appendAddr(dst, r.Server)
	case varServerPort:
		return appendPort(dst, r.Server)
	case varSNATIP:
		return appendAddr(dst, r.SNAT)
	case varSNATPort:
		return appendPort(dst, r.SNAT)
	case varHostname:
		return append(dst, r.Hostname...)
	case varMethod:
		return append(dst, method...)
	case varURI:
		return append(dst, uri...)
	case varPath:
		if q := bytes.IndexByte(uri, '?'); q >= 0 {
			return append(dst, uri[:q]...)
		}
		return append(dst, uri...)
	case varQuery:
		if q := bytes.IndexByte(uri, '?'); q >= 0 {
			return append(dst, uri[q+1:]...)
		}
		return dst
	case varVersion:
		return append(dst, bytes.TrimPrefix(version, []byte("HTTP/"))...)
	case varKeepAlive:
		if r.KeepAlive {
			return append(dst, '1')
		}
		return append(dst, '0')
	case varRequest:
		if i := bytes.IndexByte(r.Request, '\r'); i >= 0 {
			return append(dst, r.Request[:i]...)
		}
		return dst
	case varStatCode, varStatus:
		if r.Response == nil {
			return dst
		}
		line := r.Response
		if i := bytes.IndexByte(line, '\r'); i >= 0 {
			line = line[:i]
		}
		// "HTTP/1.1 200 OK": the code, or the code and reason.
		if sp := bytes.IndexByte(line, ' '); sp >= 0 {
			line = line[sp+1:]
		}
		if p.v == varStatCode {
			if sp := bytes.IndexByte(line, ' '); sp >= 0 {
				line = line[:sp]
			}
		}
		return append(dst, line...)
	case varResponseSize:
		return strconv.AppendInt(dst, r.ResponseSize, 10)
	case varResponseMsecs:
		return strconv.AppendInt(dst, r.elapsed().Milliseconds(), 10)
	case varResponseUsecs:
		return strconv.AppendInt(dst, r.elapsed().Microseconds(), 10)
	case varDateNCSA:
		return now.AppendFormat(dst, "[02/Jan/2006:15:04:05 -0700]")
	case varDateHTTP:
		return now.UTC().AppendFormat(dst, "Mon, 02 Jan 2006 15:04:05 GMT")
	case varDateD:
		return now.AppendFormat(dst, "_2")
	case varDateDD:
		return now.AppendFormat(dst, "02")
	case varDateDay:
		return now.AppendFormat(dst, "Monday")
	case varDateDY:
		return now.AppendFormat(dst, "Mon")
	case varDateMM:
		return now.AppendFormat(dst, "01")
	case varDateMon:
		return now.AppendFormat(dst, "Jan")
	case varDateMonth:
		return now.AppendFormat(dst, "January")
	case varDateYY:
		return now.AppendFormat(dst, "06")
	case varDateYYYY:
		return now.AppendFormat(dst, "2006")
	case varTimeAMPM:
		return now.AppendFormat(dst, "PM")
	case varTimeH12:
		return now.AppendFormat(dst, "3")
	case varTimeHH12:
		return now.AppendFormat(dst, "03")
	case varTimeHRS:
		return strconv.AppendInt(dst, int64(now.Hour()), 10)
	case varTimeHH24:
		return now.AppendFormat(dst, "15")
	case varTimeMM:
		return now.AppendFormat(dst, "04")
	case varTimeSS:
		return now.AppendFormat(dst, "05")
	case varTimeHMS:
		return now.AppendFormat(dst, "15:04:05")
	case varTimeMsecs:
		return appendPadded(dst, now.Nanosecond()/1e6, 3)
	case varTimeUsecs:
		return appendPadded(dst, now.Nanosecond()/1e3, 6)
	case varTimeOffset:
		return now.AppendFormat(dst, "-0700")
	case varTimeUnix:
		return strconv.AppendInt(dst, now.Unix(), 10)
	case varTimeZone:
		return now.AppendFormat(dst, "MST")
	}
	return dst // $NULL
}

func (r *Record) elapsed() time.Duration {
	if r.Start.IsZero() || r.Now.Before(r.Start) {
		return 0
	}
	return r.Now.Sub(r.Start)
}

func appendPadded(dst []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// requestLine splits a request head's first line.
func requestLine(head []byte) (method, uri, version []byte) {
	line := head
	if i := bytes.IndexByte(line, '\r'); i >= 0 {
		line = line[:i]
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return line, nil, nil
	}
	method, rest := line[:sp], line[sp+1:]
	if sp2 := bytes.LastIndexByte(rest, ' '); sp2 >= 0 {
		return method, rest[:sp2], rest[sp2+1:]
	}
	return method, rest, nil
}

// header is the value of the first field called name (in lower case)
// in a message head, nil when it has none.
func header(head []byte, name string) []byte {
	h := httpx.Head{HeaderEnd: len(head)}
	return httpx.HeaderValue(head, &h, name)
}
