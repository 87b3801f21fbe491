package rules

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Fixed keys, IV and nonce for the AES vectors below, in F5's key form.
const (
	aesTestKey128 = "AES 128 000102030405060708090a0b0c0d0e0f"
	aesTestKey256 = "AES 256 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	aesTestZero   = "AES 128 00000000000000000000000000000000"
)

// The expected ciphertexts come from Python's cryptography package
// (AES-CBC with PKCS#7 padding; AES-GCM with the format byte as
// additional data), each behind its format byte and IV or nonce: only
// the framing is openltm's.
var aesVectors = []struct {
	name   string
	format byte
	key    string
	iv     string
	plain  string
	sealed string
}{
	{"v1 128", aesFormatCBC, aesTestKey128, "0f0e0d0c0b0a09080706050403020100", "hello world",
		"010f0e0d0c0b0a090807060504030201003fb51c0ccbcb533bb82a08e6817013ea"},
	{"v1 256 whole block", aesFormatCBC, aesTestKey256, "0f0e0d0c0b0a09080706050403020100", "sixteen byte msg",
		"010f0e0d0c0b0a09080706050403020100608ad77b910d8ea2e486cf77d6c840969ec18d8cc789ad35ad0cfc3ea444f9d3"},
	{"v2 128", aesFormatGCM, aesTestKey128, "000102030405060708090a0b", "hello world",
		"02000102030405060708090a0bfb09cba2093b803b39be05d85898ab75d6fe923feba6287dc38cc3"},
	{"v2 256 empty", aesFormatGCM, aesTestKey256, "000102030405060708090a0b", "",
		"02000102030405060708090a0b03805f4bb2d97fee0d9847d7ee0e529a"},
}

func TestAESSealVectors(t *testing.T) {
	for _, v := range aesVectors {
		key, err := parseAESKey("test", tclStr(v.key))
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		iv, _ := hex.DecodeString(v.iv)
		got, err := aesSeal(v.format, key, iv, []byte(v.plain))
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if hex.EncodeToString(got) != v.sealed {
			t.Errorf("%s: sealed %x, want %s", v.name, got, v.sealed)
		}
		for _, format := range []byte{0, v.format} {
			if out, ok := aesOpen(format, key, got); !ok || !bytes.Equal(out, []byte(v.plain)) {
				t.Errorf("%s: open (format %d) = %q, %v", v.name, format, out, ok)
			}
		}
	}
}

// Format 1's padding is checked whole: each case is one block as it
// decrypts, and what AES::decrypt makes of it.
func TestAESPadding(t *testing.T) {
	key, _ := parseAESKey("test", tclStr(aesTestKey128))
	block, _ := aes.NewCipher(key)
	iv := make([]byte, aes.BlockSize)
	fill := func(tail ...byte) []byte {
		return append(bytes.Repeat([]byte{'a'}, aes.BlockSize-len(tail)), tail...)
	}
	cases := []struct {
		name  string
		plain []byte
		want  string
		ok    bool
	}{
		{"one byte", fill(1), "aaaaaaaaaaaaaaa", true},
		{"two bytes", fill(2, 2), "aaaaaaaaaaaaaa", true},
		{"whole block", bytes.Repeat([]byte{16}, 16), "", true},
		{"zero", fill(0), "", false},
		{"longer than a block", fill(17), "", false},
		{"last but one wrong", fill(3, 2), "", false},
		{"first of three wrong", fill(2, 3, 3), "", false},
	}
	for _, c := range cases {
		sealed := append([]byte{aesFormatCBC}, iv...)
		body := make([]byte, aes.BlockSize)
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(body, c.plain)
		out, ok := aesOpen(0, key, append(sealed, body...))
		if ok != c.ok || string(out) != c.want {
			t.Errorf("%s: open = %q, %v; want %q, %v", c.name, out, ok, c.want, c.ok)
		}
	}
}

func TestAESKey(t *testing.T) {
	cases := []struct {
		expr string
		bits string
	}{
		{"AES::key", "128"},
		{"AES::key 128", "128"},
		{"AES::key 192", "192"},
		{"AES::key 256", "256"},
	}
	for _, c := range cases {
		got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		digits := map[string]int{"128": 32, "192": 48, "256": 64}[c.bits]
		if !regexp.MustCompile(`^AES ` + c.bits + ` [0-9a-f]{` + strconv.Itoa(digits) + `}$`).MatchString(got) {
			t.Errorf("%s = %q, want \"AES %s\" and %d hex digits", c.expr, got, c.bits, digits)
		}
	}
	// A rule reads a key as a list of three words; every key is new.
	got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, "list [llength [AES::key 192]] [expr {[AES::key] ne [AES::key]}] [lindex [AES::key 256] 1]")
	if err != nil || got != "3 1 256" {
		t.Errorf("key as a list = %q, %v; want \"3 1 256\"", got, err)
	}
}

// Every key size and both formats round-trip text, nothing and every
// byte value through the published b64encode/b64decode pattern.
func TestAESRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	data := []struct {
		name, set string // set makes $d
		want      []byte
	}{
		{"text", `set d "text"`, []byte("text")},
		{"empty", `set d ""`, nil},
		{"whole block", `set d "0123456789abcdef"`, []byte("0123456789abcdef")},
		{"longer", `set d "user=alice; role=admin; expires=1700000000; path=/"`, []byte("user=alice; role=admin; expires=1700000000; path=/")},
		{"latin-1", "set d \"caf\u00e9 \u00fc\"", []byte("caf\xe9 \xfc")},
		{"binary", "set d [binary decode hex " + hex.EncodeToString(all) + "]", all},
	}
	for _, bits := range []string{"128", "192", "256"} {
		for _, opt := range []string{"", "-v1 ", "-v2 "} {
			for _, d := range data {
				expr := d.set + "; set k [AES::key " + bits + "]; set c [b64encode [AES::encrypt " + opt + "$k $d]]; binary encode hex [AES::decrypt " + opt + "$k [b64decode $c]]"
				got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, expr)
				if err != nil {
					t.Errorf("%s %s%s: %v", bits, opt, d.name, err)
				} else if got != hex.EncodeToString(d.want) {
					t.Errorf("%s %s%s: decrypted %s, want %x", bits, opt, d.name, got, d.want)
				}
			}
		}
	}
}

// What a ciphertext looks like from a rule: its format byte first, its
// length, and a new IV or nonce each time.
func TestAESCiphertext(t *testing.T) {
	const k = "set k {" + aesTestKey128 + "}; "
	cases := []struct{ expr, want string }{
		{k + "string length [AES::encrypt $k hello]", "34"},     // 1 + 12 + 5 + 16
		{k + "string length [AES::encrypt -v2 $k hello]", "34"}, //
		{k + "string length [AES::encrypt -v1 $k hello]", "33"}, // 1 + 16 + 16
		{k + "string length [AES::encrypt -v1 $k {}]", "33"},    // a whole block of padding
		{k + "string length [AES::encrypt -v1 $k 0123456789abcdef]", "49"},
		{k + "binary encode hex [string index [AES::encrypt $k x] 0]", "02"},
		{k + "binary encode hex [string index [AES::encrypt -v1 $k x] 0]", "01"},
		{k + "expr {[AES::encrypt $k same] ne [AES::encrypt $k same]}", "1"},
		{k + "expr {[AES::encrypt -v1 $k same] ne [AES::encrypt -v1 $k same]}", "1"},
		// Data starting with a dash needs no option before it.
		{k + "AES::decrypt $k [AES::encrypt $k -v1]", "-v1"},
		// Without an option, decrypt reads either format.
		{k + "AES::decrypt $k [AES::encrypt -v1 $k either]", "either"},
		{k + "AES::decrypt $k [AES::encrypt -v2 $k either]", "either"},
		// A key is read in either case and with any spacing.
		{k + "AES::decrypt {AES  128   000102030405060708090A0B0C0D0E0F} [AES::encrypt $k case]", "case"},
	}
	for _, c := range cases {
		got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
		} else if got != c.want {
			t.Errorf("%s = %q, want %q", c.expr, got, c.want)
		}
	}
}

// Data that does not decrypt gives the empty string, not an error.
func TestAESDecryptFailures(t *testing.T) {
	v1, v2 := aesVectors[0].sealed, aesVectors[2].sealed
	flip := func(h string, i int) string {
		b, _ := hex.DecodeString(h)
		b[i] ^= 1
		return hex.EncodeToString(b)
	}
	cases := []struct{ name, opt, key, data string }{
		{"v2 wrong key", "", aesTestZero, v2},
		{"v2 other size key", "", aesTestKey256, v2},
		{"v2 altered tag", "", aesTestKey128, flip(v2, len(v2)/2-1)},
		{"v2 altered nonce", "", aesTestKey128, flip(v2, 3)},
		{"v2 altered ciphertext", "", aesTestKey128, flip(v2, 14)},
		{"v2 format byte altered", "", aesTestKey128, "01" + v2[2:]},
		{"v2 truncated", "", aesTestKey128, v2[:len(v2)-2]},
		{"v2 read as v1", "-v1", aesTestKey128, v2},
		{"v1 wrong key", "", aesTestZero, v1},
		{"v1 read as v2", "-v2", aesTestKey128, v1},
		{"v1 not whole blocks", "", aesTestKey128, v1[:len(v1)-2]},
		{"v1 IV alone", "", aesTestKey128, v1[:34]},
		{"empty", "", aesTestKey128, ""},
		{"format byte alone", "", aesTestKey128, "02"},
		{"shorter than nonce and tag", "", aesTestKey128, v2[:56]},
		{"unknown format", "", aesTestKey128, "03" + v2[2:]},
		{"not encrypted", "", aesTestKey128, hex.EncodeToString([]byte("hello world, in the clear"))},
	}
	for _, c := range cases {
		expr := "AES::decrypt " + c.opt + " {" + c.key + "} [binary decode hex {" + c.data + "}]"
		got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, expr)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if got != "" {
			t.Errorf("%s: decrypted %q, want \"\"", c.name, got)
		}
	}
	// Format 1 carries no integrity check, as its doc says: an altered
	// IV changes the plaintext and goes unnoticed.
	got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, "AES::decrypt -v1 {"+aesTestKey128+"} [binary decode hex "+flip(v1, 1)+"]")
	if err != nil || got != "iello world" {
		t.Errorf("v1 with altered IV = %q, %v; want \"iello world\"", got, err)
	}
}

func TestAESErrors(t *testing.T) {
	const badKey = `invalid AES key: want "AES 128|192|256 HEX" with 32, 48 or 64 hex digits`
	cases := []struct{ expr, want string }{
		{"AES::key 64", `AES::key: bad key length "64": must be 128, 192 or 256`},
		{"AES::key 1024", `bad key length "1024": must be 128, 192 or 256`},
		{"AES::key abc", `bad key length "abc"`},
		{"AES::key 128 256", `wrong # args: should be "AES::key ?128|192|256?"`},
		{"AES::encrypt", `wrong # args: should be "AES::encrypt ?-v1|-v2? key data"`},
		{"AES::encrypt [AES::key]", "wrong # args"},
		{"AES::decrypt -v1 [AES::key] a b", `wrong # args: should be "AES::decrypt ?-v1|-v2? key data"`},
		{"AES::encrypt -v3 [AES::key] x", `AES::encrypt: bad option "-v3": must be -v1 or -v2`},
		{"AES::decrypt -V1 [AES::key] x", `bad option "-V1"`},
		{"AES::encrypt secret x", "AES::encrypt: " + badKey},
		{"AES::decrypt secret x", "AES::decrypt: " + badKey},
		{"AES::encrypt {} x", badKey},
		{"AES::encrypt {AES 128} x", badKey},
		{"AES::encrypt {AES 128 000102030405060708090a0b0c0d0e0f extra} x", badKey},
		{"AES::encrypt {DES 128 000102030405060708090a0b0c0d0e0f} x", badKey},
		{"AES::encrypt {AES 100 000102030405060708090a0b0c0d0e0f} x", badKey},
		{"AES::encrypt {AES 256 000102030405060708090a0b0c0d0e0f} x", badKey},
		{"AES::encrypt {AES 128 000102030405060708090a0b0c0d0e} x", badKey},
		{"AES::encrypt {AES 128 zaze9a2r363tccaaaaa79a22r3t16712} x", badKey},
		{"AES::encrypt {AES 256 xqgdYHgOxAhY5THQKVIAr52SRkKT/uOpmHNpD30ZIoo=} x", badKey},
	}
	for _, c := range cases {
		_, err := evalIn(t, newFakeConn(), nil, HTTPRequest, c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.expr, err, c.want)
		}
	}
	// The error does not repeat a key that was nearly right.
	_, err := evalIn(t, newFakeConn(), nil, HTTPRequest, "AES::encrypt {AES 128 000102030405060708090a0b0c0d0e0g} x")
	if err == nil || strings.Contains(err.Error(), "0e0g") {
		t.Errorf("error %v repeats the key", err)
	}
	// Rules catch a bad key like any other Tcl error.
	if got, err := evalIn(t, newFakeConn(), nil, HTTPRequest, "catch {AES::decrypt nokey x}"); err != nil || got != "1" {
		t.Errorf("catch = %q, %v; want 1", got, err)
	}
}

// A rule in the shape DevCentral publishes: a key made once in
// RULE_INIT (kept as text, or base64 of the text as the codeshare
// does), a value encrypted for the client and read back, and a value
// that does not decrypt tested with eq "".
func TestAESRule(t *testing.T) {
	rule := `when RULE_INIT {
  set static::aes_key [AES::key 256]
  set static::aes_key64 [b64encode [AES::key 128]]
}
when HTTP_REQUEST {
  set cookie [b64encode [AES::encrypt $static::aes_key "user=alice"]]
  log local0. "plain [AES::decrypt $static::aes_key [b64decode $cookie]]"
  set token [b64encode [AES::encrypt -v1 [b64decode $static::aes_key64] "id=42"]]
  log local0. "token [AES::decrypt -v1 [b64decode $static::aes_key64] [b64decode $token]]"
  set forged [AES::decrypt $static::aes_key [b64decode [b64encode [AES::encrypt [AES::key 256] "user=mallory"]]]]
  if { $forged eq "" } {
    log local0. "forged cookie refused"
  }
}`
	_, logs, err := run(t, nil, []string{rule}, HTTPRequest)
	if err != nil {
		t.Fatalf("run: %v (log %v)", err, logs.lines)
	}
	got := strings.Join(logs.lines, "\n")
	for _, want := range []string{"plain user=alice", "token id=42", "forged cookie refused"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}

// FuzzAESDecrypt feeds any bytes to AES::decrypt's decoder in each
// format: data a client sends is never a panic, and what decrypts was
// sealed by the key.
func FuzzAESDecrypt(f *testing.F) {
	for _, v := range aesVectors {
		b, _ := hex.DecodeString(v.sealed)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{2})
	key, err := parseAESKey("test", tclStr(aesTestKey128))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []byte{0, aesFormatCBC, aesFormatGCM} {
			out, ok := aesOpen(format, key, data)
			if !ok && out != nil {
				t.Fatalf("format %d: failed but returned %q", format, out)
			}
			if ok && format == aesFormatGCM && len(data) != 1+aesNonceSize+len(out)+16 {
				t.Fatalf("format 2: %d bytes opened to %d", len(data), len(out))
			}
		}
	})
}
