package daemon

import (
	"fmt"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// sys db keys of the reset-cause log: tm.rstcause.log writes a line to
// the ltm log for every reset the dataplane sends; tm.rstcause.pkt, which
// on BIG-IP puts the cause into the reset's payload, is kept only (a
// Linux socket sends its reset without one).
var (
	sysDB       = schema.MustKind("sys db")
	sysDBValue  = sysDB.MustProp("value")
	rstCauseLog = "tm.rstcause.log"
	rstCausePkt = "tm.rstcause.pkt"
)

// dbSwitch is an enable/disable db key's setting: unset reads as its
// default, disable. ok is false for any other word.
func dbSwitch(cfg *objects.Config, key string) (on bool, value string, ok bool) {
	value = "disable"
	if cfg == nil {
		return false, value, true
	}
	if o := cfg.Get(sysDB, key); o != nil {
		if v := sysDBValue.Str(o); v != "" {
			value = v
		}
	}
	switch value {
	case "enable":
		return true, value, true
	case "disable":
		return false, value, true
	}
	return false, value, false
}

// rstCauseHook turns the plane's reset-cause log on and off as
// tm.rstcause.log says, its lines going to the ltm log.
type rstCauseHook struct {
	e  *Engine
	p  *dataplane.Plane
	on bool // what the plane runs
}

// Prepare implements Hook: a value other than enable or disable is
// refused, unless the running configuration or a loaded file already
// had it (then the key reads as disabled, with a warning).
func (h *rstCauseHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	on := false
	for _, key := range []string{rstCauseLog, rstCausePkt} {
		v, value, ok := dbSwitch(cfg, key)
		if !ok {
			_, was, _ := dbSwitch(old, key)
			if !opts.Lenient && (old == nil || was != value) {
				return nil, &objects.ConfigError{Code: "01070734", Msg: fmt.Sprintf("Configuration error: DB validation exception, invalid value (%s) for db variable (%s): expected enable or disable", value, key)}
			}
			if opts.Warn != nil {
				opts.Warn(fmt.Sprintf("sys db %s value %s is neither enable nor disable; read as disable", key, value))
			}
			continue
		}
		if key == rstCauseLog {
			on = v
		} else if v && opts.Warn != nil {
			if _, was, _ := dbSwitch(old, key); old == nil || was != "enable" {
				opts.Warn("sys db tm.rstcause.pkt: a reset sent through a Linux socket carries no payload; the causes are in the ltm log with tm.rstcause.log enabled")
			}
		}
	}
	return &settingChange[bool]{get: func() bool { return h.on }, set: h.set, next: on}, nil
}

// set turns the plane's log on (each line to the ltm log, at info, as
// BIG-IP's tmm logs 01230140) or off.
func (h *rstCauseHook) set(on bool) {
	h.on = on
	if !on || h.e.logs == nil {
		h.p.SetResetCauseLog(nil)
		return
	}
	logs := h.e.logs
	h.p.SetResetCauseLog(func(line string) { logs.Log("local0.info", line) })
}

// settingChange is one commit's value of a setting a hook holds (a sys db
// key's): put in service at Commit, the value before it restored if the
// commit is aborted after that.
type settingChange[T any] struct {
	get       func() T
	set       func(T)
	next, was T
	done      bool
}

// Commit implements Change.
func (c *settingChange[T]) Commit() error {
	c.was, c.done = c.get(), true
	c.set(c.next)
	return nil
}

// Abort implements Change.
func (c *settingChange[T]) Abort() {
	if c.done {
		c.set(c.was)
	}
}
