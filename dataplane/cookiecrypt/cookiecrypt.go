// Package cookiecrypt encrypts HTTP cookie values, as BIG-IP's
// HTTP::cookie encrypt and decrypt and the http profile's encrypt-cookies
// do: a client keeps a value it can neither read nor forge, and the
// member gets it back in clear.
//
// F5 does not publish its format, so values openltm encrypts decrypt on
// openltm only. Chosen [M]: "!" then, in unpadded URL-safe base64, a
// random 12-byte nonce and the AES-GCM sealing of the value, with the
// cookie's name as associated data (a value moved to another cookie does
// not decrypt); the key is the first 16, 24 or 32 bytes of the SHA-256
// of the pass phrase.
package cookiecrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// Prefix starts every encrypted value (BIG-IP's encrypted cookies start
// with it too), so that a value is recognised as one.
const Prefix = "!"

// A Cipher encrypts and decrypts cookie values with one key; it is safe
// for concurrent use.
type Cipher struct{ aead cipher.AEAD }

// New is the cipher of a pass phrase for a key of bits (128, 192 or 256).
func New(passphrase string, bits int) (*Cipher, error) {
	switch bits {
	case 128, 192, 256:
	default:
		return nil, errors.New("key length must be 128, 192 or 256")
	}
	sum := sha256.Sum256([]byte(passphrase))
	block, err := aes.NewCipher(sum[:bits/8])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Cipher{aead: aead}, nil
}

// Encrypt is the encrypted form of the value of cookie name.
func (c *Cipher) Encrypt(name, value string) string {
	ns := c.aead.NonceSize()
	buf := make([]byte, ns, ns+len(value)+c.aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	sealed := c.aead.Seal(buf, buf[:ns], []byte(value), []byte(name))
	return Prefix + base64.RawURLEncoding.EncodeToString(sealed)
}

// Decrypt is the clear value of cookie name from its encrypted form; ok
// false when it is not one this key made for this name (tampered with,
// another key, another cookie, or never encrypted).
func (c *Cipher) Decrypt(name, enc string) (string, bool) {
	s, found := strings.CutPrefix(enc, Prefix)
	if !found {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	ns := c.aead.NonceSize()
	if err != nil || len(raw) < ns+c.aead.Overhead() {
		return "", false
	}
	out, err := c.aead.Open(nil, raw[:ns], raw[ns:], []byte(name))
	if err != nil {
		return "", false
	}
	return string(out), true
}
