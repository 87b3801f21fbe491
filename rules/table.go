package rules

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// DefaultTableTimeout is the idle timeout of a table entry when the rule
// gives none (BIG-IP's default).
const DefaultTableTimeout = 180 * time.Second

type tableEntry struct {
	val      string
	timeout  time.Duration // 0: indefinite
	lifetime time.Duration // 0: indefinite
	touched  time.Time
	created  time.Time
}

func (e *tableEntry) expired(now time.Time) bool {
	if e.timeout > 0 && now.Sub(e.touched) >= e.timeout {
		return true
	}
	return e.lifetime > 0 && now.Sub(e.created) >= e.lifetime
}

// Table is the session table behind the table command: string keys in
// named subtables, each with an idle timeout and a lifetime. It is shared
// by all connections and safe for concurrent use.
type Table struct {
	mu   sync.Mutex
	subs map[string]map[string]*tableEntry
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// NewTable returns an empty session table.
func NewTable() *Table {
	return &Table{subs: map[string]map[string]*tableEntry{}, Now: time.Now}
}

func (t *Table) sub(name string, create bool) map[string]*tableEntry {
	m := t.subs[name]
	if m == nil && create {
		m = map[string]*tableEntry{}
		t.subs[name] = m
	}
	return m
}

// get returns a live entry, deleting it when expired.
func (t *Table) get(sub, key string, now time.Time) *tableEntry {
	m := t.sub(sub, false)
	if m == nil {
		return nil
	}
	e := m[key]
	if e != nil && e.expired(now) {
		delete(m, key)
		return nil
	}
	return e
}

// Len counts live entries in a subtable ("" is the main table).
func (t *Table) Len(sub string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	n := 0
	for k := range t.sub(sub, false) {
		if t.get(sub, k, now) != nil {
			n++
		}
	}
	return n
}

// Lookup reads a key without touching it, for diagnostics and tests.
func (t *Table) Lookup(sub, key string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(sub, key, t.Now())
	if e == nil {
		return "", false
	}
	return e.val, true
}

func parseTimeout(v tcl.Value) (time.Duration, error) {
	s := v.String()
	switch s {
	case "indef", "indefinite":
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, tcl.Errorf("table: bad timeout %q: expected seconds or indefinite", s)
	}
	return time.Duration(n) * time.Second, nil
}

type tableOpts struct {
	notouch, mustexist, excl, count, remaining, all bool
	sub                                             string
}

func cmdTable(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s := sessionOf(in)
	if s == nil {
		return tcl.Empty, tcl.Errorf("table: no session table")
	}
	t := s.prog.env.Table
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("table set|add|replace|lookup|incr|append|delete|timeout|lifetime|keys ...")
	}
	sub := args[1].String()
	a := args[2:]
	var o tableOpts
	for len(a) > 0 && strings.HasPrefix(a[0].String(), "-") {
		switch f := a[0].String(); f {
		case "-notouch":
			o.notouch = true
		case "-mustexist":
			o.mustexist = true
		case "-excl":
			o.excl = true
		case "-count":
			o.count = true
		case "-remaining":
			o.remaining = true
		case "-all":
			o.all = true
		case "-subtable":
			if len(a) < 2 {
				return tcl.Empty, tcl.Errorf("table: -subtable needs a name")
			}
			o.sub = a[1].String()
			a = a[1:]
		case "--":
			a = a[1:]
			goto done
		default:
			return tcl.Empty, tcl.Errorf("table: bad option %q: must be -notouch, -mustexist, -excl, -subtable, -count, -remaining or -all", f)
		}
		a = a[1:]
	}
done:
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	switch sub {
	case "set", "add", "replace":
		if sub == "add" {
			o.excl = true
		}
		if sub == "replace" {
			o.mustexist = true
		}
		if len(a) < 2 || len(a) > 4 {
			return tcl.Empty, tcl.WrongArgs("table " + sub + " ?options? key value ?timeout ?lifetime??")
		}
		key, val := a[0].String(), a[1].String()
		timeout, lifetime := DefaultTableTimeout, time.Duration(0)
		var err error
		if len(a) > 2 {
			if timeout, err = parseTimeout(a[2]); err != nil {
				return tcl.Empty, err
			}
		}
		if len(a) > 3 {
			if lifetime, err = parseTimeout(a[3]); err != nil {
				return tcl.Empty, err
			}
		}
		e := t.get(o.sub, key, now)
		if e != nil && o.excl {
			if !o.notouch {
				e.touched = now
			}
			return tcl.Str(e.val), nil
		}
		if e == nil && o.mustexist {
			return tcl.Empty, nil
		}
		if e == nil {
			e = &tableEntry{created: now}
			t.sub(o.sub, true)[key] = e
		}
		e.val, e.timeout, e.lifetime, e.touched = val, timeout, lifetime, now
		return tcl.Str(val), nil
	case "lookup":
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("table lookup ?-notouch? ?-subtable name? key")
		}
		e := t.get(o.sub, a[0].String(), now)
		if e == nil {
			return tcl.Empty, nil
		}
		if !o.notouch {
			e.touched = now
		}
		return tcl.Str(e.val), nil
	case "incr", "append":
		if len(a) < 1 || len(a) > 2 {
			return tcl.Empty, tcl.WrongArgs("table " + sub + " ?options? key ?value?")
		}
		key := a[0].String()
		e := t.get(o.sub, key, now)
		if e == nil {
			if o.mustexist {
				return tcl.Empty, nil
			}
			e = &tableEntry{created: now, timeout: DefaultTableTimeout}
			if sub == "incr" {
				e.val = "0"
			}
			t.sub(o.sub, true)[key] = e
		}
		if sub == "append" {
			if len(a) != 2 {
				return tcl.Empty, tcl.WrongArgs("table append ?options? key value")
			}
			e.val += a[1].String()
		} else {
			delta := int64(1)
			if len(a) == 2 {
				d, err := a[1].Int64()
				if err != nil {
					return tcl.Empty, err
				}
				delta = d
			}
			cur, err := strconv.ParseInt(e.val, 10, 64)
			if err != nil {
				return tcl.Empty, tcl.Errorf("table incr: value %q of key %q is not an integer", e.val, key)
			}
			e.val = strconv.FormatInt(cur+delta, 10)
		}
		if !o.notouch {
			e.touched = now
		}
		return tcl.Str(e.val), nil
	case "delete":
		if o.all {
			delete(t.subs, o.sub)
			return tcl.Empty, nil
		}
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("table delete ?-subtable name? key|-all")
		}
		if m := t.sub(o.sub, false); m != nil {
			delete(m, a[0].String())
		}
		return tcl.Empty, nil
	case "timeout", "lifetime":
		if len(a) < 1 || len(a) > 2 {
			return tcl.Empty, tcl.WrongArgs("table " + sub + " ?-subtable name? ?-remaining? key ?value?")
		}
		e := t.get(o.sub, a[0].String(), now)
		if e == nil {
			return tcl.Int(-1), nil
		}
		d := &e.timeout
		start := e.touched
		if sub == "lifetime" {
			d, start = &e.lifetime, e.created
		}
		if len(a) == 2 {
			v, err := parseTimeout(a[1])
			if err != nil {
				return tcl.Empty, err
			}
			*d = v
		}
		if *d == 0 {
			return tcl.Str("indefinite"), nil
		}
		if o.remaining {
			return tcl.Int(int64((*d - now.Sub(start)) / time.Second)), nil
		}
		return tcl.Int(int64(*d / time.Second)), nil
	case "keys":
		var keys []string
		for k := range t.sub(o.sub, false) {
			if e := t.get(o.sub, k, now); e != nil {
				keys = append(keys, k)
				if !o.notouch {
					e.touched = now
				}
			}
		}
		if o.count {
			return tcl.Int(int64(len(keys))), nil
		}
		sort.Strings(keys)
		return tcl.Str(tcl.FormatList(keys...)), nil
	}
	return tcl.Empty, tcl.Errorf("bad table subcommand %q: must be set, add, replace, lookup, incr, append, delete, timeout, lifetime or keys", sub)
}
