package tlsprof

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
)

// Protocol versions as F5 cipher strings and options name them. SSLv3 is
// known so that strings naming it parse; Go's crypto/tls cannot speak it.
const (
	verSSL3  = 0x0300
	verTLS10 = tls.VersionTLS10
	verTLS11 = tls.VersionTLS11
	verTLS12 = tls.VersionTLS12
	verTLS13 = tls.VersionTLS13
)

var allVersions = []uint16{verSSL3, verTLS10, verTLS11, verTLS12, verTLS13}

// VersionName is the protocol name BIG-IP prints (TLSv1.2).
func VersionName(v uint16) string {
	switch v {
	case verSSL3:
		return "SSLv3"
	case verTLS10:
		return "TLSv1"
	case verTLS11:
		return "TLSv1.1"
	case verTLS12:
		return "TLSv1.2"
	case verTLS13:
		return "TLSv1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}

// suite is one cipher suite BIG-IP knows, with the attributes cipher
// strings select on.
type suite struct {
	name    string   // OpenSSL/F5 name
	aliases []string // other spellings (F5's CBC names, IANA name)
	id      uint16   // Go's id; 0 when crypto/tls lacks the suite
	kx      string   // RSA ECDHE DHE ECDH ADH
	au      string   // RSA ECDSA DSS NULL
	enc     string   // AES128 AES256 AESGCM128 AESGCM256 CHACHA20 3DES DES RC4 CAMELLIA128 CAMELLIA256 NULL
	mac     string   // SHA1 SHA256 SHA384 MD5 AEAD
	minVer  uint16
	maxVer  uint16
	export  bool
}

func s(name string, id uint16, kx, au, enc, mac string, minVer, maxVer uint16, aliases ...string) suite {
	return suite{name: name, aliases: aliases, id: id, kx: kx, au: au, enc: enc, mac: mac, minVer: minVer, maxVer: maxVer}
}

// suites is the universe of cipher suites; order is the preference order
// of DEFAULT (strongest first).
var suites = []suite{
	s("TLS13-AES128-GCM-SHA256", tls.TLS_AES_128_GCM_SHA256, "TLS13", "ANY", "AESGCM128", "AEAD", verTLS13, verTLS13, "TLS_AES_128_GCM_SHA256"),
	s("TLS13-AES256-GCM-SHA384", tls.TLS_AES_256_GCM_SHA384, "TLS13", "ANY", "AESGCM256", "AEAD", verTLS13, verTLS13, "TLS_AES_256_GCM_SHA384"),
	s("TLS13-CHACHA20-POLY1305-SHA256", tls.TLS_CHACHA20_POLY1305_SHA256, "TLS13", "ANY", "CHACHA20", "AEAD", verTLS13, verTLS13, "TLS_CHACHA20_POLY1305_SHA256"),
	s("ECDHE-RSA-AES128-GCM-SHA256", tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, "ECDHE", "RSA", "AESGCM128", "AEAD", verTLS12, verTLS12),
	s("ECDHE-RSA-AES256-GCM-SHA384", tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "ECDHE", "RSA", "AESGCM256", "AEAD", verTLS12, verTLS12),
	s("ECDHE-ECDSA-AES128-GCM-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "ECDHE", "ECDSA", "AESGCM128", "AEAD", verTLS12, verTLS12),
	s("ECDHE-ECDSA-AES256-GCM-SHA384", tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, "ECDHE", "ECDSA", "AESGCM256", "AEAD", verTLS12, verTLS12),
	s("ECDHE-RSA-CHACHA20-POLY1305", tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE", "RSA", "CHACHA20", "AEAD", verTLS12, verTLS12, "ECDHE-RSA-CHACHA20-POLY1305-SHA256"),
	s("ECDHE-ECDSA-CHACHA20-POLY1305", tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE", "ECDSA", "CHACHA20", "AEAD", verTLS12, verTLS12, "ECDHE-ECDSA-CHACHA20-POLY1305-SHA256"),
	s("ECDHE-RSA-AES128-SHA256", tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, "ECDHE", "RSA", "AES128", "SHA256", verTLS12, verTLS12, "ECDHE-RSA-AES128-CBC-SHA256"),
	s("ECDHE-RSA-AES256-SHA384", 0, "ECDHE", "RSA", "AES256", "SHA384", verTLS12, verTLS12, "ECDHE-RSA-AES256-CBC-SHA384"),
	s("ECDHE-ECDSA-AES128-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, "ECDHE", "ECDSA", "AES128", "SHA256", verTLS12, verTLS12),
	s("ECDHE-ECDSA-AES256-SHA384", 0, "ECDHE", "ECDSA", "AES256", "SHA384", verTLS12, verTLS12),
	s("ECDHE-RSA-AES128-SHA", tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, "ECDHE", "RSA", "AES128", "SHA1", verTLS10, verTLS12, "ECDHE-RSA-AES128-CBC-SHA"),
	s("ECDHE-RSA-AES256-SHA", tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, "ECDHE", "RSA", "AES256", "SHA1", verTLS10, verTLS12, "ECDHE-RSA-AES256-CBC-SHA"),
	s("ECDHE-ECDSA-AES128-SHA", tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, "ECDHE", "ECDSA", "AES128", "SHA1", verTLS10, verTLS12),
	s("ECDHE-ECDSA-AES256-SHA", tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, "ECDHE", "ECDSA", "AES256", "SHA1", verTLS10, verTLS12),
	s("DHE-RSA-AES128-GCM-SHA256", 0, "DHE", "RSA", "AESGCM128", "AEAD", verTLS12, verTLS12),
	s("DHE-RSA-AES256-GCM-SHA384", 0, "DHE", "RSA", "AESGCM256", "AEAD", verTLS12, verTLS12),
	s("DHE-RSA-CHACHA20-POLY1305", 0, "DHE", "RSA", "CHACHA20", "AEAD", verTLS12, verTLS12),
	s("DHE-RSA-AES128-SHA256", 0, "DHE", "RSA", "AES128", "SHA256", verTLS12, verTLS12),
	s("DHE-RSA-AES256-SHA256", 0, "DHE", "RSA", "AES256", "SHA256", verTLS12, verTLS12),
	s("DHE-RSA-AES128-SHA", 0, "DHE", "RSA", "AES128", "SHA1", verSSL3, verTLS12),
	s("DHE-RSA-AES256-SHA", 0, "DHE", "RSA", "AES256", "SHA1", verSSL3, verTLS12),
	s("DHE-RSA-CAMELLIA128-SHA", 0, "DHE", "RSA", "CAMELLIA128", "SHA1", verSSL3, verTLS12),
	s("DHE-RSA-CAMELLIA256-SHA", 0, "DHE", "RSA", "CAMELLIA256", "SHA1", verSSL3, verTLS12),
	s("DHE-DSS-AES128-SHA", 0, "DHE", "DSS", "AES128", "SHA1", verSSL3, verTLS12),
	s("DHE-DSS-AES256-SHA", 0, "DHE", "DSS", "AES256", "SHA1", verSSL3, verTLS12),
	s("ECDH-RSA-AES128-GCM-SHA256", 0, "ECDH", "RSA", "AESGCM128", "AEAD", verTLS12, verTLS12),
	s("ECDH-ECDSA-AES128-GCM-SHA256", 0, "ECDH", "ECDSA", "AESGCM128", "AEAD", verTLS12, verTLS12),
	s("ECDH-RSA-AES128-SHA", 0, "ECDH", "RSA", "AES128", "SHA1", verTLS10, verTLS12),
	s("ECDH-RSA-AES256-SHA", 0, "ECDH", "RSA", "AES256", "SHA1", verTLS10, verTLS12),
	s("ECDH-ECDSA-AES128-SHA", 0, "ECDH", "ECDSA", "AES128", "SHA1", verTLS10, verTLS12),
	s("ECDH-ECDSA-AES256-SHA", 0, "ECDH", "ECDSA", "AES256", "SHA1", verTLS10, verTLS12),
	s("AES128-GCM-SHA256", tls.TLS_RSA_WITH_AES_128_GCM_SHA256, "RSA", "RSA", "AESGCM128", "AEAD", verTLS12, verTLS12),
	s("AES256-GCM-SHA384", tls.TLS_RSA_WITH_AES_256_GCM_SHA384, "RSA", "RSA", "AESGCM256", "AEAD", verTLS12, verTLS12),
	s("AES128-SHA256", tls.TLS_RSA_WITH_AES_128_CBC_SHA256, "RSA", "RSA", "AES128", "SHA256", verTLS12, verTLS12),
	s("AES256-SHA256", 0, "RSA", "RSA", "AES256", "SHA256", verTLS12, verTLS12),
	s("AES128-SHA", tls.TLS_RSA_WITH_AES_128_CBC_SHA, "RSA", "RSA", "AES128", "SHA1", verSSL3, verTLS12),
	s("AES256-SHA", tls.TLS_RSA_WITH_AES_256_CBC_SHA, "RSA", "RSA", "AES256", "SHA1", verSSL3, verTLS12),
	s("CAMELLIA128-SHA", 0, "RSA", "RSA", "CAMELLIA128", "SHA1", verSSL3, verTLS12),
	s("CAMELLIA256-SHA", 0, "RSA", "RSA", "CAMELLIA256", "SHA1", verSSL3, verTLS12),
	s("ECDHE-RSA-DES-CBC3-SHA", tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, "ECDHE", "RSA", "3DES", "SHA1", verTLS10, verTLS12),
	s("EDH-RSA-DES-CBC3-SHA", 0, "DHE", "RSA", "3DES", "SHA1", verSSL3, verTLS12, "DHE-RSA-DES-CBC3-SHA"),
	s("DES-CBC3-SHA", tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA, "RSA", "RSA", "3DES", "SHA1", verSSL3, verTLS12),
	s("RC4-SHA", tls.TLS_RSA_WITH_RC4_128_SHA, "RSA", "RSA", "RC4", "SHA1", verSSL3, verTLS12),
	s("RC4-MD5", 0, "RSA", "RSA", "RC4", "MD5", verSSL3, verTLS12),
	s("DES-CBC-SHA", 0, "RSA", "RSA", "DES", "SHA1", verSSL3, verTLS11),
	{name: "EXP-RC4-MD5", kx: "RSA", au: "RSA", enc: "RC4", mac: "MD5", minVer: verSSL3, maxVer: verTLS10, export: true},
	{name: "EXP-DES-CBC-SHA", kx: "RSA", au: "RSA", enc: "DES", mac: "SHA1", minVer: verSSL3, maxVer: verTLS10, export: true},
	s("ADH-AES128-SHA", 0, "ADH", "NULL", "AES128", "SHA1", verSSL3, verTLS12),
	s("ADH-AES256-SHA", 0, "ADH", "NULL", "AES256", "SHA1", verSSL3, verTLS12),
	s("NULL-SHA", 0, "RSA", "RSA", "NULL", "SHA1", verSSL3, verTLS12),
	s("NULL-MD5", 0, "RSA", "RSA", "NULL", "MD5", verSSL3, verTLS12),
}

// entry is one suite at one protocol version: F5 cipher strings select
// protocol versions too ("!SSLv3", "!TLSv1"), so the unit a string adds and
// removes is the pair.
type entry struct {
	suite int // index into suites
	ver   uint16
}

var universe = func() []entry {
	var out []entry
	for i, su := range suites {
		for _, v := range allVersions {
			if v >= su.minVer && v <= su.maxVer {
				out = append(out, entry{i, v})
			}
		}
	}
	return out
}()

// strength classes as OpenSSL and BIG-IP use them.
func (su *suite) class() string {
	switch {
	case su.export:
		return "EXPORT"
	case su.enc == "NULL":
		return "NULL"
	case su.enc == "DES":
		return "LOW"
	case su.enc == "3DES" || su.enc == "RC4":
		return "MEDIUM"
	}
	return "HIGH"
}

// matches reports whether a single cipher-string word selects e.
func matches(word string, e entry) (bool, bool) {
	su := &suites[e.suite]
	w := strings.ToUpper(word)
	switch w {
	case "ALL":
		return su.enc != "NULL", true
	case "NATIVE":
		return su.enc != "NULL" && su.kx != "ADH" && !su.export, true
	case "DEFAULT":
		return isDefault(su, e.ver), true
	case "COMPLEMENTOFALL", "ENULL", "NULL":
		return su.enc == "NULL", true
	case "COMPLEMENTOFDEFAULT":
		return su.enc != "NULL" && !isDefault(su, e.ver), true
	case "HIGH", "MEDIUM", "LOW", "EXPORT", "EXP":
		if w == "EXP" {
			w = "EXPORT"
		}
		return su.class() == w, true
	case "SSLV3":
		return e.ver == verSSL3, true
	case "TLSV1", "TLSV1_0", "TLSV1.0":
		return e.ver == verTLS10, true
	case "TLSV1_1", "TLSV1.1":
		return e.ver == verTLS11, true
	case "TLSV1_2", "TLSV1.2":
		return e.ver == verTLS12, true
	case "TLSV1_3", "TLSV1.3", "TLS13":
		return e.ver == verTLS13, true
	// Key exchange. BIG-IP's ECDHE and DHE name the RSA-signed variants;
	// ECDHE_ECDSA and DHE_DSS the others (f5-ecc is "ECDHE:ECDHE_ECDSA").
	case "RSA", "KRSA":
		return su.kx == "RSA", true
	case "ECDHE", "EECDH", "ECDHE_RSA", "ECDHE-RSA":
		return su.kx == "ECDHE" && su.au == "RSA", true
	case "ECDHE_ECDSA", "ECDHE-ECDSA", "EECDH_ECDSA":
		return su.kx == "ECDHE" && su.au == "ECDSA", true
	case "KECDHE", "KEECDH":
		return su.kx == "ECDHE", true
	case "DHE", "EDH", "DHE_RSA", "EDH_RSA", "KEDH", "KDHE", "DH":
		if w == "KEDH" || w == "KDHE" || w == "DH" {
			return su.kx == "DHE" || su.kx == "ADH", true
		}
		return su.kx == "DHE" && su.au == "RSA", true
	case "DHE_DSS", "EDH_DSS":
		return su.kx == "DHE" && su.au == "DSS", true
	case "ECDH":
		return su.kx == "ECDH" || su.kx == "ECDHE", true
	case "ECDH_RSA", "KECDHR":
		return su.kx == "ECDH" && su.au == "RSA", true
	case "ECDH_ECDSA", "KECDHE_ECDSA", "KECDHE2":
		return su.kx == "ECDH" && su.au == "ECDSA", true
	case "ADH", "ANULL":
		return su.kx == "ADH", true
	// Authentication.
	case "ARSA":
		return su.au == "RSA", true
	case "AECDSA", "ECDSA":
		return su.au == "ECDSA", true
	case "ADSS", "DSS":
		return su.au == "DSS", true
	// Encryption.
	case "AES":
		return strings.HasPrefix(su.enc, "AES"), true
	case "AES128":
		return su.enc == "AES128" || su.enc == "AESGCM128", true
	case "AES256":
		return su.enc == "AES256" || su.enc == "AESGCM256", true
	case "AESGCM", "AES-GCM", "AES_GCM":
		return strings.HasPrefix(su.enc, "AESGCM"), true
	case "AES-CBC", "AES_CBC":
		return su.enc == "AES128" || su.enc == "AES256", true
	case "CHACHA20", "CHACHA20-POLY1305":
		return su.enc == "CHACHA20", true
	case "3DES", "DES-CBC3":
		return su.enc == "3DES", true
	case "DES":
		return su.enc == "DES", true
	case "RC4":
		return su.enc == "RC4", true
	case "CAMELLIA":
		return strings.HasPrefix(su.enc, "CAMELLIA"), true
	case "CAMELLIA128", "CAMELLIA256":
		return su.enc == w, true
	// MAC.
	case "SHA", "SHA1":
		return su.mac == "SHA1", true
	case "SHA256", "SHA384":
		return su.mac == w || (su.mac == "AEAD" && strings.HasSuffix(su.name, w)), true
	case "MD5":
		return su.mac == "MD5", true
	case "EXPORT40":
		return su.export, true // both export suites known are 40-bit
	}
	if noSuiteKeywords[w] {
		return false, true
	}
	if strings.EqualFold(su.name, word) || (su.id != 0 && strings.EqualFold(tls.CipherSuiteName(su.id), word)) {
		return true, true
	}
	for _, a := range su.aliases {
		if strings.EqualFold(a, word) {
			return true, true
		}
	}
	return false, knownName(word)
}

// noSuiteKeywords are OpenSSL's and BIG-IP's cipher-string keywords for
// protocols, ciphers, MACs, key exchanges and authentications none of the
// suites above has (BIG-IP's 11.x built-ins begin "!SSLv2:"). They select
// nothing, as OpenSSL's keyword for a suite family it has no suite of:
// "!SSLv2" removes nothing and "SSLv2" alone adds nothing. A word in
// neither this table nor the switch above is still refused. Upper case,
// as matches compares.
var noSuiteKeywords = map[string]bool{
	"SSLV2":    true, // protocol: no suite here is SSLv2's
	"EXPORT56": true, // the 56-bit export suites (EXP1024-*)
	"IDEA":     true, "SEED": true, "RC2": true,
	"ARIA": true, "ARIA128": true, "ARIA256": true, "ARIAGCM": true,
	"AESCCM": true, "AESCCM8": true,
	"PSK": true, "KPSK": true, "APSK": true, "KECDHEPSK": true, "KDHEPSK": true, "KRSAPSK": true,
	"SRP": true, "KSRP": true, "ASRP": true,
	"KDHR": true, "KDHD": true, // static DH ("aDH" reads as ADH, anonymous DH)
	"AECDH": true, // anonymous ECDH
	"KKRB5": true, "AKRB5": true, "KRB5": true,
	"KFZA": true, "AFZA": true, "EFZA": true, "FZA": true,
	"AGOST": true, "AGOST01": true, "AGOST12": true, "KGOST": true, "GOST94": true, "GOST89MAC": true, "GOSTMAC": true,
}

func knownName(word string) bool {
	for i := range suites {
		if strings.EqualFold(suites[i].name, word) || (suites[i].id != 0 && strings.EqualFold(tls.CipherSuiteName(suites[i].id), word)) || slices.ContainsFunc(suites[i].aliases, func(a string) bool { return strings.EqualFold(a, word) }) {
			return true
		}
	}
	return false
}

// isDefault is BIG-IP's DEFAULT: the native suites less the weak classes
// (export, single DES, RC4, MD5, anonymous and null suites) and SSLv3.
func isDefault(su *suite, ver uint16) bool {
	return su.enc != "NULL" && su.kx != "ADH" && !su.export && su.enc != "DES" &&
		su.enc != "RC4" && su.mac != "MD5" && ver != verSSL3
}

// CipherList is the result of a cipher string: the selected suites at the
// selected protocol versions, in order.
type CipherList struct {
	entries []entry
}

// SyntaxError is a cipher string that does not parse, with the column
// (1-based) of the offending word.
type SyntaxError struct {
	String string
	Column int
	Word   string
	Reason string
}

// Error names the string, the column and the word.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("cipher string %q, column %d: %s %q", e.String, e.Column, e.Reason, e.Word)
}

// ParseCiphers reads an F5 cipher string (OpenSSL syntax: words joined by
// ':' ',' or spaces; '+' inside a word is AND; a leading '!' removes for
// good, '-' removes, '+' moves to the end; @STRENGTH and @SPEED sort).
func ParseCiphers(str string) (*CipherList, error) {
	list := []entry{}
	killed := map[entry]bool{}
	words := []struct {
		w   string
		col int
	}{}
	start := -1
	for i := 0; i <= len(str); i++ {
		if i == len(str) || str[i] == ':' || str[i] == ',' || str[i] == ' ' || str[i] == '\t' {
			if start >= 0 {
				words = append(words, struct {
					w   string
					col int
				}{str[start:i], start + 1})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	for _, wd := range words {
		w := wd.w
		op := byte(0)
		if w[0] == '!' || w[0] == '-' || w[0] == '+' {
			op, w = w[0], w[1:]
		}
		if w == "" {
			return nil, &SyntaxError{str, wd.col, wd.w, "empty cipher word"}
		}
		if w[0] == '@' {
			switch strings.ToUpper(w) {
			case "@STRENGTH", "@SPEED":
				sortStrength(list)
				continue
			}
			return nil, &SyntaxError{str, wd.col, wd.w, "unknown sort directive (valid: @STRENGTH, @SPEED)"}
		}
		parts := strings.Split(w, "+")
		var sel []entry
		for _, e := range universe {
			all := true
			for _, p := range parts {
				ok, known := matches(p, e)
				if !known {
					return nil, &SyntaxError{str, wd.col, p, "unknown cipher keyword or suite"}
				}
				if !ok {
					all = false
					break
				}
			}
			if all {
				sel = append(sel, e)
			}
		}
		switch op {
		case 0:
			for _, e := range sel {
				if !killed[e] && !slices.Contains(list, e) {
					list = append(list, e)
				}
			}
		case '-', '!':
			list = slices.DeleteFunc(list, func(e entry) bool { return slices.Contains(sel, e) })
			if op == '!' {
				for _, e := range sel {
					killed[e] = true
				}
			}
		case '+':
			var moved []entry
			list = slices.DeleteFunc(list, func(e entry) bool {
				if slices.Contains(sel, e) {
					moved = append(moved, e)
					return true
				}
				return false
			})
			list = append(list, moved...)
		}
	}
	return &CipherList{entries: list}, nil
}

func sortStrength(list []entry) {
	bits := func(e entry) int {
		switch suites[e.suite].enc {
		case "AES256", "AESGCM256", "CHACHA20", "CAMELLIA256":
			return 256
		case "3DES":
			return 112
		case "DES":
			return 56
		case "NULL":
			return 0
		}
		return 128
	}
	slices.SortStableFunc(list, func(a, b entry) int { return bits(b) - bits(a) })
}

// Names lists the selected suites by name, once each, in order.
func (c *CipherList) Names() []string {
	var out []string
	for _, e := range c.entries {
		n := suites[e.suite].name
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Unsupported lists the selected suites Go's crypto/tls cannot do (or only
// at SSLv3, which it cannot speak).
func (c *CipherList) Unsupported() []string {
	var out []string
	for _, e := range c.entries {
		su := &suites[e.suite]
		if su.id == 0 && !slices.Contains(out, su.name) {
			out = append(out, su.name)
		}
	}
	return out
}

// goEntries are the selected pairs Go can do.
func (c *CipherList) goEntries() []entry {
	var out []entry
	for _, e := range c.entries {
		if suites[e.suite].id != 0 && e.ver != verSSL3 {
			out = append(out, e)
		}
	}
	return out
}

// Suites are Go's ids of the selected TLS 1.0–1.2 suites, for
// tls.Config.CipherSuites.
func (c *CipherList) Suites() []uint16 {
	var out []uint16
	for _, e := range c.goEntries() {
		if id := suites[e.suite].id; e.ver < verTLS13 && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Versions lists the protocol versions the selection leaves usable with Go.
func (c *CipherList) Versions() []uint16 {
	var out []uint16
	for _, e := range c.goEntries() {
		if !slices.Contains(out, e.ver) {
			out = append(out, e.ver)
		}
	}
	slices.Sort(out)
	return out
}

// tls13Partial reports whether the selection names some but not all of the
// TLS 1.3 suites (Go always offers all three).
func (c *CipherList) tls13Partial() bool {
	n := map[int]bool{}
	for _, e := range c.entries {
		if e.ver == verTLS13 {
			n[e.suite] = true
		}
	}
	return len(n) > 0 && len(n) < 3
}

// Has reports whether the selection includes the named suite at some
// version.
func (c *CipherList) Has(name string) bool {
	return slices.Contains(c.Names(), strings.ToUpper(name))
}

// combine builds a list from set operations on other lists.
func union(ls ...*CipherList) *CipherList {
	out := &CipherList{}
	for _, l := range ls {
		for _, e := range l.entries {
			if !slices.Contains(out.entries, e) {
				out.entries = append(out.entries, e)
			}
		}
	}
	return out
}

func (c *CipherList) keep(f func(entry) bool) *CipherList {
	out := &CipherList{}
	for _, e := range c.entries {
		if f(e) {
			out.entries = append(out.entries, e)
		}
	}
	return out
}

func (c *CipherList) contains(e entry) bool { return slices.Contains(c.entries, e) }
