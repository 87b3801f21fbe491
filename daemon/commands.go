package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

var listOptions = map[string]bool{
	"one-line": true, "all-properties": true, "non-default-properties": true,
	"recursive": true, "partition": true,
}

// list prints configuration in tmsh list form.
func (s *Session) list(ctx context.Context, st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	t, err := s.resolve(args)
	if err != nil {
		// Kinds openltm keeps without knowing them (apm, asm, ...) are
		// listed verbatim by their leading words.
		if out, ok := s.listUnknown(args); ok {
			_, werr := io.WriteString(w, out)
			return werr
		}
		if s.isRuleGlobals(args) {
			return s.listRuleGlobals(w)
		}
		return err
	}
	if t.kind == nil && len(t.rest) > 0 {
		if out, ok := s.listUnknown(args); ok {
			_, werr := io.WriteString(w, out)
			return werr
		}
		if s.isRuleGlobals(args) {
			return s.listRuleGlobals(w)
		}
	}
	opts := objects.PrintOpts{Folder: s.folder, Resolve: func(k *objects.Kind, name string) *objects.Object {
		return s.e.Config().Get(k, name)
	}}
	if s.folder == "/" {
		opts.Folder = ""
	}
	opts.NumericPorts = numericPorts(s.e.Config()) // dbkeys.go
	var names []string
	if w, ok := firstWord(t.rest); ok && t.kind == gtmTopology && w == "ldns:" {
		var name string
		n, err := s.topologyName(t.rest, &name)
		if err != nil {
			return err
		}
		names, t.rest = append(names, name), t.rest[n:]
	}
	for _, a := range t.rest {
		wd, ok := a.(*grammar.Word)
		if !ok {
			return synErr(a, nil, "unexpected { } in list")
		}
		switch {
		case wd.Text == "one-line":
			opts.OneLine = true
		case wd.Text == "all-properties":
			opts.Detail = objects.DetailAll
		case wd.Text == "non-default-properties":
			opts.Detail = objects.DetailNonDefault
		case listOptions[wd.Text]:
		case t.kind != nil && t.kind.Prop(wd.Text) != nil && (len(names) > 0 || t.kind.Singleton):
			opts.Select = append(opts.Select, t.kind.Prop(wd.Text).Name)
		case t.kind != nil && !t.kind.Singleton:
			names = append(names, objects.FullPath(s.folder, wd.Text))
		default:
			var valid []string
			for o := range listOptions {
				valid = append(valid, o)
			}
			return synErr(wd, valid, "%q unexpected argument", wd.Text)
		}
	}
	cfg := s.e.Config()
	var objs []*objects.Object
	switch {
	case t.kind != nil && len(names) > 0:
		for _, n := range names {
			if strings.ContainsAny(n, "*?[") || path.Base(n) == "all" {
				if t.kind.PlainNames {
					n = path.Base(n) // list sys db tm.*
				}
				objs = append(objs, globOf(cfg.Listed(t.kind), n)...)
				continue
			}
			o := cfg.Get(t.kind, n)
			if o == nil {
				return objects.NotFound(t.kind, n)
			}
			objs = append(objs, o)
		}
	case t.kind != nil:
		for _, o := range cfg.Listed(t.kind) { // sys db: every key known (dbkeys.go)
			if s.visible(o) {
				objs = append(objs, o)
			}
		}
	default:
		for _, o := range cfg.Objects() {
			if o.Kind == nil {
				if len(t.module) == 0 && len(s.module) == 0 {
					objs = append(objs, o)
				}
				continue
			}
			if hasPrefix(o.Kind.Words, t.module) && s.visible(o) {
				objs = append(objs, o)
			}
		}
	}
	for i, o := range objs {
		if i%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := io.WriteString(w, objects.Format(o, opts)); err != nil {
			return err
		}
	}
	return nil
}

// listUnknown prints the kept objects of kinds openltm does not know whose
// words start with args (`list apm policy`), as they were loaded.
func (s *Session) listUnknown(args []grammar.Node) (string, bool) {
	ws, err := words(args)
	if err != nil || len(ws) == 0 {
		return "", false
	}
	ws = s.moduleFor(ws)
	var b strings.Builder
	found := false
	for _, o := range s.e.Config().Unknown() {
		if o.BuiltIn {
			continue
		}
		if hasPrefix(o.Words, ws) || (len(ws) == len(o.Words) && hasPrefix(o.Words[:len(ws)-1], ws[:len(ws)-1]) && objects.FullPath(s.folder, ws[len(ws)-1]) == o.Words[len(o.Words)-1]) {
			b.WriteString(objects.Format(o, objects.PrintOpts{}))
			found = true
		}
	}
	return b.String(), found
}

// visible reports whether an object is listed from the current folder:
// BIG-IP lists the folder's own objects (built-ins included in /Common),
// and objects whose names are not paths (auth partition, sys db) from
// anywhere.
func (s *Session) visible(o *objects.Object) bool {
	if s.folder == "/" || o.Kind == nil || o.Kind.Singleton || o.Kind.PlainNames || o.Kind == gtmTopology {
		return true
	}
	return strings.HasPrefix(o.Name, s.folder+"/")
}

func hasPrefix(ws, prefix []string) bool {
	if len(prefix) > len(ws) {
		return false
	}
	for i := range prefix {
		if ws[i] != prefix[i] {
			return false
		}
	}
	return true
}

// words returns args as plain words, refusing blocks.
func words(args []grammar.Node) ([]string, error) {
	var out []string
	for _, a := range args {
		w, ok := a.(*grammar.Word)
		if !ok {
			return nil, synErr(a, nil, "unexpected { }")
		}
		out = append(out, w.Text)
	}
	return out, nil
}

// absPath resolves a file name of a command: a relative one against the
// client's working directory (from its hello), else the daemon's.
func (s *Session) absPath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if s.dir != "" {
		return filepath.Join(s.dir, p)
	}
	if wd, err := os.Getwd(); err == nil {
		return filepath.Join(wd, p)
	}
	return p
}

// save writes the running configuration: save sys config [file F].
func (s *Session) save(st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	if len(ws) < 2 || ws[0] != "sys" || ws[1] != "config" {
		return synErr(st, []string{"save sys config [file NAME]", "save sys ucs NAME"}, "only the configuration or a UCS archive can be saved")
	}
	file := filepath.Join(s.e.StateDir(), ConfigFile)
	for i := 2; i < len(ws); i++ {
		switch ws[i] {
		case "file":
			if i+1 >= len(ws) {
				return synErr(args[i], []string{"a file name"}, "file needs a name")
			}
			file = s.absPath(ws[i+1])
			i++
		case "partitions", "all", "current-partition", "base", "user-only", "gtm-only":
			// BIG-IP splits files by partition and module; openltm saves one file.
		case "no-passphrase":
			// Secrets are written as they are stored, sealed with the
			// master key; the file itself is not encrypted, which is
			// what this asks for.
		case "passphrase":
			return synErr(args[i], []string{"no-passphrase"}, "openltm does not encrypt a saved file with a pass phrase (its secrets are sealed with the master key); save with no-passphrase and protect the file")
		default:
			return synErr(args[i], []string{"file", "no-passphrase"}, "%q unknown property", ws[i])
		}
	}
	text := s.e.Config().Text()
	if err := writeFileAtomic(file, []byte(text)); err != nil {
		return fmt.Errorf("saving configuration: %w", err)
	}
	fmt.Fprintf(w, "Saving running configuration...\n  %s\n", file)
	return nil
}

// writeFileAtomic writes through a temporary file and a rename, so a crash
// never leaves a half-written configuration file.
func writeFileAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(name))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

// load reads configuration text: load sys config [default] [merge]
// [file F] [verify], or load sys config generation N (roll back).
func (s *Session) load(ctx context.Context, st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	ws, err := words(args)
	if err != nil {
		return err
	}
	if len(ws) < 2 || ws[0] != "sys" || ws[1] != "config" {
		return synErr(st, []string{"load sys config [merge] [file NAME] [verify]", "load sys config generation N"}, "only a configuration can be loaded")
	}
	var merge, verify, dflt, strict bool
	var editOf, listedSum string
	file := ""
	var gen uint64
	for i := 2; i < len(ws); i++ {
		switch ws[i] {
		case "merge":
			merge = true
		case "verify":
			verify = true
		case "strict":
			strict = true
		case "edit-of", "listed-sha256":
			// What tmsh's edit sends with the edited text: which objects
			// were edited, and a digest of their text as listed, so that
			// a change another session made meanwhile is not overwritten.
			if i+1 >= len(ws) {
				return synErr(args[i], []string{"a value"}, "%s needs a value", ws[i])
			}
			if ws[i] == "edit-of" {
				editOf = ws[i+1]
			} else {
				listedSum = ws[i+1]
			}
			i++
		case "default":
			dflt = true
		case "file":
			if i+1 >= len(ws) {
				return synErr(args[i], []string{"a file name"}, "file needs a name")
			}
			file = s.absPath(ws[i+1])
			i++
		case "generation":
			if i+1 >= len(ws) {
				return synErr(args[i], []string{"a generation number"}, "generation needs a number")
			}
			n, err := strconv.ParseUint(ws[i+1], 10, 64)
			if err != nil {
				return synErr(args[i+1], []string{"a generation number"}, "%q is not a generation number", ws[i+1])
			}
			gen = n
			i++
		default:
			return synErr(args[i], []string{"merge", "file", "verify", "strict", "default", "generation"}, "%q unknown property", ws[i])
		}
	}
	var text []byte
	name := ""
	switch {
	case gen != 0:
		g, err := s.e.store.Get(gen)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		text, name = []byte(g.Config), fmt.Sprintf("generation %d", gen)
	case dflt:
		text, name = nil, "default"
	default:
		if file == "" {
			file = filepath.Join(s.e.StateDir(), ConfigFile)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return objects.Invalid("the configuration file %s does not exist", file)
			}
			return fmt.Errorf("loading configuration: %w", err)
		}
		text, name = b, file
	}
	folder := s.folder
	if folder == "/" {
		folder = "/Common"
	}
	var objs []*objects.Object
	var findings objects.Findings
	if gen != 0 {
		// A generation openltm stored itself: what an earlier version kept
		// is kept again, as when ltmd starts.
		objs, findings, err = s.e.schema.ReadStored(name, text)
		if err != nil {
			return fmt.Errorf("Loading configuration %s failed: %w", name, err)
		}
	} else {
		l := s.e.schema.ReadText(name, text, folder)
		if l.Findings.Refused() == nil {
			var running *objects.Config
			if merge {
				running = s.e.Config()
			}
			l.CheckRefs(s.e.schema, running)
		}
		objs, findings = l.Objects, l.Findings
	}
	if verify {
		fmt.Fprintf(w, "Validating configuration...\n  %s\n", name)
	} else {
		fmt.Fprintf(w, "Loading configuration...\n  %s\n", name)
	}
	// Both lists, in text order: what BIG-IP refuses, and what openltm
	// keeps without acting on it.
	for _, f := range findings {
		switch {
		case f.Category == objects.Refused:
			fmt.Fprintln(w, "Error: "+f.String())
		case strict:
			fmt.Fprintln(w, "Error (strict): "+f.String())
		default:
			fmt.Fprintln(w, "Warning: "+f.String())
		}
	}
	if err := findings.Err(strict); err != nil {
		return fmt.Errorf("Loading configuration %s failed: %w; nothing was changed", name, err)
	}
	if !verify && gen == 0 {
		for _, o := range objs {
			s.storeLoadedFile(o) // sslfiles.go
		}
	}
	build := func(running *objects.Config) *objects.Config {
		var cfg *objects.Config
		if merge {
			cfg = running.Clone()
		} else {
			cfg = s.e.schema.Builtins()
		}
		for _, o := range objs {
			cfg.Put(o)
		}
		return cfg
	}
	opts := CommitOptions{Lenient: true, Warn: func(m string) { fmt.Fprintln(w, "Warning: "+m) }}
	if verify {
		running := s.e.Config()
		cfg := build(running)
		if err := s.e.check(cfg); err != nil {
			return err
		}
		if err := s.e.dangling(running, cfg, opts); err != nil {
			return err
		}
		return s.e.checkHooks(running, cfg, opts)
	}
	summary := st.Source
	if editOf != "" {
		summary = "edit " + editOf
	}
	s.committed, err = s.e.Replace(ctx, s.user, summary, opts, func(running *objects.Config) (*objects.Config, error) {
		if editOf != "" && listedSum != "" {
			if err := s.unchangedSince(ctx, editOf, listedSum); err != nil {
				return nil, err
			}
		}
		return build(running), nil
	})
	return err
}

// unchangedSince refuses an edit whose objects another session changed (or
// deleted) after they were listed for editing: the edit would silently undo
// that change. It runs under the commit lock, on the running configuration.
func (s *Session) unchangedSince(ctx context.Context, what, sum string) error {
	st, err := parse("list "+what, s.module)
	if err != nil {
		return err
	}
	var now bytes.Buffer
	if err := s.list(ctx, st, st.Items[1:], &now); err != nil {
		return objects.Invalid("%s changed since it was listed for editing (%v); nothing was changed: edit it again", what, err)
	}
	if d := sha256.Sum256(now.Bytes()); hex.EncodeToString(d[:]) != sum {
		return objects.Invalid("%s was changed by another session since it was listed for editing; nothing was changed: edit it again", what)
	}
	return nil
}

// resetStats clears runtime counters.
func (s *Session) resetStats(st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	return s.runtimeShow(context.Background(), st, "reset-stats", args, w)
}
