package sipmsg

import (
	"bytes"
	"strconv"
)

// Route is the Route field: the hops a request is to pass through, the
// next one first (RFC 3261 §20.34).
var Route = Field{long: "route"}

// EachValue calls fn with each of the field's values in order, every
// field's comma-separated values counted (commas inside <...> or a quoted
// string do not separate), trimmed; fn returns false to stop.
func (m *Message) EachValue(f Field, fn func(v []byte) bool) {
	eachField(m.B[:m.HeadEnd], func(name, value []byte, _, _ int) bool {
		if !isField(name, f.long, f.short) {
			return true
		}
		for len(bytes.TrimSpace(value)) > 0 {
			v := FirstValue(value)
			if !fn(v) {
				return false
			}
			// FirstValue's v is a view of value: skip it and its comma.
			end := bytes.Index(value, v) + len(v)
			value = value[end:]
			if c := bytes.IndexByte(value, ','); c >= 0 {
				value = value[c+1:]
			} else {
				break
			}
		}
		return true
	})
}

// URIHostPort is the host and port a SIP URI (or a name-addr holding
// one: `"Bob" <sip:bob@host:5070;lr>`) names: the host without its
// brackets, the port as given, else 5061 for sips: and 5060 otherwise;
// false when it is no sip: or sips: URI.
func URIHostPort(v []byte) (host []byte, port int, ok bool) {
	if l := bytes.IndexByte(v, '<'); l >= 0 {
		v = v[l+1:]
		if r := bytes.IndexByte(v, '>'); r >= 0 {
			v = v[:r]
		}
	}
	v = bytes.TrimSpace(v)
	port = 5060
	switch {
	case len(v) > 5 && bytes.EqualFold(v[:5], []byte("sips:")):
		v, port = v[5:], 5061
	case len(v) > 4 && bytes.EqualFold(v[:4], []byte("sip:")):
		v = v[4:]
	default:
		return nil, 0, false
	}
	if i := bytes.IndexAny(v, ";?"); i >= 0 {
		v = v[:i]
	}
	if i := bytes.LastIndexByte(v, '@'); i >= 0 {
		v = v[i+1:]
	}
	if len(v) > 0 && v[0] == '[' {
		r := bytes.IndexByte(v, ']')
		if r < 0 {
			return nil, 0, false
		}
		host, v = v[1:r], v[r+1:]
	} else if c := bytes.LastIndexByte(v, ':'); c >= 0 {
		host, v = v[:c], v[c:]
	} else {
		host, v = v, nil
	}
	if len(v) > 0 {
		if v[0] != ':' {
			return nil, 0, false
		}
		n, err := strconv.Atoi(string(v[1:]))
		if err != nil || n <= 0 || n > 65535 {
			return nil, 0, false
		}
		port = n
	}
	return host, port, len(host) > 0
}

// RouteURI is the URI a Route or Record-Route value holds (what is
// inside its <...>, or the value itself).
func RouteURI(v []byte) []byte {
	if l := bytes.IndexByte(v, '<'); l >= 0 {
		v = v[l+1:]
		if r := bytes.IndexByte(v, '>'); r >= 0 {
			v = v[:r]
		}
	}
	return bytes.TrimSpace(v)
}

// AppendRerouted appends m to dst with its Request-URI uri and its Route
// fields replaced by routes, one Route field each, where its first
// Route field was (else as its first fields): a proxy's edit as it
// takes its own hop off the route set or routes strictly (RFC 3261
// §16.4, §16.6 step 6). m must be a request.
func AppendRerouted(dst []byte, m *Message, uri []byte, routes [][]byte) []byte {
	b := m.B
	nl := bytes.IndexByte(b, '\n') + 1
	dst = append(dst, m.Method...)
	dst = append(dst, ' ')
	dst = append(dst, uri...)
	dst = append(dst, " SIP/2.0\r\n"...)
	last, put := nl, false
	emit := func() {
		for _, r := range routes {
			dst = append(dst, "Route: "...)
			dst = append(dst, r...)
			dst = append(dst, "\r\n"...)
		}
		put = true
	}
	eachField(b[:m.HeadEnd], func(name, _ []byte, from, to int) bool {
		if !isField(name, Route.long, 0) {
			return true
		}
		dst = append(dst, b[last:from]...)
		if !put {
			emit()
		}
		last = to
		return true
	})
	if !put {
		dst = append(dst, b[last:nl]...)
		emit()
		last = nl
	}
	return append(dst, b[last:]...)
}
