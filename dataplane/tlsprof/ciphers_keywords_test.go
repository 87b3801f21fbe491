package tlsprof

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestNoSuiteKeywords: each keyword naming a protocol or family no suite
// here has selects nothing, in any case and in any position, and a word
// near one of them is still refused with its column.
func TestNoSuiteKeywords(t *testing.T) {
	all, err := ParseCiphers("ALL")
	if err != nil {
		t.Fatal(err)
	}
	var kws []string
	for k := range noSuiteKeywords {
		kws = append(kws, k)
	}
	sort.Strings(kws)
	for _, kw := range kws {
		for _, spelled := range []string{kw, strings.ToLower(kw)} {
			t.Run(spelled, func(t *testing.T) {
				for str, want := range map[string][]string{
					spelled:                            nil,
					spelled + "+RSA":                   nil,
					"!" + spelled + ":ALL":             all.Names(),
					"ALL:-" + spelled:                  all.Names(),
					"ALL:!" + spelled + ":+" + spelled: all.Names(),
				} {
					l, err := ParseCiphers(str)
					if err != nil {
						t.Fatalf("%q: %v", str, err)
					}
					if got := l.Names(); !slices.Equal(got, want) {
						t.Errorf("%q selects %v, want %v", str, got, want)
					}
				}
			})
		}
	}
	// The switch's keywords and the table do not overlap: a keyword there
	// that selects suites must not be shadowed, and one here must not be
	// reached by the switch first (it would then select something).
	for _, kw := range kws {
		for _, e := range universe {
			if ok, known := matches(kw, e); ok || !known {
				t.Errorf("%s: matches %v known %v for %s", kw, ok, known, suites[e.suite].name)
			}
		}
	}
	for _, tc := range []struct{ str, col, word string }{
		{"!SSLv2x:ALL", "column 1", "SSLv2x"},
		{"ALL:!SSLv4", "column 5", "SSLv4"},
		{"DEFAULT:IDEAS", "column 9", "IDEAS"},
		{"RSA+PSKK", "column 1", "PSKK"},
	} {
		_, err := ParseCiphers(tc.str)
		if err == nil || !strings.Contains(err.Error(), tc.col+`: unknown cipher keyword or suite "`+tc.word+`"`) {
			t.Errorf("%q: err = %v", tc.str, err)
		}
	}
	// A profile on such a word alone has nothing to offer and says so.
	if _, _, err := selection("p", "SSLv2:IDEA", nil); err == nil || !strings.Contains(err.Error(), "selects no cipher suite") {
		t.Errorf("SSLv2:IDEA alone: %v", err)
	}
}

// TestF5BuiltinCipherStrings: the cipher strings of BIG-IP's
// insecure-compatible and secure ssl built-ins parse, to what OpenSSL's
// rules give over the suites known here.
func TestF5BuiltinCipherStrings(t *testing.T) {
	for _, tc := range []struct {
		name, str string
		has, not  []string
		versions  string
	}{
		{"clientssl-insecure-compatible", "!SSLv2:ALL:!DH:!ADH:!EDH:@SPEED",
			[]string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-SHA", "AES128-SHA", "DES-CBC3-SHA", "RC4-SHA", "DES-CBC-SHA", "TLS13-AES128-GCM-SHA256"},
			[]string{"DHE-RSA-AES128-SHA", "DHE-DSS-AES128-SHA", "ADH-AES128-SHA", "NULL-SHA"},
			"TLSv1, TLSv1.1, TLSv1.2, TLSv1.3"},
		{"serverssl-insecure-compatible", "!SSLv2:!EXPORT:!DH:RSA+RC4:RSA+AES:RSA+DES:RSA+3DES:ECDHE+AES:ECDHE+3DES:@SPEED",
			[]string{"RC4-SHA", "RC4-MD5", "AES128-SHA", "AES256-GCM-SHA384", "DES-CBC-SHA", "DES-CBC3-SHA", "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-DES-CBC3-SHA"},
			[]string{"EXP-RC4-MD5", "EXP-DES-CBC-SHA", "DHE-RSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA", "TLS13-AES128-GCM-SHA256", "CAMELLIA128-SHA"},
			"TLSv1, TLSv1.1, TLSv1.2"},
		{"clientssl-secure", "ecdhe:rsa:!sslv3:!rc4:!exp:!des",
			[]string{"ECDHE-RSA-AES128-GCM-SHA256", "AES128-SHA", "DES-CBC3-SHA"},
			[]string{"RC4-SHA", "DES-CBC-SHA", "ECDHE-ECDSA-AES128-SHA", "EXP-RC4-MD5", "TLS13-AES128-GCM-SHA256"},
			"TLSv1, TLSv1.1, TLSv1.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseCiphers(tc.str)
			if err != nil {
				t.Fatal(err)
			}
			wantSuites(t, l, tc.has, tc.not)
			if got := versionNames(l.Versions()); got != tc.versions {
				t.Errorf("versions %s, want %s", got, tc.versions)
			}
		})
	}
}

// wantSuites fails t unless l selects every suite of has and none of not.
func wantSuites(t *testing.T, l *CipherList, has, not []string) {
	t.Helper()
	for _, n := range has {
		if !l.Has(n) {
			t.Errorf("%s missing from %v", n, l.Names())
		}
	}
	for _, n := range not {
		if l.Has(n) {
			t.Errorf("%s selected: %v", n, l.Names())
		}
	}
}
