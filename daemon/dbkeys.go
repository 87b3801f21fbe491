package daemon

import (
	"fmt"

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
