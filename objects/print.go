package objects

import (
	"slices"
	"sort"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// Detail says which properties list prints.
type Detail int

const (
	// DetailSet prints what the object has set (tmsh list, and save).
	DetailSet Detail = iota
	// DetailNonDefault prints only values that differ from the default.
	DetailNonDefault
	// DetailAll prints every property with its effective value.
	DetailAll
)

// PrintOpts shape list and save output.
type PrintOpts struct {
	// Folder makes names relative (list from inside /Common); "" prints
	// full paths, as saved files do.
	Folder  string
	OneLine bool
	Detail  Detail
	// Select prints only these properties (list ltm pool p members).
	Select []string
	// Resolve finds a defaults-from parent for DetailAll.
	Resolve func(k *Kind, name string) *Object
	// NumericPorts prints ports as numbers (10.1.1.1:80), as tmsh does
	// with sys db bigpipe.displayservicenames false; else by service
	// name (10.1.1.1:http).
	NumericPorts bool
}

// printer lays out one object's properties on grammar's Printer, which
// owns indentation, the one-line layout and quoting.
type printer struct {
	pp   *grammar.Printer
	opts PrintOpts
}

// Format renders an object as tmsh list / bigip.conf text, ending in a
// newline.
func Format(o *Object, opts PrintOpts) string {
	if o.Kind == nil {
		return strings.TrimRight(o.Raw, "\n") + "\n"
	}
	p := &printer{pp: grammar.NewPrinter(opts.OneLine), opts: opts}
	head := headWords(o, opts.Folder)
	if IsRuleKind(o.Kind) {
		p.pp.Script(o.Str("definition"), head...)
		return p.pp.String()
	}
	p.pp.Open(head...)
	p.props(o.Kind, o.Props, o.Extra, o, opts.Select)
	p.pp.Close()
	return p.pp.String()
}

// headWords name an object on its first line (`ltm pool /Common/p`): module and kind words, then the
// name as one word (a topology record's name is several).
func headWords(o *Object, folder string) []string {
	ws := append([]string(nil), o.Kind.Words...)
	switch {
	case o.Kind.Singleton:
	case o.Kind.Key() == "gtm topology":
		ws = append(ws, MatchWords(o.Name)...)
	default:
		ws = append(ws, RelPath(folder, o.Name))
	}
	return ws
}

type entry struct {
	name string
	fn   func()
}

func (p *printer) props(k *Kind, props map[string]*Value, extra []Extra, o *Object, sel []string) {
	var es []entry
	for _, pr := range k.Props {
		pr := pr
		if len(sel) > 0 && !contains(sel, pr.Name) {
			continue
		}
		v := props[pr.Name]
		switch p.opts.Detail {
		case DetailSet:
			if v == nil {
				continue
			}
		case DetailNonDefault:
			if v == nil || isDefault(pr, v) {
				continue
			}
		case DetailAll:
			if pr.Type == TStruct && o != nil && p.opts.Resolve != nil {
				v = structValue(pr, o, p.opts.Resolve)
			} else if v == nil && o != nil {
				v = p.inherited(o, pr.Name)
			}
			if v == nil {
				v = defaultValue(pr)
			}
			if v == nil {
				continue
			}
		}
		es = append(es, entry{pr.Name, func() { p.value(pr, v) }})
	}
	for _, x := range extra {
		x := x
		if len(sel) > 0 && !contains(sel, x.Name) {
			continue
		}
		es = append(es, entry{x.Name, func() { p.pp.Verbatim(x.Text) }})
	}
	if !k.Ordered {
		sort.SliceStable(es, func(i, j int) bool { return es[i].name < es[j].name })
	}
	for _, e := range es {
		e.fn()
	}
}

// inherited walks defaults-from parents for DetailAll.
func (p *printer) inherited(o *Object, name string) *Value {
	if p.opts.Resolve == nil {
		return nil
	}
	return Inherited(o, name, p.opts.Resolve)
}

// Inherited finds a property's value along o's defaults-from chain (not
// o's own), or nil.
func Inherited(o *Object, name string, resolve func(k *Kind, name string) *Object) *Value {
	cur := o
	for seen := 0; cur != nil && seen < 16; seen++ {
		parent := cur.Str("defaults-from")
		if parent == "" || parent == "none" || parent == cur.Name {
			return nil
		}
		cur = resolve(o.Kind, parent)
		if cur == nil {
			return nil
		}
		if v := cur.Props[name]; v != nil {
			return v
		}
	}
	return nil
}

// Effective is a property's value as it applies: o's own, else inherited
// through defaults-from, else the schema default.
func (c *Config) Effective(o *Object, name string) *Value {
	if o.Kind != nil {
		if p := o.Kind.Prop(name); p != nil && p.Type == TStruct {
			return structValue(p, o, c.Get)
		}
	}
	if v := o.Props[name]; v != nil {
		return v
	}
	if o.Kind == nil {
		return nil
	}
	if v := Inherited(o, name, c.Get); v != nil {
		return v
	}
	if p := o.Kind.Prop(name); p != nil {
		return defaultValue(p)
	}
	return nil
}

// structValue is a nested block as it applies to o: each sub-property
// o's own, else the nearest defaults-from parent's, else its default.
// BIG-IP inherits every field of a block such as hsts or enforcement on
// its own, so a child that sets `hsts { mode enabled }` keeps its
// parent's maximum-age.
func structValue(pr *Prop, o *Object, resolve func(k *Kind, name string) *Object) *Value {
	var chain []*Value
	cur := o
	for seen := 0; cur != nil && seen < 16; seen++ {
		if v := cur.Props[pr.Name]; v != nil && v.Sub != nil {
			chain = append(chain, v)
		}
		parent := cur.Str("defaults-from")
		if parent == "" || parent == "none" || parent == cur.Name {
			break
		}
		cur = resolve(o.Kind, parent)
	}
	if len(chain) == 1 && len(chain[0].Sub.Props) == len(pr.Sub.Props) {
		return chain[0]
	}
	out := defaultValue(pr)
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].Sub.Props {
			out.Sub.Props[k] = v
		}
		for _, x := range chain[i].Sub.Extra {
			out.Sub.Extra = setExtra(out.Sub.Extra, x)
		}
	}
	return out
}

// EffectiveStr is Effective for scalars ("" when there is none).
func (c *Config) EffectiveStr(o *Object, name string) string {
	if v := c.Effective(o, name); v != nil {
		return v.Str
	}
	return ""
}

// defaultList is a list property's default: none, or the comma-separated
// words of its Default (a built-in profile's content types).
func defaultList(pr *Prop) []string {
	if pr.Default == "" {
		return []string{}
	}
	return strings.Split(pr.Default, ",")
}

func defaultValue(pr *Prop) *Value {
	switch pr.Type {
	case TList:
		return &Value{List: defaultList(pr)}
	case TColl:
		return &Value{Items: []*Item{}}
	case TStruct:
		sub := &Item{Props: map[string]*Value{}}
		for _, sp := range pr.Sub.Props {
			if sp.Default != "" {
				sub.Props[sp.Name] = &Value{Str: sp.Default}
			}
		}
		return &Value{Sub: sub}
	case TFlag:
		return &Value{Str: pr.Enum[0]}
	case TTcl:
		return nil
	}
	if pr.Default == "" {
		return nil
	}
	return &Value{Str: pr.Default}
}

func isDefault(pr *Prop, v *Value) bool {
	switch pr.Type {
	case TList:
		return slices.Equal(v.List, defaultList(pr))
	case TColl:
		return len(v.Items) == 0
	case TStruct:
		if v.Sub == nil {
			return true
		}
		for _, sp := range pr.Sub.Props {
			if sv := v.Sub.Props[sp.Name]; sv != nil && !isDefault(sp, sv) {
				return false
			}
		}
		return len(v.Sub.Extra) == 0
	case TFlag:
		return v.Str == pr.Enum[0]
	case TTcl:
		return false
	}
	return v.Str == pr.Default
}

// name is a reference as list prints it: relative to the folder.
func (p *printer) name(s string) string {
	return RelPath(p.opts.Folder, s)
}

func (p *printer) value(pr *Prop, v *Value) {
	pp := p.pp
	switch pr.Type {
	case TFlag:
		if v.Str != "" {
			pp.Line(v.Str)
		}
	case TRef:
		pp.Line(pr.Name, p.name(v.Str))
	case TMonitor:
		pp.Verbatim(pr.Name + " " + p.monitor(v.Str))
	case TRaw:
		pp.Verbatim(pr.Name + " " + v.Str)
	case TTcl:
		pp.Script(v.Str, pr.Name)
	case TList:
		if len(v.List) == 0 && pr.Inline {
			pp.Line(pr.Name, "none") // as BIG-IP writes an empty one-line list
			return
		}
		if len(v.List) == 0 {
			pp.Empty(pr.Name)
			return
		}
		if pr.Inline {
			ws := make([]string, len(v.List))
			for i, x := range v.List {
				if strings.HasPrefix(x, "/") {
					x = p.name(x)
				}
				ws[i] = grammar.Quote(x)
			}
			pp.Verbatim(pr.Name + " { " + strings.Join(ws, " ") + " }")
			return
		}
		pp.Open(pr.Name)
		for _, x := range v.List {
			if strings.HasPrefix(x, "/") {
				x = p.name(x)
			}
			pp.Line(x)
		}
		pp.Close()
	case TStruct:
		if v.Sub == nil {
			pp.Empty(pr.Name)
			return
		}
		pp.Open(pr.Name)
		p.props(pr.Sub, v.Sub.Props, v.Sub.Extra, nil, nil)
		pp.Close()
	case TColl:
		if len(v.Items) == 0 {
			pp.Empty(pr.Name)
			return
		}
		pp.Open(pr.Name)
		for _, it := range v.Items {
			head := itemDisplay(p.opts.Folder, pr, it.Name, p.opts.NumericPorts)
			if pr.Items == ItemPlain {
				head = it.Name
			}
			props := it.Props
			if p.opts.Detail != DetailAll {
				props = withoutDefaults(pr.Sub, props)
			}
			words := []string{head}
			if pr.Items == ItemRegionMember {
				words = MatchWords(it.Name) // not subnet 10.0.0.0/8: three words
			}
			if len(props) == 0 && len(it.Extra) == 0 {
				pp.Empty(words...)
				continue
			}
			pp.Open(words...)
			p.props(pr.Sub, props, it.Extra, nil, nil)
			pp.Close()
		}
		pp.Close()
	default:
		s := v.Str
		if pr.Name == "destination" {
			if d, err := ParseDest(s); err == nil {
				s = d.display(p.opts.Folder, p.opts.NumericPorts)
			}
		}
		if pr.Quoted {
			pp.Verbatim(pr.Name + " " + grammar.QuoteAlways(s))
			return
		}
		pp.Line(pr.Name, s)
	}
}

// withoutDefaults drops an item's scalar settings that hold their default:
// a member disabled and enabled again prints as its neighbours do, not with
// `session user-enabled` that the others leave unsaid.
func withoutDefaults(k *Kind, props map[string]*Value) map[string]*Value {
	var out map[string]*Value
	for name, v := range props {
		pr := k.Prop(name)
		if pr != nil && pr.Default != "" && v.Sub == nil && v.Items == nil && v.List == nil && v.Str == pr.Default {
			if out == nil {
				out = make(map[string]*Value, len(props))
				for n, pv := range props {
					out[n] = pv
				}
			}
			delete(out, name)
		}
	}
	if out == nil {
		return props
	}
	return out
}

// ItemDisplay prints a collection item's name as list does from folder.
func ItemDisplay(folder string, pr *Prop, name string) string {
	return itemDisplay(folder, pr, name, false)
}

// itemDisplay is ItemDisplay, members' ports by number when numeric.
func itemDisplay(folder string, pr *Prop, name string, numeric bool) string {
	if pr != nil && pr.Items == ItemMember {
		return memberDisplay(folder, name, numeric)
	}
	return RelPath(folder, name)
}

func (p *printer) monitor(rule string) string {
	if rule == "none" || rule == "default" || rule == "" {
		return rule
	}
	names := MonitorNames(rule)
	for i, n := range names {
		names[i] = grammar.Quote(p.name(n))
	}
	if strings.HasPrefix(rule, "min ") {
		f := strings.Fields(rule)
		return "min " + f[1] + " of { " + strings.Join(names, " ") + " }"
	}
	return strings.Join(names, " and ")
}

// IsRuleKind says whether objects of k are iRules (ltm rule, gtm rule)
// or tmsh scripts (cli script), whose body is Tcl kept as written rather
// than properties.
func IsRuleKind(k *Kind) bool {
	return k != nil && (k.Key() == "ltm rule" || k.Key() == "gtm rule" || k.Key() == "cli script")
}
