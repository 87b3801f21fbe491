package objects

import (
	"fmt"
	"sort"
	"strings"
)

// KeptRef is a reference to an object openltm keeps and does not act on,
// and the warning that says so.
type KeptRef struct {
	Ref
	Msg string
}

// KeptRefs lists o's references, found in c, to objects openltm keeps and
// does not act on (a kind with no table, or a passive one). A loaded file
// (Loaded.CheckRefs) and tmsh create/modify both warn with it, so a
// virtual that names an sctp profile is told the same either way.
func KeptRefs(s *Schema, c *Config, o *Object) []KeptRef {
	if o.Kind == nil {
		return nil
	}
	var out []KeptRef
	for _, r := range Refs(o) {
		if t := c.Lookup(s, r.Spec, r.Name); t != nil {
			if m := keptRefMsg(o, r, t); m != "" {
				out = append(out, KeptRef{Ref: r, Msg: m})
			}
		} else if m := keptBuiltinMsg(s, o, r); m != "" {
			out = append(out, KeptRef{Ref: r, Msg: m})
		}
	}
	return out
}

// KeptBuiltin returns the kind of the F5 built-in r names when that kind
// is one openltm keeps and does not act on (no table: kept verbatim, or a
// passive one) and openltm does not ship the object: `/Common/qoe` of
// ltm profile qoe, `/Common/real_server` of ltm monitor real-server; or
// one of an acted-on kind openltm deliberately does not ship
// (unshippedBuiltins: F5's APM iRules, its own CA files). Such
// a reference resolves on a BIG-IP, so it is no dangling one (Dangling):
// tmsh create/modify and a loaded file both keep it with KeptRefs'
// warning. "" when r names no such built-in. Of several kinds r allows,
// the first by key.
func KeptBuiltin(s *Schema, r Ref) string {
	name := r.Name
	if !strings.HasPrefix(name, "/") {
		name = "/Common/" + name
	}
	var kinds []string
	for kind, set := range f5Builtins() {
		if !refMatches(r.Spec, kind) || !(set[name] || set[r.Name]) { // r.Name: route domain 0's plain name
			continue
		}
		if k := s.Kind(kind); k == nil || k.Passive || unshippedWhy(kind, name) != "" {
			kinds = append(kinds, kind)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	sort.Strings(kinds)
	return kinds[0]
}

// keptBuiltinMsg is the warning for o's reference r to an F5 built-in of a
// kind openltm keeps (KeptBuiltin); "" when r names none, or names one of
// o's own kind (o's own warning says it is not acted on).
func keptBuiltinMsg(s *Schema, o *Object, r Ref) string {
	kind := KeptBuiltin(s, r)
	if kind == "" || kind == o.Kind.Key() {
		return ""
	}
	msg := fmt.Sprintf("%s %s refers to %s %s, which openltm does not act on", o.Kind.Key(), o.Name, kind, r.Name)
	if why := unshippedWhy(kind, r.Name); why != "" {
		msg += " (" + why + ")"
	}
	return msg
}

// keptRefMsg is the warning for o's reference r to t when t is of a kind
// openltm does not act on; "" otherwise. A kept object's reference to one
// of its own kind (a kept profile's defaults-from naming the kind's
// built-in) gives none: o's own warning already says it is not acted on.
func keptRefMsg(o *Object, r Ref, t *Object) string {
	if t.Kind != nil && !t.Kind.Passive {
		return ""
	}
	if t.Kind != nil && t.Kind == o.Kind {
		return ""
	}
	what := strings.Join(kindWords(t.Words), " ")
	if t.Kind != nil {
		what = t.Kind.Key()
	}
	return fmt.Sprintf("%s %s refers to %s %s, which openltm does not act on", o.Kind.Key(), o.Name, what, r.Name)
}
