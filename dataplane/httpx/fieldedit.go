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
// field left with no cookie goes.
func EditRequestCookies(dst, head []byte, ed CookieEditor) []byte {
	dst, bl := rewriteFields(dst, head, func(dst, _, name, value []byte) ([]byte, bool) {
		if !EqualFold(name, "cookie") {
			return dst, false
		}
		mark := len(dst)
		dst = append(append(dst, name...), ": "...)
		dst, any := editCookieLine(dst, value, ed)
		if !any {
			return dst[:mark], true
		}
		return append(dst, "\r\n"...), true
	})
	return append(dst, head[bl:]...)
}

// EditSetCookies appends to dst the response head (complete, blank line
// included) with the value of each Set-Cookie whose cookie ed wants
// replaced by what ed gives (its attributes stay).
func EditSetCookies(dst, head []byte, ed CookieEditor) []byte {
	dst, bl := rewriteFields(dst, head, func(dst, _, name, value []byte) ([]byte, bool) {
		if !EqualFold(name, "set-cookie") {
			return dst, false
		}
		nv, rest := value, []byte(nil)
		if k := bytes.IndexByte(value, ';'); k >= 0 {
			nv, rest = value[:k], value[k:]
		}
		eq := bytes.IndexByte(nv, '=')
		if eq <= 0 || !ed.Wants(trimOWS(nv[:eq])) {
			return dst, false
		}
		cname := trimOWS(nv[:eq])
		out, _ := ed.Edit(cname, trimOWS(nv[eq+1:]))
		dst = append(append(dst, name...), ": "...)
		dst = append(append(append(dst, cname...), '='), out...)
		dst = append(dst, rest...)
		return append(dst, "\r\n"...), true
	})
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
	dst, bl := rewriteFields(dst, head, func(dst, _, name, _ []byte) ([]byte, bool) {
		return dst, !k.Keep(name)
	})
	return append(dst, head[bl:]...)
}
