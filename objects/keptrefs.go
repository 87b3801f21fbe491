package objects

import (
	"fmt"
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
		}
	}
	return out
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
