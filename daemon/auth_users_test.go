package daemon

import (
	"regexp"
	"strings"
	"testing"

	"github.com/GehirnInc/crypt/sha512_crypt"
)

// TestAuthUserPasswordHashed: a password typed in clear is kept, listed
// and saved only as its SHA-512 crypt hash (encrypted-password), which
// verifies against it; a new password replaces the hash; a hash given as
// encrypted-password is kept as given.
func TestAuthUserPasswordHashed(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	hashOf := func(user string) string {
		t.Helper()
		out, err := run(t, s, "list auth user "+user)
		if err != "" {
			t.Fatalf("list auth user %s: %s", user, err)
		}
		if strings.Contains(out, "password s3cret") || strings.Contains(out, "n3w-pass") || regexp.MustCompile(`(?m)^\s+password `).MatchString(out) {
			t.Fatalf("the password is listed in clear:\n%s", out)
		}
		m := regexp.MustCompile(`encrypted-password (\S+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no encrypted-password:\n%s", out)
		}
		return strings.Trim(m[1], `"`)
	}
	if _, err := run(t, s, "create auth user bob password s3cret shell tmsh"); err != "" {
		t.Fatal(err)
	}
	h1 := hashOf("bob")
	if !strings.HasPrefix(h1, "$6$") || sha512_crypt.New().Verify(h1, []byte("s3cret")) != nil {
		t.Errorf("hash %q does not verify the password", h1)
	}
	if _, err := run(t, s, "modify auth user bob password n3w-pass"); err != "" {
		t.Fatal(err)
	}
	h2 := hashOf("bob")
	if h2 == h1 || sha512_crypt.New().Verify(h2, []byte("n3w-pass")) != nil {
		t.Errorf("after a new password: hash %q", h2)
	}
	if out, err := run(t, s, "save sys config"); err != "" {
		t.Fatalf("save: %s %s", out, err)
	}
	given := "$6$abcdefgh$" + strings.Repeat("x", 86)
	if _, err := run(t, s, `create auth user carol encrypted-password "`+given+`"`); err != "" {
		t.Fatal(err)
	}
	if got := hashOf("carol"); got != given {
		t.Errorf("a given hash became %q", got)
	}
}
