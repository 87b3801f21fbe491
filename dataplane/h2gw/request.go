package h2gw

import (
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// onHeaders opens a stream (or ends one's body with trailers) and makes
// its request, HTTP/1.1, for the engine. Under mu.
func (g *conn) onHeaders(f *headerBlock) {
	id := f.id
	if id%2 == 0 {
		g.goAway(http2.ErrCodeProtocol)
		return
	}
	if s := g.streams[id]; s != nil {
		// Trailers: they end the body, and follow a chunked one as its
		// trailer section (a body of declared length has none).
		switch {
		case s.reqEnded:
			g.resetStream(s, http2.ErrCodeStreamClosed, true)
		case s.discard && f.end:
			s.reqEnded = true
			g.maybeClose(s)
		case !f.end || s.left > 0 || hasPseudo(f.fields):
			g.resetStream(s, http2.ErrCodeProtocol, true)
		default:
			g.requestBody(s, nil, true, f.fields)
		}
		return
	}
	if id <= g.lastID {
		if id == g.lastID {
			g.goAway(http2.ErrCodeStreamClosed)
		} else {
			g.goAway(http2.ErrCodeProtocol)
		}
		return
	}
	if g.disconnect.Load() {
		g.drain() // the GOAWAY names the streams before this one
	}
	g.lastID = id
	g.nopened.Add(1)
	if g.draining {
		g.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) // after HTTP2::disconnect's GOAWAY
		return
	}
	if f.selfDep || f.truncated {
		g.fr.WriteRSTStream(id, http2.ErrCodeProtocol)
		return
	}
	if g.active-g.pushed >= g.maxStreams || g.inflight >= inflightPerStreams*g.maxStreams {
		g.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
		return
	}
	var rq request
	if !rq.parse(f.fields) || rq.length > 0 && f.end {
		g.fr.WriteRSTStream(id, http2.ErrCodeProtocol) // malformed (RFC 9113 8.1.1)
		return
	}
	s := g.openStream(id)
	s.weight = f.weight
	s.reqEnded = f.end
	s.head = rq.method == "HEAD"
	s.long = rq.long
	if rq.method == "CONNECT" {
		// No tunnels: the engine's requests are HTTP/1.1 requests.
		g.respondLocal(s, 501, "CONNECT is not supported\n")
		return
	}
	s.left = rq.length
	g.head, s.chunked = rq.appendHead(g.head[:0], f.fields, g.cfg.InsertHeader, s.reqEnded)
	g.dispatch(s, g.head)
}

// dispatch gives s's request head to a free lane at once when no stream
// waits before it (the head goes from the caller's buffer), else queues
// a copy behind the waiting ones.
func (g *conn) dispatch(s *stream, head []byte) {
	if len(g.waiting) == 0 {
		if u := g.freeLane(s); u != nil {
			g.handRequest(u, s, head)
			return
		}
	}
	s.req = append(s.req, head...)
	g.waiting = append(g.waiting, s)
	g.advance()
}

// requestBody passes on a piece of s's body (the last with end, and the
// trailers that ended it): to its lane if its head went, else into
// what waits for a lane. Under mu.
func (g *conn) requestBody(s *stream, data []byte, end bool, trailers []hpack.HeaderField) {
	b := data
	if s.chunked {
		b = g.head[:0]
		if len(data) > 0 {
			b = strconv.AppendUint(b, uint64(len(data)), 16)
			b = append(b, "\r\n"...)
			b = append(b, data...)
			b = append(b, "\r\n"...)
		}
		if end {
			b = append(b, "0\r\n"...)
			b = appendTrailers(b, trailers)
			b = append(b, "\r\n"...)
		}
		g.head = b
	}
	if s.handed {
		g.handBytes(s.up, b, s, int32(len(data)))
	} else {
		s.req = append(s.req, b...)
		s.reqBody += int32(len(data))
	}
	if !end {
		return
	}
	s.reqEnded = true
	if s.handed && s.up.body == s {
		s.up.body = nil
		g.advance() // the lane may be free
	}
	g.maybeClose(s)
}

// handRequest hands s's request (head and the body so far, req) to the
// free lane u, whose responder then takes its response. Under mu.
func (g *conn) handRequest(u *upstream, s *stream, req []byte) {
	s.handed = true
	s.up = u
	s.handedAt = time.Now()
	u.exq = append(u.exq, s)
	if u.pipe != nil {
		u.pipe.lane.handed(g, s)
	}
	if !s.reqEnded {
		u.body = s
	}
	g.inflight++
	body := s.reqBody
	s.reqBody = 0
	g.handBytes(u, req, s, body)
}

// request is what a stream's HEADERS say, checked.
type request struct {
	method, path, authority string
	length                  int64 // declared; -1 none
	// long: a call that may stay open for minutes (gRPC, whose streams
	// say `te: trailers` or content-type application/grpc): it gets a
	// lane of its own, and nothing is pipelined behind it (lanes.go).
	long bool
}

// parse checks the fields (RFC 9113 section 8.3; the framer checked the
// names and values) and reports whether the request is well formed.
func (rq *request) parse(fields []hpack.HeaderField) bool {
	rq.length = -1
	var scheme, host string
	var sawHost bool
	for _, f := range fields {
		switch f.Name {
		case ":method":
			rq.method = f.Value
		case ":path":
			rq.path = f.Value
		case ":scheme":
			scheme = f.Value
		case ":authority":
			rq.authority = f.Value
		case ":protocol":
			return false // extended CONNECT is not offered
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			return false
		case "te":
			if f.Value != "trailers" {
				return false
			}
			rq.long = true
		case "content-type":
			if strings.HasPrefix(f.Value, "application/grpc") {
				rq.long = true
			}
		case "host":
			if sawHost {
				return false
			}
			host, sawHost = f.Value, true
		case "content-length":
			n, err := strconv.ParseUint(f.Value, 10, 63)
			if err != nil || rq.length >= 0 && int64(n) != rq.length {
				return false
			}
			rq.length = int64(n)
		}
	}
	if rq.authority == "" {
		rq.authority = host
	}
	if !token(rq.method) || !visible(rq.authority) {
		return false
	}
	if rq.method == "CONNECT" {
		return rq.authority != ""
	}
	return scheme != "" && rq.path != "" && visible(rq.path)
}

// appendHead appends the request's HTTP/1.1 head: the request line,
// Host (from :authority), the fields in the order they came (names in
// their canonical case, cookies joined into one field, Host,
// Content-Length and Expect left out; TE, which HTTP/2 allows only as
// "trailers", tells the member trailers are welcome, as gRPC needs),
// the insert-header field, and
// the body's framing: the declared length, Content-Length: 0 for an
// empty POST, PUT or PATCH, chunked for a body of undeclared length.
func (rq *request) appendHead(b []byte, fields []hpack.HeaderField, insert string, ended bool) (_ []byte, chunked bool) {
	b = append(b, rq.method...)
	b = append(b, ' ')
	b = append(b, rq.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, rq.authority...)
	b = append(b, "\r\n"...)
	cookies := false
	for _, f := range fields {
		switch {
		case f.Name[0] == ':':
			continue
		case f.Name == "host", f.Name == "content-length", f.Name == "expect":
			continue
		case f.Name == "cookie":
			if !cookies {
				cookies = true
				b = appendCookies(b, fields)
			}
			continue
		}
		b = appendCanonical(b, f.Name)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	if insert != "" {
		b = append(b, insert...)
		b = append(b, ": true\r\n"...)
	}
	switch {
	case rq.length > 0, rq.length == 0 && wantsLength(rq.method):
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, rq.length, 10)
		b = append(b, "\r\n"...)
	case rq.length < 0 && ended && wantsLength(rq.method):
		b = append(b, "Content-Length: 0\r\n"...)
	case rq.length < 0 && !ended:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		chunked = true
	}
	return append(b, "\r\n"...), chunked
}

// appendTrailers appends a request's trailers as a chunked body's
// trailer section, less the fields a trailer cannot carry (RFC 9110
// section 6.5.1: framing, routing, the connection's own).
func appendTrailers(b []byte, fields []hpack.HeaderField) []byte {
	for _, f := range fields {
		switch f.Name {
		case "content-length", "host", "te", "trailer", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade":
			continue
		}
		b = appendCanonical(b, f.Name)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	return b
}

// hasPseudo reports whether a trailer block has pseudo fields, which
// make it malformed (RFC 9113 section 8.1).
func hasPseudo(fields []hpack.HeaderField) bool {
	for _, f := range fields {
		if f.IsPseudo() {
			return true
		}
	}
	return false
}

// appendCookies joins the cookie fields into one (RFC 9113 8.2.3).
func appendCookies(b []byte, fields []hpack.HeaderField) []byte {
	b = append(b, "Cookie: "...)
	first := true
	for _, f := range fields {
		if f.Name == "cookie" {
			if !first {
				b = append(b, "; "...)
			}
			b = append(b, f.Value...)
			first = false
		}
	}
	return append(b, "\r\n"...)
}

// appendCanonical appends a lower-case field name in the case HTTP/1.1
// peers are used to (Content-Type).
func appendCanonical(b []byte, name string) []byte {
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper = c == '-'
		b = append(b, c)
	}
	return b
}

// wantsLength: an empty body of these is declared, as clients do.
func wantsLength(m string) bool {
	return m == "POST" || m == "PUT" || m == "PATCH"
}

// token reports whether s is an HTTP token (a method).
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '(' || c == ')' || c == '<' || c == '>' || c == '@' || c == ',' ||
			c == ';' || c == ':' || c == '\\' || c == '"' || c == '/' || c == '[' || c == ']' || c == '?' ||
			c == '=' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}

// visible reports whether s has no space or control character: it goes
// in a request line or Host as it is.
func visible(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}
