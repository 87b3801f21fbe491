package mblb

import (
	"bytes"
	"net/netip"

	"github.com/openltm/openltm/dataplane/cookiecrypt"
	"github.com/openltm/openltm/dataplane/httpx"
)

// CookieEncryption is the http profile's encrypt-cookies: the cookies it
// names are encrypted in the members' Set-Cookie fields and decrypted in
// the clients' Cookie fields, so that a client holds values it can
// neither read nor forge. A cookie that does not decrypt (tampered with,
// or from before a change of secret) is removed from the request [M].
// The edits are made after the rules of the message ran (HTTP_REQUEST
// sees the value as the client sent it, HTTP_RESPONSE as the member set
// it) [M].
type CookieEncryption struct {
	// Names are the cookies encrypted.
	Names []string
	// Cipher holds the key (encrypt-cookie-secret).
	Cipher *cookiecrypt.Cipher
}

func (c *CookieEncryption) wants(name []byte) bool {
	for _, n := range c.Names {
		if string(name) == n {
			return true
		}
	}
	return false
}

// cookieSealer encrypts (responses); cookieOpener decrypts (requests).
type cookieSealer struct{ *CookieEncryption }
type cookieOpener struct{ *CookieEncryption }

func (c cookieSealer) Wants(name []byte) bool { return c.wants(name) }
func (c cookieOpener) Wants(name []byte) bool { return c.wants(name) }

func (c cookieSealer) Edit(name, value []byte) ([]byte, bool) {
	return []byte(c.Cipher.Encrypt(string(name), string(value))), true
}

func (c cookieOpener) Edit(name, value []byte) ([]byte, bool) {
	v, ok := c.Cipher.Decrypt(string(name), string(value))
	return []byte(v), ok
}

// openCookies decrypts the encrypted cookies of the request whose head
// is b[:h.HeaderEnd] (or the rules' edited head), after its HTTP_REQUEST
// rules: the request then goes with the edited head, as after a rule's
// edit of fields that frame nothing. It returns the event carrying it
// (x, or the client's own when the client has no rules).
func (s *ClientConn) openCookies(b []byte, h *httpx.Head, x *HTTPEvent) *HTTPEvent {
	cc := s.e.cfg.Request.HTTP.CookieCrypt
	head := b[:h.HeaderEnd]
	if x != nil && x.edited != nil {
		head = x.edited
	}
	if !hasWantedCookie(head, "cookie", cc) {
		return x
	}
	if x == nil {
		x = &s.hx
		x.reset(b, h, false, netip.AddrPort{})
		x.framingKept = true
	}
	s.cookieHead = httpx.EditRequestCookies(s.cookieHead[:0], head, cookieOpener{cc})
	x.edited = s.cookieHead
	return x
}

// sealCookies is the response head with the encrypted cookies' values
// encrypted; ok false (and no copy) when it sets none of them.
func (sc *serverConn) sealCookies(head []byte) ([]byte, bool) {
	cc := sc.e.cfg.Request.HTTP.CookieCrypt
	if !hasWantedCookie(head, "set-cookie", cc) {
		return head, false
	}
	sc.cookieHead = httpx.EditSetCookies(sc.cookieHead[:0], head, cookieSealer{cc})
	return sc.cookieHead, true
}

// hasWantedCookie reports whether a field called field (cookie or
// set-cookie) of head names one of cc's cookies: the cheap test that
// keeps other messages' heads as they are.
func hasWantedCookie(head []byte, field string, cc *CookieEncryption) bool {
	found := false
	httpx.Fields(head, len(head), func(n, v []byte, _, _ int) bool {
		if len(n) != len(field) || !bytes.EqualFold(n, []byte(field)) {
			return true
		}
		for _, name := range cc.Names {
			if bytes.Contains(v, []byte(name)) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}
