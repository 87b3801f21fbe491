package daemon

import (
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// changeVerbatim creates or deletes an object of an F5 kind openltm knows by
// name only (net ipsec ike-daemon, net ipsec ike-peer, ...): BIG-IP accepts
// it, so tmsh does too, and keeps it verbatim exactly as a loaded file keeps
// it. openltm has no property table for such a kind, so it cannot check the
// properties; the warning says so. It reports false when the words name no
// F5 kind.
func (s *Session) changeVerbatim(st *grammar.Statement, verb string, t target, cfg *objects.Config) (bool, error) {
	ws := append([]string{}, t.module...)
	i := 0
	for ; i < len(t.rest); i++ {
		w, ok := t.rest[i].(*grammar.Word)
		if !ok {
			break
		}
		ws = append(ws, w.Text)
	}
	kind, ok := objects.F5Kind(ws)
	if !ok || !strings.Contains(kind, " ") {
		// A module F5 documents apart (apm, asm): its kinds are not listed
		// one by one, so the name cannot be told from the kind.
		return false, nil
	}
	if kind == "gtm pool" {
		// BIG-IP 11's untyped gtm pool: BIG-IP 12+'s tmsh wants a type
		// (a, aaaa, ...), and so does openltm's; a loaded file's v11
		// pool is converted instead (objects/gtm_v11.go).
		return false, nil
	}
	if kind == ruleGlobals {
		return true, ruleGlobalsRefused(verb)
	}
	kw := strings.Fields(kind)
	// The node after the kind's words is the object's name.
	at := len(kw) - len(t.module)
	if at < 0 || at >= len(t.rest) {
		return true, synErr(st, []string{"an object name"}, "%s %s needs a name", verb, kind)
	}
	nw, ok := t.rest[at].(*grammar.Word)
	if !ok {
		return true, synErr(t.rest[at], []string{"an object name"}, "%s %s needs a name before { }", verb, kind)
	}
	name := objects.FullPath(s.folder, nw.Text)
	key := "?" + kind + " " + name
	var old *objects.Object
	for _, o := range cfg.Unknown() {
		if o.Key() == key {
			old = o
		}
	}
	notFound := func() error {
		return &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested %s (%s) was not found.", kind, name)}
	}
	switch verb {
	case "create":
		if old != nil {
			return true, &objects.ConfigError{Code: "01020066", Msg: fmt.Sprintf("The requested %s (%s) already exists in partition %s.", kind, name, partitionOf(name))}
		}
		body, err := verbatimBody(t.rest[at+1:])
		if err != nil {
			return true, err
		}
		text := kind + " " + name + " {" + body + " }\n"
		objs, err := s.e.schema.ReadConfig(st.Pos.String(), []byte(text), nil)
		if err != nil {
			return true, err
		}
		for _, o := range objs {
			cfg.Put(o)
		}
		s.warnings = append(s.warnings, fmt.Sprintf("%s is an F5 object kind openltm does not act on; kept verbatim and saved back (openltm does not know its properties and does not check them)", kind))
		return true, nil
	case "delete":
		if old == nil {
			return true, notFound()
		}
		cfg.Delete(old)
		return true, nil
	case "modify":
		if old == nil {
			return true, notFound()
		}
		return true, objects.Invalid("openltm keeps %s objects verbatim and cannot modify their properties: delete %s %s and create it again, or load sys config merge", kind, kind, nw.Text)
	}
	return false, nil
}

// verbatimBody renders tmsh create arguments as a bigip.conf block body:
// `add { … }` and `replace-all-with { … }` become the plain list, as a
// new object's collections are written in a file.
func verbatimBody(nodes []grammar.Node) (string, error) {
	var b strings.Builder
	for i, n := range nodes {
		if w, ok := n.(*grammar.Word); ok {
			switch w.Text {
			case "add", "replace-all-with":
				if i+1 < len(nodes) {
					if _, ok := nodes[i+1].(*grammar.Block); ok {
						continue
					}
				}
			case "delete", "modify", "none":
				if i+1 < len(nodes) {
					if _, ok := nodes[i+1].(*grammar.Block); ok {
						return "", synErr(w, []string{"add", "replace-all-with"}, "%q cannot be used when creating an object", w.Text)
					}
				}
			}
		}
		b.WriteString(" ")
		b.WriteString(grammar.RenderOneLine(n))
	}
	return b.String(), nil
}

// partitionOf is the partition of a full object path (/Common/x → Common).
func partitionOf(name string) string {
	p := strings.TrimPrefix(name, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "Common"
}

// ruleGlobals is BIG-IP's iRule settings singleton. F5's tmsh index lists
// it (objects/vocab_kinds.go), but its properties were not found in the
// F5 documentation openltm was built from, so openltm has no table for
// it and does not act on it: a bigip.conf that holds it keeps it
// verbatim (objects/reader.go), and tmsh says so instead of reading its
// first property as an object's name.
const ruleGlobals = "ltm global-settings rule"

// ruleGlobalsRefused is the answer to create, modify and delete of
// ltm global-settings rule: nothing changes, and the error says why.
func ruleGlobalsRefused(verb string) error {
	if verb != "modify" {
		return objects.Invalid("%s is a singleton BIG-IP keeps: it cannot be %sd, only modified", ruleGlobals, verb)
	}
	return objects.Invalid("%s is not supported by openltm yet: openltm has no table of its properties, so it cannot check or change them (a loaded bigip.conf that holds it keeps it verbatim and saves it back); nothing changed", ruleGlobals)
}

// isRuleGlobals reports whether args name ltm global-settings rule.
func (s *Session) isRuleGlobals(args []grammar.Node) bool {
	ws, err := words(args)
	return err == nil && strings.Join(s.moduleFor(ws), " ") == ruleGlobals
}

// listRuleGlobals lists ltm global-settings rule: as a bigip.conf held
// it, or with no value set.
func (s *Session) listRuleGlobals(w io.Writer) error {
	for _, o := range s.e.Config().Unknown() {
		if strings.Join(o.Words, " ") == ruleGlobals {
			_, err := io.WriteString(w, objects.Format(o, objects.PrintOpts{}))
			return err
		}
	}
	_, err := io.WriteString(w, ruleGlobals+" { }\n")
	return err
}
