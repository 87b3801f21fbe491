package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// cookie-encryption reaches the HTTP virtual's cookie persistence;
// without a pass phrase the profile is refused and nothing changes.
func TestPersistCookieEncryptionTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []struct{ cmd, err string }{
		{"create ltm pool p members add { 127.76.8.10:80 }", ""},
		{"create ltm persistence cookie ck_req cookie-encryption required",
			"01070734:3: Configuration error: Persistence profile (/Common/ck_req): cookie-encryption required requires a cookie-encryption-passphrase (set one, or cookie-encryption disabled)."},
		{"create ltm persistence cookie ck_req cookie-encryption required cookie-encryption-passphrase s3cret encrypt-cookie-poolname enabled", ""},
		{"create ltm persistence cookie ck_pref cookie-encryption preferred cookie-encryption-passphrase s3cret", ""},
		{"create ltm persistence cookie ck_hash method hash cookie-name JSESSIONID cookie-encryption required cookie-encryption-passphrase s3cret", ""},
		{"modify ltm persistence cookie ck_pref cookie-encryption-passphrase none", "cookie-encryption preferred requires a cookie-encryption-passphrase"},
		{"modify ltm persistence cookie ck_pref cookie-encryption sometimes", `"sometimes"`},
		{"create ltm virtual v_req destination 127.76.8.1:80 pool p profiles replace-all-with { tcp http } persist replace-all-with { ck_req { default yes } }", ""},
		{"create ltm virtual v_pref destination 127.76.8.2:80 pool p profiles replace-all-with { tcp http } persist replace-all-with { ck_pref { default yes } }", ""},
		{"create ltm virtual v_hash destination 127.76.8.3:80 pool p profiles replace-all-with { tcp http } persist replace-all-with { ck_hash { default yes } }", ""},
	} {
		_, err := run(t, s, c.cmd)
		if c.err == "" && err != "" || c.err != "" && !strings.Contains(err, c.err) {
			t.Fatalf("%s: %q, want %q", c.cmd, err, c.err)
		}
	}
	out, _ := run(t, s, "list ltm persistence cookie ck_pref")
	if !strings.Contains(out, "cookie-encryption-passphrase $M$") || strings.Contains(out, "s3cret") {
		t.Fatalf("a refused modify changed the profile, or its pass phrase is listed in clear:\n%s", out)
	}
	dc, skipped := Translate(e.schema, e.reveal(e.Config())[0])
	opts := func(n string) mblb.HTTPOptions {
		v := dc.Virtuals[n]
		if v == nil || v.MBLB == nil {
			t.Fatalf("%s not translated: %q", n, skipped)
		}
		return v.MBLB.Request.HTTP
	}
	req, pref, hash := opts("/Common/v_req"), opts("/Common/v_pref"), opts("/Common/v_hash")
	if c := req.CookieMode.Crypt; c == nil || !c.Required || c.Cipher == nil {
		t.Fatalf("required: %+v", req.CookieMode)
	}
	if req.Cookie.Name != encryptedPoolCookieName("s3cret", "/Common/p") || !strings.HasPrefix(req.Cookie.Name, "BIGipServer") || strings.Contains(req.Cookie.Name, "BIGipServerp") {
		t.Fatalf("encrypt-cookie-poolname: cookie %q", req.Cookie.Name)
	}
	if c := pref.CookieMode.Crypt; c == nil || c.Required || pref.Cookie.Name != "BIGipServerp" {
		t.Fatalf("preferred: %+v %q", pref.CookieMode, pref.Cookie.Name)
	}
	if hash.CookieMode.Crypt != nil || hash.Cookie.Name != "JSESSIONID" {
		t.Fatalf("hash keys on the application's cookie, unencrypted: %+v", hash.CookieMode)
	}
	// The same value encrypted for another cookie name fails: the
	// name is bound in (a cookie moved between pools does not decrypt).
	enc := req.CookieMode.Crypt.Cipher.Encrypt(req.Cookie.Name, "1.2.0000")
	if _, ok := req.CookieMode.Crypt.Cipher.Decrypt("BIGipServerp", enc); ok {
		t.Fatal("a value decrypted under another cookie name")
	}
}
