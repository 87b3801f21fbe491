package daemon

import (
	"net/netip"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// persist fills the virtual's persistence settings from its persist and
// fallback-persistence profiles. It returns false when the virtual was
// skipped (t.skip says why): a profile that is missing or cannot be
// applied would otherwise silently balance clients that expect to stick.
func (t *translator) persist(o *objects.Object, v *dataplane.Virtual) bool {
	if name := defaultPersistName(o); name != "" {
		p, ok := t.persistence(o, v, name)
		if !ok {
			return false
		}
		v.Persist = p
	}
	if fb := virtualFallbackPersist.Str(o); fb != "" && fb != "none" {
		p, ok := t.persistence(o, v, fb)
		if !ok {
			return false
		}
		v.FallbackPersist = p
	}
	return true
}

// persistence resolves one persistence profile (defaults-from walked). A
// universal profile's rule runs as if it were attached to the virtual,
// after the virtual's own rules.
func (t *translator) persistence(o *objects.Object, v *dataplane.Virtual, name string) (*dataplane.Persistence, bool) {
	prof := t.cfg.Lookup(t.s, specPersistence, name)
	if prof == nil {
		t.skip(o, "persistence profile %s does not exist", name)
		return nil, false
	}
	if prof.Kind == nil {
		t.skip(o, "persistence profile %s is of a kind openltm does not run (%s)", name, strings.Join(prof.Words[:len(prof.Words)-1], " "))
		return nil, false
	}
	if prof.Kind.Passive {
		t.skip(o, "persistence profile %s is of a kind openltm does not run (%s)", name, strings.Join(prof.Kind.Words, " "))
		return nil, false
	}
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, prof) }
	p := &dataplane.Persistence{
		Profile:                 prof.Name,
		MatchAcrossServices:     e(persistAcrossService) == "enabled",
		MatchAcrossVirtuals:     e(persistAcrossVirtual) == "enabled",
		MatchAcrossPools:        e(persistAcrossPools) == "enabled",
		OverrideConnectionLimit: e(persistOverrideLimit) == "enabled",
	}
	switch to := e(persistTimeout); to {
	case "indefinite", "", "0":
	default:
		p.Timeout = seconds(to)
		if p.Timeout <= 0 {
			t.skip(o, "persistence profile %s: timeout %q is not a number of seconds", prof.Name, to)
			return nil, false
		}
	}
	switch prof.Kind {
	case persistSourceAddr:
		p.Method = dataplane.PersistSourceAddr
		if m := e(persistMask); m != "" && m != "none" {
			a, err := netip.ParseAddr(m)
			if err != nil || !isMask(a) {
				t.skip(o, "persistence profile %s: mask %q is not a network mask", prof.Name, m)
				return nil, false
			}
			p.Mask = a
		}
	case persistUniversal:
		p.Method = dataplane.PersistUniversal
		if r := e(persistRule); r != "" && r != "none" {
			if !t.persistRule(o, v, prof.Name, r) {
				return nil, false
			}
		}
	case persistCookie:
		// Cookie persistence needs the HTTP profile; the L4 proxy accepts
		// it and applies the fallback.
		p.Method = dataplane.PersistCookie
	default:
		t.skip(o, "persistence profile %s: %s persistence is not supported", prof.Name, strings.TrimPrefix(prof.Kind.Key(), "ltm persistence "))
		return nil, false
	}
	return p, true
}

// persistRule adds a universal profile's rule to the virtual's rule list
// (unless the virtual lists it already) and attaches the whole list again.
func (t *translator) persistRule(o *objects.Object, v *dataplane.Virtual, profile, rule string) bool {
	ro := t.cfg.Lookup(t.s, specRule, rule)
	if ro == nil {
		t.skip(o, "persistence profile %s: rule %s does not exist", profile, rule)
		return false
	}
	var names []string
	if rv := virtualRules.Get(o); rv != nil {
		names = append(names, rv.List...)
	}
	for _, n := range names {
		if x := t.cfg.Lookup(t.s, specRule, n); x != nil && x.Name == ro.Name {
			return true
		}
	}
	if err := t.rules.attach(t.s, t.cfg, v, append(names, ro.Name)); err != nil {
		t.skip(o, "persistence profile %s: %v", profile, err)
		return false
	}
	return true
}

// isMask reports whether a is a contiguous network mask (ones, then
// zeros).
func isMask(a netip.Addr) bool {
	b := a.AsSlice()
	zero := false
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			one := x&(1<<i) != 0
			if one && zero {
				return false
			}
			if !one {
				zero = true
			}
		}
	}
	return true
}
