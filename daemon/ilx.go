package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane/ilx"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// iRules LX (dataplane/ilx): workspaces are directories under the state
// directory's ilx/workspaces/PARTITION/NAME, as BIG-IP keeps them under
// /var/ilx/workspaces (extensions/NAME/index.js, package.json,
// node_modules; rules/NAME.tcl); a plugin runs a copy of its workspace,
// made when it is created or given from-workspace again, under
// ilx/plugins/PARTITION/NAME/ID (its staged-directory, a new ID each
// copy, so that changed files start the extension again). tmsh's create
// ilx workspace W extension E and rule R lay out the files, create ilx
// plugin P from-workspace W lists the workspace's extensions, and show
// ilx plugin shows each extension's processes and calls.

var (
	ilxWorkspace = schema.MustKind("ilx workspace")
	ilxPlugin    = schema.MustKind("ilx plugin")

	ilxWSExtensions = ilxWorkspace.MustProp("extensions")
	ilxWSRules      = ilxWorkspace.MustProp("rules")
	ilxWSStaged     = ilxWorkspace.MustProp("staged-directory")
	ilxPlFrom       = ilxPlugin.MustProp("from-workspace")
	ilxPlExtensions = ilxPlugin.MustProp("extensions")
	ilxPlStaged     = ilxPlugin.MustProp("staged-directory")
	ilxPlDisabled   = ilxPlugin.MustProp("disabled")
)

// ilxRoot is where workspaces, plugins and the f5-nodejs module live.
func (e *Engine) ilxRoot() string { return filepath.Join(e.StateDir(), "ilx") }

// objPath turns /Partition/name into a relative path, refusing names
// that would leave the directory.
func objPath(name string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(name, "/"), "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return "", fmt.Errorf("%q cannot name a directory", name)
		}
	}
	return filepath.Join(parts...), nil
}

func (e *Engine) workspaceDir(name string) (string, error) {
	rel, err := objPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Join(e.ilxRoot(), "workspaces", rel), nil
}

// ilxSwitch is what the rules' ILX commands reach: the engine's plugin
// manager, set at Open.
type ilxSwitch struct {
	m atomic.Pointer[ilx.Manager]
}

var errNoILX = errors.New("ILX failure: iRules LX is not running")

// Init implements rules.ILX.
func (s *ilxSwitch) Init(plugin, ext string) error {
	m := s.m.Load()
	if m == nil {
		return errNoILX
	}
	_, err := m.Handle(plugin, ext)
	return err
}

// Call implements rules.ILX.
func (s *ilxSwitch) Call(ctx context.Context, plugin, ext, method string, args []string) (json.RawMessage, error) {
	m := s.m.Load()
	if m == nil {
		return nil, errNoILX
	}
	h, err := m.Handle(plugin, ext)
	if err != nil {
		return nil, err
	}
	return h.Call(ctx, method, args)
}

// Notify implements rules.ILX.
func (s *ilxSwitch) Notify(plugin, ext, method string, args []string) error {
	m := s.m.Load()
	if m == nil {
		return errNoILX
	}
	h, err := m.Handle(plugin, ext)
	if err != nil {
		return err
	}
	return h.Notify(method, args)
}

// startILX makes the engine's plugin manager and the hook that follows
// the configuration's plugins.
func (e *Engine) startILX() error {
	e.ilx = ilx.New(ilx.Options{ModuleDir: filepath.Join(e.ilxRoot(), "node_modules"), Logger: e.log})
	e.rules.rt.ilx.m.Store(e.ilx)
	e.RegisterRuntime(ilxCommands(e))
	return e.AddHook(ilxHook{e})
}

// ilxHook runs the configuration's plugins.
type ilxHook struct{ e *Engine }

// ilxApplied is what the manager runs, for Abort to go back to.
type ilxApplied struct {
	mu sync.Mutex
	ps []ilx.Plugin
}

// Prepare implements Hook: each plugin's extensions with their settings,
// read from its staged copy (or, without one, its workspace). An
// extension without index.js is refused [M]; where node is missing the
// plugins are kept with a warning, and their extensions do not run.
func (h ilxHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	var ps []ilx.Plugin
	plugins := cfg.Of(ilxPlugin)
	var dgs *dataGroupSet // read once, when an extension names data groups
	for _, o := range plugins {
		p, err := h.e.ilxPluginOf(cfg, o, &dgs)
		if err != nil {
			if opts.Lenient || (old != nil && old.Get(ilxPlugin, o.Name) != nil && sameObject(old.Get(ilxPlugin, o.Name), o)) {
				if opts.Warn != nil {
					opts.Warn(err.Error())
				}
				continue
			}
			return nil, err
		}
		ps = append(ps, p)
	}
	if len(plugins) > 0 && !h.e.ilx.NodeAvailable() && opts.Warn != nil {
		opts.Warn("node (Node.js) is not installed: the ilx plugins' extensions do not run until it is")
	}
	return &ilxChange{e: h.e, ps: ps}, nil
}

// sameObject reports whether an object is unchanged.
func sameObject(a, b *objects.Object) bool { return a == b }

// ilxPluginOf reads one plugin for the manager.
func (e *Engine) ilxPluginOf(cfg *objects.Config, o *objects.Object, dgs **dataGroupSet) (ilx.Plugin, error) {
	p := ilx.Plugin{Name: o.Name, Disabled: ilxPlDisabled.Str(o) == "disabled"}
	base := ilxPlStaged.Str(o)
	if base == "" || !isDir(base) {
		ws := ilxPlFrom.Str(o)
		if ws == "" || ws == "none" {
			return p, &objects.ConfigError{Code: "01070734", Msg: fmt.Sprintf("Configuration error: ilx plugin (%s) needs from-workspace", o.Name)}
		}
		dir, err := e.workspaceDir(ws)
		if err != nil {
			return p, err
		}
		base = dir
	}
	items := map[string]*objects.Item{}
	var names []string
	if v := o.Get(ilxPlExtensions.Name); v != nil {
		for _, it := range v.Items {
			items[it.Name] = it
			names = append(names, it.Name)
		}
	}
	if len(names) == 0 {
		ents, _ := os.ReadDir(filepath.Join(base, "extensions"))
		for _, d := range ents {
			if d.IsDir() {
				names = append(names, d.Name())
			}
		}
	}
	for _, n := range names {
		dir := filepath.Join(base, "extensions", n)
		if _, err := os.Stat(filepath.Join(dir, "index.js")); err != nil {
			return p, &objects.ConfigError{Code: "01070734", Msg: fmt.Sprintf("Configuration error: extension (%s) of ilx plugin (%s) has no index.js in %s", n, o.Name, dir)}
		}
		x := ilx.Extension{Name: n, Dir: dir, Mode: ilx.Dedicated, MaxRestarts: 5, RestartInterval: 60 * time.Second}
		if it := items[n]; it != nil {
			get := func(k string) string {
				if v := it.Props[k]; v != nil {
					return v.Str
				}
				return ""
			}
			if get("concurrency-mode") == "single" {
				x.Mode = ilx.Single
			}
			if v, err := strconv.Atoi(get("max-restarts")); err == nil {
				x.MaxRestarts = v
			}
			if v, err := strconv.Atoi(get("restart-interval")); err == nil {
				x.RestartInterval = time.Duration(v) * time.Second
			}
			if v := it.Props["command-options"]; v != nil {
				x.Options = slices.Clone(v.List)
			}
			if v := it.Props["command-arguments"]; v != nil {
				x.Args = slices.Clone(v.List)
			}
			if v := it.Props["data-groups"]; v != nil && len(v.List) > 0 && !(len(v.List) == 1 && v.List[0] == "none") {
				if *dgs == nil {
					set := dataGroups(e.schema, cfg)
					e.externalDataGroups(cfg, &set) // translate_datagroup_ext.go
					*dgs = &set
				}
				for _, name := range v.List {
					full := name
					if !strings.HasPrefix(full, "/") {
						full = "/Common/" + full
					}
					dg := (*dgs).m[full]
					if dg == nil {
						return p, &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested data group (%s) was not found (data-groups of extension %s of ilx plugin %s).", full, n, o.Name)}
					}
					x.DataGroups = append(x.DataGroups, ilxDataGroup(dg))
				}
			}
		}
		p.Extensions = append(p.Extensions, x)
	}
	return p, nil
}

// ilxDataGroup is a data group as an extension's ILXDatagroup reads it.
func ilxDataGroup(dg *rules.DataGroup) ilx.DataGroup {
	out := ilx.DataGroup{Name: dg.Name, Type: "string", Records: make([]ilx.Record, 0, len(dg.Records))}
	switch dg.Type {
	case rules.DGAddress:
		out.Type = "ip"
	case rules.DGInteger:
		out.Type = "integer"
	}
	for _, r := range dg.Records {
		out.Records = append(out.Records, ilx.Record{Name: r.Key, Value: r.Value})
	}
	return out
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// ilxChange puts a configuration's plugins in service.
type ilxChange struct {
	e    *Engine
	ps   []ilx.Plugin
	prev []ilx.Plugin
	done bool
}

func (c *ilxChange) Commit() error {
	a := &c.e.ilxApplied
	a.mu.Lock()
	c.prev, a.ps = a.ps, c.ps
	a.mu.Unlock()
	c.e.ilx.Apply(c.ps)
	c.done = true
	c.e.pruneILXStaged(c.ps)
	return nil
}

func (c *ilxChange) Abort() {
	if !c.done {
		return
	}
	a := &c.e.ilxApplied
	a.mu.Lock()
	a.ps = c.prev
	a.mu.Unlock()
	c.e.ilx.Apply(c.prev)
}

// pruneILXStaged removes the staged copies no running plugin uses.
func (e *Engine) pruneILXStaged(ps []ilx.Plugin) {
	root := filepath.Join(e.ilxRoot(), "plugins")
	used := map[string]bool{}
	for _, o := range e.Config().Of(ilxPlugin) {
		if d := ilxPlStaged.Str(o); d != "" {
			used[filepath.Clean(d)] = true
		}
	}
	for _, p := range ps {
		for _, x := range p.Extensions {
			used[filepath.Dir(filepath.Dir(x.Dir))] = true
		}
	}
	// A staged copy is ROOT/PARTITION/.../NAME/ID: remove the IDs unused.
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == root {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, ".ilx-staged")); err == nil {
			if !used[filepath.Clean(path)] {
				os.RemoveAll(path)
			}
			return filepath.SkipDir
		}
		return nil
	})
}

// copyTree copies a directory's files (and symlinks as they are).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(l, to)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			in, err := os.Open(path)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil
	})
}

// stagePlugin copies a workspace's files to a new staged directory of
// the plugin and returns it.
func (e *Engine) stagePlugin(plugin, workspace string) (string, error) {
	src, err := e.workspaceDir(workspace)
	if err != nil {
		return "", err
	}
	if !isDir(src) {
		return "", &objects.ConfigError{Code: "01070734", Msg: fmt.Sprintf("Configuration error: ilx workspace (%s) has no files in %s", workspace, src)}
	}
	rel, err := objPath(plugin)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(e.ilxRoot(), "plugins", rel, strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := copyTree(src, dst); err != nil {
		os.RemoveAll(dst)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dst, ".ilx-staged"), []byte(workspace+"\n"), 0o644); err != nil {
		os.RemoveAll(dst)
		return "", err
	}
	return dst, nil
}

// ilxUsage is what create ilx workspace takes.
var ilxUsage = []string{"create ilx workspace NAME [extension EXT] [rule RULE] [from-workspace W] [from-plugin P] [node-version V]",
	"create ilx plugin NAME from-workspace W [disabled] [extensions { EXT { concurrency-mode single|dedicated ... } }]"}

// ilxCommand answers create and delete of ilx workspaces (their files),
// create and modify of ilx plugins (their staged copy) and restart ilx
// plugin (its processes started again, a failed extension's restarts
// given back); handled is false for everything else.
func (s *Session) ilxCommand(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) (bool, error) {
	if verb != "create" && verb != "modify" && verb != "delete" && verb != "restart" {
		return false, nil
	}
	abs := s.moduleFor(headWords(args))
	if !hasPrefix(abs, []string{"ilx"}) {
		return false, nil
	}
	t, err := s.resolve(args)
	if err != nil || (t.kind != ilxWorkspace && t.kind != ilxPlugin) || len(t.rest) == 0 {
		return false, nil
	}
	nw, ok := t.rest[0].(*grammar.Word)
	if !ok {
		return false, nil
	}
	name := objects.FullPath(s.folder, nw.Text)
	if _, err := objPath(name); err != nil {
		return true, synErr(nw, nil, "%v", err)
	}
	if verb == "restart" {
		if t.kind != ilxPlugin || len(t.rest) != 1 {
			return true, synErr(st, []string{"restart ilx plugin NAME"}, "restart takes an ilx plugin's name")
		}
		if s.e.Config().Get(ilxPlugin, name) == nil {
			return true, &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested plugin (%s) was not found.", name)}
		}
		return true, s.e.ilx.Restart(name)
	}
	if t.kind == ilxPlugin {
		if verb == "delete" {
			return false, nil
		}
		return true, s.ilxPluginChange(ctx, st, verb, args, name, t.rest[1:], w)
	}
	return s.ilxWorkspaceCommand(ctx, st, verb, name, t.rest[1:], w)
}

// ilxWorkspaceCommand is create ilx workspace W [extension E] [rule R]
// [from-workspace W2] [from-plugin P] [node-version V], and delete ilx
// workspace W extension E | rule R; a plain delete goes the usual way,
// its files removed once it is gone.
func (s *Session) ilxWorkspaceCommand(ctx context.Context, st *grammar.Statement, verb, name string, rest []grammar.Node, w io.Writer) (bool, error) {
	opts := map[string]string{}
	for i := 0; i < len(rest); i++ {
		wd, ok := rest[i].(*grammar.Word)
		if !ok || i+1 >= len(rest) {
			return true, synErr(rest[i], ilxUsage, "ilx workspace: %s takes OPTION VALUE pairs", verb)
		}
		val, ok := rest[i+1].(*grammar.Word)
		if !ok {
			return true, synErr(rest[i+1], ilxUsage, "ilx workspace: %s needs a value", wd.Text)
		}
		switch wd.Text {
		case "extension", "rule", "from-workspace", "from-plugin", "node-version":
			if wd.Text == "extension" || wd.Text == "rule" {
				if _, err := objPath("/x/" + val.Text); err != nil || strings.Contains(val.Text, "/") {
					return true, synErr(val, nil, "%q cannot name a directory", val.Text)
				}
			}
			opts[wd.Text] = val.Text
		case "archive", "file", "from-archive", "from-uri":
			return true, synErr(wd, ilxUsage, "ilx workspace %s: openltm does not take archives, files or URIs yet: write the files under %s", wd.Text, s.e.mustWorkspaceDir(name))
		default:
			if verb == "delete" {
				return true, synErr(wd, []string{"extension", "rule"}, "%q unknown option of delete ilx workspace", wd.Text)
			}
			return true, synErr(wd, ilxUsage, "%q unknown option of create ilx workspace", wd.Text)
		}
		i++
	}
	dir, _ := s.e.workspaceDir(name)
	cfg := s.e.Config()
	cur := cfg.Get(ilxWorkspace, name)
	switch verb {
	case "delete":
		if len(opts) == 0 {
			err := s.commitOne(ctx, st, verb, st.Items[1:], w)
			if err == nil && s.e.Config().Get(ilxWorkspace, name) == nil {
				os.RemoveAll(dir)
			}
			return true, err
		}
		if cur == nil {
			return true, &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested workspace (%s) was not found.", name)}
		}
		return true, s.ilxWorkspaceEdit(ctx, st, name, dir, opts, false)
	case "modify":
		if _, ok := opts["extension"]; ok {
			return true, synErr(st, ilxUsage, "an extension is added with create ilx workspace %s extension NAME", objects.RelPath(s.folder, name))
		}
		return false, nil
	}
	if cur != nil && opts["extension"] == "" && opts["rule"] == "" {
		return true, objects.Exists(ilxWorkspace, name)
	}
	if cur == nil {
		if from := opts["from-workspace"]; from != "" {
			fromName := objects.FullPath(s.folder, from)
			if cfg.Get(ilxWorkspace, fromName) == nil {
				return true, &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested workspace (%s) was not found.", fromName)}
			}
			src, err := s.e.workspaceDir(fromName)
			if err != nil {
				return true, err
			}
			if err := copyTree(src, dir); err != nil {
				return true, err
			}
		}
		if from := opts["from-plugin"]; from != "" {
			fromName := objects.FullPath(s.folder, from)
			p := cfg.Get(ilxPlugin, fromName)
			if p == nil {
				return true, &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested plugin (%s) was not found.", fromName)}
			}
			if src := ilxPlStaged.Str(p); src != "" && isDir(src) {
				if err := copyTree(src, dir); err != nil {
					return true, err
				}
				os.Remove(filepath.Join(dir, ".ilx-staged"))
			}
		}
	}
	return true, s.ilxWorkspaceEdit(ctx, st, name, dir, opts, true)
}

func (e *Engine) mustWorkspaceDir(name string) string {
	d, _ := e.workspaceDir(name)
	return d
}

// ilxWorkspaceEdit creates the workspace (or adds to it) with its
// extension and rule, or deletes them (add false), files and items in
// one change.
func (s *Session) ilxWorkspaceEdit(ctx context.Context, st *grammar.Statement, name, dir string, opts map[string]string, add bool) error {
	ext, rule := opts["extension"], opts["rule"]
	s.warnings = s.warnings[:0]
	copts := CommitOptions{Warn: func(m string) { s.warnings = append(s.warnings, m) }}
	gen, err := s.e.Change(ctx, s.user, st.Source, copts, func(cfg *objects.Config) error {
		o := cfg.Get(ilxWorkspace, name)
		if o == nil {
			o = &objects.Object{Kind: ilxWorkspace, Name: name, Props: map[string]*objects.Value{}}
			// A copy's extensions and rules come with its files.
			for _, sub := range []string{"extensions", "rules"} {
				ents, _ := os.ReadDir(filepath.Join(dir, sub))
				for _, d := range ents {
					n := d.Name()
					if sub == "rules" {
						if !strings.HasSuffix(n, ".tcl") {
							continue
						}
						n = strings.TrimSuffix(n, ".tcl")
					} else if !d.IsDir() {
						continue
					}
					addItem(o, sub, n)
				}
			}
		} else {
			o = o.Clone()
		}
		o.Props[ilxWSStaged.Name] = &objects.Value{Str: dir}
		if v := opts["node-version"]; v != "" {
			o.Props["node-version"] = &objects.Value{Str: v}
		}
		for _, it := range []struct{ prop, name, what string }{{ilxWSExtensions.Name, ext, "extension"}, {ilxWSRules.Name, rule, "rule"}} {
			if it.name == "" {
				continue
			}
			have := o.Get(it.prop).Item(it.name) != nil
			switch {
			case add && have:
				return &objects.ConfigError{Code: "01020066", Msg: fmt.Sprintf("The requested %s (%s) already exists in workspace (%s).", it.what, it.name, name)}
			case !add && !have:
				return &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested %s (%s) was not found in workspace (%s).", it.what, it.name, name)}
			case add:
				addItem(o, it.prop, it.name)
			default:
				v := o.Get(it.prop)
				v.Items = slices.DeleteFunc(v.Items, func(x *objects.Item) bool { return x.Name == it.name })
			}
		}
		cfg.Put(o)
		return layWorkspace(dir, ext, rule, add)
	})
	s.committed = gen
	return err
}

func addItem(o *objects.Object, prop, name string) {
	v := o.Props[prop]
	if v == nil {
		v = &objects.Value{}
		o.Props[prop] = v
	}
	if v.Item(name) == nil {
		v.Items = append(v.Items, &objects.Item{Name: name, Props: map[string]*objects.Value{}})
	}
}

// layWorkspace makes a workspace's directories and an extension's or a
// rule's files (add), or removes them.
func layWorkspace(dir, ext, rule string, add bool) error {
	if !add {
		if ext != "" {
			os.RemoveAll(filepath.Join(dir, "extensions", ext))
		}
		if rule != "" {
			os.Remove(filepath.Join(dir, "rules", rule+".tcl"))
		}
		return nil
	}
	for _, d := range []string{"extensions", "rules"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := writeNew(filepath.Join(dir, "version"), "openltm\n"); err != nil {
		return err
	}
	if ext != "" {
		ed := filepath.Join(dir, "extensions", ext)
		if err := os.MkdirAll(filepath.Join(ed, "node_modules"), 0o755); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(ed, "index.js"), ilx.DefaultIndexJS); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(ed, "package.json"), ilx.DefaultPackageJSON(ext)); err != nil {
			return err
		}
	}
	if rule != "" {
		if err := writeNew(filepath.Join(dir, "rules", rule+".tcl"), ""); err != nil {
			return err
		}
	}
	return nil
}

// writeNew writes a file that does not exist yet (a user's files stay).
func writeNew(path, text string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ilxPluginChange is create or modify of an ilx plugin: read as any
// object, then, when from-workspace is given, the workspace is copied to
// a new staged directory and (at create, unless extensions are given)
// its extensions are listed in the plugin.
func (s *Session) ilxPluginChange(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, name string, rest []grammar.Node, w io.Writer) error {
	from, hasExts := "", false
	for i, n := range rest {
		if wd, ok := n.(*grammar.Word); ok {
			switch wd.Text {
			case "from-workspace":
				if i+1 < len(rest) {
					if v, ok := rest[i+1].(*grammar.Word); ok {
						from = objects.FullPath(s.folder, v.Text)
					}
				}
			case "extensions":
				hasExts = true
			}
		}
	}
	staged := ""
	s.warnings = s.warnings[:0]
	opts := CommitOptions{Warn: func(m string) { s.warnings = append(s.warnings, m) }}
	gen, err := s.e.Change(ctx, s.user, st.Source, opts, func(cfg *objects.Config) error {
		if err := s.change(st, verb, args, cfg); err != nil {
			return err
		}
		o := cfg.Get(ilxPlugin, name)
		if o == nil {
			return nil
		}
		if from == "" && verb == "create" {
			return &objects.ConfigError{Code: "01070734", Msg: fmt.Sprintf("Configuration error: ilx plugin (%s) needs from-workspace", name)}
		}
		if from == "" {
			return nil
		}
		ws := cfg.Get(ilxWorkspace, from)
		if ws == nil {
			return nil // the reference check names it
		}
		if staged == "" {
			d, err := s.e.stagePlugin(name, from)
			if err != nil {
				return err
			}
			staged = d
		}
		o = o.Clone()
		o.Props[ilxPlStaged.Name] = &objects.Value{Str: staged}
		if !hasExts {
			if v := ws.Get(ilxWSExtensions.Name); v != nil {
				for _, it := range v.Items {
					addItem(o, ilxPlExtensions.Name, it.Name)
				}
			}
		}
		cfg.Put(o)
		return nil
	})
	s.committed = gen
	if err != nil && staged != "" {
		os.RemoveAll(staged)
	}
	if err == nil {
		for _, m := range s.warnings {
			fmt.Fprintln(w, "Warning: "+m)
		}
	}
	return err
}

// ilxCommands answers show and reset-stats of ilx plugin.
func ilxCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", ilxPlugin.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			objs, err := s.named(e.Config().Of(ilxPlugin), names, "plugin")
			if err != nil {
				return err
			}
			for _, o := range objs {
				st, disabled, ok := e.ilx.Stats(o.Name)
				if !ok {
					disabled = ilxPlDisabled.Str(o) == "disabled"
				}
				if err := render.ILXPlugin(w, o.Name, disabled, st, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", ilxPlugin.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			objs, err := s.named(e.Config().Of(ilxPlugin), names, "plugin")
			if err != nil {
				return err
			}
			for _, o := range objs {
				e.ilx.ResetStats(o.Name)
			}
			return nil
		}},
	}
}
