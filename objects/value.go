package objects

import (
	"sort"
	"strings"
)

// Value is one property's value. Which field is used depends on the
// property's Type: Str for scalars, flags, monitor rules, raw text and Tcl;
// List for TList; Items for TColl; Sub for TStruct.
type Value struct {
	Str   string
	List  []string
	Items []*Item
	Sub   *Item
}

// Item is a collection element or a struct body: named sub-properties.
type Item struct {
	Name  string
	Props map[string]*Value
	Extra []Extra
}

// Extra is a property the vocabulary does not know, kept verbatim (as the
// text from its name to the end of its value) so that saving writes it back:
// only in configurations an earlier openltm stored (Reader.Lenient).
type Extra struct {
	Name string
	Text string
}

// Object is one configuration object. Kind is nil for object kinds F5 has
// and openltm has no property table for (asm, apm, security, ...): those
// keep their whole statement in Raw and their leading words (module path
// and name) in Words.
type Object struct {
	Kind *Kind
	// Name is the full path (/Common/p1); for singletons it is empty; for
	// gtm topology records it is the record's `ldns: ... server: ...` words.
	Name  string
	Props map[string]*Value
	Extra []Extra
	Raw   string
	Words []string
	// BuiltIn objects (/Common/tcp, /Common/http, ...) exist from the first
	// start; they are never saved and cannot be deleted.
	BuiltIn bool
}

// Key identifies the object in a Config: kind key plus name.
func (o *Object) Key() string {
	if o.Kind == nil {
		return "?" + strings.Join(o.Words, " ")
	}
	return o.Kind.Key() + "\x00" + o.Name
}

// Clone copies the object deeply so a modification never touches a
// committed configuration.
func (o *Object) Clone() *Object {
	c := *o
	c.Props = cloneProps(o.Props)
	c.Extra = append([]Extra(nil), o.Extra...)
	c.Words = append([]string(nil), o.Words...)
	return &c
}

func cloneProps(m map[string]*Value) map[string]*Value {
	if m == nil {
		return map[string]*Value{}
	}
	out := make(map[string]*Value, len(m))
	for k, v := range m {
		out[k] = v.clone()
	}
	return out
}

func (v *Value) clone() *Value {
	if v == nil {
		return nil
	}
	c := &Value{Str: v.Str, List: append([]string(nil), v.List...)}
	for _, it := range v.Items {
		c.Items = append(c.Items, it.clone())
	}
	if v.Sub != nil {
		c.Sub = v.Sub.clone()
	}
	return c
}

func (it *Item) clone() *Item {
	return &Item{Name: it.Name, Props: cloneProps(it.Props), Extra: append([]Extra(nil), it.Extra...)}
}

// Get returns the object's own value of a property, or nil when unset.
func (o *Object) Get(name string) *Value { return o.Props[name] }

// Str returns a scalar property's own value, or "" when unset.
func (o *Object) Str(name string) string {
	if v := o.Props[name]; v != nil {
		return v.Str
	}
	return ""
}

// Item finds a collection item by name.
func (v *Value) Item(name string) *Item {
	if v == nil {
		return nil
	}
	for _, it := range v.Items {
		if it.Name == name {
			return it
		}
	}
	return nil
}

// Config is a whole configuration: every object by key. A committed Config
// is never modified; changes work on a copy made by Clone, which shares the
// untouched objects.
type Config struct {
	objs map[string]*Object
	// unknown indexes the objects of kinds openltm does not know by their
	// full name, so references to them resolve without a scan.
	unknown map[string][]*Object
}

// NewConfig returns an empty configuration.
func NewConfig() *Config {
	return &Config{objs: map[string]*Object{}, unknown: map[string][]*Object{}}
}

// Clone returns a copy whose map may be changed without affecting c. Objects
// are shared; replace an object (Put of a Clone) rather than mutating it.
func (c *Config) Clone() *Config {
	n := &Config{objs: make(map[string]*Object, len(c.objs)), unknown: make(map[string][]*Object, len(c.unknown))}
	for k, o := range c.objs {
		n.objs[k] = o
	}
	for k, l := range c.unknown {
		n.unknown[k] = l // never appended to in place: see Put and Delete
	}
	return n
}

// unknownName is the full name an unknown-kind object is referred to by.
func unknownName(o *Object) string {
	if len(o.Words) == 0 {
		return ""
	}
	return FullPath("/Common", o.Words[len(o.Words)-1])
}

// Get finds an object by kind and full name.
func (c *Config) Get(k *Kind, name string) *Object {
	if k.PlainNames {
		name = plainName(name)
	}
	o := c.objs[k.Key()+"\x00"+name]
	if o == nil && name == "" && k.Singleton {
		// A singleton always exists on BIG-IP (sys httpd, auth source),
		// including in configurations saved before openltm knew the kind.
		o = &Object{Kind: k, Props: map[string]*Value{}}
	}
	if o == nil && name != "" && (k.Implicit || k.Passive && k.PlainNames && isBuiltinOf(k.Key(), name)) {
		// BIG-IP has a value for every db key, and its own objects (auth
		// user admin, sys provision ltm) exist before any script modifies
		// them; openltm keeps the ones set.
		o = &Object{Kind: k, Name: name, Props: map[string]*Value{}}
		if d, ok := dbDefault(name); ok && k.Key() == "sys db" {
			o.Props["value"] = &Value{Str: d}
		}
	}
	return o
}

// Put adds or replaces an object.
func (c *Config) Put(o *Object) {
	key := o.Key()
	if old := c.objs[key]; old != nil && old.Kind == nil {
		c.dropUnknown(old)
	}
	c.objs[key] = o
	if o.Kind == nil {
		n := unknownName(o)
		c.unknown[n] = append(append([]*Object(nil), c.unknown[n]...), o)
	}
}

// Delete removes an object.
func (c *Config) Delete(o *Object) {
	if o.Kind == nil {
		c.dropUnknown(o)
	}
	delete(c.objs, o.Key())
}

// dropUnknown removes o from the unknown index, copying the list so a
// clone sharing it is not affected.
func (c *Config) dropUnknown(o *Object) {
	n := unknownName(o)
	var keep []*Object
	for _, x := range c.unknown[n] {
		if x.Key() != o.Key() {
			keep = append(keep, x)
		}
	}
	if len(keep) == 0 {
		delete(c.unknown, n)
	} else {
		c.unknown[n] = keep
	}
}

// Len is the number of objects.
func (c *Config) Len() int { return len(c.objs) }

// Objects returns every object in save order: by module, kind and name,
// unknown kinds last in the order they came.
func (c *Config) Objects() []*Object {
	out := make([]*Object, 0, len(c.objs))
	for _, o := range c.objs {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return lessObj(out[i], out[j]) })
	return out
}

// Of returns the objects of one kind, by name.
func (c *Config) Of(k *Kind) []*Object {
	var out []*Object
	prefix := k.Key() + "\x00"
	for key, o := range c.objs {
		if strings.HasPrefix(key, prefix) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Unknown returns the objects of kinds openltm does not know.
func (c *Config) Unknown() []*Object {
	var out []*Object
	for _, o := range c.objs {
		if o.Kind == nil {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessObj(out[i], out[j]) })
	return out
}

var moduleOrder = map[string]int{"sys": 0, "net": 1, "ltm": 2, "gtm": 3}

func modRank(o *Object) int {
	w := ""
	if o.Kind != nil {
		w = o.Kind.Words[0]
	} else if len(o.Words) > 0 {
		w = o.Words[0]
	}
	if r, ok := moduleOrder[w]; ok {
		return r
	}
	return 10
}

// kindRank orders kinds so that referenced objects come before the objects
// that reference them when a file is read top to bottom.
var kindRank = map[string]int{
	"ltm monitor": 1, "ltm node": 2, "ltm profile": 3, "ltm persistence": 4, "ltm rule": 5,
	"ltm data-group": 6, "ltm snatpool": 7, "ltm pool": 8, "ltm traffic-matching-criteria": 9,
	"ltm virtual-address": 10, "ltm virtual": 11, "net vlan": 1, "net self": 2,
	"gtm rule": 1, "gtm datacenter": 1, "gtm link": 2, "gtm server": 3, "gtm region": 4, "gtm pool": 5,
	"gtm wideip": 6, "gtm topology": 7, "gtm listener": 8,
}

func rankOf(o *Object) int {
	if o.Kind == nil {
		return 50
	}
	return o.Kind.rank
}

// kindRankOf is a kind's place in save order, computed once per kind.
func kindRankOf(k *Kind) int {
	if len(k.Words) >= 2 {
		if r, ok := kindRank[k.Words[0]+" "+k.Words[1]]; ok {
			return r
		}
	}
	return 40
}

func lessObj(a, b *Object) bool {
	if ra, rb := modRank(a), modRank(b); ra != rb {
		return ra < rb
	}
	if ra, rb := rankOf(a), rankOf(b); ra != rb {
		return ra < rb
	}
	ka, kb := "", ""
	if a.Kind != nil {
		ka = a.Kind.Key()
	}
	if b.Kind != nil {
		kb = b.Kind.Key()
	}
	if ka != kb {
		return ka < kb
	}
	if a.Kind == nil {
		return strings.Join(a.Words, " ") < strings.Join(b.Words, " ")
	}
	return a.Name < b.Name
}
