// Package daemon is ltmd's engine: the one owner of every change. It runs
// tmsh statements for sessions, commits each change as a new configuration
// generation in the store, applies it to the dataplane, and answers shows.
// control's server, cmd/ltmd and tests all call it the same way.
package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/objects/store"
)

// Options configure an Engine.
type Options struct {
	// StateDir holds the bbolt store (config.db) and saved config files.
	StateDir string
	// Logger receives BIG-IP-worded log lines (monitor status, iRule errors).
	Logger *slog.Logger
	// Hostname shown in prompts; "" means the configured sys global-settings
	// hostname.
	Hostname string
	// BusyPoll is the dataplane's busy-poll time (dataplane.Options); 0
	// turns busy polling off.
	BusyPoll time.Duration
}

// DefaultBusyPoll is what ltmd and the shell's embedded daemon run with.
const DefaultBusyPoll = dataplane.DefaultBusyPoll

// Engine is a running ltmd. It is safe for concurrent use by many sessions.
type Engine struct {
	opts   Options
	schema *objects.Schema
	store  *store.Store
	log    *slog.Logger

	mu  sync.Mutex // serialises commits
	cur atomic.Pointer[state]

	hooks []Hook

	dmu   sync.Mutex // guards the dangling-reference memo below
	dcfg  *objects.Config
	dkeys map[string]bool
	rules ruleCache

	runtime map[string]RuntimeFunc // RegisterRuntime's commands, by "verb target"
}

// state is one committed generation as the engine holds it.
type state struct {
	gen  uint64
	cfg  *objects.Config
	text string // cfg as saved text, to tell a change that changes nothing
}

// Hook lets the runtime (the dataplane) take part in commits without the
// engine knowing its internals: Check may refuse a configuration before it
// is stored; Apply brings the runtime to a stored one.
type Hook interface {
	Check(old, cfg *objects.Config, opts CommitOptions) error
	Apply(old, new *objects.Config) error
}

// ConfigFile is the name `save sys config` writes in the state directory.
const ConfigFile = "bigip.conf"

// Open loads the last committed generation from StateDir (creating it on
// first start).
func Open(opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StateDir == "" {
		return nil, errors.New("ltmd needs a state directory")
	}
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(opts.StateDir, "config.db"))
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, schema: objects.Default, store: st, log: opts.Logger}
	cfg := e.schema.Builtins()
	var gen uint64
	g, ok, err := st.Latest()
	if err != nil {
		st.Close()
		return nil, err
	}
	if ok {
		objs, err := e.schema.ReadConfig(fmt.Sprintf("generation %d", g.ID), []byte(g.Config), nil)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("restoring generation %d: %w", g.ID, err)
		}
		for _, o := range objs {
			cfg.Put(o)
		}
		if err := cfg.Complete(e.schema); err != nil {
			st.Close()
			return nil, fmt.Errorf("restoring generation %d: %w", g.ID, err)
		}
		gen = g.ID
		e.log.Info("configuration restored", "generation", g.ID, "objects", cfg.Len())
	}
	e.cur.Store(&state{gen: gen, cfg: cfg, text: cfg.Text()})
	e.hooks = append(e.hooks, rulesHook{e})
	return e, nil
}

// AddHook registers a runtime that follows every commit, and brings it to
// the current configuration at once.
func (e *Engine) AddHook(h Hook) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := h.Apply(nil, e.cur.Load().cfg); err != nil {
		return err
	}
	e.hooks = append(e.hooks, h)
	return nil
}

// Close closes the store.
func (e *Engine) Close() error {
	return e.store.Close()
}

// Config returns the running configuration (never modify it).
func (e *Engine) Config() *objects.Config { return e.cur.Load().cfg }

// Generation is the id of the running configuration's generation.
func (e *Engine) Generation() uint64 { return e.cur.Load().gen }

// Schema is the schema the engine reads commands with.
func (e *Engine) Schema() *objects.Schema { return e.schema }

// Logger is where runtime events are logged.
func (e *Engine) Logger() *slog.Logger { return e.log }

// StateDir is where the engine keeps its files.
func (e *Engine) StateDir() string { return e.opts.StateDir }

// Hostname is the name shown in prompts.
func (e *Engine) Hostname() string {
	if e.opts.Hostname != "" {
		return e.opts.Hostname
	}
	if gs := e.Config().Get(sysGlobal, ""); gs != nil {
		if h := sysGlobalHostname.Str(gs); h != "" {
			return h
		}
	}
	return "openltm"
}

// Commit validates cfg (built from the running configuration), stores it as
// a new generation and applies it. base is the generation cfg was derived
// from: when another session committed since, the change is refused rather
// than silently overwriting it. On any error nothing changes.
func (e *Engine) Commit(base uint64, user, summary string, cfg *objects.Config, opts CommitOptions) (uint64, error) {
	if err := e.check(cfg); err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.cur.Load()
	if old.gen != base {
		return 0, objects.Invalid("the configuration changed (generation %d is now running, the change was made against %d); run the command again", old.gen, base)
	}
	if err := e.dangling(old.cfg, cfg, opts); err != nil {
		return 0, err
	}
	for _, h := range e.hooks {
		if err := h.Check(old.cfg, cfg, opts); err != nil {
			return 0, err
		}
	}
	text := cfg.Text()
	if text == old.text {
		// Nothing changed (a modify to the values already set, a load of
		// the running configuration): no new generation.
		return old.gen, nil
	}
	// Apply before storing: what cannot run (an address that cannot be
	// bound) is refused whole, and the runtime goes back if storing fails.
	for i, h := range e.hooks {
		if err := h.Apply(old.cfg, cfg); err != nil {
			for _, prev := range e.hooks[:i] {
				prev.Apply(cfg, old.cfg)
			}
			return 0, err
		}
	}
	id, err := e.store.Commit(store.Generation{Time: time.Now(), User: user, Summary: summary, Config: text})
	if err != nil {
		for _, h := range e.hooks {
			h.Apply(cfg, old.cfg)
		}
		return 0, fmt.Errorf("storing the configuration: %w", err)
	}
	e.cur.Store(&state{gen: id, cfg: cfg, text: text})
	return id, nil
}

// CommitOptions adjust how strict a commit is.
type CommitOptions struct {
	// Lenient keeps references to objects that do not exist, warning about
	// each; loading part of a bigger configuration needs it. Without it a
	// change may not add such a reference (it may keep ones already there).
	Lenient bool
	// Warn receives the warnings.
	Warn func(string)
}

// check completes and validates a configuration about to be committed.
func (e *Engine) check(cfg *objects.Config) error {
	if err := cfg.Complete(e.schema); err != nil {
		return err
	}
	return cfg.Validate(e.schema)
}

// checkHooks asks every runtime whether cfg can run, without applying it.
func (e *Engine) checkHooks(old, cfg *objects.Config, opts CommitOptions) error {
	e.mu.Lock()
	hooks := append([]Hook(nil), e.hooks...)
	e.mu.Unlock()
	for _, h := range hooks {
		if err := h.Check(old, cfg, opts); err != nil {
			return err
		}
	}
	return nil
}

// dangling refuses new references to missing objects (or warns of them).
func (e *Engine) dangling(old, cfg *objects.Config, opts CommitOptions) error {
	had := e.danglingKeys(old)
	now := map[string]bool{}
	var first error
	for _, d := range cfg.Dangling(e.schema) {
		now[d.Key()] = true
		if had[d.Key()] || first != nil {
			continue
		}
		if !opts.Lenient {
			first = d.Error(e.schema)
			continue
		}
		if opts.Warn != nil {
			opts.Warn(d.Warning(e.schema))
		}
	}
	if first != nil {
		return first
	}
	e.dmu.Lock()
	e.dcfg, e.dkeys = cfg, now // cfg is likely the next commit's old
	e.dmu.Unlock()
	return nil
}

// danglingKeys are cfg's dangling references, remembered for the last
// configuration checked: a commit's old configuration is usually the one
// the previous commit checked, so a commit walks references once, not twice.
func (e *Engine) danglingKeys(cfg *objects.Config) map[string]bool {
	if cfg == nil {
		return nil
	}
	e.dmu.Lock()
	if e.dcfg == cfg {
		keys := e.dkeys
		e.dmu.Unlock()
		return keys
	}
	e.dmu.Unlock()
	keys := map[string]bool{}
	for _, d := range cfg.Dangling(e.schema) {
		keys[d.Key()] = true
	}
	return keys
}

// NewSession implements control.Backend.
func (e *Engine) NewSession(user string) control.Session {
	if user == "" {
		user = "root"
	}
	return &Session{e: e, user: user, folder: "/Common"}
}

// parse reads one statement for a session.
func parse(line string, module []string) (*grammar.Statement, error) {
	if strings.TrimSpace(line) == "" {
		return nil, nil
	}
	f, err := grammar.ParseWith("", []byte(line), grammar.Options{ModulePath: module})
	if err != nil {
		return nil, err
	}
	switch len(f.Statements) {
	case 0:
		return nil, nil
	case 1:
		return f.Statements[0], nil
	}
	return nil, &grammar.Error{Pos: f.Statements[1].Pos, Msg: "more than one command on one line", Expected: "one command per request"}
}
