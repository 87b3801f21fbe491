package httpx

import (
	"bytes"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// MaxRequestGrowth bounds how many bytes AppendRequest adds, so the caller
// can size the destination once.
const MaxRequestGrowth = len("X-Forwarded-For: \r\n") + 46 + len("Connection: Keep-Alive\r\n")

// blankLine is where the blank line ending a header block starts.
func blankLine(b []byte, end int) int {
	if end >= 2 && b[end-2] == '\r' {
		return end - 2
	}
	return end - 1
}

// RequestEdits are the http profile's changes to a request on its way to
// a member.
type RequestEdits struct {
	// XFF, when valid, is appended as an X-Forwarded-For header
	// (insert-xforwarded-for enabled).
	XFF netip.Addr
	// Transform keeps the server connection reusable (OneConnect with
	// oneconnect-transformations): a Connection: close header is renamed
	// X-Cnection, as BIG-IP does, and an HTTP/1.0 request without
	// keep-alive gets Connection: Keep-Alive.
	Transform bool
	// DropAcceptEncoding removes the Accept-Encoding fields, so that the
	// member answers uncompressed and the proxy compresses (an
	// http-compression profile without keep-accept-encoding).
	DropAcceptEncoding bool
	// Insert is header lines, each ending in CRLF, added to the request
	// (the http profile's header-insert).
	Insert []byte
	// Erase names (in lower case) a header field removed from the
	// request (header-erase); "" removes none.
	Erase string
	// DropVia removes the Via fields (via-request remove).
	DropVia bool
	// DropWSExtensions removes Sec-WebSocket-Extensions (a websocket
	// profile with compression disabled).
	DropWSExtensions bool
	// WSExtensions, when not nil, replaces the Sec-WebSocket-Extensions
	// fields with one of this value (the websocket profile's window-bits
	// put into a permessage-deflate offer).
	WSExtensions []byte
}

// Growth bounds how many bytes AppendRequest adds with ed, so the caller
// can size the destination once.
func (ed *RequestEdits) Growth() int {
	n := MaxRequestGrowth + len(ed.Insert)
	if ed.WSExtensions != nil {
		n += len("Sec-WebSocket-Extensions: \r\n") + len(ed.WSExtensions)
	}
	return n
}

// AppendRequest appends the request b, whose head is h, to dst with the
// edits applied. It allocates nothing when dst has ed.Growth() spare
// bytes beyond len(b).
func AppendRequest(dst, b []byte, h *Head, ed RequestEdits) []byte {
	return AppendRequestHead(dst, b[:h.HeaderEnd], b[h.HeaderEnd:], h, ed)
}

// AppendRequestHead is AppendRequest for a request given as its header
// block (blank line included), which h describes, and its body: an iRule
// that edited the head hands the edited block, the body goes on as it
// came.
func AppendRequestHead(dst, head, body []byte, h *Head, ed RequestEdits) []byte {
	bl := blankLine(head, h.HeaderEnd)
	base := len(dst)
	dst = append(dst, head[:bl]...)
	if ed.Transform && h.Close {
		Fields(head, h.HeaderEnd, func(name, value []byte, start, _ int) bool {
			if EqualFold(name, "connection") && containsToken(value, "close") {
				copy(dst[base+start:], "X-Cnection")
			}
			return true
		})
	}
	if ed.DropAcceptEncoding {
		dst = dropFields(dst, base, "accept-encoding")
	}
	if ed.Erase != "" {
		dst = dropFields(dst, base, ed.Erase)
	}
	if ed.DropVia {
		dst = dropFields(dst, base, "via")
	}
	if ed.DropWSExtensions || ed.WSExtensions != nil {
		dst = dropFields(dst, base, "sec-websocket-extensions")
	}
	if ed.WSExtensions != nil && !ed.DropWSExtensions {
		dst = append(dst, "Sec-WebSocket-Extensions: "...)
		dst = append(dst, ed.WSExtensions...)
		dst = append(dst, "\r\n"...)
	}
	if ed.XFF.IsValid() {
		dst = append(dst, "X-Forwarded-For: "...)
		dst = ed.XFF.Unmap().AppendTo(dst)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, ed.Insert...)
	if ed.Transform && h.Minor == 0 && !h.KeepAlive {
		dst = append(dst, "Connection: Keep-Alive\r\n"...)
	}
	dst = append(dst, head[bl:]...)
	return append(dst, body...)
}

// dropFields removes the fields called name from the header lines that
// dst holds from base on (a request line first, no blank line), moving
// the rest down.
func dropFields(dst []byte, base int, name string) []byte {
	_, i := line(dst, base)
	w := i
	for i < len(dst) {
		l, next := line(dst, i)
		if c := bytes.IndexByte(l, ':'); c > 0 && EqualFold(l[:c], name) {
			i = next
			continue
		}
		w += copy(dst[w:], dst[i:next])
		i = next
	}
	return dst[:w]
}

// ContainsToken reports whether the comma-separated field value v lists
// tok (in any case), as Connection and Upgrade values do.
func ContainsToken(v []byte, tok string) bool { return containsToken(v, tok) }

func containsToken(v []byte, tok string) bool {
	for len(v) > 0 {
		t := v
		if k := bytes.IndexByte(v, ','); k >= 0 {
			t, v = v[:k], v[k+1:]
		} else {
			v = nil
		}
		if EqualFold(trimOWS(t), tok) {
			return true
		}
	}
	return false
}

// AppendResponse appends the response b, whose head is h, to dst with the
// header lines in extra (each ending in CRLF) added to its final header
// block.
func AppendResponse(dst, b []byte, h *Head, extra []byte) []byte {
	bl := blankLine(b, h.HeaderEnd)
	dst = append(dst, b[:bl]...)
	dst = append(dst, extra...)
	return append(dst, b[bl:]...)
}

// AppendResponseHead appends a response rebuilt from its parts: the
// interim (1xx) responses that came before it, its final header block
// head (complete, blank line included, as an iRule or a rewrite left it)
// with the header lines in extra added at its end, and its body.
func AppendResponseHead(dst, interim, head, extra, body []byte) []byte {
	dst = append(dst, interim...)
	bl := blankLine(head, len(head))
	dst = append(dst, head[:bl]...)
	dst = append(dst, extra...)
	dst = append(dst, head[bl:]...)
	return append(dst, body...)
}

// SetContentLength appends to dst the header block head (complete, blank
// line included) framed for a body of n bytes: its Content-Length and
// Transfer-Encoding fields are dropped and Content-Length: n added. It is
// how a message whose body a rule replaced is sent (re-framing).
func SetContentLength(dst, head []byte, n int) []byte {
	dst, bl := withoutFraming(dst, head, false)
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, "\r\n"...)
	return append(dst, head[bl:]...)
}

// withoutFraming appends to dst the header block head up to its blank
// line without its Content-Length and Transfer-Encoding fields (and its
// Connection fields too when conn), and returns where the blank line
// starts in head: the re-framing functions add their own fields, then
// the rest of head.
func withoutFraming(dst, head []byte, conn bool) ([]byte, int) {
	return rewriteFields(dst, head, func(dst, _, name, _ []byte) ([]byte, bool) {
		return dst, EqualFold(name, "content-length") || EqualFold(name, "transfer-encoding") ||
			conn && EqualFold(name, "connection")
	})
}

// rewriteFields appends to dst the header block head (complete, blank
// line included) up to its blank line, each field line through edit:
// edit appends what takes the line's place (nothing drops it) and
// reports true, or reports false to have the line copied as it is. It
// returns where the blank line starts in head, for the caller to add its
// own fields before it: the one walk of the head edits (re-framing,
// encodings, cookies, filtered fields).
func rewriteFields(dst, head []byte, edit func(dst, line, name, value []byte) ([]byte, bool)) ([]byte, int) {
	bl := blankLine(head, len(head))
	_, first := line(head, 0)
	dst = append(dst, head[:first]...)
	for i := first; i < bl; {
		l, next := line(head, i)
		if c := bytes.IndexByte(l, ':'); c > 0 {
			if out, done := edit(dst, l, trimOWS(l[:c]), trimOWS(l[c+1:])); done {
				dst, i = out, next
				continue
			}
		}
		dst = append(dst, head[i:next]...)
		i = next
	}
	return dst, bl
}

// SetChunked appends to dst the header block head framed for a body
// whose length is not known when the head leaves (a body a stream filter
// rewrites as it passes): its Content-Length and Transfer-Encoding fields
// are dropped, and Transfer-Encoding: chunked added when chunked (an
// HTTP/1.1 peer); otherwise the body ends with the connection, so the
// Connection fields give way to Connection: close.
func SetChunked(dst, head []byte, chunked bool) []byte {
	dst, bl := withoutFraming(dst, head, !chunked)
	if chunked {
		dst = append(dst, "Transfer-Encoding: chunked\r\n"...)
	} else {
		dst = append(dst, "Connection: close\r\n"...)
	}
	return append(dst, head[bl:]...)
}

// HeaderValue is the value of the first field called name in the head of
// b that h describes, nil when there is none.
func HeaderValue(b []byte, h *Head, name string) []byte {
	var v []byte
	Fields(b, h.HeaderEnd, func(n, val []byte, _, _ int) bool {
		if EqualFold(n, name) {
			v = val
			return false
		}
		return true
	})
	return v
}

// ForwardedFor is the client address a request's X-Forwarded-For gives
// (the first, leftmost address: the original client), read from the first
// of names the request carries (X-Forwarded-For when names is empty);
// invalid when none carries an address. Names are lower case.
func ForwardedFor(b []byte, h *Head, names []string) netip.Addr {
	if len(names) == 0 {
		return forwardedAddr(HeaderValue(b, h, "x-forwarded-for"))
	}
	for _, n := range names {
		if v := HeaderValue(b, h, n); v != nil {
			return forwardedAddr(v)
		}
	}
	return netip.Addr{}
}

func forwardedAddr(v []byte) netip.Addr {
	if k := bytes.IndexByte(v, ','); k >= 0 {
		v = v[:k]
	}
	v = trimOWS(v)
	if len(v) > 2 && v[0] == '[' {
		// [v6]:port or [v6]
		if k := bytes.IndexByte(v, ']'); k > 0 {
			v = v[1:k]
		}
	}
	a, err := netip.ParseAddr(string(v))
	if err != nil {
		if ap, err := netip.ParseAddrPort(string(v)); err == nil {
			return ap.Addr().Unmap()
		}
		return netip.Addr{}
	}
	return a.Unmap()
}

// RedirectRewrite is the http profile's redirect-rewrite.
type RedirectRewrite uint8

// The redirect-rewrite settings.
const (
	// RewriteNone leaves redirects alone (none, the default).
	RewriteNone RedirectRewrite = iota
	// RewriteAll rewrites every redirect's absolute Location to the
	// client side's scheme (all).
	RewriteAll
	// RewriteMatching rewrites only a Location whose host is the one the
	// request asked for (matching).
	RewriteMatching
	// RewriteNodes rewrites only a Location naming the member's own
	// address, to the virtual server's address (nodes).
	RewriteNodes
)

// ParseRedirectRewrite reads a redirect-rewrite value.
func ParseRedirectRewrite(s string) (RedirectRewrite, bool) {
	switch s {
	case "none", "":
		return RewriteNone, true
	case "all":
		return RewriteAll, true
	case "matching":
		return RewriteMatching, true
	case "nodes":
		return RewriteNodes, true
	}
	return RewriteNone, false
}

// RedirectContext is what a redirect is rewritten against.
type RedirectContext struct {
	Mode RedirectRewrite
	// Scheme is the client side's ("http" when empty; "https" behind
	// client SSL).
	Scheme string
	// Host is the request's Host header.
	Host string
	// Virtual is the virtual server's address, Node the member's.
	Virtual netip.AddrPort
	Node    netip.Addr
}

// RewriteRedirect returns the response head (complete, blank line
// included) with its Location rewritten as c.Mode says, and whether it
// changed. Only absolute http and https Locations are rewritten: a
// relative one already follows the client's scheme and host. The scheme
// becomes c.Scheme and a port that was the old scheme's default is
// dropped; for nodes, the host becomes the virtual's address.
func RewriteRedirect(head []byte, c RedirectContext) ([]byte, bool) {
	scheme := c.Scheme
	if scheme == "" {
		scheme = "http"
	}
	var h Head
	h.HeaderEnd = len(head)
	var start, stop int
	var loc []byte
	Fields(head, len(head), func(n, v []byte, a, b int) bool {
		if EqualFold(n, "location") {
			loc, start, stop = v, a, b
			return false
		}
		return true
	})
	if loc == nil {
		return nil, false
	}
	s := string(loc)
	var rest string
	switch {
	case len(s) > 7 && strings.EqualFold(s[:7], "http://"):
		rest = s[7:]
	case len(s) > 8 && strings.EqualFold(s[:8], "https://"):
		rest = s[8:]
	default:
		return nil, false
	}
	auth, path := rest, ""
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		auth, path = rest[:k], rest[k:]
	}
	host, port := splitHostPort(auth)
	switch c.Mode {
	case RewriteAll:
	case RewriteMatching:
		rh, _ := splitHostPort(c.Host)
		if !strings.EqualFold(host, rh) {
			return nil, false
		}
	case RewriteNodes:
		a, err := netip.ParseAddr(strings.Trim(host, "[]"))
		if err != nil || a.Unmap() != c.Node.Unmap() || !c.Virtual.IsValid() {
			return nil, false
		}
		host, port = c.Virtual.Addr().Unmap().String(), strconv.Itoa(int(c.Virtual.Port()))
		if c.Virtual.Addr().Unmap().Is6() {
			host = "[" + host + "]"
		}
	default:
		return nil, false
	}
	if (port == "80" && scheme == "http") || (port == "443" && scheme == "https") ||
		(c.Mode != RewriteNodes && (port == "80" || port == "443")) {
		port = ""
	}
	nl := scheme + "://" + host
	if port != "" {
		nl += ":" + port
	}
	nl += path
	if nl == s {
		return nil, false
	}
	out := make([]byte, 0, len(head)+len(nl))
	out = append(out, head[:start]...)
	out = append(out, "Location: "...)
	out = append(out, nl...)
	out = append(out, head[stop:]...)
	return out, true
}

// splitHostPort splits "host[:port]" (IPv6 in brackets) without
// validating either part.
func splitHostPort(a string) (host, port string) {
	if strings.HasPrefix(a, "[") {
		if k := strings.IndexByte(a, ']'); k > 0 {
			host, a = a[:k+1], a[k+1:]
			if strings.HasPrefix(a, ":") {
				port = a[1:]
			}
			return host, port
		}
	}
	if k := strings.LastIndexByte(a, ':'); k >= 0 {
		return a[:k], a[k+1:]
	}
	return a, ""
}

// Cookie returns the value of the first cookie called name in the
// request's Cookie headers.
func Cookie(b []byte, h *Head, name string) (val []byte, ok bool) {
	Fields(b, h.HeaderEnd, func(n, v []byte, _, _ int) bool {
		if !EqualFold(n, "cookie") {
			return true
		}
		for len(v) > 0 {
			pair := v
			if k := bytes.IndexByte(v, ';'); k >= 0 {
				pair, v = v[:k], v[k+1:]
			} else {
				v = nil
			}
			pair = trimOWS(pair)
			if eq := bytes.IndexByte(pair, '='); eq > 0 && string(pair[:eq]) == name {
				val, ok = pair[eq+1:], true
				if n := len(val); n >= 2 && val[0] == '"' && val[n-1] == '"' {
					val = val[1 : n-1]
				}
				return false
			}
		}
		return true
	})
	return val, ok
}

// swap16 exchanges a port's two bytes, as BIG-IP's cookie encoding does.
func swap16(p uint16) uint16 { return p>>8 | p<<8 }

// AppendMember appends BIG-IP's cookie encoding of a member (K6917):
// IPv4 `<a>.<p>.0000` where a is the address's octets read as a
// little-endian 32-bit number and p the port with its bytes swapped, both
// decimal; IPv6 `vi<32 hex digits>.<p>`.
func AppendMember(dst []byte, m netip.AddrPort) []byte {
	a := m.Addr().Unmap()
	p := swap16(m.Port())
	if a.Is4() {
		o := a.As4()
		v := uint32(o[0]) | uint32(o[1])<<8 | uint32(o[2])<<16 | uint32(o[3])<<24
		dst = strconv.AppendUint(dst, uint64(v), 10)
		dst = append(dst, '.')
		dst = strconv.AppendUint(dst, uint64(p), 10)
		return append(dst, ".0000"...)
	}
	const hex = "0123456789abcdef"
	dst = append(dst, "vi"...)
	for _, c := range a.As16() {
		dst = append(dst, hex[c>>4], hex[c&15])
	}
	dst = append(dst, '.')
	return strconv.AppendUint(dst, uint64(p), 10)
}

// EncodeMember is AppendMember as a string.
func EncodeMember(m netip.AddrPort) string { return string(AppendMember(nil, m)) }

// DecodeMember reads a member back from any of BIG-IP's unencrypted
// cookie encodings: IPv4 `a.p.0000`, IPv6 `vi<hex>.p`, and the route
// domain forms `rd<N>o<32 hex>o<port>` (the route domain is not kept).
func DecodeMember(v []byte) (netip.AddrPort, bool) {
	s := string(v) // the compiler does not allocate for these conversions' uses below
	switch {
	case len(s) > 2 && s[:2] == "rd":
		i := 2
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 2 || i+34 > len(s) || s[i] != 'o' || s[i+33] != 'o' {
			return netip.AddrPort{}, false
		}
		a, ok := hex16(s[i+1 : i+33])
		if !ok {
			return netip.AddrPort{}, false
		}
		port, err := strconv.ParseUint(s[i+34:], 10, 16)
		if err != nil {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
	case len(s) > 2 && s[:2] == "vi":
		if len(s) < 36 || s[34] != '.' {
			return netip.AddrPort{}, false
		}
		a, ok := hex16(s[2:34])
		if !ok {
			return netip.AddrPort{}, false
		}
		p, err := strconv.ParseUint(s[35:], 10, 16)
		if err != nil {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(a, swap16(uint16(p))), true
	}
	d1 := bytes.IndexByte(v, '.')
	if d1 <= 0 {
		return netip.AddrPort{}, false
	}
	rest := v[d1+1:]
	d2 := bytes.IndexByte(rest, '.')
	if d2 <= 0 || string(rest[d2+1:]) != "0000" {
		return netip.AddrPort{}, false
	}
	a, err := strconv.ParseUint(string(v[:d1]), 10, 32)
	if err != nil {
		return netip.AddrPort{}, false
	}
	p, err := strconv.ParseUint(string(rest[:d2]), 10, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	addr := netip.AddrFrom4([4]byte{byte(a), byte(a >> 8), byte(a >> 16), byte(a >> 24)})
	return netip.AddrPortFrom(addr, swap16(uint16(p))), true
}

func hex16(s string) (netip.Addr, bool) {
	if len(s) != 32 {
		return netip.Addr{}, false
	}
	var b [16]byte
	for i := 0; i < 16; i++ {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return netip.Addr{}, false
		}
		b[i] = hi<<4 | lo
	}
	return netip.AddrFrom16(b), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// CookieSpec is cookie persistence's insert method (reference §7.2).
type CookieSpec struct {
	// Name is the cookie's name: cookie-name, or BIGipServer<pool>.
	Name string
	// Expiration is the cookie's lifetime; 0 makes a session cookie (no
	// expires attribute).
	Expiration time.Duration
	// HTTPOnly and Secure add those attributes.
	HTTPOnly, Secure bool
	// AlwaysSend inserts the cookie in every response, not only when the
	// request did not already carry the member's.
	AlwaysSend bool
}

// AppendSetCookie appends the Set-Cookie header line (CRLF included) that
// persists a client on member m.
func (c *CookieSpec) AppendSetCookie(dst []byte, m netip.AddrPort, now time.Time) []byte {
	dst = append(dst, "Set-Cookie: "...)
	dst = append(dst, c.Name...)
	dst = append(dst, '=')
	dst = AppendMember(dst, m)
	dst = append(dst, "; path=/"...)
	if c.Expiration > 0 {
		dst = append(dst, "; expires="...)
		dst = now.Add(c.Expiration).UTC().AppendFormat(dst, "Mon, 02-Jan-2006 15:04:05 GMT")
	}
	if c.HTTPOnly {
		dst = append(dst, "; Httponly"...)
	}
	if c.Secure {
		dst = append(dst, "; Secure"...)
	}
	return append(dst, "\r\n"...)
}

// PoolCookieName is BIG-IP's default cookie name for a pool:
// BIGipServer<pool>, the /Common/ partition left out and other partitions'
// slashes written as '~'.
func PoolCookieName(pool string) string {
	const common = "/Common/"
	if len(pool) > len(common) && pool[:len(common)] == common {
		return "BIGipServer" + pool[len(common):]
	}
	out := []byte("BIGipServer")
	for i := 0; i < len(pool); i++ {
		c := pool[i]
		if c == '/' {
			c = '~'
		}
		out = append(out, c)
	}
	return string(out)
}
