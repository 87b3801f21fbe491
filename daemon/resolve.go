package daemon

import (
	"sort"
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// moduleFor resolves words typed in the current module context to an
// absolute module path: a leading "/" means absolute, otherwise the words
// are tried under the current module first, then from the top.
func (s *Session) moduleFor(words []string) []string {
	if len(words) > 0 && strings.HasPrefix(words[0], "/") {
		w := append([]string{strings.TrimPrefix(words[0], "/")}, words[1:]...)
		return w
	}
	if len(s.module) > 0 {
		rel := append(append([]string{}, s.module...), words...)
		if s.e.schema.IsModulePath(rel) {
			return rel
		}
		if k, _ := s.e.schema.Match(rel); k != nil {
			return rel
		}
	}
	return words
}

// target is what a command's words name: a kind (with the remaining
// arguments) or a module level.
type target struct {
	kind   *objects.Kind
	module []string       // set when the words name a module level
	rest   []grammar.Node // arguments after the kind words
	words  []grammar.Node // the kind words themselves
}

// resolve reads the kind or module path at the start of args.
func (s *Session) resolve(args []grammar.Node) (target, error) {
	var ws []string
	var n int
	for _, a := range args {
		w, ok := a.(*grammar.Word)
		if !ok {
			break
		}
		ws = append(ws, w.Text)
		n++
	}
	abs := len(ws) > 0 && strings.HasPrefix(ws[0], "/") && !strings.Contains(ws[0][1:], "/")
	try := func(prefix []string) (target, bool) {
		full := append(append([]string{}, prefix...), ws...)
		if abs {
			full = append(append([]string{}, prefix...), append([]string{strings.TrimPrefix(ws[0], "/")}, ws[1:]...)...)
		}
		if k, used := s.e.schema.Match(full); k != nil {
			own := used - len(prefix)
			if own < 0 {
				return target{}, false
			}
			return target{kind: k, rest: args[own:], words: args[:own]}, true
		}
		// The longest module path.
		for m := len(full); m > len(prefix) || (m == len(prefix) && len(ws) == 0); m-- {
			if m > 0 && s.e.schema.IsModulePath(full[:m]) {
				own := m - len(prefix)
				return target{module: full[:m], rest: args[own:], words: args[:own]}, true
			}
		}
		if len(prefix) > 0 && len(ws) == 0 {
			return target{module: prefix, rest: args}, true
		}
		return target{}, false
	}
	if !abs && len(s.module) > 0 {
		if t, ok := try(s.module); ok {
			return t, nil
		}
	}
	if abs {
		if t, ok := try(nil); ok {
			return t, nil
		}
	} else if t, ok := try(nil); ok {
		return t, nil
	}
	if len(args) == 0 {
		return target{}, nil
	}
	var valid []string
	for w := range s.e.schema.Children(s.module) {
		valid = append(valid, w)
	}
	sort.Strings(valid)
	return target{}, synErr(args[0], valid, "%q unknown module or object type", firstText(args))
}

func firstText(ns []grammar.Node) string {
	if len(ns) == 0 {
		return ""
	}
	if w, ok := ns[0].(*grammar.Word); ok {
		return w.Text
	}
	return "{"
}

func (s *Session) reader(mode objects.Mode) *objects.Reader {
	return &objects.Reader{Schema: s.e.schema, Folder: s.folder, Mode: mode}
}
