package daemon

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// RuntimeFunc answers one runtime command (show, reset-stats, delete) for
// the objects a session named. names are full paths ("" = all); opts are
// the option words that followed (raw, members, all-properties, filters).
type RuntimeFunc func(ctx context.Context, s *Session, names []string, opts []string, w io.Writer) error

// RuntimeCommand is one command a runtime (the dataplane, the GSLB) answers
// from its live state rather than from the configuration: `Verb Target`,
// e.g. show ltm pool, reset-stats ltm virtual, delete sys connection.
type RuntimeCommand struct {
	Verb   string // show, reset-stats or delete
	Target string // a kind key (ltm pool) or a runtimeTargets key (sys connection)
	Run    RuntimeFunc
}

// runtimeVerbs are the verbs a runtime may answer.
var runtimeVerbs = map[string]bool{"show": true, "reset-stats": true, "delete": true, "run": true}

// RegisterRuntime installs a runtime's table of commands, replacing any
// earlier answer to the same verb and target. A verb or target the shell
// cannot reach is a mistake in the table and panics, as a misspelt schema
// handle does.
func (e *Engine) RegisterRuntime(cmds []RuntimeCommand) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.runtime == nil {
		e.runtime = map[string]RuntimeFunc{}
	}
	for _, c := range cmds {
		if !runtimeVerbs[c.Verb] || c.Run == nil || (e.schema.Kind(c.Target) == nil && runtimeTarget(c.Target) == nil) {
			panic(fmt.Sprintf("daemon: runtime command %q %q cannot be reached", c.Verb, c.Target))
		}
		e.runtime[c.Verb+" "+c.Target] = c.Run
	}
}

// runtimeTargetsOf lists what verb can be given, for error messages: every
// target a runtime answers it for, and the history.
func (e *Engine) runtimeTargetsOf(verb string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for k := range e.runtime {
		if t, ok := strings.CutPrefix(k, verb+" "); ok {
			out = append(out, t)
		}
	}
	if verb == "show" {
		out = append(out, "sys config-history")
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func (e *Engine) runtimeFunc(verb, key string) RuntimeFunc {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runtime[verb+" "+key]
}

// runtimeTargets are the runtime commands' targets that are no
// configuration kind, by their words. BIG-IP accepts `show gtm wideip` and
// `show gtm pool` without the record type (`a`), and has shows of tables
// (connections, persistence records, openltm's LDNS table): the functions
// answering these read the words that follow themselves.
var runtimeTargets = [][]string{
	{"sys", "connection"},
	{"sys", "config-history"},
	{"sys", "version"},
	{"sys", "failover"},
	{"sys", "clock"},
	{"sys", "mcp-state"},
	{"sys", "ready"},
	{"sys", "log"},
	{"sys", "geoip"},
	// The host's shows (shows_host.go); sys performance reads its form
	// (system, connections, throughput, all-stats) itself.
	{"sys", "memory"},
	{"sys", "cpu"},
	{"sys", "performance"},
	{"sys", "tmm-info"},
	{"sys", "hardware"},
	{"sys", "license"},
	{"net", "interface"},
	{"net", "route"},
	{"ltm", "persistence", "persist-records"},
	// ltm dns cache reads its kind (transparent, resolver) and names
	// itself, so that a show of every cache needs no kind (shows_dns.go).
	{"ltm", "dns", "cache", "records"},
	{"ltm", "dns", "cache"},
	{"gtm", "wideip"},
	{"gtm", "pool"},
	{"gtm", "persist"},
	{"gtm", "ldns"},
	{"gtm", "path"},
	{"gtm", "iquery"},
	{"gtm", "trust-exchange"},
	{"gtm", "trusted-device"},
	// The ipfix log destinations' statistics (hook_netflow.go).
	{"sys", "ipfix", "destination"},
	// The rules' IPFIX:: statistics (hook_netflow.go).
	{"sys", "ipfix", "irules"},
	// The http virtuals' sFlow data sources (hook_sflow.go).
	{"sys", "sflow", "data-source", "http"},
	// The OCSP answers client-ssl profiles staple, and those server-ssl
	// profiles checked their members by (shows_ocsp.go).
	{"ltm", "clientssl", "ocsp-stapling-responses"},
	{"ltm", "serverssl", "ocsp-responses"},
}

// runtimeTarget returns the words of the runtime target key, or nil.
func runtimeTarget(key string) []string {
	for _, kw := range runtimeTargets {
		if strings.Join(kw, " ") == key {
			return kw
		}
	}
	return nil
}

func (s *Session) show(ctx context.Context, st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	abs := s.moduleFor(ws)
	if len(abs) >= 2 && abs[0] == "sys" && abs[1] == "config-history" {
		return s.history(args[len(ws)-len(abs)+2:], w)
	}
	if len(abs) >= 1 && abs[0] == "running-config" {
		return s.list(ctx, st, args[1:], w)
	}
	return s.runtimeShow(ctx, st, "show", args, w)
}

// runtimeShow resolves `<verb> <kind> [names] [options]` and calls the
// runtime's function for it.
func (s *Session) runtimeShow(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	// Runtime-only targets (sys connection, persist-records) are not kinds:
	// try them as typed and under the current module.
	for _, abs := range [][]string{s.moduleFor(ws), append(append([]string{}, s.module...), ws...)} {
		for _, kw := range runtimeTargets {
			if !hasPrefix(abs, kw) {
				continue
			}
			key := strings.Join(kw, " ")
			if fn := s.e.runtimeFunc(verb, key); fn != nil {
				if err := fieldFmtAvailable(verb, key, abs[len(kw):]); err != nil {
					return err
				}
				return fn(ctx, s, nil, abs[len(kw):], w)
			}
			if !isKindPrefix(s.e.schema, abs) {
				return objects.Invalid("%s %s is not available: no dataplane is running", verb, key)
			}
		}
	}
	t, err := s.resolve(args)
	if err != nil {
		return err
	}
	if t.kind == nil {
		var at grammar.Node = st
		if len(t.rest) > 0 {
			at = t.rest[0]
		} else if len(args) > 0 {
			at = args[len(args)-1]
		}
		valid := s.e.runtimeTargetsOf(verb)
		if w, ok := at.(*grammar.Word); ok && len(t.rest) > 0 {
			return synErr(at, valid, "%s %q is not something openltm can %s", strings.Join(t.module, " "), w.Text, verb)
		}
		return synErr(at, valid, "%s needs an object type", verb)
	}
	fn := s.e.runtimeFunc(verb, t.kind.Key())
	if fn == nil {
		return objects.Invalid("%s %s is not available yet", verb, t.kind.Key())
	}
	var names, opts []string
	for _, a := range t.rest {
		wd := a.(*grammar.Word)
		if isShowOption(wd.Text) {
			opts = append(opts, wd.Text)
			continue
		}
		n := objects.FullPath(s.folder, wd.Text)
		if !strings.ContainsAny(n, "*?[") && s.e.Config().Get(t.kind, n) == nil && !dohListenerVirtual(s.e.Config(), t.kind, n) {
			return objects.NotFound(t.kind, n)
		}
		names = append(names, n)
	}
	if err := fieldFmtAvailable(verb, t.kind.Key(), opts); err != nil {
		return err
	}
	return fn(ctx, s, names, opts, w)
}

// fieldFmtKinds are the shows with a field-fmt layout: the ones scripts
// parse for status and counters.
var fieldFmtKinds = map[string]bool{"ltm virtual": true, "ltm pool": true, "ltm node": true, "ltm virtual-address": true,
	"ltm rule": true, "gtm rule": true, "gtm wideip": true, "gtm pool": true, "sys mcp-state": true, "sys ready": true,
	"ltm clientssl ocsp-stapling-responses": true, "ltm serverssl ocsp-responses": true}

// fieldFmtAvailable refuses field-fmt where openltm has no such layout
// yet: a script parsing key-value lines must not be handed a table.
func fieldFmtAvailable(verb, key string, opts []string) error {
	if verb == "show" && !fieldFmtKinds[key] && slices.Contains(opts, "field-fmt") {
		return objects.Invalid("field-fmt is not available for show %s yet (it is for show %s)", key, strings.Join(slices.Sorted(maps.Keys(fieldFmtKinds)), ", "))
	}
	return nil
}

var showOptions = map[string]bool{
	"raw": true, "members": true, "all-properties": true, "detail": true, "field-fmt": true,
	"default": true, "kil": true, "meg": true, "gig": true, "tera": true, "recursive": true,
	"distribution": true, // show ltm pool NAME distribution (shows_distribution.go)
}

func isShowOption(w string) bool { return showOptions[w] }

// isKindPrefix reports whether words start with a configuration kind, so a
// runtime target sharing its first words (gtm pool) falls back to it.
func isKindPrefix(sc *objects.Schema, words []string) bool {
	k, _ := sc.Match(words)
	return k != nil
}

// Folder is the session's current folder, for runtimes printing names.
func (s *Session) Folder() string { return s.folder }

// history answers show sys config-history [N | diff N [M]].
func (s *Session) history(args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	num := func(i int) (uint64, error) {
		n, err := strconv.ParseUint(ws[i], 10, 64)
		if err != nil {
			return 0, synErr(args[i], []string{"a generation number"}, "%q is not a generation number", ws[i])
		}
		return n, nil
	}
	switch {
	case len(ws) == 0:
		list, err := s.e.store.List()
		if err != nil {
			return err
		}
		return render.History(w, list, s.e.Generation())
	case ws[0] == "diff":
		if len(ws) < 2 || len(ws) > 3 {
			return synErr(args[0], []string{"diff FROM [TO]"}, "diff takes one or two generation numbers")
		}
		from, err := num(1)
		if err != nil {
			return err
		}
		to := s.e.Generation()
		if len(ws) == 3 {
			if to, err = num(2); err != nil {
				return err
			}
		}
		a, err := s.e.store.Get(from)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		b, err := s.e.store.Get(to)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		return render.HistoryDiff(w, a, b)
	case len(ws) == 1:
		n, err := num(0)
		if err != nil {
			return err
		}
		g, err := s.e.store.Get(n)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		return render.Generation(w, g)
	}
	return synErr(args[0], []string{"a generation number", "diff"}, "%q unexpected argument", ws[0])
}
