package objects

import (
	"strings"
	"testing"
)

// A cookie persistence profile that encrypts needs a pass phrase, its
// own or its parent's, and encrypt-cookie-poolname needs encryption.
func TestCookieEncryptionNeedsPassphrase(t *testing.T) {
	for _, tc := range []struct {
		name, text, err string
	}{
		{"disabled needs none", "ltm persistence cookie /Common/c { cookie-encryption disabled }\n", ""},
		{"preferred with a pass phrase", "ltm persistence cookie /Common/c { cookie-encryption preferred cookie-encryption-passphrase abc }\n", ""},
		{"required with a pass phrase", "ltm persistence cookie /Common/c { cookie-encryption required cookie-encryption-passphrase abc encrypt-cookie-poolname enabled }\n", ""},
		{"required without", "ltm persistence cookie /Common/c { cookie-encryption required }\n",
			"01070734:3: Configuration error: Persistence profile (/Common/c): cookie-encryption required requires a cookie-encryption-passphrase (set one, or cookie-encryption disabled)."},
		{"preferred with none", "ltm persistence cookie /Common/c { cookie-encryption preferred cookie-encryption-passphrase none }\n",
			"cookie-encryption preferred requires a cookie-encryption-passphrase"},
		{"inherited from the parent, pass phrase too",
			"ltm persistence cookie /Common/p { cookie-encryption required cookie-encryption-passphrase abc }\nltm persistence cookie /Common/c { defaults-from /Common/p }\n", ""},
		{"inherited from the parent, pass phrase not",
			"ltm persistence cookie /Common/p { cookie-encryption-passphrase none }\nltm persistence cookie /Common/c { defaults-from /Common/p cookie-encryption required }\n",
			"Persistence profile (/Common/c): cookie-encryption required requires"},
		{"pool name without encryption", "ltm persistence cookie /Common/c { encrypt-cookie-poolname enabled }\n",
			"Persistence profile (/Common/c): encrypt-cookie-poolname enabled requires cookie-encryption preferred or required."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default.Builtins()
			objs, err := Default.ReadConfig("t.conf", []byte(tc.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				cfg.Put(o)
			}
			err = cfg.Validate(Default)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
	if _, err := Default.ReadConfig("t.conf", []byte("ltm persistence cookie /Common/c { cookie-encryption sometimes }\n"), nil); err == nil ||
		!strings.Contains(err.Error(), "disabled, preferred, required") {
		t.Fatalf("an unknown cookie-encryption value: %v", err)
	}
}
