package htmlfilter

import (
	"bytes"
	"html"
	"strings"

	xhtml "golang.org/x/net/html"
)

// Attr is one attribute of a tag, its value unescaped.
type Attr struct{ Key, Val string }

// Tag is a tag of the body some rule matched, as the rules and
// HTML_TAG_MATCHED see and edit it; a Pass reuses one Tag, so it is valid
// only during the call that hands it out.
type Tag struct {
	name          string // lower case, "/name" for an end tag
	raw           []byte // as it came
	attrs         []Attr
	parsed        bool
	selfClosing   bool
	edited        bool // attrs changed: written anew
	removed       bool
	before, after []byte
	rule          string // the tag-raise-event rule whose event runs
}

func (t *Tag) reset(name string, raw []byte) {
	*t = Tag{name: name, raw: raw, attrs: t.attrs[:0], before: t.before[:0], after: t.after[:0]}
}

// parse reads the attributes when first asked for: most matched tags
// need none read.
func (t *Tag) parse() {
	if t.parsed || strings.HasPrefix(t.name, "/") {
		t.parsed = true
		return
	}
	t.parsed = true
	z := xhtml.NewTokenizer(bytes.NewReader(t.raw))
	tt := z.Next()
	t.selfClosing = tt == xhtml.SelfClosingTagToken
	if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
		return
	}
	_, more := z.TagName()
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		t.attrs = append(t.attrs, Attr{Key: string(k), Val: string(v)})
	}
}

// Name is the tag's name in lower case; an end tag's begins with "/" [M].
func (t *Tag) Name() string { return t.name }

// Rule is the name of the tag-raise-event rule whose HTML_TAG_MATCHED
// runs (empty outside one).
func (t *Tag) Rule() string { return t.rule }

// AttrNames are the tag's attribute names in their order.
func (t *Tag) AttrNames() []string {
	t.parse()
	ns := make([]string, len(t.attrs))
	for i, a := range t.attrs {
		ns[i] = a.Key
	}
	return ns
}

// Attr is the value of the attribute name (ok false: the tag has none).
func (t *Tag) Attr(name string) (string, bool) {
	t.parse()
	name = strings.ToLower(name)
	for _, a := range t.attrs {
		if a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

// SetAttr gives the tag the attribute name with value val, replacing its
// value when it has it already (insert false: only then).
func (t *Tag) SetAttr(name, val string, insert bool) bool {
	t.parse()
	if strings.HasPrefix(t.name, "/") {
		return false
	}
	name = strings.ToLower(name)
	for i := range t.attrs {
		if t.attrs[i].Key == name {
			t.attrs[i].Val, t.edited = val, true
			return true
		}
	}
	if !insert {
		return false
	}
	t.attrs, t.edited = append(t.attrs, Attr{Key: name, Val: val}), true
	return true
}

// RemoveAttr removes the attribute name, reporting whether it was there.
func (t *Tag) RemoveAttr(name string) bool {
	t.parse()
	name = strings.ToLower(name)
	for i := range t.attrs {
		if t.attrs[i].Key == name {
			t.attrs, t.edited = append(t.attrs[:i], t.attrs[i+1:]...), true
			return true
		}
	}
	return false
}

// Remove takes the tag itself out of the body (what it encloses stays).
func (t *Tag) Remove() { t.removed = true }

// Append puts HTML after the tag.
func (t *Tag) Append(s string) { t.after = append(t.after, s...) }

// Prepend puts HTML before the tag.
func (t *Tag) Prepend(s string) { t.before = append([]byte(s), t.before...) }

func (t *Tag) matches(r *Rule) bool {
	if r.AttrName == "" {
		return true
	}
	v, ok := t.Attr(r.AttrName)
	return ok && (r.AttrValue == "" || v == r.AttrValue)
}

// appendTo writes the tag as the rules left it.
func (t *Tag) appendTo(dst []byte) []byte {
	dst = append(dst, t.before...)
	if !t.removed {
		if !t.edited {
			dst = append(dst, t.raw...)
		} else {
			dst = append(append(dst, '<'), t.name...)
			for _, a := range t.attrs {
				dst = append(append(dst, ' '), a.Key...)
				if a.Val != "" {
					dst = append(append(append(dst, `="`...), html.EscapeString(a.Val)...), '"')
				}
			}
			if t.selfClosing {
				dst = append(dst, " /"...)
			}
			dst = append(dst, '>')
		}
	}
	return append(dst, t.after...)
}

// Comment is a comment of the body, as comment rules and
// HTML_COMMENT_MATCHED see and edit it; valid only during the call that
// hands it out.
type Comment struct {
	raw           []byte // <!--...-->
	text          []byte // replaced text (when replaced)
	replaced      bool
	removed       bool
	before, after []byte
	rule          string
}

func (c *Comment) reset(raw []byte) {
	*c = Comment{raw: raw, text: c.text[:0], before: c.before[:0], after: c.after[:0]}
}

// Text is the whole comment, <!-- and --> included, as BIG-IP's
// HTML::comment gives it [M].
func (c *Comment) Text() string {
	if c.replaced {
		return string(c.text)
	}
	return string(c.raw)
}

// Rule is the comment-raise-event rule whose event runs.
func (c *Comment) Rule() string { return c.rule }

// Replace puts s in the comment's place.
func (c *Comment) Replace(s string) { c.text, c.replaced = append(c.text[:0], s...), true }

// Remove takes the comment out of the body.
func (c *Comment) Remove() { c.removed = true }

// Append puts s after the comment.
func (c *Comment) Append(s string) { c.after = append(c.after, s...) }

// Prepend puts s before the comment.
func (c *Comment) Prepend(s string) { c.before = append([]byte(s), c.before...) }

func (c *Comment) appendTo(dst []byte) []byte {
	dst = append(dst, c.before...)
	if !c.removed {
		if c.replaced {
			dst = append(dst, c.text...)
		} else {
			dst = append(dst, c.raw...)
		}
	}
	return append(dst, c.after...)
}
