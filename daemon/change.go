package daemon

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// commitOne runs a single create/modify/delete as its own generation,
// applied to the configuration running when its turn comes. What the
// change holds that openltm keeps without acting on (an F5 property it
// does not implement, an FQDN node) is accepted, with a warning.
func (s *Session) commitOne(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) error {
	s.warnings = s.warnings[:0]
	opts := CommitOptions{Warn: func(m string) { s.warnings = append(s.warnings, m) }}
	gen, err := s.e.Change(ctx, s.user, st.Source, opts, func(cfg *objects.Config) error {
		return s.change(st, verb, args, cfg)
	})
	s.committed = gen
	if err == nil {
		for _, m := range s.warnings {
			fmt.Fprintln(w, "Warning: "+m)
		}
	}
	return err
}

// readProps reads a statement's properties into o, noting what openltm
// keeps without acting on it.
func (s *Session) readProps(mode objects.Mode, st *grammar.Statement, o *objects.Object, rest []grammar.Node) error {
	r := s.reader(mode)
	err := r.ReadProps(st, o, rest)
	for _, f := range r.Findings.NotActedOn() {
		s.warnings = append(s.warnings, f.Msg)
	}
	return err
}

// change applies one create/modify/delete statement to cfg.
func (s *Session) change(st *grammar.Statement, verb string, args []grammar.Node, cfg *objects.Config) error {
	t, err := s.resolve(args)
	if err != nil {
		if len(s.module) > 0 {
			// Inside a module (net), a kind known by F5's name only.
			if handled, verr := s.changeVerbatim(st, verb, target{module: s.module, rest: args}, cfg); handled {
				return verr
			}
		}
		return err
	}
	if t.kind == nil {
		if handled, err := s.changeVerbatim(st, verb, t, cfg); handled {
			return err
		}
		if len(t.module) > 0 {
			kids := s.e.schema.Children(t.module)
			var valid []string
			for k := range kids {
				valid = append(valid, k)
			}
			sort.Strings(valid)
			var at grammar.Node = st
			if len(t.rest) > 0 {
				at = t.rest[0]
				if w, ok := at.(*grammar.Word); ok {
					if near := nearest(w.Text, valid); near != "" {
						return synErr(at, valid, "%q unknown type in %q; did you mean %q?", w.Text, strings.Join(t.module, " "), near)
					}
					return synErr(at, valid, "%q unknown type in %q", w.Text, strings.Join(t.module, " "))
				}
			}
			return synErr(at, valid, "%s needs an object type after %q", verb, strings.Join(t.module, " "))
		}
		return synErr(st, nil, "%s needs an object type, e.g. %s ltm pool NAME", verb, verb)
	}
	k := t.kind
	rest := t.rest
	var name string
	var nameNode grammar.Node = st
	if !k.Singleton {
		if len(rest) == 0 {
			return synErr(st, []string{"an object name"}, "%s %s needs a name", verb, k.Key())
		}
		if k == gtmTopology {
			// gtm topology ldns: ... server: ... [props | { props }]
			n, err := s.topologyName(rest, &name)
			if err != nil {
				return err
			}
			rest = rest[n:]
		} else {
			nw, ok := rest[0].(*grammar.Word)
			if !ok {
				return synErr(rest[0], []string{"an object name"}, "%s %s needs a name before { }", verb, k.Key())
			}
			nameNode = nw
			name, rest = objects.FullPath(s.folder, nw.Text), rest[1:]
			if strings.HasPrefix(nw.Text, "/") && strings.Count(nw.Text, "/") < 2 {
				return synErr(nw, nil, "%q is not a valid object path: use /Partition/name", nw.Text)
			}
		}
	}
	switch verb {
	case "create":
		if k.Singleton {
			return synErr(st, []string{"modify"}, "%s always exists: use modify %s", k.Key(), k.Key())
		}
		if cfg.Get(k, name) != nil {
			return objects.Exists(k, name)
		}
		o := &objects.Object{Kind: k, Name: name, Props: map[string]*objects.Value{}}
		legacy := false
		if k == ltmPolicy {
			var from *grammar.Word
			if rest, legacy, from, err = policyCreateWords(nameNode, name, rest); err != nil { // policy_commands.go
				return err
			}
			if from != nil {
				if err := policyCopy(cfg, s.folder, o, from); err != nil {
					return err
				}
			}
		}
		if err := s.readProps(objects.ModeCreate, st, o, rest); err != nil {
			return err
		}
		if k == ltmPolicy {
			policyCreated(o, legacy)
		}
		if err := s.importSSLFile(o, rest); err != nil { // sslfiles.go
			return err
		}
		initDefaults(o)
		cfg.Put(o)
		s.warnKeptRefs(cfg, nil, o) // keptrefs.go
		return nil
	case "modify":
		if k == ltmPolicy {
			if done, err := policyCreateDraft(cfg, name, rest); done { // policy_commands.go
				return err
			}
		}
		// modify ltm node n1 n2 session user-disabled: each named object
		// takes the same properties, or none is changed.
		more := s.moreNames(cfg, k, rest)
		names := []string{name}
		for _, n := range more {
			names = append(names, objects.FullPath(s.folder, n))
		}
		rest = rest[len(more):]
		for _, n := range names {
			if err := s.modifyOne(st, k, n, nameNode, rest, cfg); err != nil {
				return err
			}
		}
		return nil
	case "publish":
		return publishPolicy(cfg, k, nameNode, name, rest) // policy_commands.go
	case "delete":
		if k.Singleton {
			return synErr(st, nil, "%s cannot be deleted", k.Key())
		}
		names := []string{name}
		for _, r := range rest {
			w, ok := r.(*grammar.Word)
			if !ok {
				return synErr(r, []string{"an object name"}, "unexpected { } in delete")
			}
			names = append(names, objects.FullPath(s.folder, w.Text))
		}
		var victims []*objects.Object
		for _, n := range names {
			if strings.ContainsAny(n, "*?[") || path.Base(n) == "all" {
				for _, o := range s.glob(cfg, k, n) {
					if !o.BuiltIn {
						victims = append(victims, o)
					}
				}
				continue
			}
			o := cfg.Get(k, n)
			if o == nil {
				return objects.NotFound(k, n)
			}
			victims = append(victims, o)
		}
		for _, o := range victims {
			cfg.Delete(o)
		}
		for _, o := range victims {
			if err := cfg.CheckDelete(s.e.schema, o); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// glob finds objects of k whose full name matches pattern (`all` = every
// one in the folder).
func (s *Session) glob(cfg *objects.Config, k *objects.Kind, pattern string) []*objects.Object {
	return globOf(cfg.Of(k), pattern)
}

// globOf are the objects of objs whose names match pattern.
func globOf(objs []*objects.Object, pattern string) []*objects.Object {
	switch {
	case pattern == "all":
		pattern = "*"
	case path.Base(pattern) == "all":
		pattern = path.Dir(pattern) + "/*"
	}
	var out []*objects.Object
	for _, o := range objs {
		if ok, _ := path.Match(pattern, o.Name); ok {
			out = append(out, o)
		}
	}
	return out
}

// initDefaults fills what BIG-IP sets on a new object: the parent of
// monitors, profiles and persistence; a virtual's always-listed settings,
// at their schema defaults.
func initDefaults(o *objects.Object) {
	set := func(name, v string) {
		if o.Props[name] == nil {
			o.Props[name] = &objects.Value{Str: v}
		}
	}
	if o.Kind.Parent != "" {
		set(defaultsFrom, o.Kind.Parent)
	}
	if o.Kind != ltmVirtual {
		return
	}
	for _, p := range virtualListed {
		set(p.Name, p.Default)
	}
	if virtualSNAT.Get(o) == nil {
		o.Props[virtualSNAT.Name] = &objects.Value{Sub: &objects.Item{Props: map[string]*objects.Value{snatType.Name: {Str: snatType.Default}}}}
	}
	if v := virtualProfiles.Get(o); v == nil || len(v.Items) == 0 {
		o.Props[virtualProfiles.Name] = &objects.Value{Items: []*objects.Item{{Name: virtualDefaultProfile, Props: map[string]*objects.Value{}}}}
	}
}

// virtualListed are the settings BIG-IP writes into every new virtual
// server, so that list shows them without all-properties.
var virtualListed = []*objects.Prop{virtualIPProtocol, virtualMask, virtualSource, virtualTranslateAddress, virtualTranslatePort}

// virtualDefaultProfile is the profile BIG-IP attaches to a virtual server
// created without one. The schema has no default for a collection's items,
// so this one lives here.
const virtualDefaultProfile = "/Common/fastL4"

// nearest is the one word of valid that typed most likely meant: the only
// one it starts, else the closest within two edits; "" when none is.
func nearest(typed string, valid []string) string {
	var prefixed []string
	for _, v := range valid {
		if strings.HasPrefix(v, typed) {
			prefixed = append(prefixed, v)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestD := "", 3
	for _, v := range valid {
		if d := editDistance(typed, v); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// moreNames returns the words after a modify's first name that name more
// objects of k (existing ones, or globs): those before the first word
// that is one of k's properties or is not an object's name.
func (s *Session) moreNames(cfg *objects.Config, k *objects.Kind, rest []grammar.Node) []string {
	if k.Singleton || k.PlainNames || k == gtmTopology {
		return nil
	}
	var out []string
	for _, n := range rest {
		w, ok := n.(*grammar.Word)
		if !ok || k.Prop(w.Text) != nil {
			break
		}
		full := objects.FullPath(s.folder, w.Text)
		if cfg.Get(k, full) == nil && !(strings.ContainsAny(w.Text, "*?[") && len(s.glob(cfg, k, full)) > 0) {
			break
		}
		out = append(out, w.Text)
	}
	return out
}

// modifyOne applies a modify's properties to the object name (a glob or
// all: to each it covers).
func (s *Session) modifyOne(st *grammar.Statement, k *objects.Kind, name string, nameNode grammar.Node, rest []grammar.Node, cfg *objects.Config) error {
	glob := name != "" && (strings.ContainsAny(name, "*?[") || path.Base(name) == "all")
	var olds []*objects.Object
	if glob {
		olds = s.glob(cfg, k, name)
	} else if old := cfg.Get(k, name); old != nil {
		olds = []*objects.Object{old}
	}
	if len(olds) == 0 {
		return objects.NotFound(k, name)
	}
	if !glob && len(rest) == 0 {
		return synErr(nameNode, []string{"a property to change"}, "modify %s %s changes nothing", k.Key(), objects.RelPath(s.folder, name))
	}
	if k == sysDB && resetsToDefault(rest) {
		return resetDBKeys(cfg, olds, rest) // dbkeys.go
	}
	for _, old := range olds {
		if err := policyModifiable(nameNode, old); err != nil { // policy_commands.go
			return err
		}
		o := old.Clone()
		if err := s.readProps(objects.ModeModify, st, o, rest); err != nil {
			return err
		}
		if k == ltmPolicy {
			policyNeeds(o)
		}
		reimportFile(k, o, rest)
		if !glob {
			if err := s.importSSLFile(o, rest); err != nil { // sslfiles.go
				return err
			}
		}
		cfg.Put(o)
		s.warnKeptRefs(cfg, old, o) // keptrefs.go
	}
	return nil
}
