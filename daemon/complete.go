package daemon

import (
	"sort"
	"strings"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/objects"
)

// Complete implements control.Session: what may follow the text before
// the cursor, generated from the schema plus live object names.
func (s *Session) Complete(line string) []control.Suggestion {
	ws, partial := splitForCompletion(line)
	var f []control.Suggestion
	seen := map[string]bool{}
	for _, sg := range s.complete(ws) {
		if !strings.HasPrefix(sg.Text, partial) || seen[sg.Text] {
			continue
		}
		seen[sg.Text] = true
		f = append(f, sg)
	}
	return f
}

// splitForCompletion returns the complete words before the cursor and the
// partial last word.
func splitForCompletion(line string) ([]string, string) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, ""
	}
	if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
		return fields, ""
	}
	return fields[:len(fields)-1], fields[len(fields)-1]
}

func sugs(group string, items map[string]string) []control.Suggestion {
	var out []control.Suggestion
	for t, d := range items {
		out = append(out, control.Suggestion{Text: t, Description: d, Group: group})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Text < out[j].Text })
	return out
}

func (s *Session) complete(ws []string) []control.Suggestion {
	sc := s.e.schema
	if len(ws) == 0 {
		out := sugs("Commands", verbs)
		return append(out, s.children(s.module, true)...)
	}
	verb := ws[0]
	switch verb {
	case "create", "modify", "delete", "list", "show", "reset-stats", "edit", "run", "publish", "generate":
	case "cd":
		return s.folders()
	case "save", "load":
		if len(ws) == 1 {
			return []control.Suggestion{{Text: "sys", Description: "System configuration", Group: "Modules"}}
		}
		if len(ws) == 2 {
			return []control.Suggestion{{Text: "config", Description: "The running configuration", Group: "Components"}}
		}
		if verb == "save" {
			return sugs("Options", map[string]string{"file": "write to this file"})
		}
		return sugs("Options", map[string]string{"file": "read this file", "merge": "add to the running configuration", "verify": "check only", "default": "reset to the defaults", "generation": "roll back to a kept generation"})
	default:
		// Module navigation: `ltm ` → its children.
		if sc.IsModulePath(s.moduleFor(ws)) {
			return s.children(s.moduleFor(ws), false)
		}
		return nil
	}
	rest := ws[1:]
	if len(rest) > 0 && rest[0] == "cli" && (len(rest) == 1 || rest[1] != "script") {
		if verb == "run" {
			return sugs("Components", map[string]string{"script": "run a cli script: run cli script NAME ?arguments?"})
		}
		return sugs("Components", map[string]string{"transaction": "all-or-nothing change set", "script": "tmsh script: Tcl procedures run by run cli script"})
	}
	if verb == "run" && len(rest) == 2 && rest[0] == "cli" {
		return s.names(cliScript) // icall.go
	}
	if verb == "generate" {
		kw := []string{"sys", "icall", "event"}
		if p := s.moduleFor(rest); len(p) < len(kw) && hasPrefix(kw, p) {
			return sugs("Components", map[string]string{kw[len(p)]: "generate sys icall event NAME context { { name N value V } }"})
		}
		return sugs("Options", map[string]string{"context": "the event's { name N value V } pairs"})
	}
	path := s.moduleFor(rest)
	if verb == "run" {
		return s.completeRun(path)
	}
	if out, ok := hostCompletions(strings.Join(path, " ")); ok && verb == "show" {
		return out // the host's shows (shows_host.go) take options, not names
	}
	if (verb == "show" || verb == "delete") && len(path) >= len(recordsPath) && hasPrefix(path, recordsPath) {
		return s.completeRecords(path[len(recordsPath):]) // complete_dnsrecords.go
	}
	k, used := sc.Match(path)
	if k == nil {
		out := s.children(path, false)
		if len(rest) == 0 && (verb == "create" || verb == "delete" || verb == "list") {
			out = append(out, control.Suggestion{Text: "cli", Description: "cli transaction", Group: "Modules"})
		}
		if verb == "show" || verb == "reset-stats" {
			for _, kw := range runtimeTargets {
				if hasPrefix(kw, path) && len(kw) > len(path) && !runOnly[strings.Join(kw, " ")] {
					out = append(out, control.Suggestion{Text: kw[len(path)], Description: strings.Join(kw, " "), Group: "Components"})
				}
			}
		}
		return out
	}
	after := path[used:] // words typed after the kind
	if out, ok := s.completeGTM(k, verb, after); ok {
		return out
	}
	if !k.Singleton && len(after) == 0 {
		if verb == "create" {
			return []control.Suggestion{{Text: "", Description: "<object name>", Group: "Objects"}}
		}
		return s.names(k)
	}
	if verb == "edit" || verb == "publish" {
		return s.names(k)
	}
	if verb == "list" {
		out := sugs("Options", map[string]string{"one-line": "one line per object", "all-properties": "every property with its value", "non-default-properties": "only values that differ from the default"})
		return append(out, s.props(k)...)
	}
	if verb == "show" || verb == "reset-stats" {
		opts := map[string]string{"members": "pool members too", "raw": "unscaled counters", "all-properties": "every field"}
		if verb == "show" && k.Key() == "ltm pool" {
			opts["distribution"] = "why the pool's load is spread as it is, with fixes"
		}
		if verb == "show" && fieldFmtKinds[k.Key()] {
			opts["field-fmt"] = "key value lines, for scripts"
		}
		return sugs("Options", opts)
	}
	if verb == "delete" {
		return s.names(k)
	}
	props := after
	if !k.Singleton {
		props = after[1:]
	}
	// Inside a block: show the innermost property's sub-schema, or items.
	kind, prev := k, ""
	depth := 0
	var stack []*objects.Kind
	for i, w := range props {
		switch w {
		case "{":
			stack = append(stack, kind)
			depth++
			if p := kind.Prop(prev); p != nil && p.Sub != nil && p.Type == objects.TStruct {
				kind = p.Sub
			} else if i >= 2 {
				if p := kind.Prop(props[i-2]); p != nil && p.Sub != nil {
					kind = p.Sub // `members add {` → item names, then item props
				}
			}
		case "}":
			if depth > 0 {
				kind = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				depth--
			}
		}
		prev = w
	}
	if p := kind.Prop(prev); p != nil {
		return s.values(p)
	}
	// `members modify {` / `members delete {`: the items the object has.
	if n := len(props); n >= 3 && props[n-1] == "{" && (props[n-2] == "modify" || props[n-2] == "delete") && !k.Singleton {
		if p := stack[len(stack)-1].Prop(props[n-3]); p != nil && p.Type == objects.TColl {
			if items := s.items(k, after[0], p.Name); len(items) > 0 {
				return items
			}
		}
	}
	return s.props(kind)
}

// items lists the names of an existing object's collection items, as
// list prints them, for completing `members modify { `.
func (s *Session) items(k *objects.Kind, name, prop string) []control.Suggestion {
	o := s.e.Config().Get(k, objects.FullPath(s.folder, name))
	if o == nil {
		return nil
	}
	v := o.Get(prop)
	if v == nil {
		return nil
	}
	out := []control.Suggestion{{Text: "all", Description: "every item", Group: "Objects"}}
	for _, it := range v.Items {
		out = append(out, control.Suggestion{Text: objects.ItemDisplay(s.folder, k.Prop(prop), it.Name), Group: "Objects"})
	}
	return out
}

func (s *Session) children(path []string, top bool) []control.Suggestion {
	m := map[string]string{}
	comp := map[string]string{}
	for w, isKind := range s.e.schema.Children(path) {
		full := append(append([]string{}, path...), w)
		desc := ""
		if k := s.e.schema.Kind(strings.Join(full, " ")); k != nil {
			desc = k.Help
		}
		if isKind && !s.e.schema.IsModulePath(full) {
			comp[w] = desc
		} else {
			if desc == "" {
				desc = moduleHelp[strings.Join(full, " ")]
			}
			m[w] = desc
		}
	}
	return append(sugs("Modules", m), sugs("Components", comp)...)
}

var moduleHelp = map[string]string{
	"ltm": "Local Traffic Manager", "gtm": "Global Traffic Manager (GSLB)", "net": "Network configuration",
	"sys": "System configuration", "ltm monitor": "LTM monitor templates", "ltm profile": "Virtual server profile configuration",
	"ltm persistence": "Virtual server persistence configuration", "ltm data-group": "Data groups for iRules",
	"gtm pool": "GSLB pools", "gtm wideip": "GSLB wide IPs",
}

func (s *Session) names(k *objects.Kind) []control.Suggestion {
	var out []control.Suggestion
	for _, o := range s.e.Config().Of(k) {
		if s.visible(o) {
			out = append(out, control.Suggestion{Text: objects.RelPath(s.folder, o.Name), Group: "Objects"})
		}
	}
	return out
}

func (s *Session) props(k *objects.Kind) []control.Suggestion {
	m := map[string]string{}
	for _, p := range k.Props {
		if p.ReadOnly {
			continue
		}
		h := p.Help
		if h == "" && p.Passive {
			h = "(kept and saved; openltm does not act on it)"
		}
		if p.Type == objects.TFlag {
			for _, w := range p.Enum {
				if w != "" {
					m[w] = h
				}
			}
			continue
		}
		m[p.Name] = h
	}
	if k == sysDB {
		m[resetToDefault] = "give the key back its BIG-IP default"
	}
	return sugs("Properties", m)
}

func (s *Session) values(p *objects.Prop) []control.Suggestion {
	switch p.Type {
	case objects.TEnum:
		m := map[string]string{}
		for _, e := range p.Enum {
			m[e] = ""
		}
		return sugs("Values", m)
	case objects.TRef, objects.TMonitor:
		var out []control.Suggestion
		if p.Type == objects.TRef {
			out = append(out, control.Suggestion{Text: "none", Group: "Values"})
		}
		for _, k := range s.e.schema.Kinds() {
			if !refOK(p.Ref, k.Key()) {
				continue
			}
			out = append(out, s.names(k)...)
		}
		return out
	case objects.TColl:
		return sugs("Options", map[string]string{"add": "add items", "delete": "delete items", "modify": "change items", "replace-all-with": "replace every item", "none": "remove every item"})
	case objects.TList:
		return sugs("Options", map[string]string{"add": "add items", "delete": "delete items", "replace-all-with": "replace every item", "none": "empty the list", "{": "the whole list"})
	}
	if p.Default != "" {
		return []control.Suggestion{{Text: "", Description: "<" + p.Name + "> (default " + p.Default + ")", Group: "Values"}}
	}
	return nil
}

func refOK(spec []string, key string) bool {
	for _, s := range spec {
		if s == key || (strings.HasSuffix(s, " ") && strings.HasPrefix(key, s)) {
			return true
		}
	}
	return false
}

func (s *Session) folders() []control.Suggestion {
	seen := map[string]string{"/Common": "", "/": ""}
	for _, o := range s.e.Config().Objects() {
		if strings.HasPrefix(o.Name, "/") {
			if i := strings.LastIndexByte(o.Name, '/'); i > 0 {
				seen[o.Name[:i]] = ""
			}
		}
	}
	return sugs("Folders", seen)
}
