package tlsprof

import (
	"fmt"
	"strings"
)

// CipherRule is an `ltm cipher rule`: a named cipher string (BIG-IP 13+).
// dh-groups and signature-algorithms are not applied: Go chooses its own.
type CipherRule struct {
	Name   string
	Cipher string
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
	return out, nil
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
