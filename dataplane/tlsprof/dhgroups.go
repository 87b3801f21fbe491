package tlsprof

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
)

// dhGroup is a key-exchange group a cipher rule's dh-groups can name.
type dhGroup struct {
	name    string // as BIG-IP writes it
	aliases []string
	id      tls.CurveID // 0: Go's TLS cannot do it
}

// dhGroups are the names dh-groups accepts [M: BIG-IP's spellings P256,
// P384, P521, X25519, FFDHE2048…; the OpenSSL and IANA spellings are
// accepted too]. Go's TLS has no finite-field groups and no X448.
var dhGroups = []dhGroup{
	{"X25519MLKEM768", nil, tls.X25519MLKEM768},
	{"SecP256r1MLKEM768", nil, tls.SecP256r1MLKEM768},
	{"SecP384r1MLKEM1024", nil, tls.SecP384r1MLKEM1024},
	{"X25519", nil, tls.X25519},
	{"P256", []string{"P-256", "SECP256R1", "PRIME256V1"}, tls.CurveP256},
	{"P384", []string{"P-384", "SECP384R1"}, tls.CurveP384},
	{"P521", []string{"P-521", "SECP521R1"}, tls.CurveP521},
	{"X448", nil, 0},
	{"FFDHE2048", nil, 0},
	{"FFDHE3072", nil, 0},
	{"FFDHE4096", nil, 0},
	{"FFDHE6144", nil, 0},
	{"FFDHE8192", nil, 0},
}

// defaultGroups is what DEFAULT stands for: Go's own default list, so
// that a rule left at DEFAULT changes nothing [M: BIG-IP's DEFAULT is
// its own list of curves and FFDHE groups].
var defaultGroups = []tls.CurveID{tls.X25519MLKEM768, tls.SecP256r1MLKEM768, tls.SecP384r1MLKEM1024,
	tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}

// GroupName is the dh-groups name of a group Go negotiated, for what a
// rule or a log prints.
func GroupName(id tls.CurveID) string {
	for _, g := range dhGroups {
		if g.id == id && id != 0 {
			return g.name
		}
	}
	return id.String()
}

// parseDHGroups reads a dh-groups string (names separated by colons, or
// DEFAULT). It returns nil for DEFAULT, the groups Go can do in the
// order written, and the names it cannot do.
func parseDHGroups(s string) (ids []tls.CurveID, isDefault bool, unsupported []string, err error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "DEFAULT") || s == "none" {
		return nil, true, nil, nil
	}
	for _, w := range strings.Split(s, ":") {
		w = strings.TrimSpace(w)
		if w == "" {
			return nil, false, nil, fmt.Errorf("dh-groups %q: an empty name between colons", s)
		}
		if strings.EqualFold(w, "DEFAULT") {
			for _, id := range defaultGroups {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			continue
		}
		i := slices.IndexFunc(dhGroups, func(g dhGroup) bool {
			return strings.EqualFold(g.name, w) || slices.ContainsFunc(g.aliases, func(a string) bool { return strings.EqualFold(a, w) })
		})
		if i < 0 {
			var names []string
			for _, g := range dhGroups {
				names = append(names, g.name)
			}
			return nil, false, nil, fmt.Errorf("dh-groups %q: unknown group %q (known: DEFAULT, %s)", s, w, strings.Join(names, ", "))
		}
		g := dhGroups[i]
		if g.id == 0 {
			if !slices.Contains(unsupported, g.name) {
				unsupported = append(unsupported, g.name)
			}
			continue
		}
		if !slices.Contains(ids, g.id) {
			ids = append(ids, g.id)
		}
	}
	return ids, false, unsupported, nil
}

// CheckDHGroups validates a cipher rule's dh-groups at commit, so that a
// misspelt group is refused where it is typed.
func CheckDHGroups(s string) error {
	_, _, _, err := parseDHGroups(s)
	return err
}

// curves computes the key-exchange groups of a cipher group: the union of
// its allow rules' dh-groups, narrowed to those of its require rules, less
// those of its exclude rules [M: a require or exclude rule left at
// DEFAULT narrows or removes nothing, since its purpose is its cipher
// string]. nil leaves Go's default.
func (g *CipherGroup) curves() ([]tls.CurveID, []string, error) {
	set := func(rs []*CipherRule) ([]tls.CurveID, bool, []string, error) {
		var out []tls.CurveID
		var unsup []string
		allDefault := true
		for _, r := range rs {
			ids, def, u, err := parseDHGroups(r.DHGroups)
			if err != nil {
				return nil, false, nil, fmt.Errorf("cipher rule %s: %w", r.Name, err)
			}
			if def {
				ids = defaultGroups
			} else {
				allDefault = false
			}
			for _, id := range ids {
				if !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
			unsup = append(unsup, u...)
		}
		return out, allDefault, unsup, nil
	}
	out, def, unsup, err := set(g.Allow)
	if err != nil {
		return nil, nil, err
	}
	var warns []string
	if r, rdef, u, err := set(g.Restrict); err != nil {
		return nil, nil, err
	} else if len(g.Restrict) > 0 && !rdef {
		out = slices.DeleteFunc(slices.Clone(out), func(id tls.CurveID) bool { return !slices.Contains(r, id) })
		def = false
		unsup = append(unsup, u...)
	}
	for _, r := range g.Exclude {
		ids, xdef, _, err := parseDHGroups(r.DHGroups)
		if err != nil {
			return nil, nil, fmt.Errorf("cipher rule %s: %w", r.Name, err)
		}
		if xdef {
			continue
		}
		out = slices.DeleteFunc(slices.Clone(out), func(id tls.CurveID) bool { return slices.Contains(ids, id) })
		def = false
	}
	if len(unsup) > 0 {
		slices.Sort(unsup)
		warns = append(warns, fmt.Sprintf("cipher group %s: dh-groups names groups Go's TLS cannot do, left out: %s", g.Name, strings.Join(slices.Compact(unsup), ", ")))
	}
	if def {
		return nil, warns, nil
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("cipher group %s: its rules' dh-groups leave no key-exchange group Go's TLS can do (available: X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024, X25519, P256, P384, P521)", g.Name)
	}
	return out, warns, nil
}

// groupCurves sets the configuration's key-exchange groups from the
// profile's cipher group, if any. A profile with a cipher string keeps
// Go's default (a cipher string has no groups).
func groupCurves(what string, g *CipherGroup, cfg *tls.Config) ([]string, error) {
	if g == nil {
		return nil, nil
	}
	c, warns, err := g.curves()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cfg.CurvePreferences = c
	for i := range warns {
		warns[i] = what + ": " + warns[i]
	}
	return warns, nil
}

// Describe lists what a cipher group resolves to, for show ltm cipher
// group: its suites in the order its ordering gives and the key-exchange
// groups its rules allow ("DEFAULT" when Go's default list applies).
func (g *CipherGroup) Describe() (suites []string, groups []string, err error) {
	l, err := g.Resolve()
	if err != nil {
		return nil, nil, err
	}
	c, _, err := g.curves()
	if err != nil {
		return nil, nil, err
	}
	for _, e := range l.entries {
		if n := suitesName(e); !slices.Contains(suites, n) {
			suites = append(suites, n)
		}
	}
	if c == nil {
		return suites, []string{"DEFAULT"}, nil
	}
	for _, id := range c {
		groups = append(groups, GroupName(id))
	}
	return suites, groups, nil
}

func suitesName(e entry) string {
	su := &suites[e.suite]
	if su.id == 0 {
		return su.name + " (not available in Go's TLS)"
	}
	return su.name
}
