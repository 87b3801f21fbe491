package objects

// checkCookieEncryption refuses a cookie persistence profile whose
// cookie-encryption (its own or inherited through defaults-from) asks for
// encrypted cookies without the pass phrase their key is made from, and
// one that encrypts the pool name in the cookie's name without encrypting
// cookies at all: either would leave clients with cookies the system
// cannot honour.
func checkCookieEncryption(c *Config, o *Object) error {
	if o.Kind.Key() != "ltm persistence cookie" {
		return nil
	}
	mode := c.EffectiveStr(o, "cookie-encryption")
	if mode == "" || mode == "disabled" {
		if c.EffectiveStr(o, "encrypt-cookie-poolname") == "enabled" {
			return Invalid("Persistence profile (%s): encrypt-cookie-poolname enabled requires cookie-encryption preferred or required.", o.Name)
		}
		return nil
	}
	if pp := c.EffectiveStr(o, "cookie-encryption-passphrase"); pp == "" || pp == "none" {
		return Invalid("Persistence profile (%s): cookie-encryption %s requires a cookie-encryption-passphrase (set one, or cookie-encryption disabled).", o.Name, mode)
	}
	return nil
}
