package httpcompress

import (
	"bytes"

	"github.com/openltm/openltm/dataplane/httpx"
)

// Browser is what a client's User-Agent lets the profile compress, under
// browser-workarounds and selective: browsers of the late 1990s and early
// 2000s announced gzip and then mishandled it for anything but HTML
// (scripts and style sheets decoded twice or not at all, a cached
// compressed page shown raw), so BIG-IP keeps a list of them.
type Browser uint8

// The answers of BrowserAllows: AnyType compresses as the lists say;
// HTMLOnly compresses text/html answers only; NoCompression sends every
// answer as the member gave it.
const (
	AnyType Browser = iota
	HTMLOnly
	NoCompression
)

// Browsers reports whether the profile looks at the User-Agent at all, so
// that a profile without browser-workarounds or selective reads no field.
func (p *Policy) Browsers() bool { return p.BrowserWorkarounds || p.Selective }

// BrowserAllows is what a request with this User-Agent value (nil when
// absent) may have compressed. The list is [M]: BIG-IP does not publish
// its own, so it is the one web servers have long carried (Apache's
// mod_deflate notes):
//
//   - browser-workarounds: Netscape 4.06 to 4.08 get nothing compressed,
//     the other Netscape 4 versions HTML only; Internet Explorer up to 5,
//     and 6 before XP SP2 (no "SV1" token), HTML only.
//   - selective: only the browsers known to handle compression have
//     anything compressed: a "Mozilla/5" or later (every current
//     browser), Opera from 9, Internet Explorer 6 with SV1 and from 7;
//     any other agent (none, scripts, libraries, old browsers) gets the
//     answers as they are.
func (p *Policy) BrowserAllows(ua []byte) Browser {
	ua = bytes.TrimSpace(ua)
	msie := msieVersion(ua)
	if p.BrowserWorkarounds {
		switch {
		case msie > 0 && msie <= 5, msie == 6 && !bytes.Contains(ua, []byte("SV1")):
			return HTMLOnly
		case msie > 0:
		case bytes.HasPrefix(ua, []byte("Mozilla/4.06")), bytes.HasPrefix(ua, []byte("Mozilla/4.07")), bytes.HasPrefix(ua, []byte("Mozilla/4.08")):
			return NoCompression
		case bytes.HasPrefix(ua, []byte("Mozilla/4.")):
			return HTMLOnly
		}
	}
	if p.Selective && !knownBrowser(ua, msie) {
		return NoCompression
	}
	return AnyType
}

// knownBrowser reports whether ua names a browser known to decode every
// compressed type (selective).
func knownBrowser(ua []byte, msie int) bool {
	switch {
	case msie >= 7, msie == 6 && bytes.Contains(ua, []byte("SV1")):
		return true
	case msie > 0:
		return false
	case bytes.HasPrefix(ua, []byte("Opera/")):
		return leadingInt(ua[len("Opera/"):]) >= 9
	case bytes.HasPrefix(ua, []byte("Mozilla/")):
		return leadingInt(ua[len("Mozilla/"):]) >= 5
	}
	return false
}

// msieVersion is the major version of "MSIE n" in ua, 0 when absent.
func msieVersion(ua []byte) int {
	i := bytes.Index(ua, []byte("MSIE "))
	if i < 0 {
		return 0
	}
	return leadingInt(ua[i+len("MSIE "):])
}

// leadingInt is the number at the start of b (0 when none; capped so that
// a long run of digits does not overflow).
func leadingInt(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1000 {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// IsHTML reports whether a Content-Type value is text/html, the one type
// the old browsers decode when compressed.
func IsHTML(contentType []byte) bool {
	ct := bytes.TrimSpace(contentType)
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = bytes.TrimSpace(ct[:i])
	}
	return httpx.EqualFold(ct, "text/html")
}
