package rewrite

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// RewriteBody maps the links of a whole body of kind k (rule: the
// request's rule) and appends the result to dst. ok false: nothing
// changed, dst is as it came.
func (p *Profile) RewriteBody(dst, body []byte, k BodyKind, rule int) ([]byte, bool) {
	n := len(dst)
	switch k {
	case BodyHTML:
		dst = p.html(dst, body, rule)
	case BodyCSS:
		dst = p.css(dst, body, rule)
	case BodyJS:
		dst = p.js(dst, body, rule)
	default:
		return dst, false
	}
	if bytes.Equal(dst[n:], body) {
		return dst[:n], false
	}
	return dst, true
}

// urlAttrs are the HTML attributes whose value is one URL.
var urlAttrs = map[string]bool{
	"href": true, "src": true, "action": true, "formaction": true, "background": true,
	"cite": true, "poster": true, "data": true, "codebase": true, "longdesc": true,
	"usemap": true, "manifest": true, "icon": true, "profile": true, "archive": true,
}

// html rewrites an HTML document token by token (golang.org/x/net/html's
// tokenizer): URL attributes, srcset, meta refresh, style attributes and
// <style> text as CSS, on* attributes and <script> text as JavaScript.
// Tokens it does not change are copied byte for byte.
func (p *Profile) html(dst, body []byte, rule int) []byte {
	z := html.NewTokenizer(bytes.NewReader(body))
	raw := "" // the raw-text element being read (script, style)
	off := 0  // bytes of body the tokens so far took
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			// The end, or a tag the body ends inside: what the
			// tokenizer holds back goes as it came.
			return append(dst, body[min(off, len(body)):]...)
		}
		off += len(z.Raw())
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			if out, ok := p.tag(&t, rule); ok {
				dst = append(dst, out...)
			} else {
				dst = append(dst, z.Raw()...)
			}
			if tt == html.StartTagToken && (t.Data == "script" || t.Data == "style") {
				raw = t.Data
			}
			continue
		case html.EndTagToken:
			raw = ""
		case html.TextToken:
			switch raw {
			case "script":
				dst = p.js(dst, z.Raw(), rule)
				continue
			case "style":
				dst = p.css(dst, z.Raw(), rule)
				continue
			}
		}
		dst = append(dst, z.Raw()...)
	}
}

// tag rewrites a start tag's attributes; ok false when none changed.
func (p *Profile) tag(t *html.Token, rule int) (string, bool) {
	changed := false
	refresh := false
	if t.Data == "meta" {
		for _, a := range t.Attr {
			if strings.EqualFold(a.Key, "http-equiv") && strings.EqualFold(a.Val, "refresh") {
				refresh = true
			}
		}
	}
	for i := range t.Attr {
		a := &t.Attr[i]
		var nv string
		ok := false
		switch {
		case urlAttrs[a.Key]:
			nv, ok = p.ToClient(strings.TrimSpace(a.Val), rule)
		case a.Key == "srcset":
			nv, ok = p.srcset(a.Val, rule)
		case a.Key == "content" && refresh:
			nv, ok = p.refresh(a.Val, rule)
		case a.Key == "style":
			nv = string(p.css(nil, []byte(a.Val), rule))
			ok = nv != a.Val
		case strings.HasPrefix(a.Key, "on"):
			nv = string(p.js(nil, []byte(a.Val), rule))
			ok = nv != a.Val
		}
		if ok {
			a.Val, changed = nv, true
		}
	}
	if !changed {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('<')
	b.WriteString(t.Data)
	for _, a := range t.Attr {
		b.WriteByte(' ')
		b.WriteString(a.Key)
		b.WriteString(`="`)
		b.WriteString(html.EscapeString(a.Val))
		b.WriteByte('"')
	}
	if t.Type == html.SelfClosingTagToken {
		b.WriteString(" /")
	}
	b.WriteByte('>')
	return b.String(), true
}

// srcset maps each URL of a srcset ("a.png 1x, /b.png 2x").
func (p *Profile) srcset(v string, rule int) (string, bool) {
	items := strings.Split(v, ",")
	changed := false
	for i, it := range items {
		f := strings.Fields(it)
		if len(f) == 0 {
			continue
		}
		if nu, ok := p.ToClient(f[0], rule); ok {
			f[0] = nu
			items[i] = " " + strings.Join(f, " ")
			if i == 0 {
				items[i] = items[i][1:]
			}
			changed = true
		}
	}
	return strings.Join(items, ","), changed
}

// css rewrites url(...) and @import "..." in a style sheet.
func (p *Profile) css(dst, b []byte, rule int) []byte {
	for len(b) > 0 {
		i := indexFold(b, "url(")
		j := bytes.Index(b, []byte("@import"))
		if i < 0 && j < 0 {
			break
		}
		if i < 0 || (j >= 0 && j < i) {
			// @import "x" (url(...) is read by the url( case)
			k := j + len("@import")
			for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
				k++
			}
			if k < len(b) && (b[k] == '"' || b[k] == '\'') {
				e := bytes.IndexByte(b[k+1:], b[k])
				if e >= 0 {
					dst = append(dst, b[:k+1]...)
					dst = p.mapped(dst, string(b[k+1:k+1+e]), rule)
					b = b[k+1+e:]
					continue
				}
			}
			dst = append(dst, b[:k]...)
			b = b[k:]
			continue
		}
		k := i + len("url(")
		dst = append(dst, b[:k]...)
		b = b[k:]
		e := bytes.IndexByte(b, ')')
		if e < 0 {
			break
		}
		in := b[:e]
		t := bytes.TrimSpace(in)
		q := byte(0)
		if len(t) >= 2 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] {
			q, t = t[0], t[1:len(t)-1]
		}
		if nu, ok := p.ToClient(string(t), rule); ok {
			if q != 0 {
				dst = append(dst, q)
			}
			dst = append(dst, nu...)
			if q != 0 {
				dst = append(dst, q)
			}
		} else {
			dst = append(dst, in...)
		}
		b = b[e:]
	}
	return append(dst, b...)
}

// mapped appends u mapped to the client's space, or as it is.
func (p *Profile) mapped(dst []byte, u string, rule int) []byte {
	if nu, ok := p.ToClient(u, rule); ok {
		return append(dst, nu...)
	}
	return append(dst, u...)
}

func indexFold(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(s)], []byte(s)) {
			return i
		}
	}
	return -1
}

// js rewrites JavaScript's string literals ('...', "...", `...`): a
// literal that is a URL (absolute, or a root-relative path under the
// request's server path) is mapped whole, and the server URIs of the
// response rules inside any other literal are replaced by their client
// URIs. Comments are skipped; regular expression literals and escaped
// slashes (http:\/\/) are not recognised [M].
func (p *Profile) js(dst, b []byte, rule int) []byte {
	i := 0
	for i < len(b) {
		c := b[i]
		switch {
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			e := bytes.IndexByte(b[i:], '\n')
			if e < 0 {
				return append(dst, b[i:]...)
			}
			dst = append(dst, b[i:i+e]...)
			i += e
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			e := bytes.Index(b[i+2:], []byte("*/"))
			if e < 0 {
				return append(dst, b[i:]...)
			}
			dst = append(dst, b[i:i+2+e+2]...)
			i += 2 + e + 2
		case c == '"' || c == '\'' || c == '`':
			e := i + 1
			for e < len(b) && b[e] != c && b[e] != '\n' {
				if b[e] == '\\' {
					e++
				}
				e++
			}
			if e >= len(b) || b[e] != c {
				dst = append(dst, b[i:min(e, len(b))]...)
				i = e
				continue
			}
			dst = append(dst, c)
			dst = p.literal(dst, string(b[i+1:e]), rule)
			dst = append(dst, c)
			i = e + 1
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// literal maps one string literal's content.
func (p *Profile) literal(dst []byte, s string, rule int) []byte {
	if nu, ok := p.ToClient(s, rule); ok {
		return append(dst, nu...)
	}
	for k := range p.Rules {
		r := &p.Rules[k]
		if !r.Response {
			continue
		}
		from, to := r.Server.String(), r.Client.String()
		if from != to && strings.Contains(s, from) {
			s = strings.ReplaceAll(s, from, to)
		}
	}
	return append(dst, s...)
}
