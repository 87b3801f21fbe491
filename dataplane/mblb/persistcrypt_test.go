package mblb

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/cookiecrypt"
	"github.com/openltm/openltm/dataplane/httpx"
)

func TestPersistCookieCrypt(t *testing.T) {
	ci, _ := cookiecrypt.New("pass", 192)
	other, _ := cookiecrypt.New("other", 192)
	const name = "BIGipServerpool"
	m := netip.MustParseAddrPort("127.76.4.11:8080")
	plain := httpx.EncodeMember(m)
	enc := ci.Encrypt(name, plain)
	tampered := []byte(enc)
	tampered[4] ^= 2
	required := &CookieMode{Crypt: &PersistCookieCrypt{Cipher: ci, Required: true}}
	preferred := &CookieMode{Crypt: &PersistCookieCrypt{Cipher: ci}}
	for _, tc := range []struct {
		name  string
		mode  *CookieMode
		value string
		ok    bool
	}{
		{"plain, no encryption", &CookieMode{}, plain, true},
		{"encrypted, no encryption", &CookieMode{}, enc, false},
		{"encrypted, required", required, enc, true},
		{"encrypted, preferred", preferred, enc, true},
		{"plain, required", required, plain, false},
		{"plain, preferred", preferred, plain, true},
		{"tampered, required", required, string(tampered), false},
		{"tampered, preferred", preferred, string(tampered), false},
		{"another pass phrase", &CookieMode{Crypt: &PersistCookieCrypt{Cipher: other}}, enc, false},
		{"garbage, preferred", preferred, "!!!", false},
		{"encrypted non-member, required", required, ci.Encrypt(name, "hello"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.mode.member(name, []byte(tc.value))
			if ok != tc.ok || ok && got != m {
				t.Fatalf("member(%q) = %v %v, want %v", tc.value, got, ok, tc.ok)
			}
		})
	}

	spec := &httpx.CookieSpec{Name: name, HTTPOnly: true, Expiration: time.Hour}
	line := string(required.appendSetCookie([]byte("X: y\r\n"), spec, m, time.Now()))
	v, rest, _ := strings.Cut(strings.TrimPrefix(line, "X: y\r\nSet-Cookie: "+name+"="), ";")
	if got, ok := required.member(name, []byte(v)); !ok || got != m || !strings.Contains(rest, "expires=") ||
		!strings.HasSuffix(line, "; Httponly\r\n") {
		t.Fatalf("Set-Cookie line %q", line)
	}
	if line := string((&CookieMode{}).appendSetCookie(nil, spec, m, time.Now())); !strings.HasPrefix(line, "Set-Cookie: "+name+"="+plain+"; path=/") {
		t.Fatalf("plain Set-Cookie line %q", line)
	}
	head := "HTTP/1.1 200 OK\r\nSet-Cookie: BIGipCookie=0000000000000000; path=/app\r\n\r\n"
	out := string(rewriteSetCookie([]byte(head), spec, required, m))
	v, _, _ = strings.Cut(strings.TrimPrefix(out, "HTTP/1.1 200 OK\r\nSet-Cookie: "+name+"="), ";")
	if got, ok := required.member(name, []byte(v)); !ok || got != m || !strings.Contains(out, "; path=/app\r\n") {
		t.Fatalf("rewritten %q", out)
	}
}

// Without cookie-encryption, reading a persistence cookie allocates
// nothing more than before.
func TestPersistCookieCryptAllocs(t *testing.T) {
	mode := &CookieMode{}
	v := []byte(httpx.EncodeMember(netip.MustParseAddrPort("127.76.4.11:8080")))
	if n := testing.AllocsPerRun(100, func() { mode.member("BIGipServerpool", v) }); n != 0 {
		t.Fatalf("%v allocations per cookie", n)
	}
}
