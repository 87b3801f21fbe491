package htmlfilter

import (
	"bytes"
	"strings"
)

// MaxHold bounds what a Pass holds back waiting for the end of a tag or
// comment: past it, the held bytes pass on as text, unmatched [M].
const MaxHold = 64 << 10

// Pass applies the rules to one body. It keeps a tag or comment split
// between parts, so it is not safe for concurrent use; the HTTP engine
// makes one per response.
type Pass struct {
	c         *Rules
	onTag     func(*Tag)
	onComment func(*Comment)
	held      []byte
	rawEnd    string // inside script, style…: the element whose end tag ends it
	off       bool
	tag       Tag
	com       Comment
	name      []byte // the tag in hand's name, lower case
	matched   int
}

// New starts a pass over one body. onTag runs for each tag a
// tag-raise-event rule matches and onComment for each comment when a
// comment-raise-event rule is there (the host's HTML_TAG_MATCHED and
// HTML_COMMENT_MATCHED); either may be nil. They may edit what they are
// handed, and may switch the pass off with SetEnabled.
func (c *Rules) New(onTag func(*Tag), onComment func(*Comment)) *Pass {
	return &Pass{c: c, onTag: onTag, onComment: onComment}
}

// SetEnabled switches the matching on or off for the rest of the body
// (HTML::enable, HTML::disable): off, bytes pass unchanged.
func (p *Pass) SetEnabled(on bool) { p.off = !on }

// Matched is how many tags and comments rules have matched.
func (p *Pass) Matched() int { return p.matched }

// rawText are the elements whose contents are text to HTML.
var rawText = []string{"script", "style", "textarea", "title", "xmp"}

// Write passes b, the next bytes of the body, and appends to dst what
// goes on; what may still be the start of a tag or comment is held.
func (p *Pass) Write(dst, b []byte) []byte {
	data := b
	if len(p.held) > 0 {
		p.held = append(p.held, b...)
		data = p.held
	}
	dst, rest := p.run(dst, data)
	if len(rest) > MaxHold {
		dst, rest = append(dst, rest...), nil
	}
	if len(p.held) > 0 {
		p.held = append(p.held[:0], rest...) // (rest is within held: copy moves it down)
	} else {
		p.held = append(p.held, rest...)
	}
	return dst
}

// Close appends what is still held, as it came, at the end of the body.
func (p *Pass) Close(dst []byte) []byte {
	dst = append(dst, p.held...)
	p.held = p.held[:0]
	return dst
}

// run passes data and returns the tail that must wait for more.
func (p *Pass) run(dst, data []byte) ([]byte, []byte) {
	i := 0
	for i < len(data) {
		if p.rawEnd != "" {
			j, done := rawEndAt(data[i:], p.rawEnd)
			if !done {
				return append(dst, data[i:i+j]...), data[i+j:]
			}
			dst = append(dst, data[i:i+j]...)
			i += j
			p.rawEnd = ""
		}
		j := bytes.IndexByte(data[i:], '<')
		if j < 0 {
			return append(dst, data[i:]...), nil
		}
		dst = append(dst, data[i:i+j]...)
		i += j
		n, kind := tokenEnd(data[i:])
		switch {
		case n < 0: // needs more
			return dst, data[i:]
		case kind == tokText:
			dst = append(dst, data[i:i+n]...)
		case kind == tokComment:
			dst = p.comment(dst, data[i:i+n])
		default:
			dst = p.tagAt(dst, data[i:i+n], kind == tokEnd)
		}
		i += n
	}
	return dst, nil
}

func (p *Pass) comment(dst, raw []byte) []byte {
	if p.off || len(p.c.comments) == 0 {
		return append(dst, raw...)
	}
	c := &p.com
	c.reset(raw)
	for _, k := range p.c.comments {
		r := &p.c.rules[k]
		p.matched++
		switch r.Kind {
		case CommentRemove:
			c.Remove()
		case CommentRaiseEvent:
			if p.onComment != nil {
				c.rule = r.Name
				p.onComment(c)
				c.rule = ""
			}
		}
	}
	return c.appendTo(dst)
}

func (p *Pass) tagAt(dst, raw []byte, end bool) []byte {
	p.name = tagName(p.name[:0], raw, end)
	if !end && !selfClosed(raw) {
		for _, e := range rawText {
			if string(p.name) == e {
				p.rawEnd = e
			}
		}
	}
	if p.off {
		return append(dst, raw...)
	}
	ks := p.c.tags[string(p.name)] // (no copy: a map index)
	if len(ks) == 0 {
		return append(dst, raw...)
	}
	name := string(p.name)
	t := &p.tag
	t.reset(name, raw)
	hit := false
	for _, k := range ks {
		r := &p.c.rules[k]
		if !t.matches(r) {
			continue
		}
		hit = true
		switch r.Kind {
		case TagAppendHTML:
			t.Append(r.Text)
		case TagPrependHTML:
			t.Prepend(r.Text)
		case TagRemove:
			t.Remove()
		case TagRemoveAttribute:
			t.RemoveAttr(r.RemoveAttr)
		case TagRaiseEvent:
			if p.onTag != nil {
				t.rule = r.Name
				p.onTag(t)
				t.rule = ""
			}
		}
	}
	if hit {
		p.matched++
	}
	return t.appendTo(dst)
}

// tagName appends to dst the lower-case name of the tag raw ("/name"
// for an end tag).
func tagName(dst, raw []byte, end bool) []byte {
	s := 1
	if end {
		s = 2
		dst = append(dst, '/')
	}
	for e := s; e < len(raw) && !isSpace(raw[e]) && raw[e] != '/' && raw[e] != '>'; e++ {
		c := raw[e]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func selfClosed(raw []byte) bool { return len(raw) >= 2 && raw[len(raw)-2] == '/' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

const (
	tokText = iota
	tokComment
	tokStart
	tokEnd
)

// tokenEnd reads the token at the start of b (b[0] is '<'): its length
// and kind, or -1 when b ends before it does.
func tokenEnd(b []byte) (int, int) {
	if len(b) < 2 {
		return -1, 0
	}
	switch c := b[1]; {
	case c == '!':
		if len(b) < 4 {
			if bytes.HasPrefix([]byte("<!--"), b) {
				return -1, 0
			}
		} else if b[2] == '-' && b[3] == '-' {
			k := bytes.Index(b[4:], []byte("-->"))
			if k < 0 {
				return -1, 0
			}
			return 4 + k + 3, tokComment
		}
		fallthrough
	case c == '?':
		k := bytes.IndexByte(b, '>') // <!DOCTYPE …>, <?xml …?>
		if k < 0 {
			return -1, 0
		}
		return k + 1, tokText
	case c == '/':
		if len(b) < 3 {
			return -1, 0
		}
		if !isLetter(b[2]) {
			return 1, tokText
		}
		k := bytes.IndexByte(b, '>')
		if k < 0 {
			return -1, 0
		}
		return k + 1, tokEnd
	case isLetter(c):
		return startTagEnd(b)
	}
	return 1, tokText // a '<' that opens nothing
}

// startTagEnd finds the '>' that ends the start tag at the start of b,
// skipping quoted attribute values.
func startTagEnd(b []byte) (int, int) {
	afterEq := false
	for i := 2; i < len(b); i++ {
		switch c := b[i]; {
		case c == '>':
			return i + 1, tokStart
		case c == '=':
			afterEq = true
		case (c == '"' || c == '\'') && afterEq:
			k := bytes.IndexByte(b[i+1:], c)
			if k < 0 {
				return -1, 0
			}
			i += k + 1
			afterEq = false
		case isSpace(c):
		default:
			afterEq = false
		}
	}
	return -1, 0
}

// rawEndAt finds the end tag </name in b, inside a raw-text element: the
// bytes before it (done), or, when b ends first, how many bytes may pass
// (those that cannot begin it).
func rawEndAt(b []byte, name string) (int, bool) {
	for i := 0; i < len(b); {
		k := bytes.Index(b[i:], []byte("</"))
		if k < 0 {
			if len(b) > 0 && b[len(b)-1] == '<' {
				return len(b) - 1, false
			}
			return len(b), false
		}
		at := i + k
		rest := b[at+2:]
		if len(rest) < len(name)+1 {
			if len(rest) <= len(name) && strings.EqualFold(string(rest), name[:len(rest)]) {
				return at, false
			}
		} else if strings.EqualFold(string(rest[:len(name)]), name) {
			if c := rest[len(name)]; isSpace(c) || c == '>' || c == '/' {
				return at, true
			}
		}
		i = at + 2
	}
	return len(b), false
}
