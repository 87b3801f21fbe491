package mblb

import (
	"bytes"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// CookieMethod is cookie persistence's method (reference §7.2).
type CookieMethod uint8

// The methods. Insert, rewrite and passive carry the member in the
// cookie itself (BIG-IP's encoding) and keep no records; hash keeps a
// record per value of a cookie the application sets.
const (
	// CookieInsert adds Set-Cookie: <name>=<member> to responses.
	CookieInsert CookieMethod = iota
	// CookieRewrite rewrites the placeholder cookie the application sets
	// (BIGipCookie, or the profile's name, with a value of zeros) into
	// <name>=<member>.
	CookieRewrite
	// CookiePassive only reads the cookie, which the application sets in
	// BIG-IP's encoding itself.
	CookiePassive
	// CookieHash maps a part of the value of the application's own
	// cookie to the member that set it, in the persistence table.
	CookieHash
)

// CookieMode is how a virtual's cookie persistence works, beside
// HTTPOptions.Cookie's name and attributes.
type CookieMode struct {
	Method CookieMethod
	// HashOffset and HashLength select the part of the cookie's value the
	// hash method keys on: skip HashOffset bytes, take HashLength (0: the
	// rest).
	HashOffset, HashLength int
	// Crypt is cookie-encryption (persistcrypt.go); nil: plain cookies.
	Crypt *PersistCookieCrypt
}

// CookieRecords is the persistence table as the hash method uses it:
// Key turns a cookie's key into the message's persistence key
// (Choice.Persist); Save records that the key's member is m. timeout is
// a rule's record timeout (`persist cookie hash name {o l} timeout`);
// negative means the profile's.
type CookieRecords struct {
	Key  func(key []byte, timeout time.Duration) string
	Save func(key []byte, timeout time.Duration, client netip.AddrPort, m Member)
}

// CookieRule is a rule's `persist cookie` for a client connection's
// requests, in place of the cookie persistence profile's settings (the
// profile still gives what the command does not name: httponly, secure,
// always-send). It is immutable once handed to the engine.
type CookieRule struct {
	Spec httpx.CookieSpec
	Mode CookieMode
	// PoolNamed: the cookie is named after the pool the request goes to
	// (BIGipServer<pool>), because neither the command nor the profile
	// names it; Spec.Name is then the default pool's.
	PoolNamed bool
	// Timeout is the hash method's record timeout; negative: the
	// profile's.
	Timeout time.Duration
}

// name is the cookie's name for request m.
func (c *CookieRule) name(m *msg) string {
	if c.PoolNamed && m.target.Pool != "" {
		return httpx.PoolCookieName(m.target.Pool)
	}
	return c.Spec.Name
}

// PersistRule is what a rule's persist command set for the requests of
// a client connection that follow it (ClientConn.SetPersist). The zero
// value leaves the profiles' persistence as configured.
type PersistRule struct {
	// None: `persist none`: no persistence at all (no cookie read or
	// inserted, no record looked up or made).
	None bool
	// Cookie: `persist cookie ...`: the rule's cookie persistence.
	Cookie *CookieRule
}

// SetPersist sets what the persist commands of the client's rules asked
// for its requests from the next one framed on: BIG-IP keeps a persist
// command's setting for the connection until another changes it. It is
// called by the rules, on the client's reader (HTTP_REQUEST) or before
// Run (CLIENT_ACCEPTED).
func (s *ClientConn) SetPersist(p PersistRule) { s.persistRule = p }

// SetClone gives this client's whole requests, from the next one built
// on, to fn as Config.Clone gets every client's: a rule's clone pool
// command copies one connection where the virtual's clone pools copy
// them all. It is called before Run (CLIENT_ACCEPTED) or on the
// client's reader (HTTP_REQUEST, before the request it runs on is
// built, so that one is copied too); fn must copy what it keeps.
func (s *ClientConn) SetClone(fn func(received, sent []byte)) { s.clone = fn }

// PersistSetting is what SetPersist set last: an HTTP/2 client's next
// engine session starts from what CLIENT_ACCEPTED set on its first. It
// is read where SetPersist may be called.
func (s *ClientConn) PersistSetting() PersistRule { return s.persistRule }

// rewritePlaceholder is the cookie name BIG-IP's rewrite method looks for.
const rewritePlaceholder = "BIGipCookie"

// hashKey is the part of a cookie's value the hash method keys on.
func (c *CookieMode) hashKey(v []byte) []byte {
	if c.HashOffset > 0 {
		if c.HashOffset >= len(v) {
			return nil
		}
		v = v[c.HashOffset:]
	}
	if c.HashLength > 0 && c.HashLength < len(v) {
		v = v[:c.HashLength]
	}
	return v
}

// cookieRequest reads the persistence cookie of request b: the member it
// names (insert, rewrite, passive) becomes the message's target, or its
// key (hash) the message's persistence key.
func (s *ClientConn) cookieRequest(m *msg, b []byte, h *httpx.Head) {
	opts := &s.e.cfg.Request.HTTP
	name, mode, timeout := opts.Cookie.Name, &opts.CookieMode, time.Duration(-1)
	if pr := &s.persistRule; pr.None || pr.Cookie != nil {
		// A rule's persist command (the rare path).
		if pr.None {
			m.hx.noPersist = true
			return
		}
		c := pr.Cookie
		m.hx.cookie = c
		name, mode, timeout = c.name(m), &c.Mode, c.Timeout
	}
	if name == "" {
		return
	}
	v, ok := httpx.Cookie(b, h, name)
	if !ok {
		return
	}
	if mode.Method == CookieHash {
		if cr := s.e.cfg.CookieRecords; cr != nil {
			if k := mode.hashKey(v); len(k) > 0 {
				m.persist = cr.Key(k, timeout)
			}
		}
		return
	}
	if a, ok := mode.member(name, v); ok { // persistcrypt.go
		m.cookie = a
		m.target = Target{Member: a}
	}
}

// cookieResponse applies cookie persistence to a response of member to
// req: insert adds the Set-Cookie line to hdr (when the request did not
// carry this member's cookie, or always-send); rewrite returns the head
// (head: the rule's edit, nil for the response's own) with the
// application's placeholder cookie rewritten; hash records the member of
// the application's cookie. It returns the head to send (nil: the
// response's own) and the lines to add.
func (sc *serverConn) cookieResponse(req *msg, b []byte, h *httpx.Head, head, hdr []byte) ([]byte, []byte) {
	opts := &sc.e.cfg.Request.HTTP
	spec, mode, timeout := &opts.Cookie, &opts.CookieMode, time.Duration(-1)
	if req.hx.noPersist {
		return head, hdr
	}
	if c := req.hx.cookie; c != nil {
		// A rule's persist cookie (the rare path).
		named := c.Spec
		named.Name = c.name(req)
		spec, mode, timeout = &named, &c.Mode, c.Timeout
	}
	if spec.Name == "" {
		return head, hdr
	}
	member := sc.leg.Member.Addr
	switch mode.Method {
	case CookieInsert:
		if spec.AlwaysSend || req.cookie != member {
			hdr = mode.appendSetCookie(hdr, spec, member, time.Now()) // persistcrypt.go
			if fn := sc.e.cfg.CookieInserted; fn != nil {
				fn()
			}
		}
	case CookieRewrite:
		src := head
		if src == nil {
			src = b[h.Start:h.HeaderEnd]
		}
		if out := rewriteSetCookie(src, spec, mode, member); out != nil {
			head = out
		}
	case CookieHash:
		cr := sc.e.cfg.CookieRecords
		if cr == nil {
			break
		}
		src := head
		if src == nil {
			src = b[h.Start:h.HeaderEnd]
		}
		httpx.Fields(src, len(src), func(n, v []byte, _, _ int) bool {
			if name, val, ok := setCookie(n, v); ok && string(name) == spec.Name {
				if k := mode.hashKey(val); len(k) > 0 {
					cr.Save(k, timeout, req.sess.client, sc.leg.Member)
				}
				return false
			}
			return true
		})
	}
	return head, hdr
}

// setCookie splits a Set-Cookie field into the cookie's name and value.
func setCookie(n, v []byte) (name, val []byte, ok bool) {
	if !bytes.EqualFold(n, []byte("set-cookie")) {
		return nil, nil, false
	}
	if i := bytes.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	eq := bytes.IndexByte(v, '=')
	if eq <= 0 {
		return nil, nil, false
	}
	return bytes.TrimSpace(v[:eq]), bytes.TrimSpace(v[eq+1:]), true
}

// rewriteSetCookie returns head with the first Set-Cookie whose cookie is
// the rewrite placeholder (named BIGipCookie or the profile's name, its
// value all zeros) rewritten as <name>=<member> (encrypted as mode
// says), the application's attributes kept; nil when head has none.
func rewriteSetCookie(head []byte, spec *httpx.CookieSpec, mode *CookieMode, member netip.AddrPort) []byte {
	var out []byte
	httpx.Fields(head, len(head), func(n, v []byte, start, stop int) bool {
		name, val, ok := setCookie(n, v)
		if !ok || (string(name) != rewritePlaceholder && string(name) != spec.Name) || len(val) == 0 ||
			len(bytes.Trim(val, "0")) != 0 {
			return true
		}
		attrs := []byte(nil)
		if i := bytes.IndexByte(v, ';'); i >= 0 {
			attrs = v[i:]
		}
		out = make([]byte, 0, len(head)+64)
		out = append(out, head[:start]...)
		out = append(out, "Set-Cookie: "...)
		out = append(out, spec.Name...)
		out = append(out, '=')
		out = mode.appendValue(out, spec.Name, member)
		out = append(out, attrs...)
		out = append(out, head[stop:]...)
		return false
	})
	return out
}
