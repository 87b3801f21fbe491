package tcl

import (
	"sort"
	"strconv"
	"strings"
)

func registerLists(t *Commands) {
	t.Register("list", func(in *Interp, args []Value) (Value, error) {
		return List(append([]Value(nil), args[1:]...)...), nil
	})
	t.Register("llength", cmdLlength)
	t.Register("lindex", cmdLindex)
	t.Register("lrange", cmdLrange)
	t.Register("lsearch", cmdLsearch)
	t.Register("lsort", cmdLsort)
	t.Register("linsert", cmdLinsert)
	t.Register("lreplace", cmdLreplace)
	t.Register("lassign", cmdLassign)
	t.Register("lset", cmdLset)
	t.Register("join", cmdJoin)
	t.Register("split", cmdSplit)
	t.Register("concat", func(in *Interp, args []Value) (Value, error) {
		return Str(concatValues(args[1:])), nil
	})
}

// index parses a Tcl index (N, end, end-N, N+M) against a length.
func index(v Value, length int) (int, error) {
	if v.kind == kInt {
		return int(v.i), nil
	}
	s := trimSpace(v.String())
	bad := errorf("bad index %s: must be integer?[+-]integer? or end?[+-]integer?", q(v.String()))
	base := 0
	rest := s
	if strings.HasPrefix(s, "end") {
		base = length - 1
		rest = s[3:]
		if rest == "" {
			return base, nil
		}
		if rest[0] != '+' && rest[0] != '-' {
			return 0, bad
		}
		n, ok := parseInteger(rest)
		if !ok || n.kind != kInt {
			return 0, bad
		}
		return base + int(n.i), nil
	}
	if n, ok := parseInteger(s); ok && n.kind == kInt {
		return int(n.i), nil
	}
	// N+M or N-M
	for i := 1; i < len(s); i++ {
		if s[i] == '+' || s[i] == '-' {
			a, ok1 := parseInteger(s[:i])
			b, ok2 := parseInteger(s[i+1:])
			if ok1 && ok2 && a.kind == kInt && b.kind == kInt && s[i+1] != '+' && s[i+1] != '-' {
				if s[i] == '+' {
					return int(a.i + b.i), nil
				}
				return int(a.i - b.i), nil
			}
			break
		}
	}
	return 0, bad
}

// Index is index for command implementations outside the package.
func Index(v Value, length int) (int, error) { return index(v, length) }

func cmdLlength(in *Interp, args []Value) (Value, error) {
	if len(args) != 2 {
		return Empty, wrongArgs("llength list")
	}
	l, err := AsList(args[1])
	return Int(int64(len(l))), err
}

func cmdLindex(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("lindex list ?index ...?")
	}
	cur := args[1]
	idxs := args[2:]
	if len(idxs) == 1 {
		l, err := AsList(idxs[0])
		if err != nil {
			return Empty, err
		}
		if len(l) != 1 || l[0].String() != idxs[0].String() {
			idxs = l
		}
	}
	for _, iv := range idxs {
		l, err := AsList(cur)
		if err != nil {
			return Empty, err
		}
		i, err := index(iv, len(l))
		if err != nil {
			return Empty, err
		}
		if i < 0 || i >= len(l) {
			return Empty, nil
		}
		cur = l[i]
	}
	return cur, nil
}

// indexPair reads the first and last indexes of a range (lrange, lreplace,
// string range, string replace) against a length n.
func indexPair(first, last Value, n int) (int, int, error) {
	a, err := index(first, n)
	if err != nil {
		return 0, 0, err
	}
	b, err := index(last, n)
	if err != nil {
		return 0, 0, err
	}
	return a, b, nil
}

func cmdLrange(in *Interp, args []Value) (Value, error) {
	if len(args) != 4 {
		return Empty, wrongArgs("lrange list first last")
	}
	l, err := AsList(args[1])
	if err != nil {
		return Empty, err
	}
	a, b, err := indexPair(args[2], args[3], len(l))
	if err != nil {
		return Empty, err
	}
	a = max(a, 0)
	b = min(b, len(l)-1)
	if a > b {
		return Empty, nil
	}
	return List(append([]Value(nil), l[a:b+1]...)...), nil
}

func cmdLinsert(in *Interp, args []Value) (Value, error) {
	if len(args) < 3 {
		return Empty, wrongArgs("linsert list index ?element ...?")
	}
	l, err := AsList(args[1])
	if err != nil {
		return Empty, err
	}
	i, err := index(args[2], len(l)+1)
	if err != nil {
		return Empty, err
	}
	i = max(0, min(i, len(l)))
	out := make([]Value, 0, len(l)+len(args)-3)
	out = append(out, l[:i]...)
	out = append(out, args[3:]...)
	out = append(out, l[i:]...)
	return List(out...), nil
}

func cmdLreplace(in *Interp, args []Value) (Value, error) {
	if len(args) < 4 {
		return Empty, wrongArgs("lreplace list first last ?element ...?")
	}
	l, err := AsList(args[1])
	if err != nil {
		return Empty, err
	}
	a, b, err := indexPair(args[2], args[3], len(l))
	if err != nil {
		return Empty, err
	}
	a = max(a, 0)
	if a > len(l) {
		a = len(l)
	}
	if b < a-1 {
		b = a - 1
	}
	b = min(b, len(l)-1)
	out := make([]Value, 0, len(l)+len(args))
	out = append(out, l[:a]...)
	out = append(out, args[4:]...)
	if b+1 < len(l) {
		out = append(out, l[b+1:]...)
	}
	return List(out...), nil
}

func cmdLassign(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("lassign list ?varName ...?")
	}
	l, err := AsList(args[1])
	if err != nil {
		return Empty, err
	}
	for i, vn := range args[2:] {
		v := Empty
		if i < len(l) {
			v = l[i]
		}
		if _, err := in.SetVar(vn.String(), v); err != nil {
			return Empty, err
		}
	}
	if n := len(args) - 2; n < len(l) {
		return List(append([]Value(nil), l[n:]...)...), nil
	}
	return Empty, nil
}

func cmdLset(in *Interp, args []Value) (Value, error) {
	if len(args) < 3 {
		return Empty, wrongArgs("lset listVar ?index? ?index ...? value")
	}
	name := args[1].String()
	cur, err := in.GetVar(name)
	if err != nil {
		return Empty, err
	}
	idxs := args[2 : len(args)-1]
	if len(idxs) == 1 {
		l, err := AsList(idxs[0])
		if err != nil {
			return Empty, err
		}
		idxs = l
	}
	nv, err := lsetIn(cur, idxs, args[len(args)-1])
	if err != nil {
		return Empty, err
	}
	return in.SetVar(name, nv)
}

func lsetIn(cur Value, idxs []Value, val Value) (Value, error) {
	if len(idxs) == 0 {
		return val, nil
	}
	l, err := AsList(cur)
	if err != nil {
		return Empty, err
	}
	i, err := index(idxs[0], len(l))
	if err != nil {
		return Empty, err
	}
	if i < 0 || i > len(l) {
		return Empty, errorf("list index out of range")
	}
	out := append([]Value(nil), l...)
	if i == len(l) {
		out = append(out, Empty)
	}
	nv, err := lsetIn(out[i], idxs[1:], val)
	if err != nil {
		return Empty, err
	}
	out[i] = nv
	return List(out...), nil
}

func cmdJoin(in *Interp, args []Value) (Value, error) {
	if len(args) != 2 && len(args) != 3 {
		return Empty, wrongArgs("join list ?joinString?")
	}
	l, err := AsList(args[1])
	if err != nil {
		return Empty, err
	}
	sep := " "
	if len(args) == 3 {
		sep = args[2].String()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(e.String())
	}
	return Str(b.String()), nil
}

func cmdSplit(in *Interp, args []Value) (Value, error) {
	if len(args) != 2 && len(args) != 3 {
		return Empty, wrongArgs("split string ?splitChars?")
	}
	s := args[1].String()
	chars := " \t\n\r"
	if len(args) == 3 {
		chars = args[2].String()
	}
	var out []Value
	if s == "" {
		return Empty, nil
	}
	if chars == "" {
		for _, r := range s {
			out = append(out, Str(string(r)))
		}
		return List(out...), nil
	}
	start := 0
	for i, r := range s {
		if strings.ContainsRune(chars, r) {
			out = append(out, Str(s[start:i]))
			start = i + len(string(r))
		}
	}
	out = append(out, Str(s[start:]))
	return List(out...), nil
}

type searchOpts struct {
	mode     string // exact, glob, regexp
	all      bool
	inline   bool
	not      bool
	nocase   bool
	start    int
	kind     string // ascii, integer, real, dictionary
	index    []Value
	sorted   bool
	decr     bool
	unique   bool
	command  Value
	hasCmd   bool
	hasIndex bool
}

func cmdLsearch(in *Interp, args []Value) (Value, error) {
	if len(args) < 3 {
		return Empty, wrongArgs("lsearch ?-option value ...? list pattern")
	}
	o := searchOpts{mode: "glob", kind: "ascii"}
	opts := args[1 : len(args)-2]
	for i := 0; i < len(opts); i++ {
		switch s := opts[i].String(); s {
		case "-exact", "-glob", "-regexp":
			o.mode = s[1:]
		case "-all":
			o.all = true
		case "-inline":
			o.inline = true
		case "-not":
			o.not = true
		case "-nocase":
			o.nocase = true
		case "-ascii", "-integer", "-real", "-dictionary":
			o.kind = s[1:]
		case "-sorted":
			o.sorted = true
			o.mode = "exact"
		case "-increasing":
		case "-decreasing":
			o.decr = true
		case "-start":
			i++
			if i >= len(opts) {
				return Empty, errorf("missing starting index")
			}
			n, err := index(opts[i], 0)
			if err != nil {
				return Empty, err
			}
			o.start = n
		case "-index":
			i++
			if i >= len(opts) {
				return Empty, errorf("\"-index\" option must be followed by list index")
			}
			l, err := AsList(opts[i])
			if err != nil {
				return Empty, err
			}
			o.index, o.hasIndex = l, true
		default:
			return Empty, errorf("bad option %s: must be -all, -ascii, -bisect, -decreasing, -dictionary, -exact, -glob, -increasing, -index, -inline, -integer, -nocase, -not, -real, -regexp, -sorted, -start, or -subindices", q(s))
		}
	}
	l, err := AsList(args[len(args)-2])
	if err != nil {
		return Empty, err
	}
	pat := args[len(args)-1]
	ps := pat.String()
	var match func(Value) (bool, error)
	switch o.mode {
	case "exact":
		switch o.kind {
		case "integer", "real":
			pn, ok := asNumber(pat)
			if !ok {
				return Empty, errorf("expected %s but got %s", map[string]string{"integer": "integer", "real": "floating-point number"}[o.kind], q(ps))
			}
			match = func(v Value) (bool, error) {
				n, ok := asNumber(v)
				if !ok {
					return false, errorf("expected integer but got %s", q(v.String()))
				}
				return cmpNumbers(n, pn) == 0, nil
			}
		default:
			if o.nocase {
				match = func(v Value) (bool, error) { return strings.EqualFold(v.String(), ps), nil }
			} else {
				match = func(v Value) (bool, error) { return v.String() == ps, nil }
			}
		}
	case "glob":
		match = func(v Value) (bool, error) { return GlobMatch(ps, v.String(), o.nocase), nil }
	case "regexp":
		re, err := compileRegexp(ps, o.nocase)
		if err != nil {
			return Empty, err
		}
		match = func(v Value) (bool, error) { return re.MatchString(v.String()), nil }
	}
	var hits []Value
	for i := max(o.start, 0); i < len(l); i++ {
		e := l[i]
		key := e
		if o.hasIndex {
			k, err := cmdLindex(in, append([]Value{Empty, e}, o.index...))
			if err != nil {
				return Empty, err
			}
			key = k
		}
		ok, err := match(key)
		if err != nil {
			return Empty, err
		}
		if ok != o.not {
			r := Int(int64(i))
			if o.inline {
				r = e
			}
			if !o.all {
				return r, nil
			}
			hits = append(hits, r)
		}
	}
	if o.all {
		return List(hits...), nil
	}
	if o.inline {
		return Empty, nil
	}
	return Int(-1), nil
}

func cmdLsort(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("lsort ?-option value ...? list")
	}
	o := searchOpts{kind: "ascii"}
	opts := args[1 : len(args)-1]
	for i := 0; i < len(opts); i++ {
		switch s := opts[i].String(); s {
		case "-ascii", "-integer", "-real", "-dictionary":
			o.kind = s[1:]
		case "-increasing":
			o.decr = false
		case "-decreasing":
			o.decr = true
		case "-unique":
			o.unique = true
		case "-nocase":
			o.nocase = true
		case "-index":
			i++
			if i >= len(opts) {
				return Empty, errorf("\"-index\" option must be followed by list index")
			}
			l, err := AsList(opts[i])
			if err != nil {
				return Empty, err
			}
			o.index, o.hasIndex = l, true
		case "-command":
			i++
			if i >= len(opts) {
				return Empty, errorf("\"-command\" option must be followed by comparison command")
			}
			o.command, o.hasCmd = opts[i], true
		default:
			return Empty, errorf("bad option %s: must be -ascii, -command, -decreasing, -dictionary, -increasing, -index, -indices, -integer, -nocase, -real, -stride, or -unique", q(s))
		}
	}
	l, err := AsList(args[len(args)-1])
	if err != nil {
		return Empty, err
	}
	type item struct {
		v   Value
		key Value
		n   number
	}
	items := make([]item, len(l))
	for i, e := range l {
		items[i] = item{v: e, key: e}
		if o.hasIndex {
			k, err := cmdLindex(in, append([]Value{Empty, e}, o.index...))
			if err != nil {
				return Empty, err
			}
			items[i].key = k
		}
		if o.kind == "integer" || o.kind == "real" {
			n, ok := asNumber(items[i].key)
			if !ok || (o.kind == "integer" && n.kind == kDouble) {
				what := "integer"
				if o.kind == "real" {
					what = "floating-point number"
				}
				return Empty, errorf("expected %s but got %s", what, q(items[i].key.String()))
			}
			items[i].n = n
		}
	}
	var sortErr error
	cmp := func(a, b item) int {
		switch {
		case o.hasCmd:
			base, err := AsList(o.command)
			if err != nil {
				sortErr = err
				return 0
			}
			call := append(append([]Value(nil), base...), a.key, b.key)
			r, err := in.EvalValue(List(call...))
			if err != nil {
				sortErr = err
				return 0
			}
			n, err := r.Int64()
			if err != nil {
				sortErr = errorf("-compare command returned non-integer result")
				return 0
			}
			return int(n)
		case o.kind == "integer" || o.kind == "real":
			c := cmpNumbers(a.n, b.n)
			if c == 2 {
				return 0
			}
			return c
		case o.kind == "dictionary":
			return dictCompare(a.key.String(), b.key.String())
		case o.nocase:
			return strings.Compare(strings.ToLower(a.key.String()), strings.ToLower(b.key.String()))
		}
		return strings.Compare(a.key.String(), b.key.String())
	}
	sort.SliceStable(items, func(i, j int) bool {
		c := cmp(items[i], items[j])
		if o.decr {
			return c > 0
		}
		return c < 0
	})
	if sortErr != nil {
		return Empty, sortErr
	}
	out := make([]Value, 0, len(items))
	for i, it := range items {
		if o.unique && i+1 < len(items) && cmp(it, items[i+1]) == 0 {
			continue
		}
		out = append(out, it.v)
	}
	return List(out...), nil
}

// dictCompare is lsort -dictionary: case-insensitive with embedded numbers
// compared as integers.
func dictCompare(a, b string) int {
	i, j := 0, 0
	diff := 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && a[i] == '0' {
				i++
			}
			for j < len(b) && b[j] == '0' {
				j++
			}
			ni, nj := i, j
			for ni < len(a) && isDigit(a[ni]) {
				ni++
			}
			for nj < len(b) && isDigit(b[nj]) {
				nj++
			}
			if ni-i != nj-j {
				if ni-i < nj-j {
					return -1
				}
				return 1
			}
			if c := strings.Compare(a[i:ni], b[j:nj]); c != 0 {
				return c
			}
			if diff == 0 {
				diff = (ni - si) - (nj - sj)
				if diff != 0 {
					if diff > 0 {
						diff = -1
					} else {
						diff = 1
					}
				}
			}
			i, j = ni, nj
			continue
		}
		la, lb := toLower(ca), toLower(cb)
		if la != lb {
			return int(la) - int(lb)
		}
		if diff == 0 && ca != cb {
			if ca < cb {
				diff = 1
			} else {
				diff = -1
			}
			if isUpper(ca) && !isUpper(cb) {
				diff = -1
			} else if !isUpper(ca) && isUpper(cb) {
				diff = 1
			}
		}
		i++
		j++
	}
	if i < len(a) {
		return 1
	}
	if j < len(b) {
		return -1
	}
	return diff
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func toLower(c byte) byte {
	if isUpper(c) {
		return c + 32
	}
	return c
}

var _ = strconv.Itoa
