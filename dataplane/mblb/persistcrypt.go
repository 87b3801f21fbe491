package mblb

import (
	"bytes"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/cookiecrypt"
	"github.com/openltm/openltm/dataplane/httpx"
)

// PersistCookieCrypt is a cookie persistence profile's cookie-encryption:
// the member a persistence cookie names is sealed with the http profile's
// cookie cipher (cookiecrypt, with the cookie's name bound in), so that a
// client can neither read which member it sticks to nor forge a cookie
// for another one. It applies to the methods that carry the member in
// the cookie (insert, rewrite, passive); hash keys on the application's
// own cookie, which it leaves alone.
type PersistCookieCrypt struct {
	// Cipher holds the key made from cookie-encryption-passphrase.
	Cipher *cookiecrypt.Cipher
	// Required (cookie-encryption required) honours encrypted cookies
	// only; otherwise (preferred) a plain cookie is honoured too. Either
	// way a cookie that does not decrypt (tampered with, another pass
	// phrase) is ignored and the request load balanced.
	Required bool
}

var cryptPrefix = []byte(cookiecrypt.Prefix)

// member is the member a persistence cookie's value v names, decrypted
// when it is encrypted; ok false when it names none that may be
// honoured.
func (c *CookieMode) member(name string, v []byte) (netip.AddrPort, bool) {
	cc := c.Crypt
	if cc == nil {
		return httpx.DecodeMember(v)
	}
	if !bytes.HasPrefix(v, cryptPrefix) {
		if cc.Required {
			return netip.AddrPort{}, false
		}
		return httpx.DecodeMember(v)
	}
	clear, ok := cc.Cipher.Decrypt(name, string(v))
	if !ok {
		return netip.AddrPort{}, false
	}
	return httpx.DecodeMember([]byte(clear))
}

// appendValue appends the value of persistence cookie name for member m:
// BIG-IP's encoding, encrypted when cookie-encryption is on.
func (c *CookieMode) appendValue(dst []byte, name string, m netip.AddrPort) []byte {
	if c.Crypt == nil {
		return httpx.AppendMember(dst, m)
	}
	return append(dst, c.Crypt.Cipher.Encrypt(name, httpx.EncodeMember(m))...)
}

// appendSetCookie appends spec's Set-Cookie line for member m, its value
// encrypted when cookie-encryption is on.
func (c *CookieMode) appendSetCookie(dst []byte, spec *httpx.CookieSpec, m netip.AddrPort, now time.Time) []byte {
	if c.Crypt == nil {
		return spec.AppendSetCookie(dst, m, now)
	}
	start := len(dst)
	dst = spec.AppendSetCookie(dst, m, now)
	// The value runs from after "Set-Cookie: <name>=" to the first ';'
	// (AppendSetCookie always writes "; path=/" after it).
	vs := start + len("Set-Cookie: ") + len(spec.Name) + 1
	ve := vs + bytes.IndexByte(dst[vs:], ';')
	tail := append([]byte(nil), dst[ve:]...)
	dst = c.appendValue(dst[:vs], spec.Name, m)
	return append(dst, tail...)
}
