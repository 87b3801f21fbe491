package objects

import "github.com/openltm/openltm/grammar"

// virtualTypes are the flags that give a virtual server its type; absent
// all, it is a standard one. BIG-IP keeps one type per virtual.
var virtualTypes = []string{"ip-forward", "l2-forward", "reject", "stateless", "dhcp-relay", "internal"}

// acts marks a row openltm acts on that a helper made passive (bare).
func acts(p *Prop) *Prop { p.Passive = false; return p }

// virtualTypeSet handles a type flag set in a statement on a virtual:
// the flag replaces the type the virtual had (BIG-IP keeps one), and a
// second type in the same statement is refused. seen is the type this
// statement set already, "" for none.
func virtualTypeSet(item *Item, kw string, seen *string) bool {
	isType := false
	for _, t := range virtualTypes {
		isType = isType || t == kw
	}
	if !isType {
		return true
	}
	if *seen != "" && *seen != kw {
		return false
	}
	*seen = kw
	for _, t := range virtualTypes {
		if t != kw {
			delete(item.Props, t)
		}
	}
	return true
}

// checkVirtualType refuses what BIG-IP refuses of a virtual's type: more
// than one type flag (a configuration written by hand), and a reject
// virtual with a pool, which it would never use [M: BIG-IP's message].
func checkVirtualType(o *Object) error {
	n := 0
	for _, t := range virtualTypes {
		if v := o.Props[t]; v != nil && v.Str == t {
			n++
		}
	}
	if n > 1 {
		return Invalid("The virtual server (%s) has more than one type; give one of ip-forward, l2-forward, reject, stateless, dhcp-relay or internal.", o.Name)
	}
	if v := o.Props["reject"]; v != nil && v.Str == "reject" {
		if p := o.Props["pool"]; p != nil && p.Str != "" && p.Str != "none" {
			return Invalid("The virtual server (%s) is a reject virtual server and cannot have a pool (%s).", o.Name, p.Str)
		}
	}
	return nil
}

// legacySNAT reads BIG-IP 10's `snat automap`, `snat none` and `snatpool
// NAME` on a virtual as BIG-IP 11 and later load them: converted to
// source-address-translation (type automap, none, or snat with the
// pool), which is what list and save then show.
func (r *Reader) legacySNAT(item *Item, kw *grammar.Word, rest []grammar.Node) error {
	want := []string{"automap", "none"}
	if kw.Text == "snatpool" {
		want = []string{"the name of an ltm snatpool object", "none"}
	}
	if len(rest) == 0 {
		return synErr(kw, want, "%q needs a value", kw.Text)
	}
	w, ok := rest[0].(*grammar.Word)
	if !ok {
		return synErr(rest[0], want, "%q takes one word", kw.Text)
	}
	sub := &Item{Props: map[string]*Value{}}
	switch {
	case kw.Text == "snat" && (w.Text == "automap" || w.Text == "none"), kw.Text == "snatpool" && w.Text == "none":
		sub.Props["type"] = &Value{Str: w.Text}
	case kw.Text == "snatpool":
		sub.Props["type"] = &Value{Str: "snat"}
		sub.Props["pool"] = &Value{Str: FullPath(r.folder(), w.Text)}
	default:
		return synErr(w, want, "%q is not a value of snat: use automap or none (snatpool NAME names a SNAT pool)", w.Text)
	}
	item.Props["source-address-translation"] = &Value{Sub: sub}
	return nil
}
