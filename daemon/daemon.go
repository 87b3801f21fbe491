// Package daemon is ltmd's engine: the one owner of every change. It runs
// tmsh statements for sessions, commits each change as a new configuration
// generation in the store, and answers shows. The runtimes that follow the
// configuration (the dataplane, the GSLB, the iRules) take part in each
// commit as hooks (hook_plane.go, hook_gslb.go, hook_rules.go): each
// translates and compiles the new configuration once, in Prepare, and the
// engine puts every prepared change in service, or none. control's server,
// cmd/ltmd and tests all call it the same way.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/ilx"
	"github.com/openltm/openltm/dataplane/syslog"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/hoststat"
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
	// Cluster, when set, makes the device a member of the device group
	// that lists it (hook_cluster.go); nil runs it standalone.
	Cluster *ClusterOptions
	// MetricsAddress, when set, serves Prometheus metrics there.
	MetricsAddress string
	// GeoIPFiles are MaxMind DB files loaded at start for GTM topology
	// and whereis, besides every *.mmdb in StateDir/geoip (geoip.go).
	GeoIPFiles []string
	// RootHints are the root servers a net dns-resolver resolves from
	// the names none of its forward zones holds, as unbound's root-hints
	// file sets them on BIG-IP; empty: the Internet's (IANA's hints).
	RootHints []netip.AddrPort
	// OwnNamespace says ltmd owns its network namespace (ltmd
	// --own-namespace): no other program serves or connects there, so
	// a wildcard virtual (`0.0.0.0:any mask any`, `0.0.0.0:80 mask
	// any`), which takes every connection of the namespace to its port,
	// is served; without it such a virtual is kept with a warning
	// (translate_anyport.go).
	OwnNamespace bool
}

// DefaultBusyPoll is what ltmd and the shell's embedded daemon run with.
const DefaultBusyPoll = dataplane.DefaultBusyPoll

// Engine is a running ltmd. It is safe for concurrent use by many sessions.
type Engine struct {
	opts   Options
	schema *objects.Schema
	store  *store.Store
	log    *slog.Logger
	// gtmLog is log filtered at sys db log.gtm.level (loglevels.go).
	gtmLog   *slog.Logger
	gtmLevel slog.LevelVar
	gtmOwn   atomic.Bool

	mu  sync.Mutex // serialises commits
	cur atomic.Pointer[state]

	// ilx runs the ilx plugins' Node.js extensions (ilx.go), and
	// ilxApplied is what it runs.
	ilx        *ilx.Manager
	ilxApplied ilxApplied

	hooks []Hook

	rules ruleCache
	// caches are the web-acceleration profiles' caches, kept across
	// commits (translate_cache.go).
	caches webCaches
	// h2stats are the http2 profiles' counters (translate_http2.go).
	h2stats http2Stats
	// h3stats are the http3 and quic profiles' counters (translate_http3.go).
	h3stats http3Stats
	// files caches the content of stored sys files by checksum.
	files fileCache
	// dgs keeps the records read from data-group files.
	dgs dgCache
	// hsl sends rules' high-speed log messages (with a dataplane).
	hsl *hsl.Hub
	// logs is where rules' log lines go: STATE-DIR/log/ltm and the sys
	// syslog remote servers.
	logs *syslog.Dest

	runtime map[string]RuntimeFunc // RegisterRuntime's commands, by "verb target"

	group groupPath // the device group commits go through; nil standalone
	// cluster is the device group membership (nil standalone), float the
	// traffic groups it is active for (nil: every address is served).
	cluster atomic.Pointer[clusterHook]
	float   atomic.Pointer[floatState]
	// cpuLoad is ltmd's own processor load, averaged for the iRule
	// command cpu usage (hook_rules_ha.go).
	cpuLoad hoststat.LoadAverages
	// started is when the engine opened: a standalone device has been
	// active since (show sys failover).
	started time.Time
	// host reads the host for show sys cpu, memory, performance and the
	// like, and samples it for their averages (shows_host.go).
	host *hostStats
	// vault is the master key the configuration's secrets are sealed
	// with (secure_vault.go).
	vault secretVault
	// minUp fires pools' min-up-members-action (minup.go).
	minUp *minUpWatch
	// sflow is the sFlow agent and the http virtuals' samplers
	// (hook_sflow.go).
	sflow sflowRuntime
	// scripts are the compiled cli and iCall scripts and the running
	// iCall handlers (icall.go).
	scripts *scripts
}

// state is one committed generation as the engine holds it.
type state struct {
	gen  uint64
	cfg  *objects.Config
	text string // cfg as saved text, to tell a change that changes nothing
	// dangling are cfg's dangling references (Dangling keys): the next
	// change may keep them, and need not walk cfg again to know them.
	dangling map[string]bool
}

// Hook lets a runtime (the dataplane, the GSLB, the rules) take part in
// commits without the engine knowing its internals. A commit runs in two
// steps, so that the costly work is done once and nothing is half-applied:
// Prepare does everything that can fail without touching the runtime
// (translating and compiling new, refusing what cannot run) and returns
// the result as a Change; once every hook has prepared, the engine commits
// each Change, stores the generation, and aborts them all if any step
// fails.
type Hook interface {
	// Prepare checks that new can run and readies it. old is the running
	// configuration (nil when the hook is added), against which changes
	// are judged: what old already had is not refused again. Prepare must
	// not change what the runtime serves, and may run concurrently with
	// another commit's Change (a verify does).
	Prepare(old, new *objects.Config, opts CommitOptions) (Change, error)
}

// Change is one hook's prepared configuration, ready to be put in service.
type Change interface {
	// Commit puts the prepared configuration in service. On error the
	// runtime is left as it was.
	Commit() error
	// Abort ends the change: before Commit (or after a failed one) it
	// discards what Prepare made; after a successful Commit it brings the
	// runtime back to the configuration it ran before.
	Abort()
}

// abort ends changes in reverse order, so that what was committed last is
// undone first.
func abort(changes []Change) {
	for i := len(changes) - 1; i >= 0; i-- {
		changes[i].Abort()
	}
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
	e := &Engine{opts: opts, schema: objects.Default, store: st, log: opts.Logger, started: time.Now()}
	e.rules.rt.float, e.rules.rt.cpu = &e.float, &e.cpuLoad // HA::status, cpu usage (hook_rules_ha.go)
	e.gtmLog = slog.New(levelHandler{h: e.log.Handler(), min: &e.gtmLevel, own: &e.gtmOwn})
	cfg := e.schema.Builtins()
	var gen uint64
	g, ok, err := st.Latest()
	if err != nil {
		st.Close()
		return nil, err
	}
	if ok {
		// What an earlier openltm stored is restored, even where this
		// version's vocabulary would refuse it in a new file.
		objs, _, err := e.schema.ReadStored(fmt.Sprintf("generation %d", g.ID), []byte(g.Config))
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
	if err := e.openVault(cfg); err != nil {
		st.Close()
		return nil, fmt.Errorf("master key: %w", err)
	}
	e.cur.Store(&state{gen: gen, cfg: cfg, text: cfg.Text(), dangling: danglingKeys(e.schema, cfg)})
	e.RegisterRuntime(selfCommands(e))     // show net self (cluster_self.go)
	e.RegisterRuntime(ruleCommands(e))     // show ltm rule, show gtm rule (shows_rules.go)
	e.RegisterRuntime(sysCommands(e))      // show sys version, show sys failover (shows_sys.go)
	e.RegisterRuntime(sysStateCommands(e)) // show sys mcp-state, ready, log (shows_sys_state.go)
	e.RegisterRuntime(hostCommands(e))     // show sys cpu, memory, performance, show net interface (shows_host.go)
	e.RegisterRuntime(geoipCommands(e))    // show sys geoip, run sys geoip (geoip.go)
	e.RegisterRuntime(cipherCommands(e))   // show ltm cipher group (shows_cipher.go)
	e.RegisterRuntime(authCommands(e))     // show ltm auth profile (shows_auth.go)
	e.RegisterRuntime(icallCommands(e))    // show sys icall handler (icall.go)
	e.RegisterRuntime(haGroupCommands(e))  // show sys ha-group (cluster_hagroup.go)

	// show sys provision (provision.go), show cm device (cm_device.go)
	e.RegisterRuntime([]RuntimeCommand{showProvision(e), showCMDevice(e)})
	if err := e.loadGeoIP(); err != nil {
		st.Close()
		return nil, err
	}
	if err := e.openLogs(); err != nil {
		st.Close()
		return nil, err
	}
	e.pruneFiles()
	e.scripts = newScripts(e)
	e.hooks = append(e.hooks, rulesHook{e})
	e.hooks = append(e.hooks, dbHook{}) // sys db values (dbkeys.go)
	if err := e.AddHook(syslogHook{e}); err != nil {
		e.logs.Close()
		st.Close()
		return nil, err
	}
	if err := e.startILX(); err != nil { // ilx.go
		e.logs.Close()
		st.Close()
		return nil, err
	}
	// cli and iCall scripts; the handlers start (icall.go).
	if err := e.AddHook(scriptsHook{e}); err != nil {
		if e.ilx != nil {
			e.ilx.Close()
		}
		e.logs.Close()
		st.Close()
		return nil, err
	}
	e.host.start()
	return e, nil
}

// AddHook registers a runtime that follows every commit, and brings it to
// the current configuration at once. The configuration is already stored,
// so what it holds that cannot run is left out (Lenient) rather than
// refused.
func (e *Engine) AddHook(h Hook) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := h.Prepare(nil, e.reveal(e.cur.Load().cfg)[0], CommitOptions{Lenient: true})
	if err != nil {
		return err
	}
	if err := c.Commit(); err != nil {
		c.Abort()
		return err
	}
	e.hooks = append(e.hooks, h)
	return nil
}

// Close closes the store.
func (e *Engine) Close() error {
	e.scripts.close()
	e.host.stop()
	if e.minUp != nil {
		e.minUp.stop()
	}
	if e.hsl != nil {
		e.hsl.Close()
	}
	e.rules.rt.hsl.closeIPFIX()
	e.closeSFlow() // hook_sflow.go
	if e.ilx != nil {
		e.ilx.Close()
	}
	if e.logs != nil {
		e.logs.Close()
	}
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

// Change applies one command to the configuration running when its turn
// comes, as mcpd does: commits are put in order, and build runs under the
// commit lock against a copy of the running configuration, so two admins (or
// two scripts) changing different objects both succeed. Only a real
// conflict fails, in build itself: the object a modify names was deleted,
// a create finds the name taken. The result is validated, prepared in every
// hook, put in service and stored as one generation; on any error nothing
// changes. A ctx cancelled before the change is put in service stops it
// with nothing changed; once the change is in service it completes, and
// the caller learns the generation: 0 when the command changed nothing.
func (e *Engine) Change(ctx context.Context, user, summary string, opts CommitOptions, build func(cfg *objects.Config) error) (uint64, error) {
	return e.Replace(ctx, user, summary, opts, func(running *objects.Config) (*objects.Config, error) {
		cfg := running.Clone()
		return cfg, build(cfg)
	})
}

// Replace is Change for commands that build a whole new configuration
// from the running one (load without merge, a rollback): build must not
// modify running.
func (e *Engine) Replace(ctx context.Context, user, summary string, opts CommitOptions, build func(running *objects.Config) (*objects.Config, error)) (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return 0, errInterrupted
		}
		old := e.cur.Load()
		cfg, err := build(old.cfg)
		if err != nil {
			return 0, err
		}
		gen, err := e.commitLocked(ctx, old, user, summary, cfg, opts)
		if errors.Is(err, errConflict) && try < maxCatchUps {
			// Another device of the group committed first: take its
			// change and build this one again on top of it.
			if ok, cerr := e.group.catchUp(ctx); cerr != nil {
				return 0, cerr
			} else if ok {
				continue
			}
		}
		if gen == old.gen {
			gen = 0
		}
		return gen, err
	}
}

// errInterrupted is a change stopped before it was applied.
var errInterrupted = objects.Invalid("interrupted; nothing was changed")

// Commit validates cfg (built from generation base of the running
// configuration), stores it as a new generation and applies it. When
// another session committed since base, the change is refused rather than
// silently overwriting it: Commit is for changes that must not be applied
// to anything but what their author saw (Change is for commands). On any
// error nothing changes.
func (e *Engine) Commit(base uint64, user, summary string, cfg *objects.Config, opts CommitOptions) (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.cur.Load()
	if old.gen != base {
		return 0, objects.Invalid("the configuration changed (generation %d is now running, the change was made against %d); run the command again", old.gen, base)
	}
	return e.commitLocked(context.Background(), old, user, summary, cfg, opts)
}

// commitLocked validates, prepares, applies and stores cfg over old; e.mu
// is held.
func (e *Engine) commitLocked(ctx context.Context, old *state, user, summary string, cfg *objects.Config, opts CommitOptions) (uint64, error) {
	if err := e.importFiles(old.cfg, cfg, user); err != nil {
		return 0, err
	}
	objects.CompleteVirtualAddresses(e.schema, old.cfg, cfg)
	objects.CompleteSNATTranslations(e.schema, cfg)
	objects.CompleteTrafficGroups(e.schema, old.cfg, cfg)
	if err := e.check(cfg); err != nil {
		return 0, err
	}
	dangling, err := e.newDangling(old, cfg, opts)
	if err != nil {
		return 0, err
	}
	text := cfg.Text()
	if text == old.text {
		// Nothing changed (a modify to the values already set, a load of
		// the running configuration): no new generation. What runs now
		// passed every hook when it was committed.
		return old.gen, nil
	}
	clear := e.reveal(old.cfg, cfg)
	changes, err := prepare(e.hooks, clear[0], clear[1], opts)
	if err != nil {
		return 0, err
	}
	if ctx.Err() != nil {
		// The last moment a change can be stopped with nothing applied.
		abort(changes)
		return 0, errInterrupted
	}
	// Put in service before storing: what cannot run (an address that
	// cannot be bound) is refused whole, and the runtime goes back if
	// storing fails.
	for _, c := range changes {
		if err := c.Commit(); err != nil {
			abort(changes)
			return 0, err
		}
	}
	if e.group != nil && !opts.fromGroup {
		if err := e.group.publish(context.WithoutCancel(ctx), user, summary, old.cfg, old.text, cfg, text); err != nil {
			abort(changes)
			return 0, err
		}
	}
	id, err := e.store.Commit(store.Generation{Time: time.Now(), User: user, Summary: summary, Config: text})
	if err != nil {
		abort(changes)
		return 0, fmt.Errorf("storing the configuration: %w", err)
	}
	e.cur.Store(&state{gen: id, cfg: cfg, text: text, dangling: dangling})
	return id, nil
}

// prepare prepares cfg in every hook, in order; on the first refusal it
// discards what the others prepared.
func prepare(hooks []Hook, old, cfg *objects.Config, opts CommitOptions) ([]Change, error) {
	changes := make([]Change, 0, len(hooks))
	for _, h := range hooks {
		c, err := h.Prepare(old, cfg, opts)
		if err != nil {
			abort(changes)
			return nil, err
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// CommitOptions adjust how strict a commit is.
type CommitOptions struct {
	// Lenient keeps references to objects that do not exist, warning about
	// each; loading part of a bigger configuration needs it. Without it a
	// change may not add such a reference (it may keep ones already there).
	Lenient bool
	// Warn receives the warnings.
	Warn func(string)

	// fromGroup marks a configuration the device group committed: it is
	// applied and stored, not published again.
	fromGroup bool
}

// check completes and validates a configuration about to be committed,
// hashes auth users' passwords and seals its secrets typed in clear
// (secure_vault.go): what a commit stores and what a verify judges are
// the same.
func (e *Engine) check(cfg *objects.Config) error {
	if err := cfg.Complete(e.schema); err != nil {
		return err
	}
	if err := cfg.Validate(e.schema); err != nil {
		return err
	}
	if err := hashUserPasswords(e.schema, cfg); err != nil { // auth_users.go
		return err
	}
	return e.seal(cfg)
}

// checkHooks asks every runtime whether cfg can run, without applying it:
// each prepares it, and the change is dropped.
func (e *Engine) checkHooks(old, cfg *objects.Config, opts CommitOptions) error {
	e.mu.Lock()
	hooks := append([]Hook(nil), e.hooks...)
	e.mu.Unlock()
	clear := e.reveal(old, cfg)
	changes, err := prepare(hooks, clear[0], clear[1], opts)
	if err != nil {
		return err
	}
	abort(changes)
	return nil
}

// dangling refuses new references to missing objects (or warns of them).
func (e *Engine) dangling(old, cfg *objects.Config, opts CommitOptions) error {
	cur := e.cur.Load()
	if cur.cfg != old {
		cur = &state{cfg: old, dangling: danglingKeys(e.schema, old)}
	}
	_, err := e.newDangling(cur, cfg, opts)
	return err
}

// newDangling checks cfg's dangling references against those of the
// running generation old, and returns them for the generation cfg becomes.
func (e *Engine) newDangling(old *state, cfg *objects.Config, opts CommitOptions) (map[string]bool, error) {
	now := map[string]bool{}
	var first error
	for _, d := range cfg.Dangling(e.schema) {
		now[d.Key()] = true
		if old.dangling[d.Key()] || first != nil {
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
		return nil, first
	}
	return now, nil
}

// danglingKeys are cfg's dangling references (none for a nil cfg).
func danglingKeys(s *objects.Schema, cfg *objects.Config) map[string]bool {
	keys := map[string]bool{}
	if cfg == nil {
		return keys
	}
	for _, d := range cfg.Dangling(s) {
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
