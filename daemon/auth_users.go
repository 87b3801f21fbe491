package daemon

import (
	"github.com/GehirnInc/crypt/sha512_crypt"

	"github.com/openltm/openltm/objects"
)

// hashUserPasswords replaces the password an auth user was given in
// clear with its one-way hash, encrypted-password (SHA-512 crypt, `$6$`,
// what BIG-IP stores and lists): a user's password is never kept, listed,
// saved or carried to a device group in clear. A user given
// encrypted-password directly (a loaded bigip.conf) keeps it as given.
// cfg is the configuration being committed; its objects are replaced,
// never changed.
func hashUserPasswords(s *objects.Schema, cfg *objects.Config) error {
	k := s.Kind("auth user")
	if k == nil {
		return nil
	}
	for _, o := range cfg.Of(k) {
		pw := o.Str("password")
		if pw == "" || pw == "-" || pw == "none" {
			continue
		}
		h, err := sha512_crypt.New().Generate([]byte(pw), nil)
		if err != nil {
			return objects.Invalid("auth user %s: the password cannot be hashed: %v", o.Name, err)
		}
		n := o.Clone()
		delete(n.Props, "password")
		n.Props["encrypted-password"] = &objects.Value{Str: h}
		cfg.Put(n)
	}
	return nil
}
