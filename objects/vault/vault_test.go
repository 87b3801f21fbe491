package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	k, other := Generate(), Generate()
	for _, plain := range []string{"secret", "", "a longer pass phrase with spaces and $M$ inside", "ünïcödé"} {
		s := k.Seal(plain)
		if !Sealed(s) || strings.Contains(s, plain) && plain != "" {
			t.Fatalf("Seal(%q) = %q", plain, s)
		}
		if s2 := k.Seal(plain); s2 == s {
			t.Errorf("Seal(%q) twice gave the same text %q: no salt", plain, s)
		}
		if got, err := k.Open(s); err != nil || got != plain {
			t.Errorf("Open(Seal(%q)) = %q, %v", plain, got, err)
		}
		if _, err := other.Open(s); !errors.Is(err, ErrForeign) {
			t.Errorf("another key opened %q: %v", s, err)
		}
		if k.Seal(s) != s {
			t.Errorf("sealing a sealed value changed it")
		}
	}
	for _, bad := range []string{"$M$", "$M$ab", "$M$abc$AAAA", "$M$ab$not base64", "$M$ab$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if _, err := k.Open(bad); !errors.Is(err, ErrForeign) {
			t.Errorf("Open(%q) = %v, want ErrForeign", bad, err)
		}
	}
	if got, err := k.Open("clear"); err != nil || got != "clear" {
		t.Errorf("Open of a clear value = %q, %v", got, err)
	}
}

func TestFromPassword(t *testing.T) {
	a, err := FromPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FromPassword("correct horse")
	c, _ := FromPassword("correct horse!")
	if !a.Equal(b) || a.Equal(c) || a.Checksum() != b.Checksum() || a.Checksum() == c.Checksum() {
		t.Fatalf("the same password must give the same key, another password another")
	}
	if got, err := b.Open(a.Seal("pw")); err != nil || got != "pw" {
		t.Fatalf("a device given the same password cannot read the other's value: %q %v", got, err)
	}
	if _, err := FromPassword(""); err == nil {
		t.Fatal("an empty password was taken")
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master-key")
	k, created, err := Load(path)
	if err != nil || !created {
		t.Fatalf("first Load: %v created=%v", err, created)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	k2, created, err := Load(path)
	if err != nil || created || !k.Equal(k2) {
		t.Fatalf("second Load: %v created=%v equal=%v", err, created, k.Equal(k2))
	}
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path); err == nil {
		t.Fatal("a damaged key file was taken")
	}
}
