package objects

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// Mode says how property text is read.
type Mode int

const (
	// ModeLoad reads bigip.conf: `key { ... }` sets whole collections.
	ModeLoad Mode = iota
	// ModeCreate reads tmsh create arguments: unknown properties are errors.
	ModeCreate
	// ModeModify reads tmsh modify arguments, with collection edits (add,
	// delete, modify, replace-all-with, none).
	ModeModify
)

// Reader reads grammar trees against the schema.
type Reader struct {
	Schema *Schema
	Folder string // current folder for relative names, "/Common" by default
	Mode   Mode
	// Warn receives notes about what was kept without being acted on.
	Warn func(pos grammar.Pos, msg string)
	// Lenient keeps what the vocabulary does not know (unknown kinds whole,
	// unknown properties verbatim), with a warning: for configurations
	// stored by an openltm that kept them, which must still restore.
	Lenient bool
	// Findings collects the same notes as category 2 findings, for callers
	// that print them apart from errors or refuse them (strict).
	Findings Findings

	src  string
	base int
}

// warn notes something kept without being acted on (category 2).
func (r *Reader) warn(n grammar.Node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	pos := n.Position()
	r.Findings = append(r.Findings, Finding{Pos: pos, Category: NotActedOn, Msg: msg})
	if r.Warn != nil {
		r.Warn(pos, msg)
	}
}

func (r *Reader) folder() string {
	if r.Folder == "" {
		return "/Common"
	}
	return r.Folder
}

// end is the offset just past a node.
func end(n grammar.Node) int {
	switch n := n.(type) {
	case *grammar.Word:
		return n.Pos.Offset + len(n.Raw)
	case *grammar.Block:
		return n.End.Offset + 1
	}
	return n.Position().Offset
}

// text returns the exact source from the start of a to the end of b.
func (r *Reader) text(a, b grammar.Node) string {
	s, e := a.Position().Offset-r.base, end(b)-r.base
	if s < 0 || e > len(r.src) || s > e {
		return renderNodes(a, b)
	}
	return r.src[s:e]
}

func renderNodes(a, b grammar.Node) string {
	return grammar.Render(a) + " " + grammar.Render(b)
}

// ReadObject reads one bigip.conf statement (`ltm pool /Common/p { ... }`)
// into an object. Statements of kinds F5 has and openltm has no table for
// come back with a nil Kind and their text kept whole (category 2); kinds F5
// does not have, and properties F5 does not define, are refused.
func (r *Reader) ReadObject(st *grammar.Statement) (*Object, error) {
	r.src, r.base = st.Source, st.Pos.Offset
	var words []string
	var block *grammar.Block
	for i, n := range st.Items {
		switch n := n.(type) {
		case *grammar.Word:
			if block != nil {
				return nil, synErr(n, []string{"end of line"}, "%q unexpected after the object's { } block", n.Text)
			}
			words = append(words, n.Text)
		case *grammar.Block:
			if block != nil || i == 0 {
				return nil, synErr(n, nil, "unexpected { } block")
			}
			block = n
		}
	}
	if len(words) == 0 {
		return nil, synErr(st, nil, "empty statement")
	}
	if what, ok := isV11GTM(words); ok && r.Mode == ModeLoad {
		// BIG-IP 11's untyped gtm pool or wide IP (gtm_v11.go).
		st = r.v11Statement(st, what)
		words = slices.Insert(words, 2, "a")
		if b, ok := st.Items[len(st.Items)-1].(*grammar.Block); ok {
			block = b
		}
	}
	k, used := r.Schema.Match(words)
	if k == nil {
		kind, ok := F5Kind(words)
		if !ok && r.Lenient {
			kind, ok = strings.Join(kindWords(words), " "), true
		}
		if !ok {
			var at grammar.Node = st
			if w, ok := st.Items[0].(*grammar.Word); ok {
				at = w
			}
			return nil, synErr(at, nil, "%q unknown module or object type", words[0])
		}
		r.warn(st, "%s is an F5 object kind openltm does not act on; kept verbatim and saved back", kind)
		return &Object{Raw: st.Source, Words: words}, nil
	}
	o := &Object{Kind: k, Props: map[string]*Value{}}
	rest := words[used:]
	var trailing []grammar.Node
	switch {
	case k.Singleton:
		if len(rest) > 0 {
			return nil, synErr(st.Items[used], nil, "%q unexpected: %s has no name", rest[0], k.Key())
		}
	case k.Key() == "gtm topology":
		name, n, bad, err := TopologyName(r.folder(), rest)
		switch {
		case err == nil:
			o.Name = name
			// Properties may follow the name: ldns: ... server: ... score 100.
			trailing = st.Items[used+n : used+len(rest)]
		case r.Lenient:
			o.Name = strings.Join(rest, " ")
		default:
			return nil, synErr(st.Items[used+bad], nil, "%v", err)
		}
	default:
		if len(rest) != 1 {
			if len(rest) == 0 {
				return nil, synErr(st, []string{"an object name"}, "%s needs a name", k.Key())
			}
			return nil, synErr(st.Items[used+1], []string{"{"}, "%q unexpected after the name %q", rest[1], rest[0])
		}
		o.Name = FullPath(r.folder(), rest[0])
		if k.PlainNames {
			o.Name = rest[0]
		}
		if err := CheckName(k, o.Name); err != nil && !r.Lenient {
			return nil, &positioned{pos: st.Items[used].Position(), err: err}
		}
	}
	if !k.ActsOnObject(o.Name) && (block != nil && len(block.Items) > 0 || !k.Singleton) {
		r.warn(st, "%s is kept and saved back; openltm does not act on it%s", strings.TrimSpace(k.Key()+" "+o.Name), keptKindWhy(k))
	}
	if block == nil && len(trailing) == 0 {
		return o, nil
	}
	if len(trailing) > 0 {
		props := trailing
		if block != nil {
			props = append(append([]grammar.Node(nil), trailing...), block.Items...)
		}
		item := &Item{Props: o.Props}
		if err := r.props(k, item, props, ModeLoad); err != nil {
			return nil, err
		}
		o.Extra = item.Extra
		return o, nil
	}
	if IsRuleKind(k) {
		o.Props["definition"] = &Value{Str: block.Raw}
		return o, nil
	}
	item := &Item{Props: o.Props}
	if err := r.props(k, item, block.Items, ModeLoad); err != nil {
		return nil, err
	}
	o.Extra = item.Extra
	return o, nil
}

// kindWords trims the object name off an unknown statement's words for the
// warning (the words up to the first that looks like a path or name).
func kindWords(ws []string) []string {
	for i, w := range ws {
		if strings.HasPrefix(w, "/") || i >= 3 {
			return ws[:i]
		}
	}
	return ws
}

// ReadProps applies tmsh create/modify arguments to an object. items are the
// statement nodes after the object name.
func (r *Reader) ReadProps(st *grammar.Statement, o *Object, items []grammar.Node) error {
	r.src, r.base = st.Source, st.Pos.Offset
	if o.Props == nil {
		o.Props = map[string]*Value{}
	}
	if IsRuleKind(o.Kind) {
		if len(items) == 1 {
			if b, ok := items[0].(*grammar.Block); ok {
				o.Props["definition"] = &Value{Str: b.Raw}
				return nil
			}
		}
		if len(items) == 2 {
			if w, ok := items[0].(*grammar.Word); ok && w.Text == "definition" {
				switch v := items[1].(type) {
				case *grammar.Block:
					o.Props["definition"] = &Value{Str: v.Raw}
					return nil
				case *grammar.Word:
					o.Props["definition"] = &Value{Str: v.Text}
					return nil
				}
			}
		}
		if len(items) == 0 {
			return nil
		}
		if o.Kind.Key() == "cli script" {
			return synErr(items[0], []string{"{ script body }"}, "a cli script is written: create cli script NAME { proc script::run {} { ... } }")
		}
		return synErr(items[0], []string{"{ rule body }"}, "an iRule is written: create ltm rule NAME { when EVENT { ... } }")
	}
	if o.Kind.PlainNames {
		o.Name = plainName(o.Name)
	}
	if r.Mode == ModeCreate && !o.Kind.Singleton {
		if err := CheckName(o.Kind, o.Name); err != nil {
			return err
		}
	}
	if !o.Kind.ActsOnObject(o.Name) {
		r.warn(st, "%s is kept and saved back; openltm does not act on it%s", strings.TrimSpace(o.Kind.Key()+" "+o.Name), keptKindWhy(o.Kind))
	}
	// A pasted bigip.conf body: create ltm pool p { members { ... } }.
	if len(items) == 1 {
		if b, ok := items[0].(*grammar.Block); ok {
			item := &Item{Props: o.Props, Extra: o.Extra}
			err := r.props(o.Kind, item, b.Items, ModeLoad)
			o.Extra = item.Extra
			return err
		}
	}
	item := &Item{Props: o.Props, Extra: o.Extra}
	err := r.props(o.Kind, item, items, r.Mode)
	o.Extra = item.Extra
	return err
}

func propNames(k *Kind, includePassive bool) []string {
	var out []string
	for _, p := range k.Props {
		if p.ReadOnly || (p.Passive && !includePassive) {
			continue
		}
		if p.Type == TFlag {
			for _, w := range p.Enum {
				if w != "" { // a bare flag's absence is no word
					out = append(out, w)
				}
			}
			continue
		}
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// props reads a property list into item.
func (r *Reader) props(k *Kind, item *Item, items []grammar.Node, mode Mode) error {
	isVirtual := k.Key() == "ltm virtual"
	var rates rateWords           // a rate class's rate and ceiling (kinds_rateshaping.go)
	var thresholds thresholdWords // a drop policy's (kinds_rateshaping.go)
	vtype := ""
	var snatWord *grammar.Word // the SNAT form this statement used (virtual_types.go)
	for i := 0; i < len(items); {
		kw, ok := items[i].(*grammar.Word)
		if !ok {
			return synErr(items[i], propNames(k, false), "a { } block where a property name was expected")
		}
		if isVirtual && (kw.Text == "snat" || kw.Text == "snatpool" || kw.Text == "source-address-translation") {
			if snatWord != nil {
				return synErr(kw, nil, "%q and %q both set source address translation: give one", snatWord.Text, kw.Text)
			}
			snatWord = kw
			if kw.Text != "source-address-translation" {
				if err := r.legacySNAT(item, kw, items[i+1:]); err != nil {
					return err
				}
				i += 2
				continue
			}
		}
		p := k.Prop(kw.Text)
		if p == nil && r.Lenient && mode == ModeLoad {
			n := extraLen(items, i)
			item.Extra = setExtra(item.Extra, Extra{Name: kw.Text, Text: r.text(kw, items[i+n-1])})
			r.warn(kw, "property %q is not an F5 property of %s; kept verbatim", kw.Text, k.Key())
			i += n
			continue
		}
		if p == nil {
			// BIG-IP refuses a property it does not define for the kind, in
			// a file as on the command line.
			// Every property F5 defines for the kind, as `?` lists them.
			return synErr(kw, propNames(k, true), "%q unknown property", kw.Text)
		}
		if p.ReadOnly && mode != ModeLoad {
			return synErr(kw, nil, "%q is read-only: the system sets it", kw.Text)
		}
		used, err := r.value(k, p, item, kw, items[i+1:], mode)
		if err != nil {
			return err
		}
		if p.Format == "bitrate" {
			rates.see(kw, items[i+1:])
		}
		if strings.HasSuffix(kw.Text, "-threshold") && k.Key() == "net rate-shaping drop-policy" {
			thresholds.see(kw, items[i+1:])
		}
		if isVirtual && !virtualTypeSet(item, kw.Text, &vtype) { // virtual_types.go
			return synErr(kw, []string{vtype}, "%q and %q: a virtual server has one type", vtype, kw.Text)
		}
		if p.Passive && !k.Passive && !p.ReadOnly && !remarks[p.Name] {
			if v := item.Props[p.Name]; v != nil && !isDefault(p, v) {
				// A help text "kept: why" gives the reason.
				why, _ := strings.CutPrefix(p.Help, "kept: ")
				if why == p.Help {
					why = ""
				} else {
					why = " (" + why + ")"
				}
				r.warn(kw, "property %q is kept and saved back; openltm does not act on it%s", kw.Text, why)
			}
		}
		i += 1 + used
	}
	if err := rates.check(); err != nil {
		return err
	}
	return thresholds.check()
}

// remarks are properties a BIG-IP only stores and lists (an object's
// description, AS3's metadata): keeping them is all there is to do, so they
// draw no "not acted on" warning.
var remarks = map[string]bool{"description": true, "metadata": true}

func setExtra(xs []Extra, x Extra) []Extra {
	for i := range xs {
		if xs[i].Name == x.Name {
			xs[i] = x
			return xs
		}
	}
	return append(xs, x)
}

// extraLen decides how many nodes an unknown property takes: in a block
// written one property per line (a saved file), everything that starts on
// its line; in a block written on one line, the name and one value.
func extraLen(items []grammar.Node, i int) int {
	line := items[i].Position().Line
	multi := items[0].Position().Line != items[len(items)-1].Position().Line
	if !multi {
		if i+1 < len(items) {
			return 2
		}
		return 1
	}
	n := 1
	for i+n < len(items) && items[i+n].Position().Line == line {
		n++
	}
	return n
}

func wordAt(rest []grammar.Node, what string, kw *grammar.Word) (*grammar.Word, error) {
	if len(rest) == 0 {
		return nil, synErr(kw, []string{what}, "%q needs a value", kw.Text)
	}
	w, ok := rest[0].(*grammar.Word)
	if !ok {
		return nil, synErr(rest[0], []string{what}, "a { } block where a value of %q was expected", kw.Text)
	}
	return w, nil
}

func blockAt(rest []grammar.Node, kw *grammar.Word, what string) (*grammar.Block, error) {
	if len(rest) == 0 {
		return nil, synErr(kw, []string{"{ ... }"}, "%q needs %s", kw.Text, what)
	}
	b, ok := rest[0].(*grammar.Block)
	if !ok {
		return nil, synErr(rest[0], []string{"{ ... }"}, "%q needs %s", kw.Text, what)
	}
	return b, nil
}

var intRE = regexp.MustCompile(`^[0-9]+$`)

// value reads one property's value starting at rest and returns how many
// nodes it used.
func (r *Reader) value(k *Kind, p *Prop, item *Item, kw *grammar.Word, rest []grammar.Node, mode Mode) (int, error) {
	switch p.Type {
	case TFlag:
		item.Props[p.Name] = &Value{Str: kw.Text}
		return 0, nil
	case TString, TInt, TEnum, TRef:
		w, err := wordAt(rest, expectedValue(p), kw)
		if err != nil {
			return 0, err
		}
		s, err := r.scalar(k, p, w)
		if err != nil {
			return 0, err
		}
		item.Props[p.Name] = &Value{Str: s}
		return 1, nil
	case TRaw:
		if len(rest) == 0 {
			return 0, synErr(kw, nil, "%q needs a value", kw.Text)
		}
		if p.Format == "service" || p.Format == "service-list" { // kinds_selfallow.go
			return r.serviceValue(p, item, rest)
		}
		// tmsh edits of a collection kept verbatim: add appends the new
		// items to the block, replace-all-with replaces it.
		if w, ok := rest[0].(*grammar.Word); ok && len(rest) > 1 && (w.Text == "add" || w.Text == "replace-all-with") {
			if b, ok := rest[1].(*grammar.Block); ok {
				text := r.text(b, b)
				if old := item.Props[p.Name]; w.Text == "add" && old != nil && strings.HasPrefix(old.Str, "{") && strings.HasSuffix(old.Str, "}") {
					text = strings.TrimSpace(strings.TrimSuffix(old.Str, "}")) + " " + strings.TrimSpace(strings.TrimPrefix(text, "{"))
				}
				item.Props[p.Name] = &Value{Str: text}
				return 2, nil
			}
		}
		if k1, ok := rest[0].(*grammar.Word); ok && p.Pairs && len(rest) > 1 {
			if v1, ok := rest[1].(*grammar.Word); ok {
				pair := grammar.Quote(k1.Text) + " " + grammar.Quote(v1.Text)
				text := "{ " + pair + " }"
				if old := item.Props[p.Name]; old != nil && strings.HasPrefix(old.Str, "{") && strings.HasSuffix(old.Str, "}") {
					text = strings.TrimSpace(strings.TrimSuffix(old.Str, "}")) + " " + pair + " }"
				}
				item.Props[p.Name] = &Value{Str: text}
				return 2, nil
			}
		}
		item.Props[p.Name] = &Value{Str: r.text(rest[0], rest[0])}
		return 1, nil
	case TTcl:
		if len(rest) == 0 {
			return 0, synErr(kw, []string{"{ ... }"}, "%q needs a body", kw.Text)
		}
		switch v := rest[0].(type) {
		case *grammar.Block:
			item.Props[p.Name] = &Value{Str: v.Raw}
		case *grammar.Word:
			item.Props[p.Name] = &Value{Str: v.Text}
		}
		return 1, nil
	case TMonitor:
		return r.monitor(p, item, kw, rest)
	case TList:
		return r.list(p, item, kw, rest, mode)
	case TStruct:
		b, err := blockAt(rest, kw, "a { } block of properties")
		if err != nil {
			return 0, err
		}
		sub := &Item{Props: map[string]*Value{}}
		if mode == ModeModify {
			if old := item.Props[p.Name]; old != nil && old.Sub != nil {
				sub = old.Sub.clone()
			}
		}
		if err := r.props(p.Sub, sub, b.Items, mode); err != nil {
			return 0, err
		}
		item.Props[p.Name] = &Value{Sub: sub}
		return 1, nil
	case TColl:
		return r.coll(p, item, kw, rest, mode)
	}
	return 0, fmt.Errorf("internal: property %s has no reader", p.Name)
}

// expectedValue says what a property takes, for errors.
func expectedValue(p *Prop) string {
	switch p.Type {
	case TInt:
		return "an integer"
	case TEnum:
		return "one of: " + strings.Join(p.Enum, ", ")
	case TRef:
		if len(p.Ref) == 1 && !strings.HasSuffix(p.Ref[0], " ") {
			return "the name of an " + strings.TrimSpace(p.Ref[0]) + " object, or none"
		}
		return "an object name, or none"
	}
	return "a value"
}

// scalar validates and canonicalises one word.
func (r *Reader) scalar(k *Kind, p *Prop, w *grammar.Word) (string, error) {
	s := w.Text
	switch p.Type {
	case TInt:
		if !intRE.MatchString(s) {
			if p.Default != "" && !intRE.MatchString(p.Default) && s == p.Default {
				return s, nil
			}
			// Some integer properties also take words (idle-timeout indefinite).
			if s == "indefinite" || s == "immediate" || s == "none" {
				return s, nil
			}
			want := []string{"an integer"}
			if p.Default != "" && !intRE.MatchString(p.Default) {
				want = append(want, p.Default) // rate-limit disabled
			}
			return "", synErr(w, want, "%q is not a valid value for %q", s, p.Name)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < p.Min || (p.Max > 0 && n > p.Max) {
			return "", synErr(w, nil, "%q is out of range for %q", s, p.Name)
		}
	case TEnum:
		for _, e := range p.Enum {
			if e == s {
				return s, nil
			}
		}
		if p.Name == "ip-protocol" && intRE.MatchString(s) {
			if n, err := strconv.Atoi(s); err == nil && n <= 255 {
				return s, nil // an IP protocol by number
			}
		}
		return "", synErr(w, p.Enum, "%q is not a valid value for %q", s, p.Name)
	case TRef:
		if s == "none" || s == "" {
			return "none", nil
		}
		return FullPath(r.folder(), s), nil
	}
	switch p.Format {
	case "ip":
		if !validIP(s) {
			return "", synErr(w, []string{"an IP address"}, "%q is not an IP address", s)
		}
	case "infinite":
		// A threshold: infinite or an integer in Min..Max (kinds_ltmglobals.go).
		if s != "infinite" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || !intRE.MatchString(s) {
				return "", synErr(w, []string{"infinite", "an integer"}, "%q is not a valid value for %q: use infinite or an integer from %d to %d", s, p.Name, p.Min, p.Max)
			}
			if n < p.Min || n > p.Max {
				return "", synErr(w, nil, "%q is out of range for %q: use infinite or an integer from %d to %d", s, p.Name, p.Min, p.Max)
			}
		}
	case "idle-timer":
		if err := validIdleTimer(s); err != nil { // kinds_timerpol.go
			return "", synErr(w, []string{"an integer", "immediate", "indefinite", "unspecified"}, "%v", err)
		}
	case "bitrate":
		if !validBitRate(s) { // kinds_rateshaping.go
			return "", synErr(w, []string{"bps", "kbps", "mbps", "gbps"}, "%q is not a rate for %q: use a number of bits per second, or one with bps, kbps, mbps or gbps (10mbps)", s, p.Name)
		}
	case "ech", "dohpath": // svcbparams.go
		check := checkECH
		if p.Format == "dohpath" {
			check = checkDoHPath
		}
		if s != "" && s != "none" {
			if err := check(s); err != nil {
				return "", synErr(w, nil, "%v", err)
			}
		}
	case "network":
		if s != "default" && s != "default-inet6" && !validPrefix(s) {
			return "", synErr(w, []string{"default", "default-inet6", "an address/prefix"}, "%q is not a network: use default, default-inet6 or address/prefix such as 10.1.0.0/16", s)
		}
	}
	switch p.Name {
	case "ip-tos-to-client", "ip-tos-to-server":
		if !validToS(s) { // kinds_tcpopts.go
			return "", synErr(w, []string{"pass-through", "mimic", "an integer 0-255"}, "%q is not a valid value for %q: use pass-through, mimic or an IP ToS value 0-255", s, p.Name)
		}
	case "tcp-options":
		if err := checkTCPOptions(s); err != "" { // kinds_tcpopts.go
			return "", synErr(w, []string{"none", "{KIND first|last} ..."}, "%s", err)
		}
	case "destination":
		// A gtm monitor's destination is a monitor's (*:*, *:port, addr:port).
		if k != nil && (k.Key() == "ltm virtual" || strings.HasPrefix(k.Key(), "gtm") && k.Lower != "monitor") {
			d, err := ParseDest(s)
			if err != nil {
				return "", synErr(w, nil, "%v", err)
			}
			if k.Key() == "ltm virtual" {
				return d.Canonical(r.folder()), nil
			}
			return d.Canonical(""), nil
		}
	case "address":
		if s != "any" && s != "any6" && !strings.Contains(s, "/") {
			host := s
			if i := strings.IndexByte(host, '%'); i >= 0 {
				host = host[:i]
			}
			if _, ok := NodeAddr(host); !ok {
				return "", synErr(w, []string{"an IP address"}, "%q is not an IP address", s)
			}
		}
	}
	return s, nil
}

// monitor reads `a`, `a and b and c`, `min N of { a b }`, `none`, `default`.
func (r *Reader) monitor(p *Prop, item *Item, kw *grammar.Word, rest []grammar.Node) (int, error) {
	w, err := wordAt(rest, "a monitor name", kw)
	if err != nil {
		return 0, err
	}
	switch w.Text {
	case "none", "default":
		item.Props[p.Name] = &Value{Str: w.Text}
		return 1, nil
	case "min":
		if len(rest) < 4 {
			return 0, synErr(w, []string{"min N of { monitor ... }"}, "incomplete monitor rule")
		}
		nw, ok1 := rest[1].(*grammar.Word)
		of, ok2 := rest[2].(*grammar.Word)
		b, ok3 := rest[3].(*grammar.Block)
		if !ok1 || !ok2 || !ok3 || !intRE.MatchString(nw.Text) || of.Text != "of" {
			return 0, synErr(w, []string{"min N of { monitor ... }"}, "malformed monitor rule")
		}
		var names []string
		for _, n := range b.Items {
			mw, ok := n.(*grammar.Word)
			if !ok {
				return 0, synErr(n, []string{"a monitor name"}, "a { } block inside a monitor list")
			}
			names = append(names, FullPath(r.folder(), mw.Text))
		}
		item.Props[p.Name] = &Value{Str: "min " + nw.Text + " of { " + strings.Join(names, " ") + " }"}
		return 4, nil
	}
	names := []string{FullPath(r.folder(), w.Text)}
	used := 1
	for used+1 < len(rest) {
		and, ok := rest[used].(*grammar.Word)
		if !ok || and.Text != "and" {
			break
		}
		next, ok := rest[used+1].(*grammar.Word)
		if !ok {
			return 0, synErr(rest[used+1], []string{"a monitor name"}, "a { } block after \"and\"")
		}
		names = append(names, FullPath(r.folder(), next.Text))
		used += 2
	}
	item.Props[p.Name] = &Value{Str: strings.Join(names, " and ")}
	return used, nil
}

// MonitorNames lists the monitors a monitor rule names.
func MonitorNames(rule string) []string {
	if rule == "" || rule == "none" || rule == "default" {
		return nil
	}
	var out []string
	if strings.HasPrefix(rule, "min ") {
		i, j := strings.IndexByte(rule, '{'), strings.LastIndexByte(rule, '}')
		if i < 0 || j < i {
			return nil
		}
		return strings.Fields(rule[i+1 : j])
	}
	for _, f := range strings.Split(rule, " and ") {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// list reads a TList value: `{ a b }`, `none`, or (modify) add/delete/
// replace-all-with { ... }.
func (r *Reader) list(p *Prop, item *Item, kw *grammar.Word, rest []grammar.Node, mode Mode) (int, error) {
	if len(rest) == 0 {
		return 0, synErr(kw, []string{"{ ... }", "none"}, "%q needs a value", kw.Text)
	}
	elems := func(b *grammar.Block) ([]string, error) {
		var out []string
		for _, n := range b.Items {
			w, ok := n.(*grammar.Word)
			if !ok {
				// Old-style lists may carry empty blocks after elements.
				if nb, ok := n.(*grammar.Block); ok && len(nb.Items) == 0 {
					continue
				}
				return nil, synErr(n, nil, "a { } block inside the %q list", p.Name)
			}
			s := w.Text
			if p.Format == "ip" {
				// With Prop.Ref, a name of one of those kinds will do too
				// (a snatpool member naming an ltm snat-translation).
				if _, ok := NodeAddr(s); !ok && (len(p.Ref) == 0 || !isRefName(s)) {
					want := []string{"an IP address"}
					if len(p.Ref) > 0 {
						want = append(want, "the name of an "+p.Ref[0])
					}
					return nil, synErr(w, want, "%q is not an IP address", s)
				}
			}
			if p.Format == "mac" { // kinds_pktfilter.go
				m, ok := canonicalMAC(s)
				if !ok {
					return nil, synErr(w, []string{"a MAC address"}, "%q is not a MAC address: use six octets such as 00:50:56:a1:b2:c3", s)
				}
				out = append(out, m)
				continue
			}
			if p.Format == "network" {
				if !validPrefix(s) {
					return nil, synErr(w, []string{"an address/prefix length"}, "%q is not a network: use address/prefix length, such as 198.51.100.0/24", s)
				}
				out = append(out, s)
				continue
			}
			if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
				return nil, synErr(w, p.Enum, "%q is not a valid value for %q", s, p.Name)
			}
			if len(p.Ref) > 0 || strings.HasPrefix(s, "/") || p.Name == "members" {
				s = FullPath(r.folder(), s)
			}
			out = append(out, s)
		}
		return out, nil
	}
	cur := item.Props[p.Name]
	var old []string
	if cur != nil {
		old = cur.List
	}
	switch v := rest[0].(type) {
	case *grammar.Block:
		xs, err := elems(v)
		if err != nil {
			return 0, err
		}
		item.Props[p.Name] = &Value{List: xs}
		return 1, nil
	case *grammar.Word:
		switch v.Text {
		case "none", "default":
			item.Props[p.Name] = &Value{List: []string{}}
			return 1, nil
		case "add", "delete", "replace-all-with":
			b, err := blockAt(rest[1:], v, "a { } list")
			if err != nil {
				return 0, err
			}
			xs, err := elems(b)
			if err != nil {
				return 0, err
			}
			out := append([]string(nil), old...)
			switch v.Text {
			case "add":
				for _, x := range xs {
					if !contains(out, x) {
						out = append(out, x)
					}
				}
			case "delete":
				for _, x := range xs {
					if !contains(out, x) {
						return 0, synErr(b, nil, "%q is not in the %q list", x, p.Name)
					}
					out = remove(out, x)
				}
			case "replace-all-with":
				out = xs
			}
			item.Props[p.Name] = &Value{List: out}
			return 2, nil
		}
		return 0, synErr(v, []string{"{ ... }", "add", "delete", "replace-all-with", "none"}, "%q is not a valid value for %q", v.Text, p.Name)
	}
	return 0, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func remove(xs []string, x string) []string {
	out := xs[:0]
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// itemName canonicalises a collection item's name.
func (r *Reader) itemName(p *Prop, w *grammar.Word) (string, error) {
	switch p.Items {
	case ItemMember:
		s, err := memberName(r.folder(), w.Text)
		if err != nil {
			return "", synErr(w, nil, "%v", err)
		}
		return s, nil
	case ItemRef:
		return FullPath(r.folder(), w.Text), nil
	case ItemGTMMember:
		return FullPath(r.folder(), w.Text), nil
	case ItemAddress:
		a, err := netip.ParseAddr(w.Text)
		if err != nil {
			return "", synErr(w, []string{"an IP address"}, "%q is not an IP address", w.Text)
		}
		return a.String(), nil
	case ItemListAddress, ItemListPort: // netlists.go
		s, err := canonListEntry(p.Items, w.Text)
		if err != nil {
			return "", synErr(w, nil, "%v", err)
		}
		return s, nil
	}
	if len(p.Enum) > 0 && !slices.Contains(p.Enum, w.Text) { // a timer policy's timers (kinds_timerpol.go)
		return "", synErr(w, p.Enum, "%q is not a valid %s: use %s", w.Text, strings.TrimSuffix(p.Name, "s"), strings.Join(p.Enum, ", "))
	}
	return w.Text, nil
}

// readItems reads `name [{ props }] name ...` from a block.
func (r *Reader) readItems(p *Prop, b *grammar.Block, mode Mode, withProps bool) ([]*Item, []*grammar.Word, error) {
	var out []*Item
	var words []*grammar.Word
	for i := 0; i < len(b.Items); i++ {
		if p.Items == ItemRegionMember {
			name, n, err := regionMember(r.folder(), b.Items[i:])
			if err != nil {
				return nil, nil, err
			}
			out = append(out, &Item{Name: name, Props: map[string]*Value{}})
			words = append(words, b.Items[i].(*grammar.Word))
			i += n - 1
			if i+1 < len(b.Items) {
				if sb, ok := b.Items[i+1].(*grammar.Block); ok {
					if len(sb.Items) > 0 {
						return nil, nil, synErr(sb, nil, "a region member takes no properties")
					}
					i++
				}
			}
			continue
		}
		w, ok := b.Items[i].(*grammar.Word)
		if !ok {
			return nil, nil, synErr(b.Items[i], []string{"an item name"}, "a { } block where a %s name was expected", strings.TrimSuffix(p.Name, "s"))
		}
		name, err := r.itemName(p, w)
		if err != nil {
			return nil, nil, err
		}
		it := &Item{Name: name, Props: map[string]*Value{}}
		if i+1 < len(b.Items) {
			if sb, ok := b.Items[i+1].(*grammar.Block); ok {
				if !withProps && len(sb.Items) > 0 {
					return nil, nil, synErr(sb, nil, "properties are not taken here")
				}
				if err := r.props(p.Sub, it, sb.Items, mode); err != nil {
					return nil, nil, err
				}
				i++
			}
		}
		out = append(out, it)
		words = append(words, w)
	}
	return out, words, nil
}

// coll reads a TColl value: `{ items }`, `none`, or add/delete/modify/
// replace-all-with { ... }.
func (r *Reader) coll(p *Prop, item *Item, kw *grammar.Word, rest []grammar.Node, mode Mode) (int, error) {
	if len(rest) == 0 {
		return 0, synErr(kw, []string{"{ ... }", "add", "delete", "modify", "replace-all-with", "none"}, "%q needs a value", kw.Text)
	}
	cur := item.Props[p.Name]
	var old []*Item
	if cur != nil {
		for _, it := range cur.Items {
			old = append(old, it.clone())
		}
	}
	switch v := rest[0].(type) {
	case *grammar.Block:
		items, _, err := r.readItems(p, v, ModeLoad, true)
		if err != nil {
			return 0, err
		}
		item.Props[p.Name] = &Value{Items: dedupe(items)}
		return 1, nil
	case *grammar.Word:
		switch v.Text {
		case "none":
			item.Props[p.Name] = &Value{Items: []*Item{}}
			return 1, nil
		case "add", "replace-all-with":
			b, err := blockAt(rest[1:], v, "a { } block of items")
			if err != nil {
				return 0, err
			}
			sub := ModeCreate
			items, words, err := r.readItems(p, b, sub, true)
			if err != nil {
				return 0, err
			}
			out := old
			if v.Text == "replace-all-with" {
				out = nil
			}
			for i, it := range items {
				if findItem(out, it.Name) != nil {
					if v.Text == "add" {
						return 0, &positioned{pos: words[i].Pos, err: Exists(p.Sub, it.Name)}
					}
					continue
				}
				out = append(out, it)
			}
			item.Props[p.Name] = &Value{Items: out}
			return 2, nil
		case "delete", "del":
			b, err := blockAt(rest[1:], v, "a { } list of item names")
			if err != nil {
				return 0, err
			}
			if len(b.Items) == 1 {
				if w, ok := b.Items[0].(*grammar.Word); ok && w.Text == "all" {
					item.Props[p.Name] = &Value{Items: []*Item{}}
					return 2, nil
				}
			}
			items, words, err := r.readItems(p, b, ModeModify, false)
			if err != nil {
				return 0, err
			}
			out := old
			for i, it := range items {
				if findItem(out, it.Name) == nil {
					return 0, &positioned{pos: words[i].Pos, err: NotFound(p.Sub, it.Name)}
				}
				out = removeItem(out, it.Name)
			}
			item.Props[p.Name] = &Value{Items: out}
			return 2, nil
		case "modify":
			b, err := blockAt(rest[1:], v, "a { } block of items and their changes")
			if err != nil {
				return 0, err
			}
			out := old
			for i := 0; i < len(b.Items); i++ {
				w, ok := b.Items[i].(*grammar.Word)
				if !ok {
					return 0, synErr(b.Items[i], []string{"an item name"}, "a { } block where an item name was expected")
				}
				var sb *grammar.Block
				if i+1 < len(b.Items) {
					sb, _ = b.Items[i+1].(*grammar.Block)
				}
				if sb == nil {
					return 0, synErr(w, []string{"{ properties }"}, "%q needs a { } block of changes", w.Text)
				}
				i++
				var targets []*Item
				if w.Text == "all" {
					targets = out
				} else {
					name, err := r.itemName(p, w)
					if err != nil {
						return 0, err
					}
					t := findItem(out, name)
					if t == nil {
						return 0, &positioned{pos: w.Pos, err: NotFound(p.Sub, name)}
					}
					targets = []*Item{t}
				}
				for _, t := range targets {
					if err := r.props(p.Sub, t, sb.Items, ModeModify); err != nil {
						return 0, err
					}
				}
			}
			item.Props[p.Name] = &Value{Items: out}
			return 2, nil
		}
		return 0, synErr(v, []string{"{ ... }", "add", "delete", "modify", "replace-all-with", "none"}, "%q is not a valid value for %q", v.Text, p.Name)
	}
	return 0, nil
}

func dedupe(items []*Item) []*Item {
	var out []*Item
	for _, it := range items {
		if old := findItem(out, it.Name); old != nil {
			*old = *it
			continue
		}
		out = append(out, it)
	}
	return out
}

func findItem(items []*Item, name string) *Item {
	for _, it := range items {
		if it.Name == name {
			return it
		}
	}
	return nil
}

func removeItem(items []*Item, name string) []*Item {
	var out []*Item
	for _, it := range items {
		if it.Name != name {
			out = append(out, it)
		}
	}
	return out
}

// positioned attaches a source position to a configuration error found
// while reading text, so the user sees where it came from.
type positioned struct {
	pos grammar.Pos
	err error
}

func (p *positioned) Error() string { return p.err.Error() }
func (p *positioned) Unwrap() error { return p.err }

// validIP reports whether s is an address as BIG-IP writes one: with an
// optional %route-domain, or any, any6, none.
func validIP(s string) bool {
	switch s {
	case "any", "any6", "none":
		return true
	}
	if i := strings.IndexByte(s, '%'); i >= 0 {
		if _, err := strconv.Atoi(s[i+1:]); err != nil {
			return false
		}
		s = s[:i]
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// validPrefix reports whether s is address[%rd]/length.
func validPrefix(s string) bool {
	a, l, ok := strings.Cut(s, "/")
	if !ok || !validIP(a) || a == "any" || a == "any6" || a == "none" {
		return false
	}
	if i := strings.IndexByte(a, '%'); i >= 0 {
		a = a[:i]
	}
	_, err := netip.ParsePrefix(a + "/" + l)
	return err == nil
}
