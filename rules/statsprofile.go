package rules

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/openltm/openltm/rules/tcl"
)

// StatsProfiles holds the counters of the statistics profiles (ltm
// profile statistics): each profile names up to 32 fields, and rules
// change them with STATS::incr, set, setmax and setmin and read them
// with STATS::get; `show ltm profile statistics` shows them. The values
// are the profile's, whichever virtual server's rules count into it.
type StatsProfiles struct {
	mu sync.Mutex
	m  map[string]*statsProfile
}

type statsProfile struct {
	fields []string // in field order (field1 ... field32)
	values map[string]int64
}

// StatField is one field of a statistics profile and its value.
type StatField struct {
	Name  string
	Value int64
}

// NewStatsProfiles is an empty set of statistics profiles.
func NewStatsProfiles() *StatsProfiles { return &StatsProfiles{m: map[string]*statsProfile{}} }

// Define sets the statistics profiles in force (full name → field names
// in order), at each commit: the fields a profile keeps keep their
// values; a field or a profile removed loses its value.
func (sp *StatsProfiles) Define(profiles map[string][]string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	next := map[string]*statsProfile{}
	for name, fields := range profiles {
		p := &statsProfile{fields: fields, values: map[string]int64{}}
		old := sp.m[name]
		for _, f := range fields {
			if old != nil {
				p.values[f] = old.values[f]
			} else {
				p.values[f] = 0
			}
		}
		next[name] = p
	}
	sp.m = next
}

// Fields is a profile's fields and values, in field order; ok false when
// there is no such profile.
func (sp *StatsProfiles) Fields(profile string) ([]StatField, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	p := sp.m[profile]
	if p == nil {
		return nil, false
	}
	out := make([]StatField, len(p.fields))
	for i, f := range p.fields {
		out[i] = StatField{f, p.values[f]}
	}
	return out, true
}

// Reset zeroes a profile's values (reset-stats ltm profile statistics).
func (sp *StatsProfiles) Reset(profile string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if p := sp.m[profile]; p != nil {
		for f := range p.values {
			p.values[f] = 0
		}
	}
}

// update applies op to one field and returns its new value: a profile
// named bare is in /Common, as BIG-IP reads it.
func (sp *StatsProfiles) update(profile, field string, op func(old int64) int64) (int64, error) {
	if !strings.HasPrefix(profile, "/") {
		profile = "/Common/" + profile
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	p := sp.m[profile]
	if p == nil {
		return 0, fmt.Errorf("no statistics profile %s", profile)
	}
	old, ok := p.values[field]
	if !ok {
		return 0, fmt.Errorf("statistics profile %s has no field %q (its fields: %s)", profile, field, strings.Join(p.fields, " "))
	}
	if op != nil {
		p.values[field] = op(old)
	}
	return p.values[field], nil
}

func registerStatsProfile(t *tcl.Commands) {
	t.Register("STATS::get", cmdStatsProfile("STATS::get", false, nil))
	t.Register("STATS::incr", cmdStatsProfile("STATS::incr", true, func(old, v int64) int64 { return old + v }))
	t.Register("STATS::set", cmdStatsProfile("STATS::set", true, func(_, v int64) int64 { return v }))
	t.Register("STATS::setmax", cmdStatsProfile("STATS::setmax", true, func(old, v int64) int64 { return max(old, v) }))
	t.Register("STATS::setmin", cmdStatsProfile("STATS::setmin", true, func(old, v int64) int64 { return min(old, v) }))
}

// cmdStatsProfile is one STATS:: command: `STATS::get PROFILE FIELD`,
// `STATS::incr PROFILE FIELD ?DELTA?` (1 by default, negative counts
// down), `STATS::set|setmax|setmin PROFILE FIELD ?VALUE?`; each returns
// the field's value after it. A profile or field that does not exist is
// a Tcl error naming what does [M: BIG-IP also wants the profile on the
// virtual server; openltm counts into any defined profile].
func cmdStatsProfile(name string, takesValue bool, op func(old, v int64) int64) tcl.CmdFunc {
	usage := name + " profile field"
	if takesValue {
		usage += " ?value?"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) < 3 || len(args) > 3 && !takesValue || len(args) > 4 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		s := sessionOf(in)
		if s == nil || s.prog.env == nil || s.prog.env.Stats == nil {
			return tcl.Empty, tcl.Errorf("%s: no statistics profiles", name)
		}
		v := int64(1)
		if name != "STATS::incr" {
			v = 0
		}
		if len(args) == 4 {
			n, err := strconv.ParseInt(args[3].String(), 0, 64)
			if err != nil {
				return tcl.Empty, tcl.Errorf("%s: %q is not a whole number", name, args[3].String())
			}
			v = n
		}
		var f func(int64) int64
		if op != nil {
			f = func(old int64) int64 { return op(old, v) }
		}
		out, err := s.prog.env.Stats.update(args[1].String(), args[2].String(), f)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Int(out), nil
	}
}
