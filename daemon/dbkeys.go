package daemon

import (
	"fmt"
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// dbHook holds every commit's sys db values to the keys' own ranges, as
// BIG-IP's mcpd does (enable or disable, an integer in range, one of a
// key's words), and says why a kept key changes nothing here. It serves
// nothing: its Change is empty.
type dbHook struct{}

// Prepare implements Hook: a value a key does not take, or a misspelt
// key name, is refused unless the running configuration already had it
// or the commit is a load (then kept, with a warning, and the key reads
// as its default where openltm acts on it).
func (dbHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	warn := func(m string) {
		if opts.Warn != nil {
			opts.Warn(m)
		}
	}
	for _, o := range cfg.Of(sysDB) {
		value := sysDBValue.Str(o)
		if old != nil {
			if was := old.Get(sysDB, o.Name); was != nil && sysDBValue.Str(was) == value {
				continue // unchanged
			}
		}
		known, err := objects.CheckDBKey(o.Name)
		if err != nil {
			if !opts.Lenient {
				return nil, err
			}
			warn(err.Error())
			continue
		}
		if !known {
			if old != nil {
				warn(fmt.Sprintf("sys db %s is not one of the db keys openltm knows (list sys db); its value is kept as given", o.Name))
			}
			continue
		}
		d, _ := objects.LookupDBKey(o.Name)
		if err := d.Check(value); err != nil {
			if !opts.Lenient {
				return nil, err
			}
			if o.Name != rstCauseLog && o.Name != rstCausePkt { // rstcause.go warns of its own
				warn(err.Error() + "; kept")
			}
			continue
		}
		if d.Note != "" && old != nil && value != d.Default {
			warn(fmt.Sprintf("sys db %s: %s", o.Name, d.Note))
		}
	}
	return noChange{}, nil
}

// numericPorts reports whether list prints ports as numbers: sys db
// bigpipe.displayservicenames false, as scripts that parse tmsh output
// set it. Any other value (true, the default) prints service names.
func numericPorts(cfg *objects.Config) bool {
	o := cfg.Get(sysDB, displayServiceNames)
	return o != nil && sysDBValue.Str(o) == "false"
}

// displayServiceNames is the db key of list's port names.
const displayServiceNames = "bigpipe.displayservicenames"

// maxRejectRate is the db key of the resets a second sent to refused
// clients.
const maxRejectRate = "tm.maxrejectrate"

// rejectRateHook sets the plane's reject rate as tm.maxrejectrate says,
// or ltm global-settings traffic-control max-reject-rate, the same
// setting in BIG-IP's other spelling. [M] The traffic-control value,
// when given, wins over the db key (BIG-IP keeps the two as one value;
// here each lists what it was given), and a commit that leaves them
// disagreeing warns which one runs. A value that is not a number in
// range (kept from a loaded file) reads as the default, 250.
type rejectRateHook struct {
	e *Engine
	p *dataplane.Plane
	n int64 // what the plane runs
}

// Prepare implements Hook; dbHook has refused what a modify may not set.
func (h *rejectRateHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	n, fromTC, db := rejectRate(cfg)
	if fromTC && db != "" && db != strconv.FormatInt(n, 10) && opts.Warn != nil {
		if was, wasTC, wasDB := rejectRate(old); old == nil || was != n || !wasTC || wasDB != db {
			opts.Warn(fmt.Sprintf("ltm global-settings traffic-control max-reject-rate %d is the reject rate; sys db tm.maxrejectrate %s is kept, not used", n, db))
		}
	}
	return &settingChange[int64]{get: func() int64 { return h.n }, set: h.set, next: n}, nil
}

// rejectRate is cfg's reject rate, whether traffic-control gave it,
// and the db key's valid value when it is not the default ("" else).
func rejectRate(cfg *objects.Config) (n int64, fromTC bool, db string) {
	d, _ := objects.LookupDBKey(maxRejectRate)
	n, _ = strconv.ParseInt(d.Default, 10, 64)
	if cfg == nil {
		return n, false, ""
	}
	if o := cfg.Get(sysDB, maxRejectRate); o != nil && d.Check(sysDBValue.Str(o)) == nil {
		db = sysDBValue.Str(o)
		n, _ = strconv.ParseInt(db, 10, 64)
		if db == d.Default {
			db = "" // as a fresh system has it: nothing to disagree with
		}
	}
	if o := cfg.Get(ltmTrafficControl, ""); o != nil {
		v, err := strconv.ParseInt(ltmMaxRejectRate.Str(o), 10, 64)
		if err == nil && v >= ltmMaxRejectRate.Min && v <= ltmMaxRejectRate.Max {
			return v, true, db
		}
	}
	return n, false, db
}

// ltm global-settings traffic-control's acted-on row.
var (
	ltmTrafficControl = schema.MustKind("ltm global-settings traffic-control")
	ltmMaxRejectRate  = ltmTrafficControl.MustProp("max-reject-rate")
)

// set gives the plane its rate; the lines of the seconds over it go to
// the ltm log at warning, as tmm logs 011e0001.
func (h *rejectRateHook) set(n int64) {
	h.n = n
	var warn func(string)
	if logs := h.e.logs; logs != nil {
		warn = func(line string) { logs.Log("local0.warning", line) }
	}
	h.p.SetRejectRate(n, warn)
}

// resetToDefault is the word of `modify sys db KEY reset-to-default`.
const resetToDefault = "reset-to-default"

// resetsToDefault reports whether a modify's words ask for a db key's
// default back.
func resetsToDefault(rest []grammar.Node) bool {
	for i := 0; i < len(rest); i++ {
		w, ok := rest[i].(*grammar.Word)
		switch {
		case !ok:
		case w.Text == sysDBValue.Name:
			i++ // value reset-to-default sets a word
		case w.Text == resetToDefault:
			return true
		}
	}
	return false
}

// resetDBKeys is `modify sys db KEY reset-to-default`, as tmsh has it:
// each key named (a glob covers the keys set) loses the value it was
// given, so that it lists, saves and acts as BIG-IP's default again.
// reset-to-default stands alone [M: BIG-IP's answer to it beside a value
// is not known]; a misspelt key is refused as a modify refuses it, and a
// key openltm does not know and nobody set has no default to go back to
// (01020036, as BIG-IP answers a key it lacks).
func resetDBKeys(cfg *objects.Config, olds []*objects.Object, rest []grammar.Node) error {
	if len(rest) != 1 {
		return synErr(rest[0], []string{resetToDefault}, "%s takes no other property", resetToDefault)
	}
	set := map[string]bool{}
	for _, o := range cfg.Of(sysDB) {
		set[o.Name] = true
	}
	for _, o := range olds {
		known, err := objects.CheckDBKey(o.Name)
		if err != nil {
			return err
		}
		if !known && !set[o.Name] {
			return objects.NotFound(sysDB, o.Name)
		}
	}
	for _, o := range olds {
		if set[o.Name] {
			cfg.Delete(o)
		}
	}
	return nil
}

// ltm global-settings general maintenance-mode: BIG-IP stops accepting
// new connections and lets the ones it has finish. openltm does what a
// disabled virtual server does, on every ltm virtual: new clients are
// refused (reset, within the reject rate), flows already up go on.
var (
	ltmGeneral         = schema.MustKind("ltm global-settings general")
	ltmMaintenanceMode = ltmGeneral.MustProp("maintenance-mode")
)

// maintenanceMode reports whether cfg puts the system in maintenance mode.
func maintenanceMode(cfg *objects.Config) bool {
	o := cfg.Get(ltmGeneral, "")
	return o != nil && ltmMaintenanceMode.Str(o) == "enabled"
}
