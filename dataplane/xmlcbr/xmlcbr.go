// Package xmlcbr is the xml profile's content-based routing: a request
// body parsed as an XML document and the profile's XPath queries
// evaluated over it, so that XML_CONTENT_BASED_ROUTING can hand a rule
// which queries matched and what they found.
//
// BIG-IP's profile (ltm profile xml) has namespace-mappings (the
// prefixes the queries may use, each bound to a namespace URI),
// xpath-queries (at most three, in order) and multiple-query-matches;
// older versions also abort-on-error and max-buffer-size, which F5's MIB
// keeps as deprecated and openltm acts on.
// The queries compile once, when the configuration is committed; a
// query that does not compile refuses the commit, naming the query and
// what is wrong with it.
package xmlcbr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
)

// MaxQueries is how many XPath queries one profile holds: BIG-IP's
// profile takes up to three (its MIB counts documents with one, two and
// three matches, ltmXmlProfileStat) [M: the commit's message is ours].
const MaxQueries = 3

// MaxMatches bounds the matches one document reports with
// multiple-query-matches enabled: one per query.
const MaxMatches = MaxQueries

// Profile is a compiled xml profile, shared read-only by every
// connection of the virtual servers that use it.
type Profile struct {
	// Name is the profile's full path, for logs and statistics.
	Name string
	// Queries are the profile's xpath-queries, compiled, in order.
	Queries []Query
	// Namespaces maps each mapped prefix to its namespace URI.
	Namespaces map[string]string
	// Multiple is multiple-query-matches: every query that matches is
	// reported; otherwise only the first one (in the profile's order).
	Multiple bool
	// AbortOnError is abort-on-error: a body that is not a well-formed
	// document resets the client's connection instead of going on
	// unparsed.
	AbortOnError bool
	// MaxBufferSize is max-buffer-size: a body longer than this (once
	// de-chunked) is not parsed, and goes on as it came.
	MaxBufferSize int
}

// DefaultMaxBufferSize is max-buffer-size of the built-in profile [M:
// BIG-IP's MIB has the setting (ltmXmlProfileMaxBufferSize, deprecated)
// but no default is at hand].
const DefaultMaxBufferSize = 65536

// Counts are an xml profile's statistics as a virtual server counts
// them (show ltm profile xml), after BIG-IP's ltmXmlProfileStat: the
// documents inspected, by how many queries matched, and the malformed
// ones.
type Counts struct {
	Inspected, OneMatch, TwoMatches, ThreeMatches, NoMatch, Malformed atomic.Uint64
}

// Count counts one inspected document: the matches it had, or err when
// it did not parse.
func (c *Counts) Count(matches int, err error) {
	c.Inspected.Add(1)
	switch {
	case err != nil:
		c.Malformed.Add(1)
	case matches == 0:
		c.NoMatch.Add(1)
	case matches == 1:
		c.OneMatch.Add(1)
	case matches == 2:
		c.TwoMatches.Add(1)
	default:
		c.ThreeMatches.Add(1)
	}
}

// Reset zeroes the counts (reset-stats ltm profile xml).
func (c *Counts) Reset() {
	for _, n := range []*atomic.Uint64{&c.Inspected, &c.OneMatch, &c.TwoMatches, &c.ThreeMatches, &c.NoMatch, &c.Malformed} {
		n.Store(0)
	}
}

// Query is one compiled XPath query.
type Query struct {
	Text string
	expr *xpath.Expr
}

// Match is one query that matched a document: the query as the profile
// gives it and the value of what it selected (an element's text, an
// attribute's value, or a boolean, number or string result).
type Match struct {
	Query, Value string
}

// ErrMalformed says a body is not a well-formed XML document.
var ErrMalformed = errors.New("xmlcbr: the body is not a well-formed XML document")

// Compile compiles a profile's queries with its namespace mappings. The
// error names the query and what is wrong with it, as the commit that
// brings the profile reports it.
func Compile(name string, namespaces map[string]string, queries []string, multiple bool) (*Profile, error) {
	if len(queries) > MaxQueries {
		return nil, fmt.Errorf("xpath-queries has %d queries: a profile holds at most %d", len(queries), MaxQueries)
	}
	p := &Profile{Name: name, Namespaces: namespaces, Multiple: multiple, MaxBufferSize: DefaultMaxBufferSize}
	for _, q := range queries {
		if strings.TrimSpace(q) == "" {
			return nil, errors.New("xpath-queries has an empty query")
		}
		expr, err := compileQuery(q, namespaces)
		if err != nil {
			return nil, fmt.Errorf("xpath query %q does not compile: %v", q, err)
		}
		p.Queries = append(p.Queries, Query{Text: q, expr: expr})
	}
	return p, nil
}

// compileQuery compiles q, and checks that each prefix it uses is
// mapped: the XPath library would otherwise compile an unmapped prefix
// as a name that never matches, and the query would fail silently.
func compileQuery(q string, namespaces map[string]string) (expr *xpath.Expr, err error) {
	defer func() {
		// (The library panics on some malformed input instead of
		// returning an error.)
		if r := recover(); r != nil {
			expr, err = nil, fmt.Errorf("%v", r)
		}
	}()
	for _, p := range prefixesOf(q) {
		if _, ok := namespaces[p]; !ok {
			return nil, fmt.Errorf("prefix %q is not in the profile's namespace-mappings", p)
		}
	}
	if len(namespaces) == 0 {
		return xpath.Compile(q)
	}
	return xpath.CompileWithNS(q, namespaces)
}

// prefixesOf lists the name prefixes a query uses (the p of p:name and
// p:*), outside its string literals; axis names (child::) are not
// prefixes.
func prefixesOf(q string) []string {
	var out []string
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				return out
			}
			i += j + 2
		case isNameStart(c):
			j := i
			for j < len(q) && isNameChar(q[j]) {
				j++
			}
			if j+1 < len(q) && q[j] == ':' && q[j+1] != ':' {
				out = append(out, q[i:j])
				j++ // the local name is read as a name of its own
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isNameChar(c byte) bool {
	return isNameStart(c) || c == '-' || c == '.' || c >= '0' && c <= '9'
}

// IsXMLType reports whether a Content-Type value names an XML document:
// text/xml, application/xml, or any type with a +xml suffix
// (application/soap+xml) [M: F5 does not say which types the profile
// parses; these are the XML media types of RFC 7303].
func IsXMLType(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	slash := bytes.IndexByte(ct, '/')
	if slash <= 0 {
		return false
	}
	sub := ct[slash+1:]
	return bytes.EqualFold(sub, []byte("xml")) && (bytes.EqualFold(ct[:slash], []byte("text")) || bytes.EqualFold(ct[:slash], []byte("application"))) ||
		len(sub) > 4 && bytes.EqualFold(sub[len(sub)-4:], []byte("+xml"))
}

// Evaluate parses body as an XML document and evaluates the profile's
// queries over it, appending the matches to dst: the first query that
// matches, or each one with multiple-query-matches. The error is
// ErrMalformed when the body does not parse; a document that parses
// and matches nothing returns no match and no error.
func (p *Profile) Evaluate(body []byte, dst []Match) ([]Match, error) {
	doc, err := parse(body)
	if err != nil {
		return dst, err
	}
	nav := xmlquery.CreateXPathNavigator(doc)
	for i := range p.Queries {
		v, ok := evaluate(p.Queries[i].expr, nav)
		if !ok {
			continue
		}
		dst = append(dst, Match{Query: p.Queries[i].Text, Value: v})
		if !p.Multiple || len(dst) >= MaxMatches {
			break
		}
	}
	return dst, nil
}

// parse reads a whole document, in any encoding XML names (charset.go):
// exactly one root element, nothing but comments, processing
// instructions and white space around it. DTDs are
// not read (no external entity is ever fetched; encoding/xml knows only
// the predefined entities).
func parse(body []byte) (doc *xmlquery.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, ErrMalformed
		}
	}()
	body, transcoded, err := toUTF8(body)
	if err != nil {
		return nil, err
	}
	t := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(t) == 0 || t[0] != '<' || t[len(t)-1] != '>' {
		return nil, ErrMalformed
	}
	doc, err = xmlquery.ParseWithOptions(bytes.NewReader(body), xmlquery.ParserOptions{Decoder: &xmlquery.DecoderOptions{Strict: true, CharsetReader: charsetReader(transcoded)}})
	if err != nil || doc == nil {
		return nil, ErrMalformed
	}
	roots := 0
	for n := doc.FirstChild; n != nil; n = n.NextSibling {
		switch n.Type {
		case xmlquery.ElementNode:
			roots++
		case xmlquery.TextNode, xmlquery.CharDataNode:
			if strings.TrimSpace(n.Data) != "" {
				return nil, ErrMalformed
			}
		}
	}
	if roots != 1 {
		return nil, ErrMalformed
	}
	return doc, nil
}

// evaluate runs one query: a node set matches when it is not empty (its
// first node's value), a boolean when true, a number when neither zero
// nor NaN, a string when not empty.
func evaluate(expr *xpath.Expr, nav xpath.NodeNavigator) (value string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			value, ok = "", false
		}
	}()
	switch v := expr.Evaluate(nav.Copy()).(type) {
	case *xpath.NodeIterator:
		if !v.MoveNext() {
			return "", false
		}
		return v.Current().Value(), true
	case bool:
		return "true", v
	case float64:
		if v == 0 || math.IsNaN(v) {
			return "", false
		}
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case string:
		return v, v != ""
	}
	return "", false
}
