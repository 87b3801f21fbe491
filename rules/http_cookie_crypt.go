package rules

import (
	"sync"

	"github.com/openltm/openltm/dataplane/cookiecrypt"
	"github.com/openltm/openltm/rules/tcl"
)

// cookieCiphers keeps the ciphers of the pass phrases rules use (one
// per rule, typically a static:: value), so that a request does not
// derive its key again; bounded, as a rule could make up phrases.
var cookieCiphers struct {
	sync.Mutex
	m map[cipherKey]*cookiecrypt.Cipher
}

type cipherKey struct {
	phrase string
	bits   int
}

func cookieCipher(phrase string, bits int) (*cookiecrypt.Cipher, error) {
	k := cipherKey{phrase, bits}
	cookieCiphers.Lock()
	defer cookieCiphers.Unlock()
	if c := cookieCiphers.m[k]; c != nil {
		return c, nil
	}
	c, err := cookiecrypt.New(phrase, bits)
	if err != nil {
		return nil, err
	}
	if cookieCiphers.m == nil || len(cookieCiphers.m) >= 64 {
		cookieCiphers.m = map[cipherKey]*cookiecrypt.Cipher{}
	}
	cookieCiphers.m[k] = c
	return c, nil
}

// cookieCrypt is HTTP::cookie encrypt|decrypt NAME PASSPHRASE ?128|192|256?:
// the cookie's value, in the request's Cookie field or the response's
// Set-Cookie, is replaced by its encrypted or decrypted form, which the
// command returns. A value that does not decrypt (tampered with, another
// phrase, never encrypted) is left as it is and the command returns the
// empty string, which is what published rules test before removing the
// cookie [M: F5's page is silent]. The format is dataplane/cookiecrypt's.
func cookieCrypt(h *HTTPHead, op string, a []tcl.Value) (tcl.Value, error) {
	if len(a) != 2 && len(a) != 3 {
		return tcl.Empty, tcl.WrongArgs("HTTP::cookie " + op + " name passphrase ?128|192|256?")
	}
	bits := int64(128)
	if len(a) == 3 {
		n, err := a[2].Int64()
		if err != nil || n != 128 && n != 192 && n != 256 {
			return tcl.Empty, tcl.Errorf("HTTP::cookie %s: key length %q must be 128, 192 or 256", op, a[2].String())
		}
		bits = n
	}
	c, err := cookieCipher(a[1].String(), int(bits))
	if err != nil {
		return tcl.Empty, tcl.Errorf("HTTP::cookie %s: %v", op, err)
	}
	name := a[0].String()
	v, ok := h.Cookie(name)
	if !ok {
		return tcl.Empty, nil
	}
	if op == "encrypt" {
		enc := c.Encrypt(name, v)
		h.SetCookieValue(name, enc)
		return tcl.Str(enc), nil
	}
	clear, ok := c.Decrypt(name, v)
	if !ok {
		return tcl.Empty, nil
	}
	h.SetCookieValue(name, clear)
	return tcl.Str(clear), nil
}
