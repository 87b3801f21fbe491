// Package httpcompress is BIG-IP's http-compression profile for the HTTP
// engine: which requests and responses are compressed, and the
// compression of a body that passes in parts. It knows HTTP only as the
// bytes of a few header values; the engine (dataplane/mblb) reads them,
// rewrites the heads and frames the bodies.
package httpcompress

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/hoststat"
)

// Coding is a content coding the proxy can apply.
type Coding uint8

// The codings: None leaves a body as it is. Deflate is HTTP's "deflate",
// the zlib format (RFC 1950), not raw deflate.
const (
	None Coding = iota
	Gzip
	Deflate
)

// String is the coding's name in Accept-Encoding and Content-Encoding.
func (c Coding) String() string {
	switch c {
	case Gzip:
		return "gzip"
	case Deflate:
		return "deflate"
	}
	return "identity"
}

// ParseCoding reads a method-prefer value (or COMPRESS::method prefer's
// argument).
func ParseCoding(s string) (Coding, bool) {
	switch s {
	case "gzip":
		return Gzip, true
	case "deflate":
		return Deflate, true
	}
	return None, false
}

// Config is the profile's properties as the daemon reads them.
type Config struct {
	// Profile names the profile (for messages).
	Profile string
	// ContentTypeInclude and ContentTypeExclude are regular expressions
	// over the response's Content-Type; URIInclude and URIExclude over
	// the request's URI. An empty include list includes everything.
	ContentTypeInclude, ContentTypeExclude []string
	URIInclude, URIExclude                 []string
	// MinSize: a response whose Content-Length is below it is sent as it
	// is (one of unknown length is compressed).
	MinSize int
	// Level is gzip-level, 1 (fastest) to 9 (smallest).
	Level int
	// BufferSize is buffer-size: the most compressed bytes of one
	// response that leave with a Content-Length (ByLength). A body that
	// compresses to more is sent as BIG-IP sends what it could not hold
	// whole: chunked to an HTTP/1.1 client, ended by the close for an
	// HTTP/1.0 one, so that a small buffer-size bounds what a client
	// waits for before the body starts. 0 sends every compressed body
	// so; the daemon fills in BIG-IP's default, 4096.
	BufferSize int
	// Prefer is method-prefer: the coding used when a client accepts both
	// equally.
	Prefer Coding
	// KeepAcceptEncoding leaves a compressed request's Accept-Encoding
	// for the member; by default it is removed, so the member answers
	// uncompressed and the proxy compresses.
	KeepAcceptEncoding bool
	// Vary adds Accept-Encoding to a compressed response's Vary field.
	Vary bool
	// AllowHTTP10 compresses answers to HTTP/1.0 requests too.
	AllowHTTP10 bool
	// BrowserWorkarounds and Selective are the profile's known-browser
	// rules (BrowserAllows).
	BrowserWorkarounds, Selective bool
	// CPUSaver stops compression while ltmd's load is at or above
	// CPUSaverHigh percent, until it falls below CPUSaverLow: compressing
	// is what a loaded proxy can stop doing without failing anyone.
	CPUSaver                  bool
	CPUSaverHigh, CPUSaverLow int
	// CPU measures ltmd's load for CPUSaver; nil is the process's own
	// meter, read at most once a second.
	CPU *hoststat.CPUMeter
}

// Policy is a compiled profile: shared, read-only, by every connection
// of the virtual servers that use it.
type Policy struct {
	Config
	ctInc, ctExc, uriInc, uriExc []*regexp.Regexp
	// saving is true while the CPU saver holds compression off.
	saving atomic.Bool
}

// processCPU is ltmd's load as every profile's CPU saver reads it.
var processCPU = &hoststat.CPUMeter{Every: time.Second}

// Saving reports whether the CPU saver holds compression off now: it
// starts at cpu-saver-high percent of ltmd's load and ends below
// cpu-saver-low, so that compression does not flap at one threshold.
func (p *Policy) Saving() bool {
	if !p.CPUSaver {
		return false
	}
	load := p.CPU.Percent()
	if p.saving.Load() {
		if load < float64(p.CPUSaverLow) {
			p.saving.Store(false)
			return false
		}
		return true
	}
	if load >= float64(p.CPUSaverHigh) {
		p.saving.Store(true)
		return true
	}
	return false
}

// New compiles a profile. A pattern that is no regular expression or a
// level out of range is an error naming the property, so the profile is
// refused when it is made rather than first when a response passes.
func New(c Config) (*Policy, error) {
	p := &Policy{Config: c}
	if c.Level < 1 || c.Level > 9 {
		return nil, fmt.Errorf("gzip-level %d is out of range: 1 to 9", c.Level)
	}
	if c.MinSize < 0 {
		return nil, fmt.Errorf("min-size %d is negative", c.MinSize)
	}
	if c.BufferSize < 0 {
		return nil, fmt.Errorf("buffer-size %d is negative", c.BufferSize)
	}
	if p.Prefer == None {
		p.Prefer = Gzip
	}
	if c.CPUSaverHigh < 0 || c.CPUSaverHigh > 100 || c.CPUSaverLow < 0 || c.CPUSaverLow > 100 {
		return nil, fmt.Errorf("cpu-saver-high %d and cpu-saver-low %d must be percents, 0 to 100", c.CPUSaverHigh, c.CPUSaverLow)
	}
	if c.CPUSaverLow > c.CPUSaverHigh {
		return nil, fmt.Errorf("cpu-saver-low %d is above cpu-saver-high %d", c.CPUSaverLow, c.CPUSaverHigh)
	}
	if p.CPU == nil {
		p.CPU = processCPU
	}
	for _, l := range []struct {
		prop string
		pats []string
		out  *[]*regexp.Regexp
	}{
		{"content-type-include", c.ContentTypeInclude, &p.ctInc},
		{"content-type-exclude", c.ContentTypeExclude, &p.ctExc},
		{"uri-include", c.URIInclude, &p.uriInc},
		{"uri-exclude", c.URIExclude, &p.uriExc},
	} {
		for _, pat := range l.pats {
			// BIG-IP matches these case-insensitively (media types and
			// schemes are; paths mostly are in practice).
			if _, err := regexp.Compile(pat); err != nil { // (the error names pat, not the flag added below)
				return nil, fmt.Errorf("%s %q is not a regular expression: %v", l.prop, pat, unwrapSyntax(err))
			}
			re, err := regexp.Compile("(?i)" + pat)
			if err != nil {
				return nil, fmt.Errorf("%s %q is not a regular expression: %v", l.prop, pat, unwrapSyntax(err))
			}
			*l.out = append(*l.out, re)
		}
	}
	return p, nil
}

// unwrapSyntax drops the "error parsing regexp: " Go prefixes to its
// syntax errors; the message already says what the value is.
func unwrapSyntax(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// listed reports whether b passes an include/exclude pair: it matches
// no exclude pattern, and an include pattern unless there are none.
func listed(inc, exc []*regexp.Regexp, b []byte) bool {
	for _, re := range exc {
		if re.Match(b) {
			return false
		}
	}
	if len(inc) == 0 {
		return true
	}
	for _, re := range inc {
		if re.Match(b) {
			return true
		}
	}
	return false
}

// ByLength reports whether a whole body that compressed to n bytes
// leaves with its Content-Length: n is within buffer-size.
func (p *Policy) ByLength(n int) bool { return n <= p.BufferSize }

// URIAllowed reports whether the profile's URI lists let a request's
// answer be compressed.
func (p *Policy) URIAllowed(uri []byte) bool { return listed(p.uriInc, p.uriExc, uri) }

// TypeAllowed reports whether the profile's content-type lists let a
// response with this Content-Type value be compressed. A response with
// no Content-Type passes only when the include list is empty.
func (p *Policy) TypeAllowed(contentType []byte) bool {
	if len(contentType) == 0 {
		return len(p.ctInc) == 0
	}
	return listed(p.ctInc, p.ctExc, contentType)
}

// Accept is what a client's Accept-Encoding allows: the q-value of each
// coding the proxy can apply, in thousandths (0: not acceptable). It is
// kept with the request so that a rule answering the response may still
// choose between the two.
type Accept struct{ Gzip, Deflate uint16 }

// Accepts reads an Accept-Encoding value (RFC 9110 12.5.3): "*" stands
// for a coding the field does not name, x-gzip for gzip, and a missing
// field or a malformed weight allows neither.
func Accepts(accept []byte) Accept {
	qg, qd, qs := -1, -1, -1 // -1: not named
	for len(accept) > 0 {
		item := accept
		if i := bytes.IndexByte(accept, ','); i >= 0 {
			item, accept = accept[:i], accept[i+1:]
		} else {
			accept = nil
		}
		name, q := codingItem(item)
		switch {
		case httpx.EqualFold(name, "gzip"), httpx.EqualFold(name, "x-gzip"):
			qg = max(qg, q)
		case httpx.EqualFold(name, "deflate"):
			qd = max(qd, q)
		case len(name) == 1 && name[0] == '*':
			qs = q
		}
	}
	if qg < 0 {
		qg = qs
	}
	if qd < 0 {
		qd = qs
	}
	return Accept{Gzip: uint16(max(qg, 0)), Deflate: uint16(max(qd, 0))}
}

// Any reports whether the client accepts a coding the proxy can apply.
func (a Accept) Any() bool { return a.Gzip > 0 || a.Deflate > 0 }

// Choose is the coding for the answer: the one with the higher q-value,
// prefer (method-prefer, COMPRESS::method prefer) on a tie; None when
// the client accepts neither.
func (a Accept) Choose(prefer Coding) Coding {
	switch {
	case !a.Any():
		return None
	case a.Gzip > a.Deflate:
		return Gzip
	case a.Deflate > a.Gzip:
		return Deflate
	case prefer == Deflate:
		return Deflate
	}
	return Gzip
}

// codingItem splits one Accept-Encoding element into its coding and its
// q-value in thousandths (1000 when absent; 0 when it does not parse, so
// a malformed weight never turns compression on).
func codingItem(item []byte) ([]byte, int) {
	params := []byte(nil)
	if i := bytes.IndexByte(item, ';'); i >= 0 {
		item, params = item[:i], item[i+1:]
	}
	name := bytes.TrimSpace(item)
	q := 1000
	for len(params) > 0 {
		p := params
		if i := bytes.IndexByte(params, ';'); i >= 0 {
			p, params = params[:i], params[i+1:]
		} else {
			params = nil
		}
		p = bytes.TrimSpace(p)
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
			continue
		}
		q = qvalue(p[2:])
	}
	return name, q
}

// qvalue reads a weight, "0" to "1" with up to three decimals; 0 when
// malformed.
func qvalue(b []byte) int {
	if len(b) == 0 || len(b) > 5 || (b[0] != '0' && b[0] != '1') {
		return 0
	}
	n := int(b[0]-'0') * 1000
	if len(b) == 1 {
		return n
	}
	if b[1] != '.' {
		return 0
	}
	scale := 100
	for _, c := range b[2:] {
		if c < '0' || c > '9' {
			return 0
		}
		n += int(c-'0') * scale
		scale /= 10
	}
	if n > 1000 {
		return 0
	}
	return n
}

// ResponseFacts are the parts of a response's head the decision reads.
type ResponseFacts struct {
	Status int
	// ContentLength is -1 when unknown (chunked, or ended by the close).
	ContentLength int64
	// The header values (nil when absent).
	ContentType, ContentEncoding, CacheControl, ContentRange []byte
}

// Compressible reports whether a response can be compressed at all,
// whatever the profile's lists say: a complete answer (200, or the 403
// and 404 pages, as nginx compresses [M]: BIG-IP's list is not
// documented), with a body, not already encoded, not a range, and not
// marked no-transform by its sender.
func Compressible(f *ResponseFacts) bool {
	switch f.Status {
	case 200, 403, 404:
	default:
		return false
	}
	if f.ContentLength == 0 || len(f.ContentRange) > 0 {
		return false
	}
	if ce := bytes.TrimSpace(f.ContentEncoding); len(ce) > 0 && !httpx.EqualFold(ce, "identity") {
		return false
	}
	return !containsTokenFold(f.CacheControl, "no-transform")
}

// ResponseAllowed reports whether the profile compresses a response that
// is Compressible: its content type is listed and its length is not known
// to be below min-size.
func (p *Policy) ResponseAllowed(f *ResponseFacts) bool {
	if f.ContentLength >= 0 && f.ContentLength < int64(p.MinSize) {
		return false
	}
	return p.TypeAllowed(f.ContentType)
}

// containsTokenFold reports whether the comma-separated list v has tok
// (case-insensitively, directives with arguments by name).
func containsTokenFold(v []byte, tok string) bool {
	for len(v) > 0 {
		t := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if i := bytes.IndexByte(t, '='); i >= 0 {
			t = t[:i]
		}
		if httpx.EqualFold(bytes.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}
