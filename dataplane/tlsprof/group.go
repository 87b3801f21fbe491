package tlsprof

import (
	"fmt"
	"slices"
	"strings"
)

// CipherRule is an `ltm cipher rule`: a named cipher string (BIG-IP 13+)
// with the key-exchange groups (dh-groups) the profiles using it allow.
// signature-algorithms is not applied: crypto/tls has no per-config list
// of the signature schemes a peer may use (see README.md).
type CipherRule struct {
	Name     string
	Cipher   string
	DHGroups string // "" or DEFAULT: Go's default groups
}

// BuiltinRules are the rules BIG-IP ships whose strings are documented.
var BuiltinRules = map[string]*CipherRule{
	"/Common/f5-default": {Name: "/Common/f5-default", Cipher: "DEFAULT"},
	"/Common/f5-ecc":     {Name: "/Common/f5-ecc", Cipher: "ECDHE:ECDHE_ECDSA"},
	"/Common/f5-secure":  {Name: "/Common/f5-secure", Cipher: "ECDHE:RSA:!SSLV3:!RC4:!EXP:!DES"},
}

// CipherGroup is an `ltm cipher group`: the union of the allow rules,
// narrowed to the suites the restrict rules also select (when there are
// any), less the suites the exclude rules select.
type CipherGroup struct {
	Name     string
	Allow    []*CipherRule
	Restrict []*CipherRule
	Exclude  []*CipherRule
	// Ordering (default, speed, strength, fips, hardware) orders the
	// resulting list; "" is default.
	Ordering string
}

func parseRules(rules []*CipherRule) (*CipherList, error) {
	var ls []*CipherList
	for _, r := range rules {
		l, err := ParseCiphers(r.Cipher)
		if err != nil {
			return nil, fmt.Errorf("cipher rule %s: %w", r.Name, err)
		}
		ls = append(ls, l)
	}
	return union(ls...), nil
}

// Resolve computes the group's selection.
func (g *CipherGroup) Resolve() (*CipherList, error) {
	if len(g.Allow) == 0 {
		return nil, fmt.Errorf("cipher group %s: allow names no cipher rule; a group needs at least one", g.Name)
	}
	out, err := parseRules(g.Allow)
	if err != nil {
		return nil, fmt.Errorf("cipher group %s: %w", g.Name, err)
	}
	if len(g.Restrict) > 0 {
		r, err := parseRules(g.Restrict)
		if err != nil {
			return nil, fmt.Errorf("cipher group %s: %w", g.Name, err)
		}
		out = out.keep(r.contains)
	}
	if len(g.Exclude) > 0 {
		x, err := parseRules(g.Exclude)
		if err != nil {
			return nil, fmt.Errorf("cipher group %s: %w", g.Name, err)
		}
		out = out.keep(func(e entry) bool { return !x.contains(e) })
	}
	if err := orderList(out.entries, g.Ordering); err != nil {
		return nil, fmt.Errorf("cipher group %s: %w", g.Name, err)
	}
	return out, nil
}

// Orderings are the words a cipher group's ordering takes.
var Orderings = []string{"default", "speed", "strength", "fips", "hardware"}

// orderList sorts a group's selection as its ordering asks, stably (ties
// keep the allow rules' order) [M: BIG-IP does not publish its keys;
// these are the plain reading of the words]:
//   - default: as the allow rules list them;
//   - strength: by key length of the bulk cipher, longest first;
//   - speed: AEAD ciphers first (AES-GCM 128, CHACHA20, AES-GCM 256), then
//     CBC AES 128 and 256, then the rest; ECDHE before RSA key exchange
//     within each;
//   - fips: the FIPS 140 approved suites (AES, AES-GCM, 3DES with RSA or
//     ECDHE) before the others (CHACHA20, CAMELLIA, RC4);
//   - hardware: the suites the CPU accelerates (AES with AES-NI) first.
func orderList(list []entry, ordering string) error {
	rank := func(f func(su *suite) int) {
		slices.SortStableFunc(list, func(a, b entry) int { return f(&suites[a.suite]) - f(&suites[b.suite]) })
	}
	switch ordering {
	case "", "default":
	case "strength":
		sortStrength(list)
	case "speed":
		rank(func(su *suite) int {
			r := 9
			switch su.enc {
			case "AESGCM128":
				r = 0
			case "CHACHA20":
				r = 1
			case "AESGCM256":
				r = 2
			case "AES128":
				r = 3
			case "AES256":
				r = 4
			}
			r *= 2
			if su.kx != "ECDHE" && su.kx != "TLS13" {
				r++
			}
			return r
		})
	case "fips":
		rank(func(su *suite) int {
			switch su.enc {
			case "AES128", "AES256", "AESGCM128", "AESGCM256", "3DES":
				if su.kx == "RSA" || su.kx == "ECDHE" || su.kx == "TLS13" || su.kx == "DHE" {
					return 0
				}
			}
			return 1
		})
	case "hardware":
		rank(func(su *suite) int {
			if strings.HasPrefix(su.enc, "AES") {
				return 0
			}
			return 1
		})
	default:
		return fmt.Errorf("ordering %q is not one of %s", ordering, strings.Join(Orderings, ", "))
	}
	return nil
}

// selection is the cipher list of a profile: its group when it names one,
// else its cipher string ("" = DEFAULT). It fails when nothing Go can do
// remains, naming what was selected.
func selection(what, ciphers string, group *CipherGroup) (*CipherList, []string, error) {
	var l *CipherList
	var err error
	src := fmt.Sprintf("cipher string %q", ciphers)
	if group != nil {
		l, err = group.Resolve()
		src = "cipher group " + group.Name
	} else {
		if strings.TrimSpace(ciphers) == "" || ciphers == "none" {
			ciphers = "DEFAULT"
			src = `cipher string "DEFAULT"`
		}
		l, err = ParseCiphers(ciphers)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(l.entries) == 0 {
		return nil, nil, fmt.Errorf("%s: %s selects no cipher suite", what, src)
	}
	if len(l.goEntries()) == 0 {
		return nil, nil, fmt.Errorf("%s: %s selects only suites Go's TLS cannot do: %s (available: ECDHE and RSA key exchange with AES, AES-GCM, CHACHA20-POLY1305, 3DES or RC4, at TLSv1 to TLSv1.3)",
			what, src, strings.Join(l.Unsupported(), ", "))
	}
	var warns []string
	if u := l.Unsupported(); len(u) > 0 {
		warns = append(warns, fmt.Sprintf("%s: %s names suites Go's TLS cannot do, left out: %s", what, src, strings.Join(u, ", ")))
	}
	if l.tls13Partial() {
		warns = append(warns, fmt.Sprintf("%s: %s names only some TLS 1.3 suites; Go offers all three TLS 1.3 suites whenever TLS 1.3 is on", what, src))
	}
	return l, warns, nil
}
