package daemon

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/cookiecrypt"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

var (
	cookieEncryption = persistCookie.MustProp("cookie-encryption")
	cookiePassphrase = persistCookie.MustProp("cookie-encryption-passphrase")
	cookiePoolName   = persistCookie.MustProp("encrypt-cookie-poolname")
)

// persistCookieKeyBits is the AES key length of encrypted persistence
// cookies [M]: BIG-IP documents AES for cookie-encryption without
// publishing the format; openltm takes 192 bits.
const persistCookieKeyBits = 192

// cookieEncryption fills the cookie persistence profile cp's
// cookie-encryption into mode (the methods that carry the member in the
// cookie seal it with the http profile's cookie cipher) and, with
// encrypt-cookie-poolname, hides the pool's name in the cookie's default
// name. The commit already refused an encryption without a pass phrase
// (objects/persist_cookie.go); false when the key cannot be made.
func (t *translator) cookieEncryption(o *objects.Object, v *dataplane.Virtual, cp *objects.Object, spec *httpx.CookieSpec, mode *mblb.CookieMode) bool {
	c := func(p *objects.Prop) string { return p.Effective(t.cfg, cp) }
	enc := c(cookieEncryption)
	if enc == "" || enc == "disabled" {
		return true
	}
	pass := c(cookiePassphrase)
	ci, err := cookiecrypt.New(pass, persistCookieKeyBits)
	if err != nil {
		t.skip(o, "persistence profile %s: cookie-encryption: %v", cp.Name, err)
		return false
	}
	if mode.Method != mblb.CookieHash {
		mode.Crypt = &mblb.PersistCookieCrypt{Cipher: ci, Required: enc == "required"}
	}
	if n := c(cookieName); (n == "" || n == "none") && c(cookiePoolName) == "enabled" && v.Pool != "" {
		spec.Name = encryptedPoolCookieName(pass, v.Pool)
	}
	return true
}

// encryptedPoolCookieName is the persistence cookie's name for pool with
// encrypt-cookie-poolname [M]: BIGipServer and, in place of the pool's
// name, the first 12 bytes (in hex) of its HMAC-SHA256 under the pass
// phrase. It is the same for every request, which a cookie's name has to
// be, and does not tell the pool's name.
func encryptedPoolCookieName(passphrase, pool string) string {
	m := hmac.New(sha256.New, []byte(passphrase))
	m.Write([]byte(pool))
	return "BIGipServer" + hex.EncodeToString(m.Sum(nil)[:12])
}
