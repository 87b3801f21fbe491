package objects

import "fmt"

// MustKind returns the kind named key. Code that reads objects looks its
// kinds up once, in package-level handles, through MustKind: a misspelt key
// then stops the program at start-up (and fails every test) instead of
// yielding a nil kind whose lookups silently find nothing.
func (s *Schema) MustKind(key string) *Kind {
	k := s.byKey[key]
	if k == nil {
		panic(fmt.Sprintf("objects: the schema has no kind %q", key))
	}
	return k
}

// MustProp returns the property named name, for the same reason as
// MustKind: a handle looked up once cannot be misspelt at a read. It works
// on item and struct schemas too (a pool member's ratio, a SNAT's type).
func (k *Kind) MustProp(name string) *Prop {
	p := k.Prop(name)
	if p == nil || p.Name != name {
		panic(fmt.Sprintf("objects: kind %q has no property %q", kindLabel(k), name))
	}
	return p
}

// MustSpec checks a reference spec (kind keys, or key prefixes ending in a
// space, as in Prop.Ref) against the schema and returns it, so a lookup by
// spec cannot silently match no kind.
func (s *Schema) MustSpec(spec ...string) []string {
	for _, sp := range spec {
		ok := false
		for _, k := range s.kinds {
			if refMatches([]string{sp}, k.Key()) {
				ok = true
				break
			}
		}
		if !ok {
			panic(fmt.Sprintf("objects: no kind matches the reference %q", sp))
		}
	}
	return spec
}

func kindLabel(k *Kind) string {
	if k == nil {
		return "<nil>"
	}
	if len(k.Words) > 0 {
		return k.Key()
	}
	return k.Title
}

// Get returns o's own value of p, or nil when unset.
func (p *Prop) Get(o *Object) *Value { return o.Props[p.Name] }

// Str returns o's own scalar value of p, or "" when unset.
func (p *Prop) Str(o *Object) string {
	if v := o.Props[p.Name]; v != nil {
		return v.Str
	}
	return ""
}

// In returns it's own value of p (a sub-property of a collection item or a
// struct), or nil when unset.
func (p *Prop) In(it *Item) *Value {
	if it == nil {
		return nil
	}
	return it.Props[p.Name]
}

// StrIn returns it's scalar value of p, or p's schema default when unset
// (a flag's first word): items have no defaults-from chain, so the schema
// is their only fallback.
func (p *Prop) StrIn(it *Item) string {
	if v := p.In(it); v != nil {
		return v.Str
	}
	// defaultValue's text, without building a Value: this runs for every
	// unset property of every pool member at each translation.
	switch p.Type {
	case TFlag:
		return p.Enum[0]
	case TList, TColl, TStruct, TTcl:
		return ""
	}
	return p.Default
}

// Effective is c.EffectiveStr for a handle: o's own value, else inherited
// through defaults-from, else the schema default.
func (p *Prop) Effective(c *Config, o *Object) string { return c.EffectiveStr(o, p.Name) }
