package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// ruleCache compiles each rule body once: a commit recompiles only the
// rules whose text changed, and the dataplane gets the compiled form.
type ruleCache struct {
	mu sync.Mutex
	m  map[string]*rules.Rule // name + "\x00" + body
	// rt is what the compiled rules run with.
	rt ruleRuntime
}

func (c *ruleCache) compile(name, body string) (*rules.Rule, error) {
	key := name + "\x00" + body
	c.mu.Lock()
	r := c.m[key]
	c.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := rules.Compile(name, body)
	if err != nil {
		return nil, &objects.ConfigError{Code: "01070151", Msg: "Rule [" + name + "] error: " + err.Error()}
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*rules.Rule{}
	}
	c.m[key] = r
	c.mu.Unlock()
	return r, nil
}

// prune drops compiled rules the configuration no longer has.
func (c *ruleCache) prune(cfg *objects.Config, k *objects.Kind) {
	keep := map[string]bool{}
	for _, o := range cfg.Of(k) {
		keep[o.Name+"\x00"+ruleDefinition.Str(o)] = true
	}
	c.mu.Lock()
	for key := range c.m {
		if !keep[key] {
			delete(c.m, key)
		}
	}
	c.mu.Unlock()
}

// rulesHook refuses a commit whose iRules do not compile, naming the rule,
// line and column, as BIG-IP refuses them when they are saved.
type rulesHook struct{ e *Engine }

// Check implements Hook. A rule that does not compile is refused, unless
// it is loaded from a file (Lenient), where it is kept with a warning and
// the virtual servers using it carry no traffic; a rule that already failed
// in the running configuration does not block unrelated changes.
func (h rulesHook) Check(old, cfg *objects.Config, opts CommitOptions) error {
	k := h.e.schema.Kind("ltm rule")
	for _, o := range cfg.Of(k) {
		if _, err := h.e.rules.compile(o.Name, ruleDefinition.Str(o)); err != nil {
			if prev := old.Get(k, o.Name); prev != nil && ruleDefinition.Str(prev) == ruleDefinition.Str(o) {
				continue
			}
			if !opts.Lenient {
				return err
			}
			if opts.Warn != nil {
				opts.Warn(err.Error() + "; kept, and virtual servers using it carry no traffic until it compiles")
			}
		}
	}
	return nil
}

// Apply implements Hook.
func (h rulesHook) Apply(_, cfg *objects.Config) error {
	h.e.rules.prune(cfg, h.e.schema.Kind("ltm rule"))
	return nil
}

// ruleRuntime is what the running iRules share across virtual servers: one
// Env (the log, the data groups of the running configuration, the session
// table and the static:: variables) and one program per distinct rule
// list, so that a commit that does not touch a virtual's rules keeps its
// program and does not run RULE_INIT again.
type ruleRuntime struct {
	mu    sync.Mutex
	env   *rules.Env
	dgs   atomic.Pointer[map[string]*rules.DataGroup]
	progs map[string]*rules.Program
}

// environment returns the shared Env, made on first use.
func (rt *ruleRuntime) environment(log *slog.Logger) *rules.Env {
	if rt.env != nil {
		return rt.env
	}
	empty := map[string]*rules.DataGroup{}
	rt.dgs.Store(&empty)
	rt.env = &rules.Env{
		Log:   func(facility, line string) { logRule(log, facility, line) },
		Table: rules.NewTable(), Statics: rules.NewStatics(),
		DataGroup: func(name string) (*rules.DataGroup, bool) {
			m := *rt.dgs.Load()
			if dg, ok := m[name]; ok {
				return dg, true
			}
			if !strings.HasPrefix(name, "/") {
				dg, ok := m["/Common/"+name]
				return dg, ok
			}
			return nil, false
		},
	}
	return rt.env
}

// logRule writes a rule's log line at the level its facility names
// (local0.err, local0.warning, local0.debug; anything else is info).
func logRule(log *slog.Logger, facility, line string) {
	lvl := slog.LevelInfo
	_, sev, _ := strings.Cut(facility, ".")
	switch sev {
	case "emerg", "alert", "crit", "err", "error":
		lvl = slog.LevelError
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "debug":
		lvl = slog.LevelDebug
	}
	log.Log(context.Background(), lvl, line)
}

// program returns the program for a rule list, building it (and running
// its RULE_INIT) when the list or a rule's text is new.
func (rt *ruleRuntime) program(log *slog.Logger, key string, list []*rules.Rule) *rules.Program {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if p := rt.progs[key]; p != nil {
		return p
	}
	p := rules.NewProgram(rt.environment(log), list...)
	// A RULE_INIT failure is logged by the engine; the rules still run, as
	// on BIG-IP, with whatever RULE_INIT managed to set.
	p.Init()
	if rt.progs == nil {
		rt.progs = map[string]*rules.Program{}
	}
	rt.progs[key] = p
	return p
}

// keep drops the programs the running configuration no longer uses
// (flows that still run one keep it alive).
func (rt *ruleRuntime) keep(used map[string]bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for k := range rt.progs {
		if !used[k] {
			delete(rt.progs, k)
		}
	}
}

// setDataGroups makes the configuration's `ltm data-group internal`
// objects what `class` commands see, from the next event on.
func (rt *ruleRuntime) setDataGroups(log *slog.Logger, s *objects.Schema, cfg *objects.Config) {
	rt.mu.Lock()
	rt.environment(log)
	rt.mu.Unlock()
	m := dataGroups(log, s, cfg)
	rt.dgs.Store(&m)
}

// dataGroups reads the internal data groups; one whose keys do not fit its
// type is left out with a log line (class commands then say it is missing).
func dataGroups(log *slog.Logger, s *objects.Schema, cfg *objects.Config) map[string]*rules.DataGroup {
	out := map[string]*rules.DataGroup{}
	for _, o := range cfg.Of(s.Kind("ltm data-group internal")) {
		typ := rules.DGString
		switch dataGroupType.Effective(cfg, o) {
		case "ip":
			typ = rules.DGAddress
		case "integer":
			typ = rules.DGInteger
		}
		var recs []rules.Record
		if v := dataGroupRecords.Get(o); v != nil {
			for _, it := range v.Items {
				r := rules.Record{Key: it.Name}
				if d := dataGroupRecordData.In(it); d != nil {
					r.Value = d.Str
				}
				recs = append(recs, r)
			}
		}
		dg, err := rules.NewDataGroup(o.Name, typ, recs)
		if err != nil {
			log.Warn("data group not usable by rules", "data-group", o.Name, "err", err)
			continue
		}
		out[o.Name] = dg
	}
	return out
}

// ruleBinder attaches rules to virtual servers during one translation.
// With run false it only checks that every rule exists and compiles (a
// commit check must not run RULE_INIT); with run true it builds the
// programs the dataplane runs. Without an engine (Translate) rules are
// compiled and built afresh, with an Env of their own.
type ruleBinder struct {
	e    *Engine
	run  bool
	used map[string]bool
	env  *rules.Env // standalone only
}

// attach returns the dataplane hook for a virtual's rule list.
func (b *ruleBinder) attach(s *objects.Schema, cfg *objects.Config, names []string) (dataplane.Rules, error) {
	list := make([]*rules.Rule, 0, len(names))
	var key strings.Builder
	for _, n := range names {
		o := cfg.Lookup(s, specRule, n)
		if o == nil {
			return nil, fmt.Errorf("rule %s does not exist", n)
		}
		def := ruleDefinition.Str(o)
		var r *rules.Rule
		var err error
		if b.e != nil {
			r, err = b.e.rules.compile(o.Name, def)
		} else {
			r, err = rules.Compile(o.Name, def)
		}
		if err != nil {
			return nil, fmt.Errorf("rule %s does not compile", o.Name)
		}
		list = append(list, r)
		key.WriteString(o.Name + "\x00" + def + "\x01")
	}
	if !b.run {
		return nil, nil
	}
	if b.e == nil {
		if b.env == nil {
			b.env = &rules.Env{Log: func(f, l string) { logRule(slog.Default(), f, l) }}
		}
		p := rules.NewProgram(b.env, list...)
		p.Init()
		return dataplane.NewRules(p), nil
	}
	k := key.String()
	b.used[k] = true
	return dataplane.NewRules(b.e.rules.rt.program(b.e.log, k, list)), nil
}

// translate is Translate with the engine's compiled rules: run false for a
// commit check (rules must exist and compile, nothing runs), run true for
// the configuration the dataplane is about to run (programs are built or
// kept, RULE_INIT runs for new ones, data groups are refreshed).
func (e *Engine) translate(cfg *objects.Config, run bool) (*dataplane.Config, []string) {
	b := &ruleBinder{e: e, run: run, used: map[string]bool{}}
	if run {
		e.rules.rt.setDataGroups(e.log, e.schema, cfg)
	}
	dc, skipped := translate(e.schema, cfg, b)
	if run {
		e.rules.rt.keep(b.used)
	}
	return dc, skipped
}
