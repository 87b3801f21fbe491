package rules

import (
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// jsonState is a connection's JSON:: handles: the elements and caches
// the rules were given, by number, so that a handle (a string to Tcl)
// finds its element again. It is emptied when the next message's
// document arrives (SetJSON) [M: F5 says only that handles are opaque
// and should be kept in variables].
type jsonState struct {
	doc    *JSONDoc // the event's document (nil outside JSON_REQUEST/RESPONSE)
	elems  []*jsonElem
	byElem map[*jsonElem]int
	caches []*JSONDoc
}

// jsonMaxHandles bounds the handles one message's rules may hold: each
// distinct element handed out takes one.
const jsonMaxHandles = 1 << 16

const (
	jsonElemPrefix  = "json_elem_"
	jsonCachePrefix = "json_cache_"
)

// SetJSON hands the state the document JSON_REQUEST or JSON_RESPONSE is
// about to run over (nil: none); the handles of the previous one end.
func (s *ConnState) SetJSON(d *JSONDoc) {
	if s.json == nil {
		if d == nil {
			return
		}
		s.json = &jsonState{}
	}
	j := s.json
	j.doc = d
	clear(j.elems)
	j.elems = j.elems[:0]
	clear(j.byElem)
	clear(j.caches)
	j.caches = j.caches[:0]
}

func (j *jsonState) elemHandle(e *jsonElem) (tcl.Value, error) {
	if n, ok := j.byElem[e]; ok {
		return tcl.Str(jsonElemPrefix + strconv.Itoa(n)), nil
	}
	if len(j.elems) >= jsonMaxHandles {
		return tcl.Empty, tcl.Errorf("JSON: too many element handles")
	}
	if j.byElem == nil {
		j.byElem = map[*jsonElem]int{}
	}
	j.byElem[e] = len(j.elems)
	j.elems = append(j.elems, e)
	return tcl.Str(jsonElemPrefix + strconv.Itoa(len(j.elems)-1)), nil
}

func (j *jsonState) cacheHandle(d *JSONDoc) (tcl.Value, error) {
	if len(j.caches) >= jsonMaxHandles {
		return tcl.Empty, tcl.Errorf("JSON: too many caches")
	}
	j.caches = append(j.caches, d)
	return tcl.Str(jsonCachePrefix + strconv.Itoa(len(j.caches)-1)), nil
}

func jsonOf(in *tcl.Interp) *jsonState {
	s := sessionOf(in)
	if s == nil {
		return nil
	}
	if s.json == nil {
		s.json = &jsonState{}
	}
	return s.json
}

// elem finds the element a handle names.
func (j *jsonState) elem(cmd string, v tcl.Value) (*jsonElem, error) {
	t := v.String()
	if n, ok := strings.CutPrefix(t, jsonElemPrefix); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(j.elems) {
			return j.elems[i], nil
		}
	}
	return nil, tcl.Errorf("%s: %q is not a JSON element handle", cmd, t)
}

// cache finds the document a cache handle names, or the event's without
// one.
func (j *jsonState) cache(in *tcl.Interp, cmd string, args []tcl.Value) (*JSONDoc, error) {
	if len(args) == 0 {
		if j.doc == nil {
			ev := "this context"
			if s := sessionOf(in); s != nil {
				ev = s.event.String()
			}
			return nil, tcl.Errorf("%s: no JSON message in %s (valid without a cache in JSON_REQUEST, JSON_RESPONSE)", cmd, ev)
		}
		return j.doc, nil
	}
	t := args[0].String()
	if n, ok := strings.CutPrefix(t, jsonCachePrefix); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(j.caches) {
			return j.caches[i], nil
		}
	}
	return nil, tcl.Errorf("%s: %q is not a JSON cache handle", cmd, t)
}

func registerJSON(t *tcl.Commands) {
	t.Register("JSON::root", cmdJSONRoot)
	t.Register("JSON::type", cmdJSONType)
	t.Register("JSON::get", cmdJSONGet)
	t.Register("JSON::set", cmdJSONSet)
	t.Register("JSON::create", cmdJSONCreate)
	t.Register("JSON::parse", cmdJSONParse)
	t.Register("JSON::render", cmdJSONRender)
	t.Register("JSON::object", cmdJSONObject)
	t.Register("JSON::array", cmdJSONArray)
}

// cmdJSONRoot is `JSON::root ?cache?`: the root element of the event's
// document, or of a cache.
func cmdJSONRoot(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("JSON::root ?cache?")
	}
	j := jsonOf(in)
	if j == nil {
		return tcl.Empty, tcl.Errorf("JSON::root: no connection")
	}
	d, err := j.cache(in, "JSON::root", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	return j.elemHandle(d.rootElem())
}

// cmdJSONType is `JSON::type element`.
func cmdJSONType(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("JSON::type element")
	}
	e, err := jsonArgElem(in, "JSON::type", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(e.kind.String()), nil
}

func jsonArgElem(in *tcl.Interp, cmd string, v tcl.Value) (*jsonElem, error) {
	j := jsonOf(in)
	if j == nil {
		return nil, tcl.Errorf("%s: no connection", cmd)
	}
	return j.elem(cmd, v)
}

// cmdJSONGet is `JSON::get element ?type?`: the element's value as Tcl
// sees it; with a type, an error unless the element is of that type.
func cmdJSONGet(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("JSON::get element ?type?")
	}
	e, err := jsonArgElem(in, "JSON::get", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	return jsonValue(in, "JSON::get", e, args[2:])
}

// jsonValue is e's Tcl value: null empty, a boolean 0 or 1, an integer,
// a literal's or a string's text; an object's or an array's handle [M].
// want, when given, is the type the rule expects.
func jsonValue(in *tcl.Interp, cmd string, e *jsonElem, want []tcl.Value) (tcl.Value, error) {
	if len(want) > 0 {
		k, ok := jsonKindOf(want[0].String())
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: bad type %q: must be null, boolean, integer, literal, string, object or array", cmd, want[0].String())
		}
		if k != e.kind {
			return tcl.Empty, tcl.Errorf("%s: the element is %s, not %s", cmd, e.kind, k)
		}
	}
	switch e.kind {
	case jsonBoolean:
		return tcl.Bool(e.b), nil
	case jsonInteger:
		return tcl.Int(e.i), nil
	case jsonLiteral, jsonString:
		return tcl.Str(e.s), nil
	case jsonObject, jsonArray:
		return jsonOf(in).elemHandle(e)
	}
	return tcl.Empty, nil
}

// cmdJSONSet is `JSON::set element type ?value?`.
func cmdJSONSet(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 3 || len(args) > 4 {
		return tcl.Empty, tcl.WrongArgs("JSON::set element type ?value?")
	}
	e, err := jsonArgElem(in, "JSON::set", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	nv, err := newJSONElem("JSON::set", e.doc, args[2:])
	if err != nil {
		return tcl.Empty, err
	}
	d := e.doc
	*e = *nv
	d.modified = true
	return tcl.Empty, nil
}

// newJSONElem makes an element of a type and a value, as JSON::set and
// the set, add, insert and append subcommands take them.
func newJSONElem(cmd string, d *JSONDoc, tv []tcl.Value) (*jsonElem, error) {
	k, ok := jsonKindOf(tv[0].String())
	if !ok {
		return nil, tcl.Errorf("%s: bad type %q: must be null, boolean, integer, literal, string, object or array", cmd, tv[0].String())
	}
	e := &jsonElem{doc: d, kind: k}
	switch k {
	case jsonNull, jsonObject, jsonArray:
		if len(tv) > 1 {
			return nil, tcl.Errorf("%s: type %s takes no value", cmd, k)
		}
		return e, nil
	}
	if len(tv) < 2 {
		return nil, tcl.Errorf("%s: type %s needs a value", cmd, k)
	}
	switch k {
	case jsonBoolean:
		b, err := tv[1].Truth()
		if err != nil {
			return nil, err
		}
		e.b = b
	case jsonInteger:
		i, err := tv[1].Int64()
		if err != nil {
			return nil, tcl.Errorf("%s: %q is not a 64-bit integer (use literal)", cmd, tv[1].String())
		}
		e.i = i
	case jsonLiteral:
		e.s = tv[1].String()
		if d, err := ParseJSON([]byte(e.s), JSONLimits{}); err != nil || d.root.kind == jsonObject || d.root.kind == jsonArray {
			return nil, tcl.Errorf("%s: %q is not a JSON literal", cmd, e.s)
		}
	case jsonString:
		e.s = tv[1].String()
	}
	return e, nil
}

// cmdJSONCreate is `JSON::create`: a new, empty cache.
func cmdJSONCreate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("JSON::create")
	}
	j := jsonOf(in)
	if j == nil {
		return tcl.Empty, tcl.Errorf("JSON::create: no connection")
	}
	return j.cacheHandle(&JSONDoc{})
}

// cmdJSONParse is `JSON::parse text`: a cache holding text parsed.
func cmdJSONParse(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("JSON::parse text")
	}
	j := jsonOf(in)
	if j == nil {
		return tcl.Empty, tcl.Errorf("JSON::parse: no connection")
	}
	d, err := ParseJSON([]byte(args[1].String()), JSONLimits{})
	if err != nil {
		return tcl.Empty, tcl.Errorf("JSON::parse: %v", err)
	}
	return j.cacheHandle(d)
}

// cmdJSONRender is `JSON::render ?cache?`: the event's document, or a
// cache, as compact JSON text.
func cmdJSONRender(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("JSON::render ?cache?")
	}
	j := jsonOf(in)
	if j == nil {
		return tcl.Empty, tcl.Errorf("JSON::render: no connection")
	}
	d, err := j.cache(in, "JSON::render", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(string(d.Render())), nil
}

// jsonContainer is the object or array a subcommand works on.
func jsonContainer(in *tcl.Interp, cmd string, v tcl.Value, k jsonKind) (*jsonElem, error) {
	e, err := jsonArgElem(in, cmd, v)
	if err != nil {
		return nil, err
	}
	if e.kind != k {
		return nil, tcl.Errorf("%s: the element is %s, not %s", cmd, e.kind, k)
	}
	return e, nil
}

// cmdJSONObject is `JSON::object size|type|get|set|add|remove|keys|values object ...`.
func cmdJSONObject(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "JSON::object size|type|get|set|add|remove|keys|values object ?key? ..."
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	sub := args[1].String()
	cmd := "JSON::object " + sub
	o, err := jsonContainer(in, cmd, args[2], jsonObject)
	if err != nil {
		return tcl.Empty, err
	}
	rest := args[3:]
	find := func(key string) int {
		for i, k := range o.keys {
			if k == key {
				return i
			}
		}
		return -1
	}
	switch sub {
	case "size":
		if len(rest) > 1 {
			return tcl.Empty, tcl.WrongArgs("JSON::object size object ?key?")
		}
		if len(rest) == 0 {
			return tcl.Int(int64(len(o.keys))), nil
		}
		n := 0
		for _, k := range o.keys {
			if k == rest[0].String() {
				n++
			}
		}
		return tcl.Int(int64(n)), nil
	case "keys":
		if len(rest) != 0 {
			return tcl.Empty, tcl.WrongArgs("JSON::object keys object")
		}
		l := make([]tcl.Value, len(o.keys))
		for i, k := range o.keys {
			l[i] = tcl.Str(k)
		}
		return tcl.List(l...), nil
	case "values":
		if len(rest) > 1 {
			return tcl.Empty, tcl.WrongArgs("JSON::object values object ?key?")
		}
		var l []tcl.Value
		for i, k := range o.keys {
			if len(rest) == 1 && k != rest[0].String() {
				continue
			}
			h, err := jsonOf(in).elemHandle(o.vals[i])
			if err != nil {
				return tcl.Empty, err
			}
			l = append(l, h)
		}
		return tcl.List(l...), nil
	case "type", "get":
		if len(rest) < 1 || len(rest) > 2 || sub == "type" && len(rest) != 1 {
			return tcl.Empty, tcl.WrongArgs("JSON::object " + sub + " object key" + map[bool]string{true: " ?type?"}[sub == "get"])
		}
		i := find(rest[0].String())
		if i < 0 {
			return tcl.Empty, tcl.Errorf("%s: no key %q in the object", cmd, rest[0].String())
		}
		if sub == "type" {
			return tcl.Str(o.vals[i].kind.String()), nil
		}
		if len(rest) == 1 {
			return jsonOf(in).elemHandle(o.vals[i])
		}
		return jsonValue(in, cmd, o.vals[i], rest[1:])
	case "set", "add":
		if len(rest) < 2 || len(rest) > 3 {
			return tcl.Empty, tcl.WrongArgs("JSON::object " + sub + " object key type ?value?")
		}
		nv, err := newJSONElem(cmd, o.doc, rest[1:])
		if err != nil {
			return tcl.Empty, err
		}
		key := rest[0].String()
		if i := find(key); sub == "set" && i >= 0 {
			o.vals[i] = nv
			// Replicates of the key go: set leaves one [M].
			for k := len(o.keys) - 1; k > i; k-- {
				if o.keys[k] == key {
					o.keys = append(o.keys[:k], o.keys[k+1:]...)
					o.vals = append(o.vals[:k], o.vals[k+1:]...)
				}
			}
		} else {
			o.keys = append(o.keys, key)
			o.vals = append(o.vals, nv)
		}
		o.doc.modified = true
		return jsonOf(in).elemHandle(nv)
	case "remove":
		if len(rest) != 1 && len(rest) != 3 {
			return tcl.Empty, tcl.WrongArgs("JSON::object remove object key ?type value?")
		}
		key := rest[0].String()
		var match *jsonElem
		if len(rest) == 3 {
			if match, err = newJSONElem(cmd, o.doc, rest[1:]); err != nil {
				return tcl.Empty, err
			}
		}
		n := 0
		for k := 0; k < len(o.keys); k++ {
			if o.keys[k] != key || match != nil && string(match.appendTo(nil)) != string(o.vals[k].appendTo(nil)) {
				continue
			}
			o.keys = append(o.keys[:k], o.keys[k+1:]...)
			o.vals = append(o.vals[:k], o.vals[k+1:]...)
			k--
			n++
		}
		if n > 0 {
			o.doc.modified = true
		}
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.Errorf("JSON::object: bad subcommand %q: must be size, type, get, set, add, remove, keys or values", sub)
}

// cmdJSONArray is `JSON::array size|type|get|set|insert|append|remove|values array ...`.
func cmdJSONArray(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "JSON::array size|type|get|set|insert|append|remove|values array ?index? ..."
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	sub := args[1].String()
	cmd := "JSON::array " + sub
	a, err := jsonContainer(in, cmd, args[2], jsonArray)
	if err != nil {
		return tcl.Empty, err
	}
	rest := args[3:]
	index := func(v tcl.Value, limit int) (int, error) {
		i, err := v.Int64()
		if err != nil || i < 0 || i >= int64(limit) {
			return 0, tcl.Errorf("%s: index %q out of range (the array has %d values)", cmd, v.String(), len(a.vals))
		}
		return int(i), nil
	}
	switch sub {
	case "size":
		if len(rest) != 0 {
			return tcl.Empty, tcl.WrongArgs("JSON::array size array")
		}
		return tcl.Int(int64(len(a.vals))), nil
	case "values":
		if len(rest) != 0 {
			return tcl.Empty, tcl.WrongArgs("JSON::array values array")
		}
		l := make([]tcl.Value, len(a.vals))
		for i, v := range a.vals {
			if l[i], err = jsonOf(in).elemHandle(v); err != nil {
				return tcl.Empty, err
			}
		}
		return tcl.List(l...), nil
	case "type", "get":
		if len(rest) < 1 || len(rest) > 2 || sub == "type" && len(rest) != 1 {
			return tcl.Empty, tcl.WrongArgs("JSON::array " + sub + " array index" + map[bool]string{true: " ?type?"}[sub == "get"])
		}
		i, err := index(rest[0], len(a.vals))
		if err != nil {
			return tcl.Empty, err
		}
		if sub == "type" {
			return tcl.Str(a.vals[i].kind.String()), nil
		}
		if len(rest) == 1 {
			return jsonOf(in).elemHandle(a.vals[i])
		}
		return jsonValue(in, cmd, a.vals[i], rest[1:])
	case "set", "insert":
		if len(rest) < 2 || len(rest) > 3 {
			return tcl.Empty, tcl.WrongArgs("JSON::array " + sub + " array index type ?value?")
		}
		limit := len(a.vals)
		if sub == "insert" {
			limit++ // the size itself appends
		}
		i, err := index(rest[0], limit)
		if err != nil {
			return tcl.Empty, err
		}
		nv, err := newJSONElem(cmd, a.doc, rest[1:])
		if err != nil {
			return tcl.Empty, err
		}
		if sub == "set" {
			a.vals[i] = nv
		} else {
			a.vals = append(a.vals, nil)
			copy(a.vals[i+1:], a.vals[i:])
			a.vals[i] = nv
		}
		a.doc.modified = true
		return jsonOf(in).elemHandle(nv)
	case "append":
		if len(rest) < 1 || len(rest) > 2 {
			return tcl.Empty, tcl.WrongArgs("JSON::array append array type ?value?")
		}
		nv, err := newJSONElem(cmd, a.doc, rest)
		if err != nil {
			return tcl.Empty, err
		}
		a.vals = append(a.vals, nv)
		a.doc.modified = true
		return jsonOf(in).elemHandle(nv)
	case "remove":
		if len(rest) != 1 {
			return tcl.Empty, tcl.WrongArgs("JSON::array remove array index")
		}
		i, err := index(rest[0], len(a.vals))
		if err != nil {
			return tcl.Empty, err
		}
		a.vals = append(a.vals[:i], a.vals[i+1:]...)
		a.doc.modified = true
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.Errorf("JSON::array: bad subcommand %q: must be size, type, get, set, insert, append, remove or values", sub)
}
