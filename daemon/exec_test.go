package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
)

func openTest(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := Open(Options{StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// run executes one command and returns its output, or its error text.
func run(t *testing.T, s *Session, line string) (string, string) {
	t.Helper()
	var b strings.Builder
	err := s.Exec(context.Background(), line, &b)
	if err != nil {
		return b.String(), err.Error()
	}
	return b.String(), ""
}

// step is one command of a table test and what it must give: out a
// substring of its output, err one of its error ("": no error).
type step struct{ cmd, out, err string }

// runSteps runs each step in s and reports every one that errs
// otherwise than it says or whose output lacks its out.
func runSteps(t *testing.T, s *Session, steps []step) {
	t.Helper()
	for _, tc := range steps {
		out, err := run(t, s, tc.cmd)
		if (tc.err == "") != (err == "") || !strings.Contains(err, tc.err) {
			t.Errorf("%s: error %q, want %q", tc.cmd, err, tc.err)
			continue
		}
		if !strings.Contains(out, tc.out) {
			t.Errorf("%s:\n%s\nwant it to contain\n%s", tc.cmd, out, tc.out)
		}
	}
}

func TestCommands(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	steps := []struct {
		cmd, out, err string // out/err: substrings expected ("" = expect none for err)
	}{
		{cmd: "create ltm pool web_pool members add { 127.0.20.11:80 127.0.20.12:http } monitor http"},
		{cmd: "list ltm pool web_pool", out: "ltm pool web_pool {\n    members {\n        127.0.20.11:http {\n            address 127.0.20.11\n        }\n        127.0.20.12:http {\n            address 127.0.20.12\n        }\n    }\n    monitor http\n}\n"},
		{cmd: "create ltm pool web_pool", err: "01020066:3: The requested Pool (/Common/web_pool) already exists in partition Common."},
		{cmd: "modify ltm pool nope description x", err: "01020036:3: The requested pool (/Common/nope) was not found."},
		{cmd: "create ltm virtual vs1 destination 127.0.20.1:80 pool nope", err: "01020036:3: The requested pool (/Common/nope) was not found."},
		{cmd: "list ltm virtual", out: ""},
		{cmd: "create ltm pool p2 bogus 1", err: `Syntax Error: "bogus" unknown property (at 1:20;`},
		{cmd: "create ltm virtual vs1 destination 127.0.20.1:80 pool web_pool"},
		{cmd: "delete ltm pool web_pool", err: "01070265:3: The Pool (/Common/web_pool) cannot be deleted because it is in use by a Virtual Server (/Common/vs1)."},
		{cmd: "modify ltm pool web_pool members modify { 127.0.20.12:80 { session user-disabled } }"},
		{cmd: "list ltm pool web_pool members one-line", out: "ltm pool web_pool { members { 127.0.20.11:http { address 127.0.20.11 } 127.0.20.12:http { address 127.0.20.12 session user-disabled } } }\n"},
		{cmd: "modify ltm pool web_pool members delete { 127.0.20.11:80 }"},
		{cmd: "modify ltm pool web_pool members delete { 127.0.20.11:80 }", err: "was not found"},
		{cmd: "list ltm node", out: "ltm node 127.0.20.11 {\n    address 127.0.20.11\n}\nltm node 127.0.20.12 {"},
		{cmd: "delete ltm node 127.0.20.12", err: "01070110:3: Node address '/Common/127.0.20.12' is referenced by a member of pool '/Common/web_pool'."},
		{cmd: "modify ltm virtual vs1 disabled"},
		{cmd: "list ltm virtual vs1 one-line", out: "disabled"},
		{cmd: "ltm"},
		{cmd: "list pool web_pool load-balancing-mode all-properties", out: "ltm pool web_pool {\n    load-balancing-mode round-robin\n}\n"},
		{cmd: "exit"},
		{cmd: "list ltm monitor http http all-properties", out: "    interval 5\n"},
		{cmd: "delete ltm monitor http http", err: "built-in"},
		{cmd: "create cli transaction"},
		{cmd: "create ltm pool tx_pool members add { 127.0.20.21:80 }"},
		{cmd: "modify ltm pool tx_pool description queued"},
		{cmd: "create ltm virtual tx_vs destination 127.0.20.2:80 pool missing"},
		{cmd: "submit cli transaction", err: "01020036:3: The requested pool (/Common/missing) was not found."},
		{cmd: "list ltm pool tx_pool", err: "was not found"},
		{cmd: "create cli transaction"},
		{cmd: "create ltm pool tx_pool members add { 127.0.20.21:80 }"},
		{cmd: "create ltm virtual tx_vs destination 127.0.20.2:80 pool tx_pool"},
		{cmd: "list cli transaction", out: "1: create ltm pool tx_pool"},
		{cmd: "submit cli transaction"},
		{cmd: "list ltm virtual tx_vs pool", out: "ltm virtual tx_vs {\n    pool tx_pool\n}\n"},
		{cmd: "create ltm rule r1 {\nwhen CLIENT_ACCEPTED {\n  # a {x} in a comment\n  pool tx_pool\n}\n}"},
		{cmd: "list ltm rule r1", out: "ltm rule r1 {\nwhen CLIENT_ACCEPTED {\n  # a {x} in a comment\n  pool tx_pool\n}\n}\n"},
		{cmd: "bogus", err: `"bogus" unknown command`},
	}
	for i, st := range steps {
		out, err := run(t, s, st.cmd)
		if st.err == "" && err != "" {
			t.Fatalf("step %d %q: unexpected error %s", i, st.cmd, err)
		}
		if st.err != "" && !strings.Contains(err, st.err) {
			t.Fatalf("step %d %q: error %q, want it to contain %q", i, st.cmd, err, st.err)
		}
		if !strings.Contains(out, st.out) {
			t.Fatalf("step %d %q: output\n%s\nwant it to contain\n%s", i, st.cmd, out, st.out)
		}
		if st.out == "" && st.err == "" && out != "" && !strings.HasPrefix(st.cmd, "list") {
			t.Fatalf("step %d %q: unexpected output %q", i, st.cmd, out)
		}
	}
}

func TestRestartRestoresAndHistory(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p1 members add { 127.0.21.1:80 }",
		"modify ltm pool p1 description first",
		"modify ltm pool p1 description second",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatal(err)
		}
	}
	before, _ := run(t, s, "list ltm pool p1")
	e.Close()

	e = openTest(t, dir)
	defer e.Close()
	s = e.NewSession("admin").(*Session)
	after, _ := run(t, s, "list ltm pool p1")
	if before != after {
		t.Fatalf("after restart:\n%s\nwant\n%s", after, before)
	}
	hist, _ := run(t, s, "show sys config-history")
	if !strings.Contains(hist, "3*") || !strings.Contains(hist, "modify ltm pool p1 description second") {
		t.Fatalf("history:\n%s", hist)
	}
	d, _ := run(t, s, "show sys config-history diff 2 3")
	if !strings.Contains(d, "-    description first") || !strings.Contains(d, "+    description second") {
		t.Fatalf("diff:\n%s", d)
	}
	if _, err := run(t, s, "load sys config generation 2"); err != "" {
		t.Fatal(err)
	}
	out, _ := run(t, s, "list ltm pool p1 description")
	if !strings.Contains(out, "description first") {
		t.Fatalf("after rollback: %s", out)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm monitor http m1 { send \"GET /x HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n\" recv 200 interval 2 timeout 7 }",
		"create ltm pool p1 members add { 127.0.22.1:80 { ratio 3 } 127.0.22.2:8080 } monitor m1 and tcp load-balancing-mode ratio-member",
		"create ltm snatpool sp1 members add { 127.0.22.100 }",
		"create ltm virtual v1 destination 127.0.22.10:80 pool p1 source-address-translation { type snat pool sp1 } profiles replace-all-with { tcp { } http { } }",
		"save sys config file " + dir + "/one.conf",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	e.Close()
	e2 := openTest(t, t.TempDir())
	defer e2.Close()
	s2 := e2.NewSession("admin").(*Session)
	if _, err := run(t, s2, "load sys config file "+dir+"/one.conf"); err != "" {
		t.Fatal(err)
	}
	if _, err := run(t, s2, "save sys config file "+dir+"/two.conf no-passphrase"); err != "" {
		t.Fatal(err)
	}
	if _, err := run(t, s2, "save sys config file "+dir+"/three.conf passphrase secret"); !strings.Contains(err, "does not encrypt") {
		t.Fatalf("passphrase: %q", err)
	}
	one, two := readFile(t, dir+"/one.conf"), readFile(t, dir+"/two.conf")
	if one != two {
		t.Fatalf("save → load → save differs:\n%s\n---\n%s", one, two)
	}
}

func TestRuleCompileErrorsRefuseTheCommit(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	_, err := run(t, s, "create ltm rule bad {\nwhen CLIENT_ACCEPTED {\n  exec ls\n}\n}")
	if !strings.Contains(err, "01070151:3: Rule [/Common/bad] error: /Common/bad:3:3:") || !strings.Contains(err, "exec") {
		t.Fatalf("error %q", err)
	}
	if out, _ := run(t, s, "list ltm rule"); strings.Contains(out, "bad") {
		t.Fatalf("refused rule exists: %s", out)
	}
	if _, err := run(t, s, "create ltm rule good {\nwhen CLIENT_ACCEPTED {\n  if { [TCP::local_port] < 10500 } { pool p1 } else { drop }\n}\n}"); err != "" {
		t.Fatal(err)
	}
}

func TestAChangeThatChangesNothingMakesNoGeneration(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p1 description one",
		"modify ltm pool p1 description one",
		"modify ltm pool p1 description one",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatal(err)
		}
	}
	if g := e.Generation(); g != 1 {
		t.Fatalf("generation %d after two modifies that change nothing, want 1", g)
	}
	if _, err := run(t, s, "modify ltm pool p1 description two"); err != "" || e.Generation() != 2 {
		t.Fatalf("a real change: %s, generation %d", err, e.Generation())
	}
}

func TestUnknownKindsAreListed(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	conf := dir + "/apm.conf"
	if err := os.WriteFile(conf, []byte("apm policy access-policy /Common/ap1 {\n    items { /Common/ap1_end { } }\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, s, "load sys config merge file "+conf); err != "" {
		t.Fatal(err)
	}
	for _, c := range []string{"list apm", "list apm policy access-policy", "list apm policy access-policy ap1"} {
		out, err := run(t, s, c)
		if err != "" || !strings.Contains(out, "apm policy access-policy /Common/ap1 {\n    items { /Common/ap1_end { } }\n}\n") {
			t.Fatalf("%s: %q %q", c, out, err)
		}
	}
	if _, err := run(t, s, "list apm policy access-policy nope"); err == "" {
		t.Fatal("a missing unknown object listed without error")
	}
}

func TestUnknownTypeSuggests(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for cmd, want := range map[string]string{
		"create ltm pol x":     `"pol" unknown type in "ltm"; did you mean "pool"?`,
		"create ltm virtul x":  `"virtual" ?`,
		"create ltm zzzzzzz x": `"zzzzzzz" unknown type in "ltm" (at 1:12`,
	} {
		_, errText := run(t, s, cmd)
		if !strings.Contains(errText, strings.TrimSuffix(want, " ?")) {
			t.Errorf("%s: %q, want %q", cmd, errText, want)
		}
	}
}

// A member disabled and enabled again lists as its neighbour does.
func TestMembersListAlikeAfterEnable(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool al members add { 127.0.0.81:80 127.0.0.82:80 }",
		"modify ltm pool al members modify { 127.0.0.81:80 { session user-disabled } }",
		"modify ltm pool al members modify { 127.0.0.81:80 { session user-enabled } }",
	} {
		if _, errText := run(t, s, c); errText != "" {
			t.Fatal(errText)
		}
	}
	out, _ := run(t, s, "list ltm pool al")
	if strings.Contains(out, "session") {
		t.Fatalf("list shows a session setting on one member only:\n%s", out)
	}
}

// cd goes to folders that exist: /Common, a partition from its creation
// (still empty), a sys folder, and any folder holding objects.
func TestCd(t *testing.T) {
	e := openTest(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct {
		cmd, err, folder string
	}{
		{"cd /Nope", "01020036:3: The requested folder (/Nope) was not found.", "/Common"},
		{"cd /Dev", "01020036:3: The requested folder (/Dev) was not found.", "/Common"},
		{"create auth partition Dev", "", "/Common"},
		{"cd /Dev", "", "/Dev"},
		{"cd ..", "", "/"},
		{"cd Common", "", "/Common"},
		{"create sys folder /Dev/app", "", "/Common"},
		{"cd /Dev/app", "", "/Dev/app"},
		{"cd /Dev/nope", "01020036:3: The requested folder (/Dev/nope) was not found.", "/Dev/app"},
	} {
		_, errText := run(t, s, tc.cmd)
		if !strings.Contains(errText, tc.err) || (tc.err == "" && errText != "") {
			t.Fatalf("%s: error %q, want %q", tc.cmd, errText, tc.err)
		}
		if s.folder != tc.folder {
			t.Fatalf("%s: in %s, want %s", tc.cmd, s.folder, tc.folder)
		}
	}
	// Partitions are not in a folder: listed from any.
	if out, errText := run(t, s, "list auth partition"); errText != "" || !strings.Contains(out, "auth partition Dev { }\n") {
		t.Fatalf("list auth partition from %s: %q %q", s.folder, out, errText)
	}
	if out, errText := run(t, s, "create auth partition Ops"); errText != "" || strings.Contains(out, "Warning") {
		t.Fatalf("a partition is acted on, no warning: %q %q", out, errText)
	}
}

// modify takes several names, as tmsh does (modify ltm node n1 n2 session
// user-disabled): each object gets the properties, or, on an error,
// none.
func TestModifySeveralObjects(t *testing.T) {
	e := openTest(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{"create ltm pool a", "create ltm pool b", "create ltm pool c"} {
		if _, errText := run(t, s, c); errText != "" {
			t.Fatal(errText)
		}
	}
	for _, tc := range []struct {
		cmd, err, want string
	}{
		{"modify ltm pool a b description two", "", "ltm pool a { description two }\nltm pool b { description two }\nltm pool c { }\n"},
		{"modify ltm pool a c* description glob", "", "ltm pool a { description glob }\nltm pool b { description two }\nltm pool c { description glob }\n"},
		{"modify ltm pool a b nosuch description x", `"nosuch" unknown property`, "ltm pool a { description glob }\nltm pool b { description two }\nltm pool c { description glob }\n"},
		{"modify ltm pool a b description x nosuch", `"nosuch" unknown property`, "ltm pool a { description glob }\nltm pool b { description two }\nltm pool c { description glob }\n"},
	} {
		_, errText := run(t, s, tc.cmd)
		if !strings.Contains(errText, tc.err) || (tc.err == "" && errText != "") {
			t.Fatalf("%s: error %q, want %q", tc.cmd, errText, tc.err)
		}
		if out, _ := run(t, s, "list ltm pool one-line"); out != tc.want {
			t.Fatalf("%s: pools\n%s\nwant\n%s", tc.cmd, out, tc.want)
		}
	}
}
