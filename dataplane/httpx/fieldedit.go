package httpx

import "bytes"

// A CookieEditor changes cookie values as they pass (the http profile's
// encrypt-cookies): Wants says whether a cookie is one it edits, Edit
// gives the new value, keep false dropping a request's cookie.
type CookieEditor interface {
	Wants(name []byte) bool
	Edit(name, value []byte) (out []byte, keep bool)
}

// editCookieLine appends to dst a request's Cookie field value v with
// the cookies ed wants edited (pairs separated by "; "); it reports
// whether any pair is left.
func editCookieLine(dst, v []byte, ed CookieEditor) ([]byte, bool) {
	n := 0
	for len(v) > 0 {
		pair := v
		if i := bytes.IndexByte(v, ';'); i >= 0 {
			pair, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		pair = trimOWS(pair)
		if len(pair) == 0 {
			continue
		}
		name, value := pair, []byte(nil)
		if i := bytes.IndexByte(pair, '='); i >= 0 {
			name, value = pair[:i], pair[i+1:]
		}
		if ed.Wants(name) {
			out, keep := ed.Edit(name, value)
			if !keep {
				continue
			}
			pair = append(append(append([]byte(nil), name...), '='), out...)
		}
		if n > 0 {
			dst = append(dst, "; "...)
		}
		dst = append(dst, pair...)
		n++
	}
	return dst, n > 0
}

// EditRequestCookies appends to dst the request head (complete, blank
// line included) with the Cookie fields' wanted cookies edited by ed; a
// field left with no cookie goes. The head is copied as it is when no
// cookie is wanted.
func EditRequestCookies(dst, head []byte, ed CookieEditor) []byte {
	bl := blankLine(head, len(head))
	_, first := line(head, 0)
	dst = append(dst, head[:first]...)
	for i := first; i < bl; {
		l, next := line(head, i)
		c := bytes.IndexByte(l, ':')
		if c > 0 && equalFold(l[:c], "cookie") {
			mark := len(dst)
			dst = append(dst, l[:c+1]...)
			dst = append(dst, ' ')
			var any bool
			if dst, any = editCookieLine(dst, trimOWS(l[c+1:]), ed); any {
				dst = append(dst, "\r\n"...)
			} else {
				dst = dst[:mark]
			}
			i = next
			continue
		}
		dst = append(dst, head[i:next]...)
		i = next
	}
	return append(dst, head[bl:]...)
}

// EditSetCookies appends to dst the response head (complete, blank line
// included) with the value of each Set-Cookie whose cookie ed wants
// replaced by what ed gives (its attributes stay).
func EditSetCookies(dst, head []byte, ed CookieEditor) []byte {
	bl := blankLine(head, len(head))
	_, first := line(head, 0)
	dst = append(dst, head[:first]...)
	for i := first; i < bl; {
		l, next := line(head, i)
		c := bytes.IndexByte(l, ':')
		if c > 0 && equalFold(l[:c], "set-cookie") {
			v := trimOWS(l[c+1:])
			nv := v
			rest := []byte(nil)
			if k := bytes.IndexByte(v, ';'); k >= 0 {
				nv, rest = v[:k], v[k:]
			}
			if eq := bytes.IndexByte(nv, '='); eq > 0 {
				name := trimOWS(nv[:eq])
				if ed.Wants(name) {
					out, _ := ed.Edit(name, trimOWS(nv[eq+1:]))
					dst = append(dst, l[:c+1]...)
					dst = append(dst, ' ')
					dst = append(dst, name...)
					dst = append(dst, '=')
					dst = append(dst, out...)
					dst = append(dst, rest...)
					dst = append(dst, "\r\n"...)
					i = next
					continue
				}
			}
		}
		dst = append(dst, head[i:next]...)
		i = next
	}
	return append(dst, head[bl:]...)
}

// A FieldKeeper says which header fields of a message stay (the http
// profile's response-headers-permitted and via-response remove).
type FieldKeeper interface {
	Keep(name []byte) bool
}

// FilterFields appends to dst the header block head (complete, blank line
// included) without the fields k does not keep.
func FilterFields(dst, head []byte, k FieldKeeper) []byte {
	bl := blankLine(head, len(head))
	_, first := line(head, 0)
	dst = append(dst, head[:first]...)
	for i := first; i < bl; {
		l, next := line(head, i)
		if c := bytes.IndexByte(l, ':'); c > 0 && !k.Keep(trimOWS(l[:c])) {
			i = next
			continue
		}
		dst = append(dst, head[i:next]...)
		i = next
	}
	return append(dst, head[bl:]...)
}
