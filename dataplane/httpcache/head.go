package httpcache

import (
	"bytes"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// build reads a member's answer and returns the entry that keeps it, nil
// when the answer is not to be kept (Store's doc says which are).
func (c *Cache) build(respHead, body []byte, pinned, override bool, now time.Time) *entry {
	status, rest := nextLine(respHead)
	if !cacheableStatus(status) {
		return nil
	}
	if !pinned && (len(body) < c.cfg.MinObject || len(body) > c.cfg.MaxObject) {
		return nil
	}
	cc := ccDirectives{maxAge: -1, sMaxAge: -1}
	var (
		haveCC, pragmaNoCache bool
		varyAE, encoded       bool
		chunked               bool
		contentLength         = -1
		expires, date         []byte
		haveExpires, haveDate bool
		age                   int64
		haveAge               bool
		connection            [][]byte // the Connection field's options
	)
	for r := rest; ; {
		var line []byte
		if line, r = nextLine(r); len(line) == 0 {
			break
		}
		name, value, ok := field(line)
		if !ok {
			return nil
		}
		switch {
		case httpx.EqualFold(name, "cache-control"):
			haveCC = true
			cc.add(directives(value))
		case httpx.EqualFold(name, "pragma"):
			pragmaNoCache = pragmaNoCache || hasToken(value, "no-cache")
		case httpx.EqualFold(name, "set-cookie"), httpx.EqualFold(name, "set-cookie2"):
			return nil
		case httpx.EqualFold(name, "vary"):
			for _, t := range tokens(value) {
				if !httpx.EqualFold(t, "accept-encoding") {
					return nil // "*" too
				}
				varyAE = true
			}
		case httpx.EqualFold(name, "content-encoding"):
			for _, t := range tokens(value) {
				encoded = encoded || !httpx.EqualFold(t, "identity")
			}
		case httpx.EqualFold(name, "transfer-encoding"):
			chunked = true
		case httpx.EqualFold(name, "content-length"):
			n, err := strconv.Atoi(string(value))
			if err != nil || n < 0 || (contentLength >= 0 && n != contentLength) {
				return nil
			}
			contentLength = n
		case httpx.EqualFold(name, "expires"):
			if !haveExpires {
				expires, haveExpires = value, true
			}
		case httpx.EqualFold(name, "date"):
			if !haveDate {
				date, haveDate = value, true
			}
		case httpx.EqualFold(name, "age"):
			// The first; an invalid one is ignored [M].
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 && !haveAge {
				age, haveAge = min(n, maxDelta), true
			}
		case httpx.EqualFold(name, "connection"):
			connection = append(connection, tokens(value)...)
		}
	}
	if !override && (cc.noStore || cc.private || cc.noCache || (!haveCC && pragmaNoCache)) {
		return nil
	}
	if varyAE && encoded {
		return nil
	}
	if !chunked && contentLength >= 0 && contentLength != len(body) {
		return nil
	}

	// Freshness (RFC 9111 4.2.1), capped by cache-max-age.
	var lifetime time.Duration
	switch {
	case cc.sMaxAge >= 0:
		lifetime = time.Duration(cc.sMaxAge) * time.Second
	case cc.invalid:
		lifetime = 0
	case cc.maxAge >= 0:
		lifetime = time.Duration(cc.maxAge) * time.Second
	case haveExpires:
		exp, ok := parseHTTPDate(expires)
		if !ok {
			return nil // "Expires: 0" and the like: already stale
		}
		d, ok := parseHTTPDate(date)
		if !ok {
			d = now
		}
		lifetime = exp.Sub(d)
	default:
		lifetime = c.cfg.MaxAge
	}
	lifetime = min(lifetime, c.cfg.MaxAge) - time.Duration(age)*time.Second
	if lifetime <= 0 && override {
		// The member's "max-age=0" or past Expires is what the override
		// overrides: the answer is fresh for cache-max-age [M].
		lifetime = c.cfg.MaxAge
	}
	if lifetime <= 0 {
		return nil
	}

	// The kept head: the status line, the member's end-to-end fields,
	// the body's length.
	data := make([]byte, 0, len(respHead)+len(body)+40)
	data = append(append(data, status...), "\r\n"...)
	for r := rest; ; {
		var line []byte
		if line, r = nextLine(r); len(line) == 0 {
			break
		}
		name, _, _ := field(line)
		if hopByHop(name) || (c.cfg.InsertAge && httpx.EqualFold(name, "age")) || named(connection, name) {
			continue
		}
		data = append(append(data, line...), "\r\n"...)
	}
	data = append(data, "Content-Length: "...)
	data = strconv.AppendInt(data, int64(len(body)), 10)
	data = append(data, "\r\n"...)
	headLen := len(data)
	data = append(data, body...)
	return &entry{
		data: data, headLen: headLen, pinned: pinned,
		stored: now, expires: now.Add(lifetime), age: age,
	}
}

// cacheableStatus reports whether a status line carries a status whose
// answer may be kept: 200, 203, 300, 301 or 410.
func cacheableStatus(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("HTTP/")) {
		return false
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 || len(line) < sp+4 || (len(line) > sp+4 && line[sp+4] != ' ') {
		return false
	}
	switch string(line[sp+1 : sp+4]) {
	case "200", "203", "300", "301", "410":
		return true
	}
	return false
}

// hopByHop reports whether a response field is one the cache does not
// keep: the hop-by-hop fields of RFC 9110 7.6.1 (with Proxy-Connection,
// which some members still send) and Content-Length, which the cache
// writes itself.
func hopByHop(name []byte) bool {
	for _, h := range [...]string{"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "trailer", "upgrade", "content-length"} {
		if httpx.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// named reports whether the Connection field named a field (RFC 9110
// 7.6.1: the field is then for this hop only).
func named(options [][]byte, name []byte) bool {
	for _, o := range options {
		if bytes.EqualFold(o, name) {
			return true
		}
	}
	return false
}

// maxDelta is the largest delta-seconds the cache takes: RFC 9111 1.2.2
// reads a larger one as 2^31.
const maxDelta = 1 << 31

// ccDirectives are the Cache-Control directives the cache reads, from
// all of a message's Cache-Control fields. A max-age or s-maxage of -1
// is absent; the first of several counts (RFC 9111 4.2.1).
type ccDirectives struct {
	noCache, noStore, private bool
	maxAge, sMaxAge           int64
	// invalid: a max-age or s-maxage that is no delta-seconds, which
	// makes the answer stale (RFC 9111 4.2.1).
	invalid bool
}

func (d *ccDirectives) add(o ccDirectives) {
	d.noCache = d.noCache || o.noCache
	d.noStore = d.noStore || o.noStore
	d.private = d.private || o.private
	d.invalid = d.invalid || o.invalid
	if d.maxAge < 0 {
		d.maxAge = o.maxAge
	}
	if d.sMaxAge < 0 {
		d.sMaxAge = o.sMaxAge
	}
}

// directives reads one Cache-Control value (RFC 9111 5.2): a list of
// directives, each a token with an optional argument, a token or a
// quoted string. Names are matched case-insensitively; qualified forms
// such as no-cache="Set-Cookie" count as the bare directive.
func directives(v []byte) ccDirectives {
	d := ccDirectives{maxAge: -1, sMaxAge: -1}
	for len(v) > 0 {
		var item []byte
		item, v = nextItem(v)
		name, arg := item, []byte(nil)
		if i := bytes.IndexByte(item, '='); i >= 0 {
			name, arg = bytes.TrimSpace(item[:i]), bytes.TrimSpace(item[i+1:])
		}
		switch {
		case httpx.EqualFold(name, "no-cache"):
			d.noCache = true
		case httpx.EqualFold(name, "no-store"):
			d.noStore = true
		case httpx.EqualFold(name, "private"):
			d.private = true
		case httpx.EqualFold(name, "max-age"):
			if d.maxAge < 0 {
				d.maxAge = deltaSeconds(arg, &d.invalid)
			}
		case httpx.EqualFold(name, "s-maxage"):
			if d.sMaxAge < 0 {
				d.sMaxAge = deltaSeconds(arg, &d.invalid)
			}
		}
	}
	return d
}

// deltaSeconds reads a directive's delta-seconds, quoted or not; -1, and
// invalid set, when it is none.
func deltaSeconds(b []byte, invalid *bool) int64 {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	if len(b) == 0 {
		*invalid = true
		return -1
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			*invalid = true
			return -1
		}
		if n < maxDelta {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, maxDelta)
}

// nextItem splits the first element off a comma-separated list, commas
// inside a quoted string not counting.
func nextItem(v []byte) (item, rest []byte) {
	quoted := false
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				return bytes.TrimSpace(v[:i]), v[i+1:]
			}
		}
	}
	return bytes.TrimSpace(v), nil
}

// tokens splits a comma-separated list of tokens, empty elements left
// out (RFC 9110 5.6.1).
func tokens(v []byte) [][]byte {
	var out [][]byte
	for len(v) > 0 {
		var t []byte
		t, v = nextItem(v)
		if len(t) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// hasToken reports whether the list v has tok, by name (an argument
// after "=" is ignored), case-insensitively.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		var t []byte
		t, v = nextItem(v)
		if i := bytes.IndexByte(t, '='); i >= 0 {
			t = bytes.TrimSpace(t[:i])
		}
		if httpx.EqualFold(t, tok) {
			return true
		}
	}
	return false
}

// nextLine splits the first line off a header block, without its CRLF
// (or bare LF). The blank line that ends the block is an empty line.
func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// field splits a header line into its name and its value, without the
// optional whitespace around it; ok false when it is no field line (no
// colon, or whitespace before it: RFC 9112 5.1).
func field(line []byte) (name, value []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 || line[i-1] == ' ' || line[i-1] == '\t' {
		return nil, nil, false
	}
	return line[:i], bytes.Trim(line[i+1:], " \t"), true
}

// parseHTTPDate reads an HTTP-date in any of its three forms (RFC 9110
// 5.6.7).
func parseHTTPDate(b []byte) (time.Time, bool) {
	if len(b) == 0 {
		return time.Time{}, false
	}
	s := string(b)
	for _, layout := range [...]string{
		"Mon, 02 Jan 2006 15:04:05 GMT",
		"Monday, 02-Jan-06 15:04:05 GMT",
		"Mon Jan _2 15:04:05 2006",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func hasUpper(b []byte) bool {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

func appendLower(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
