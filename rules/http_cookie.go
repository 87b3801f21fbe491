package rules

import (
	"bytes"
	"strings"
)

// Cookies as HTTP::cookie sees them: in a request, the name=value pairs of
// the Cookie fields; in a response, one cookie per Set-Cookie field with
// its attributes. Cookie commands are not on the per-request fast path;
// they build strings.

// cookiePair is one name=value of a Cookie field.
type cookiePair struct{ name, value string }

func splitCookieField(v []byte) []cookiePair {
	var out []cookiePair
	for _, p := range bytes.Split(v, []byte(";")) {
		p = bytes.TrimSpace(p)
		if len(p) == 0 {
			continue
		}
		n, val, _ := bytes.Cut(p, []byte("="))
		out = append(out, cookiePair{string(bytes.TrimSpace(n)), string(bytes.TrimSpace(val))})
	}
	return out
}

func joinCookieField(ps []cookiePair) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.name)
		b.WriteByte('=')
		b.WriteString(p.value)
	}
	return b.String()
}

// setCookie is one Set-Cookie field: name=value and attributes in order.
type setCookie struct {
	name, value string
	attrs       []cookiePair // value "" with bare true for flags
	bare        []bool
}

func parseSetCookie(v []byte) setCookie {
	var c setCookie
	for i, p := range bytes.Split(v, []byte(";")) {
		p = bytes.TrimSpace(p)
		n, val, has := bytes.Cut(p, []byte("="))
		if i == 0 {
			c.name, c.value = string(bytes.TrimSpace(n)), string(bytes.TrimSpace(val))
			continue
		}
		if len(p) == 0 {
			continue
		}
		c.attrs = append(c.attrs, cookiePair{string(bytes.TrimSpace(n)), string(bytes.TrimSpace(val))})
		c.bare = append(c.bare, !has)
	}
	return c
}

func (c *setCookie) String() string {
	var b strings.Builder
	b.WriteString(c.name)
	b.WriteByte('=')
	b.WriteString(c.value)
	for i, a := range c.attrs {
		b.WriteString("; ")
		b.WriteString(a.name)
		if !c.bare[i] {
			b.WriteByte('=')
			b.WriteString(a.value)
		}
	}
	return b.String()
}

// attr returns an attribute's value and whether it is there.
func (c *setCookie) attr(name string) (string, bool) {
	for _, a := range c.attrs {
		if strings.EqualFold(a.name, name) {
			return a.value, true
		}
	}
	return "", false
}

// setAttr sets, adds (value, or a flag when bare) or, with del, removes an
// attribute.
func (c *setCookie) setAttr(name, value string, bare, del bool) {
	for i := 0; i < len(c.attrs); i++ {
		if strings.EqualFold(c.attrs[i].name, name) {
			if del {
				c.attrs = append(c.attrs[:i], c.attrs[i+1:]...)
				c.bare = append(c.bare[:i], c.bare[i+1:]...)
				i--
				continue
			}
			c.attrs[i].value, c.bare[i] = value, bare
			return
		}
	}
	if !del {
		c.attrs = append(c.attrs, cookiePair{name, value})
		c.bare = append(c.bare, bare)
	}
}

// cookieField is the header that carries cookies in this message.
func (h *HTTPHead) cookieField() string {
	if h.response {
		return "set-cookie"
	}
	return "cookie"
}

// CookieNames lists the cookies' names in the order they appear.
func (h *HTTPHead) CookieNames() []string {
	var out []string
	h.eachCookieField(func(i int, v []byte) bool {
		if h.response {
			out = append(out, parseSetCookie(v).name)
			return true
		}
		for _, p := range splitCookieField(v) {
			out = append(out, p.name)
		}
		return true
	})
	return out
}

func (h *HTTPHead) eachCookieField(fn func(i int, v []byte) bool) {
	want := h.cookieField()
	for i := range h.fields {
		f := &h.fields[i]
		if !f.removed && foldEq(h.bytes(f.name), want) && !fn(i, h.bytes(f.value)) {
			return
		}
	}
}

// Cookie returns the value of the first cookie called name.
func (h *HTTPHead) Cookie(name string) (string, bool) {
	val, found := "", false
	h.eachCookieField(func(i int, v []byte) bool {
		if h.response {
			if c := parseSetCookie(v); c.name == name {
				val, found = c.value, true
			}
			return !found
		}
		for _, p := range splitCookieField(v) {
			if p.name == name {
				val, found = p.value, true
				return false
			}
		}
		return true
	})
	return val, found
}

// SetCookieValue changes the value of the cookies called name and reports
// whether there was one.
func (h *HTTPHead) SetCookieValue(name, value string) bool {
	return h.editCookies(name, func(c *setCookie) { c.value = value }, func(p *cookiePair) bool {
		p.value = value
		return true
	})
}

// RemoveCookie removes the cookies called name.
func (h *HTTPHead) RemoveCookie(name string) bool {
	return h.editCookies(name, nil, func(*cookiePair) bool { return false })
}

// editCookies applies resp to each Set-Cookie called name (nil removes the
// field) or req to each request pair (false drops the pair).
func (h *HTTPHead) editCookies(name string, resp func(*setCookie), req func(*cookiePair) bool) bool {
	found := false
	var edits []func()
	h.eachCookieField(func(i int, v []byte) bool {
		if h.response {
			c := parseSetCookie(v)
			if c.name != name {
				return true
			}
			found = true
			if resp == nil {
				edits = append(edits, func() { h.removeField(i) })
			} else {
				resp(&c)
				s := c.String()
				edits = append(edits, func() { h.setField(i, s) })
			}
			return true
		}
		ps := splitCookieField(v)
		kept := ps[:0]
		hit := false
		for _, p := range ps {
			if p.name == name {
				hit = true
				if !req(&p) {
					continue
				}
			}
			kept = append(kept, p)
		}
		if hit {
			found = true
			if len(kept) == 0 {
				edits = append(edits, func() { h.removeField(i) })
			} else {
				s := joinCookieField(kept)
				edits = append(edits, func() { h.setField(i, s) })
			}
		}
		return true
	})
	for _, e := range edits {
		e()
	}
	return found
}

// insertCookie adds a cookie: a name=value pair to the request's last
// Cookie field (or a new one), or a Set-Cookie field with the attributes
// to a response.
func (h *HTTPHead) insertCookie(name, value string, attrs []cookiePair) {
	if h.response {
		c := setCookie{name: name, value: value}
		for _, a := range attrs {
			c.setAttr(a.name, a.value, a.value == "", false)
		}
		h.InsertHeader("Set-Cookie", c.String())
		return
	}
	last := -1
	h.eachCookieField(func(i int, _ []byte) bool { last = i; return true })
	if last < 0 {
		h.InsertHeader("Cookie", name+"="+value)
		return
	}
	v := string(h.bytes(h.fields[last].value))
	h.setField(last, strings.TrimRight(v, "; ")+"; "+name+"="+value)
}

// CookieAttr reads an attribute of the response cookie called name.
func (h *HTTPHead) CookieAttr(name, attr string) (value string, present, found bool) {
	h.eachCookieField(func(i int, v []byte) bool {
		if c := parseSetCookie(v); c.name == name {
			value, present = c.attr(attr)
			found = true
			return false
		}
		return true
	})
	return value, present, found
}

// SetCookieAttr sets (or with del removes) an attribute of the response
// cookies called name; bare writes a flag such as Secure.
func (h *HTTPHead) SetCookieAttr(name, attr, value string, bare, del bool) bool {
	return h.editCookies(name, func(c *setCookie) { c.setAttr(attr, value, bare, del) }, func(*cookiePair) bool { return true })
}

// CookieAttrNames lists the attribute names of the response cookie called
// name, in order.
func (h *HTTPHead) CookieAttrNames(name string) (names []string, found bool) {
	h.eachCookieField(func(i int, v []byte) bool {
		if c := parseSetCookie(v); c.name == name {
			for _, a := range c.attrs {
				names = append(names, a.name)
			}
			found = true
			return false
		}
		return true
	})
	return names, found
}

// AddCookieAttr appends an attribute to the response cookies called name,
// even when one of that name is already there; bare writes a flag.
func (h *HTTPHead) AddCookieAttr(name, attr, value string, bare bool) bool {
	return h.editCookies(name, func(c *setCookie) {
		c.attrs = append(c.attrs, cookiePair{attr, value})
		c.bare = append(c.bare, bare)
	}, func(*cookiePair) bool { return true })
}
