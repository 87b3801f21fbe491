package daemon

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openltm/openltm/objects/store"
)

// TestHTTPRuleNeedsProfile: as BIG-IP (01071912), a rule whose events or
// commands need an http profile is refused on a virtual server without
// one, whichever way the two meet: create, a change of the virtual's
// profiles or rules, a change of the rule, a loaded file, a transaction.
func TestHTTPRuleNeedsProfile(t *testing.T) {
	const (
		base = "create ltm pool p members add { 127.43.0.11:80 }"
		hr   = "create ltm rule hr { when HTTP_REQUEST { HTTP::header insert X-A 1 } }"
		tcp  = "create ltm rule tr { when CLIENT_ACCEPTED { pool p } }"
		ev   = "01071912:3: HTTP_REQUEST event in rule (/Common/hr) requires an associated HTTP or FASTHTTP profile on the virtual-server (/Common/vs)."
	)
	file := func(virtual string) string {
		return "ltm rule /Common/hr {\n    when HTTP_REQUEST { HTTP::header insert X-A 1 }\n}\n" +
			"ltm pool /Common/p {\n    members {\n        /Common/127.43.0.11:80 {\n            address 127.43.0.11\n        }\n    }\n}\n" + virtual
	}
	cases := []struct {
		name  string
		setup []string
		cmd   string // "load:TEXT" loads TEXT as a file
		err   string // "" : accepted
	}{
		{"create, tcp only", []string{base, hr},
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { hr } profiles replace-all-with { tcp }", ev},
		{"create, no profile named", []string{base, hr},
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { hr }", ev},
		{"create, http", []string{base, hr},
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { hr } profiles replace-all-with { tcp http }", ""},
		{"create, tcp rule on tcp", []string{base, tcp},
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { tr } profiles replace-all-with { tcp }", ""},
		{"persist cookie in CLIENT_ACCEPTED", []string{base, "create ltm rule pc { when CLIENT_ACCEPTED { persist cookie insert c 0 } }"},
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { pc } profiles replace-all-with { tcp }",
			"01071912:3: persist cookie in rule (/Common/pc) requires an associated HTTP profile on the virtual-server (/Common/vs)."},
		{"HTTP:: command in CLIENT_ACCEPTED", []string{base, "create ltm rule hu { when CLIENT_ACCEPTED { log local0. [HTTP::uri] } }"},
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { hu } profiles replace-all-with { tcp }",
			"01071912:3: HTTP::uri in rule (/Common/hu) requires an associated HTTP or FASTHTTP profile on the virtual-server (/Common/vs)."},
		{"second rule of the list", []string{base, hr, tcp},
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { tr hr } profiles replace-all-with { tcp }", ev},
		{"modify profiles: http removed", []string{base, hr,
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { hr } profiles replace-all-with { tcp http }"},
			"modify ltm virtual vs profiles replace-all-with { tcp }", ev},
		{"modify rules: added to tcp", []string{base, hr,
			"create ltm virtual vs destination 127.43.0.10:80 pool p profiles replace-all-with { tcp }"},
			"modify ltm virtual vs rules { hr }", ev},
		{"modify rule: gains an HTTP event", []string{base, "create ltm rule hr { when CLIENT_ACCEPTED { pool p } }",
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { hr } profiles replace-all-with { tcp }"},
			"modify ltm rule hr { when HTTP_REQUEST { HTTP::header insert X-A 1 } }", ev},
		{"load merge", nil,
			"load:" + file("ltm virtual /Common/vs {\n    destination /Common/127.43.0.10:80\n    pool /Common/p\n    profiles {\n        /Common/tcp { }\n    }\n    rules {\n        /Common/hr\n    }\n}\n"), ev},
		{"load merge, http", nil,
			"load:" + file("ltm virtual /Common/vs {\n    destination /Common/127.43.0.10:80\n    pool /Common/p\n    profiles {\n        /Common/http { }\n        /Common/tcp { }\n    }\n    rules {\n        /Common/hr\n    }\n}\n"), ""},
		{"transaction", []string{base, hr, "create cli transaction",
			"create ltm virtual vs destination 127.43.0.10:80 pool p rules { hr } profiles replace-all-with { tcp }"},
			"submit cli transaction", ev},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			e, _ := openWithPlane(t, dir)
			s := e.NewSession("admin").(*Session)
			for _, l := range c.setup {
				if _, err := run(t, s, l); err != "" {
					t.Fatalf("%s: %s", l, err)
				}
			}
			err := runOrLoad(t, s, dir, c.cmd)
			if c.err == "" && err != "" || c.err != "" && !strings.Contains(err, c.err) {
				t.Fatalf("%s: error %q, want %q", c.cmd, err, c.err)
			}
			if c.err != "" {
				// Nothing changed: the running configuration has no such pair.
				vs, _ := run(t, s, "list ltm virtual vs profiles rules")
				rule, _ := run(t, s, "list ltm rule hr")
				if strings.Contains(vs, "hr") && !strings.Contains(vs, "http") && strings.Contains(rule, "HTTP_REQUEST") {
					t.Fatalf("after the refusal:\n%s%s", vs, rule)
				}
			}
		})
	}
}

// TestHTTPRuleNeedsProfileStored: a configuration an earlier openltm
// stored with such a pair still starts; the virtual is left out, and
// later unrelated changes are not refused for it.
func TestHTTPRuleNeedsProfileStored(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	s := e.NewSession("admin").(*Session)
	for _, l := range []string{
		"create ltm pool p members add { 127.43.0.21:80 }",
		"create ltm rule hr { when HTTP_REQUEST { HTTP::header insert X-A 1 } }",
		"create ltm virtual vs destination 127.43.0.20:80 pool p rules { hr } profiles replace-all-with { tcp http }",
	} {
		if _, err := run(t, s, l); err != "" {
			t.Fatalf("%s: %s", l, err)
		}
	}
	e.Close()
	// What an earlier version could store: the same without http.
	st, err := store.Open(filepath.Join(dir, "config.db"))
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := st.Latest()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s*/Common/http \{ ?\}\n`)
	if !re.MatchString(g.Config) {
		t.Fatalf("no http profile line in the stored configuration:\n%s", g.Config)
	}
	g.Config = re.ReplaceAllString(g.Config, "")
	if _, err := st.Commit(g); err != nil {
		t.Fatal(err)
	}
	st.Close()

	e, _ = openWithPlane(t, dir)
	s = e.NewSession("admin").(*Session)
	if out, _ := run(t, s, "list ltm virtual vs profiles"); strings.Contains(out, "http") || !strings.Contains(out, "tcp") {
		t.Fatalf("restored virtual:\n%s", out)
	}
	if _, err := run(t, s, "create ltm pool unrelated"); err != "" {
		t.Fatalf("an unrelated change: %s", err)
	}
	if _, err := run(t, s, "modify ltm virtual vs profiles replace-all-with { tcp http }"); err != "" {
		t.Fatalf("adding the http profile: %s", err)
	}
}
