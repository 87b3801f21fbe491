package rules

import (
	"flag"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/openltm/openltm/rules/tcl"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the generated lists in README.md")

// readmeLists renders the supported commands and events from the
// registry, as README.md shows them between its markers.
func readmeLists() map[string]string {
	core := map[string]bool{}
	for _, n := range tcl.NewCommands().Names() {
		core[n] = true
	}
	var irules, tclCmds []string
	for _, n := range commandTable().Names() {
		if core[n] {
			tclCmds = append(tclCmds, n)
		} else {
			irules = append(irules, n)
		}
	}
	// Group iRules commands by namespace, one line each.
	byNS := map[string][]string{}
	var nss []string
	for _, n := range irules {
		ns := ""
		if i := strings.Index(n, "::"); i > 0 {
			ns = n[:i+2]
		}
		if _, ok := byNS[ns]; !ok {
			nss = append(nss, ns)
		}
		byNS[ns] = append(byNS[ns], n)
	}
	sort.Strings(nss)
	var b strings.Builder
	for _, ns := range nss {
		if ns == "" {
			b.WriteString("- (no namespace):")
		} else {
			b.WriteString("- " + strings.TrimSuffix(ns, "::") + ":")
		}
		for _, n := range byNS[ns] {
			b.WriteString(" `" + n + "`")
		}
		b.WriteString("\n")
	}
	var e strings.Builder
	for i, n := range eventNames {
		if i > 0 {
			e.WriteString(" ")
		}
		e.WriteString("`" + n + "` (" + Event(i).Side().String() + ")")
	}
	e.WriteString("\n")
	var c strings.Builder
	for i, n := range tclCmds {
		if i > 0 {
			c.WriteString(" ")
		}
		c.WriteString("`" + n + "`")
	}
	c.WriteString("\n")
	return map[string]string{"commands": b.String(), "events": e.String(), "tcl": c.String()}
}

// TestReadmeListsRegistry keeps README.md's lists of supported commands
// and events equal to the registry (go test -run Readme -update-readme
// rewrites them).
func TestReadmeListsRegistry(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for name, want := range readmeLists() {
		open, end := "<!-- generated: "+name+" -->\n", "<!-- end: "+name+" -->"
		i := strings.Index(doc, open)
		j := strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the %q and %q markers", strings.TrimSpace(open), end)
		}
		got := doc[i+len(open) : j]
		if got == want {
			continue
		}
		if *updateReadme {
			doc = doc[:i+len(open)] + want + doc[j:]
			continue
		}
		t.Errorf("README.md's %s list differs from the registry (go test ./rules -run Readme -update-readme):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
	if *updateReadme {
		if err := os.WriteFile("README.md", []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
