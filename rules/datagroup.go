package rules

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// DataGroupType is the key type of a data group (ltm data-group internal).
type DataGroupType uint8

// Data group key types.
const (
	DGString DataGroupType = iota
	DGAddress
	DGInteger
)

func (t DataGroupType) String() string {
	switch t {
	case DGAddress:
		return "ip"
	case DGInteger:
		return "integer"
	}
	return "string"
}

// Record is one data group entry.
type Record struct {
	Key   string
	Value string
	// prefix is the parsed key of an address data group.
	prefix netip.Prefix
}

// DataGroup is a data group as rules see it. The configuration layer builds
// it with NewDataGroup; it is immutable afterwards and safe to share.
type DataGroup struct {
	Name    string
	Type    DataGroupType
	Records []Record
	// order is the order class match tries records in: the records'
	// for strings and integers; longest prefix first for addresses, so
	// the most specific network answers [M].
	order []int
	// exact finds a string or integer key's first record, and byPrefix an
	// address group's network, so that `class match ITEM equals DG` (and
	// lookup) on a group of many records is a map lookup per prefix
	// length (lens, longest first) rather than a scan.
	exact    map[string]int
	byPrefix map[netip.Prefix]int
	lens     []int
}

// NewDataGroup builds a data group, sorting records by key as BIG-IP lists
// them, and checks address and integer keys.
func NewDataGroup(name string, typ DataGroupType, records []Record) (*DataGroup, error) {
	dg := &DataGroup{Name: name, Type: typ, Records: append([]Record(nil), records...)}
	for i := range dg.Records {
		r := &dg.Records[i]
		switch typ {
		case DGAddress:
			p, err := parsePrefix(r.Key)
			if err != nil {
				return nil, err
			}
			r.prefix = p
		case DGInteger:
			if _, err := strconv.ParseInt(r.Key, 10, 64); err != nil {
				return nil, tcl.Errorf("data group %s: key %q is not an integer", name, r.Key)
			}
		}
	}
	sort.SliceStable(dg.Records, func(i, j int) bool { return dg.Records[i].Key < dg.Records[j].Key })
	dg.order = make([]int, len(dg.Records))
	for i := range dg.order {
		dg.order[i] = i
	}
	if typ != DGAddress {
		dg.exact = make(map[string]int, len(dg.Records))
		for i := len(dg.Records) - 1; i >= 0; i-- {
			dg.exact[dg.Records[i].Key] = i
		}
		return dg, nil
	}
	sort.SliceStable(dg.order, func(i, j int) bool {
		return dg.Records[dg.order[i]].prefix.Bits() > dg.Records[dg.order[j]].prefix.Bits()
	})
	dg.byPrefix = make(map[netip.Prefix]int, len(dg.Records))
	for k := len(dg.order) - 1; k >= 0; k-- {
		i := dg.order[k]
		p := dg.Records[i].prefix
		dg.byPrefix[p.Masked()] = i
		if n := len(dg.lens); n == 0 || dg.lens[n-1] != p.Bits() {
			dg.lens = append(dg.lens, p.Bits())
		}
	}
	// lens was built shortest first.
	for a, b := 0, len(dg.lens)-1; a < b; a, b = a+1, b-1 {
		dg.lens[a], dg.lens[b] = dg.lens[b], dg.lens[a]
	}
	return dg, nil
}

// find is the record `equals` finds first for item (ip for an address
// group), -1 for none.
func (dg *DataGroup) find(item string, ip netip.Addr) int {
	if dg.Type != DGAddress {
		if i, ok := dg.exact[item]; ok {
			return i
		}
		return -1
	}
	if !ip.IsValid() {
		return -1
	}
	for _, n := range dg.lens {
		if n > ip.BitLen() {
			continue
		}
		if i, ok := dg.byPrefix[netip.PrefixFrom(ip, n).Masked()]; ok {
			return i
		}
	}
	return -1
}

// match compares an item with a record using a class operator.
func (dg *DataGroup) match(r *Record, item string, op string, ip netip.Addr) bool {
	if dg.Type == DGAddress {
		if op != "equals" || !ip.IsValid() {
			return false
		}
		return r.prefix.Contains(ip)
	}
	switch op {
	case "equals":
		return item == r.Key
	case "starts_with":
		return strings.HasPrefix(item, r.Key)
	case "ends_with":
		return strings.HasSuffix(item, r.Key)
	case "contains":
		return strings.Contains(item, r.Key)
	}
	return false
}

// search compares a record key against the item: the reverse direction of
// match (class search dg starts_with item finds keys starting with item).
func (dg *DataGroup) search(r *Record, item string, op string, ip netip.Addr) bool {
	if dg.Type == DGAddress {
		return dg.match(r, item, op, ip)
	}
	switch op {
	case "equals":
		return item == r.Key
	case "starts_with":
		return strings.HasPrefix(r.Key, item)
	case "ends_with":
		return strings.HasSuffix(r.Key, item)
	case "contains":
		return strings.Contains(r.Key, item)
	}
	return false
}

func lookupDG(in *tcl.Interp, name string) (*DataGroup, error) {
	s := sessionOf(in)
	if s == nil || s.prog.env.DataGroup == nil {
		return nil, tcl.Errorf("class: no data group named %q", name)
	}
	dg, ok := s.prog.env.DataGroup(name)
	if !ok {
		return nil, tcl.Errorf("class: no data group named %q", name)
	}
	return dg, nil
}

// cmdClass implements class match, lookup, search, exists, size, names,
// get and type.
func cmdClass(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("class match|lookup|search|exists|size|names|get|type ...")
	}
	sub := args[1].String()
	a := args[2:]
	switch sub {
	case "exists":
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("class exists class")
		}
		s := sessionOf(in)
		ok := false
		if s != nil && s.prog.env.DataGroup != nil {
			_, ok = s.prog.env.DataGroup(a[0].String())
		}
		return tcl.Bool(ok), nil
	case "size", "type":
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("class " + sub + " class")
		}
		dg, err := lookupDG(in, a[0].String())
		if err != nil {
			return tcl.Empty, err
		}
		if sub == "size" {
			return tcl.Int(int64(len(dg.Records))), nil
		}
		return tcl.Str(dg.Type.String()), nil
	case "names", "get":
		nocase := false
		if len(a) > 0 && a[0].String() == "-nocase" {
			nocase = true
			a = a[1:]
		}
		if len(a) < 1 || len(a) > 2 {
			return tcl.Empty, tcl.WrongArgs("class " + sub + " ?-nocase? class ?pattern?")
		}
		dg, err := lookupDG(in, a[0].String())
		if err != nil {
			return tcl.Empty, err
		}
		var out []tcl.Value
		for _, r := range dg.Records {
			if len(a) == 2 && !tcl.GlobMatch(a[1].String(), r.Key, nocase) {
				continue
			}
			if sub == "names" {
				out = append(out, tcl.Str(r.Key))
			} else {
				out = append(out, tcl.List(tcl.Str(r.Key), tcl.Str(r.Value)))
			}
		}
		return tcl.List(out...), nil
	case "element":
		mode := "-element"
		if len(a) == 3 && (a[0].String() == "-name" || a[0].String() == "-value") {
			mode = a[0].String()
			a = a[1:]
		}
		if len(a) != 2 {
			return tcl.Empty, tcl.WrongArgs("class element ?-name|-value? index class")
		}
		i, err := a[0].Int64()
		if err != nil {
			return tcl.Empty, err
		}
		dg, err := lookupDG(in, a[1].String())
		if err != nil {
			return tcl.Empty, err
		}
		if i < 0 || int(i) >= len(dg.Records) {
			return tcl.Empty, nil
		}
		return recordValue(&dg.Records[i], int(i), mode), nil
	case "startsearch":
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("class startsearch class")
		}
		if _, err := lookupDG(in, a[0].String()); err != nil {
			return tcl.Empty, err
		}
		s := sessionOf(in)
		if s == nil {
			return tcl.Empty, tcl.Errorf("class startsearch: not running an event")
		}
		s.searchSeq++
		id := "search" + strconv.Itoa(s.searchSeq)
		if s.searches == nil {
			s.searches = map[string]int{}
		}
		s.searches[id] = 0
		return tcl.Str(id), nil
	case "nextelement", "anymore", "donesearch":
		mode := "-element"
		if sub == "nextelement" {
			for len(a) > 0 && strings.HasPrefix(a[0].String(), "-") {
				o := a[0].String()
				a = a[1:]
				if o == "--" {
					break
				}
				if o != "-name" && o != "-value" && o != "-index" {
					return tcl.Empty, tcl.Errorf("bad class nextelement option %q: must be -name, -value or -index", o)
				}
				mode = o
			}
		}
		if len(a) != 2 {
			return tcl.Empty, tcl.WrongArgs("class " + sub + " class search_id")
		}
		dg, err := lookupDG(in, a[0].String())
		if err != nil {
			return tcl.Empty, err
		}
		s := sessionOf(in)
		id := a[1].String()
		pos, ok := 0, false
		if s != nil {
			pos, ok = s.searches[id]
		}
		if !ok {
			return tcl.Empty, tcl.Errorf("class %s: no search %q: start one with class startsearch", sub, id)
		}
		switch sub {
		case "anymore":
			return tcl.Bool(pos < len(dg.Records)), nil
		case "donesearch":
			delete(s.searches, id)
			return tcl.Empty, nil
		}
		if pos >= len(dg.Records) {
			return tcl.Empty, nil
		}
		s.searches[id] = pos + 1
		return recordValue(&dg.Records[pos], pos, mode), nil
	case "lookup":
		if len(a) != 2 {
			return tcl.Empty, tcl.WrongArgs("class lookup key class")
		}
		return classMatch(in, "match", []string{"-value"}, a[0].String(), "equals", a[1].String())
	case "match", "search":
		var opts []string
		for len(a) > 0 && strings.HasPrefix(a[0].String(), "-") {
			o := a[0].String()
			a = a[1:]
			if o == "--" {
				break
			}
			opts = append(opts, o)
		}
		if len(a) != 3 {
			if sub == "match" {
				return tcl.Empty, tcl.WrongArgs("class match ?-value|-name|-index|-element|-all? item operator class")
			}
			return tcl.Empty, tcl.WrongArgs("class search ?-value|-name|-index|-element|-all? class operator item")
		}
		if sub == "match" {
			return classMatch(in, sub, opts, a[0].String(), a[1].String(), a[2].String())
		}
		return classMatch(in, sub, opts, a[2].String(), a[1].String(), a[0].String())
	}
	return tcl.Empty, tcl.Errorf("bad class subcommand %q: must be match, search, lookup, element, type, exists, size, names, get, startsearch, nextelement, anymore or donesearch", sub)
}

// cmdMatchclass is v9's matchclass, deprecated by `class` in v10 and
// still common in rules from the field: `matchclass VALUE OPERATOR CLASS`
// is class match, `matchclass CLASS OPERATOR VALUE` is class search, and
// either answers the index (from 1) of the first matching record, 0 for
// none. The data group is the argument that names one (the third when
// both do); a `::` before its name, which v9 rules wrote, is dropped
// (`$::name`, v9's other spelling, is a Tcl variable and fails as it does
// on v11).
func cmdMatchclass(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 4 {
		return tcl.Empty, tcl.WrongArgs("matchclass value|class operator class|value")
	}
	a, op, b := args[1].String(), args[2].String(), args[3].String()
	exists := func(name string) bool {
		s := sessionOf(in)
		if s == nil || s.prog.env.DataGroup == nil {
			return false
		}
		_, ok := s.prog.env.DataGroup(name)
		return ok
	}
	var v tcl.Value
	var err error
	switch bn, an := strings.TrimPrefix(b, "::"), strings.TrimPrefix(a, "::"); {
	case exists(bn):
		v, err = classMatch(in, "match", []string{"-index"}, a, op, bn)
	case exists(an):
		v, err = classMatch(in, "search", []string{"-index"}, b, op, an)
	default:
		return tcl.Empty, tcl.Errorf("matchclass: neither %q nor %q is a data group", a, b)
	}
	if err != nil {
		return tcl.Empty, err
	}
	i, err := v.Int64()
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Int(i + 1), nil
}

// cmdFindclass is the deprecated `findclass VALUE CLASS ?SEPARATOR?`,
// which iRules written before BIG-IP 10 use for redirect and routing
// tables: the first member of the data group that starts with VALUE, or
// with SEPARATOR the part of it after the first SEPARATOR; "" when none.
// A member is its key, followed by a space and its value when it has one:
// the form `class` entries took when data groups gained values, so an
// old table of "/from http://to" lines and a key/value data group answer
// alike [M].
func cmdFindclass(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 && len(args) != 4 {
		return tcl.Empty, tcl.WrongArgs("findclass value class ?separator?")
	}
	value := args[1].String()
	dg, err := lookupDG(in, strings.TrimPrefix(args[2].String(), "::"))
	if err != nil {
		return tcl.Empty, err
	}
	for _, r := range dg.Records {
		member := r.Key
		if r.Value != "" {
			member += " " + r.Value
		}
		if !strings.HasPrefix(member, value) {
			continue
		}
		if len(args) == 4 {
			_, after, _ := strings.Cut(member, args[3].String())
			return tcl.Str(after), nil
		}
		return tcl.Str(member), nil
	}
	return tcl.Empty, nil
}

func classMatch(in *tcl.Interp, sub string, opts []string, item, op, dgName string) (tcl.Value, error) {
	switch op {
	case "equals", "starts_with", "ends_with", "contains":
	default:
		return tcl.Empty, tcl.Errorf("bad class operator %q: must be equals, starts_with, ends_with or contains", op)
	}
	dg, err := lookupDG(in, dgName)
	if err != nil {
		return tcl.Empty, err
	}
	mode, all := "", false
	for _, o := range opts {
		switch o {
		case "-value", "-name", "-index", "-element":
			mode = o
		case "-all":
			all = true
		default:
			return tcl.Empty, tcl.Errorf("bad class option %q: must be -value, -name, -index, -element or -all", o)
		}
	}
	var ip netip.Addr
	if dg.Type == DGAddress {
		if p, err := parsePrefix(item); err == nil {
			ip = p.Addr()
		}
	}
	if op == "equals" && !all && dg.order != nil {
		i := dg.find(item, ip)
		if i < 0 {
			return classMiss(mode), nil
		}
		if mode == "" {
			return tcl.Bool(true), nil
		}
		return recordValue(&dg.Records[i], i, mode), nil
	}
	var hits []tcl.Value
	for _, i := range dg.matchOrder() {
		r := &dg.Records[i]
		ok := false
		if sub == "match" {
			ok = dg.match(r, item, op, ip)
		} else {
			ok = dg.search(r, item, op, ip)
		}
		if !ok {
			continue
		}
		var v tcl.Value
		if mode == "" {
			if !all {
				return tcl.Bool(true), nil
			}
			v = tcl.Str(r.Key)
		} else {
			v = recordValue(r, i, mode)
		}
		if !all {
			return v, nil
		}
		hits = append(hits, v)
	}
	if all {
		return tcl.List(hits...), nil
	}
	return classMiss(mode), nil
}

// classMiss is class match's answer when no record matches.
func classMiss(mode string) tcl.Value {
	switch mode {
	case "":
		return tcl.Bool(false)
	case "-index":
		return tcl.Int(-1)
	}
	return tcl.Empty
}

// matchOrder is the order class match tries records in (every record,
// in list order, for a group not built by NewDataGroup).
func (dg *DataGroup) matchOrder() []int {
	if dg.order != nil || len(dg.Records) == 0 {
		return dg.order
	}
	order := make([]int, len(dg.Records))
	for i := range order {
		order[i] = i
	}
	return order
}

// recordValue is what -name, -value, -index or -element asks of a record.
func recordValue(r *Record, i int, mode string) tcl.Value {
	switch mode {
	case "-value":
		return tcl.Str(r.Value)
	case "-name":
		return tcl.Str(r.Key)
	case "-index":
		return tcl.Int(int64(i))
	}
	return tcl.List(tcl.Str(r.Key), tcl.Str(r.Value))
}
