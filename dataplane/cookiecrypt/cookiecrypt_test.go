package cookiecrypt

import (
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, bits := range []int{128, 192, 256} {
		c, err := New("a pass phrase", bits)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"", "user=42", strings.Repeat("x", 3000), "é; ,\"\\"} {
			enc := c.Encrypt("SID", v)
			if !strings.HasPrefix(enc, Prefix) || strings.ContainsAny(enc[1:], ";, \"\\=+/") {
				t.Fatalf("%d: %q is not a cookie value", bits, enc)
			}
			if got, ok := c.Decrypt("SID", enc); !ok || got != v {
				t.Fatalf("%d: %q gave %q %v", bits, v, got, ok)
			}
			if enc2 := c.Encrypt("SID", v); enc2 == enc {
				t.Fatalf("%d: the same value encrypted twice alike", bits)
			}
		}
	}
	c, _ := New("k", 128)
	other, _ := New("other", 128)
	c256, _ := New("k", 256)
	enc := c.Encrypt("SID", "secret")
	flipped := []byte(enc)
	flipped[5] ^= 1
	for _, bad := range []struct {
		c       *Cipher
		name, v string
	}{
		{other, "SID", enc},
		{c256, "SID", enc},
		{c, "OTHER", enc},
		{c, "SID", string(flipped)},
		{c, "SID", "secret"},
		{c, "SID", "!"},
		{c, "SID", "!!!!"},
		{c, "SID", enc[:len(enc)-4]},
	} {
		if got, ok := bad.c.Decrypt(bad.name, bad.v); ok {
			t.Errorf("%q for %s decrypted to %q", bad.v, bad.name, got)
		}
	}
	if _, err := New("k", 64); err == nil {
		t.Error("a 64-bit key was accepted")
	}
}
