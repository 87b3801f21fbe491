package tcl

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// A conformance case is a Tcl script whose output (everything it puts, then
// its completion code and result) must be the same in this interpreter and
// in tclsh 8.6. Cases live in testdata/conformance/*.txt, each introduced by
// a line "### name".
type confCase struct {
	name   string
	script string
}

func loadConfCases(t *testing.T) []confCase {
	t.Helper()
	files, err := filepath.Glob("testdata/conformance/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files: %v", err)
	}
	sort.Strings(files)
	var out []confCase
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".txt")
		var cur *confCase
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if strings.HasPrefix(line, "### ") {
				name := base + "/" + strings.TrimSpace(line[4:])
				if seen[name] {
					t.Fatalf("duplicate case %s", name)
				}
				seen[name] = true
				out = append(out, confCase{name: name})
				cur = &out[len(out)-1]
				continue
			}
			if cur != nil {
				cur.script += line
			}
		}
	}
	return out
}

const resultMark = "<<<RESULT "

// runOurs runs a case in a fresh interpreter and renders its output.
func runOurs(script string) string {
	in := NewInterp(NewCommands())
	var out bytes.Buffer
	in.Stdout = &out
	in.SetBudget(5_000_000, time.Now().Add(10*time.Second))
	v, err := in.EvalString(script)
	code := 0
	res := v.String()
	if err != nil {
		var se *SyntaxError
		var te *Error
		var c *ctrl
		switch {
		case errors.As(err, &se):
			code, res = 1, se.Msg
		case errors.As(err, &te):
			code, res = 1, te.Msg
		case errors.As(err, &c):
			code = c.code
			if c.code == 2 {
				code = 0
			}
		default:
			code, res = 1, err.Error()
		}
	}
	fmt.Fprintf(&out, "%s%d>>>\n%s\n", resultMark, code, res)
	return out.String()
}

// runTclsh runs every case in one tclsh process, each in a fresh child
// interpreter, and splits the output per case.
func runTclsh(t *testing.T, tclsh string, cases []confCase) map[string]string {
	t.Helper()
	var drv strings.Builder
	drv.WriteString("fconfigure stdout -translation lf -encoding utf-8\n")
	for _, c := range cases {
		fmt.Fprintf(&drv, "puts {<<<CASE %s>>>}\n", c.name)
		fmt.Fprintf(&drv, "set i [interp create]\n")
		fmt.Fprintf(&drv, "interp eval $i {fconfigure stdout -translation lf -encoding utf-8}\n")
		fmt.Fprintf(&drv, "set code [catch {interp eval $i [encoding convertfrom utf-8 [binary decode base64 {%s}]]} res]\n",
			base64.StdEncoding.EncodeToString([]byte(c.script)))
		fmt.Fprintf(&drv, "if {$code == 2} {set code 0}\n")
		fmt.Fprintf(&drv, "flush stdout\nputs \"%s$code>>>\"\nputs $res\ninterp delete $i\n", resultMark)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tclsh)
	cmd.Stdin = strings.NewReader(drv.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tclsh: %v\n%s", err, stderr.String())
	}
	out := map[string]string{}
	parts := strings.Split(stdout.String(), "<<<CASE ")
	for _, p := range parts[1:] {
		name, body, _ := strings.Cut(p, ">>>\n")
		out[name] = body
	}
	return out
}

func findTclsh(t *testing.T) string {
	t.Helper()
	for _, n := range []string{"tclsh8.6", "tclsh"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("tclsh not found: install Tcl 8.6 (Debian package \"tcl\") to run the conformance tests")
	return ""
}

func TestConformance(t *testing.T) {
	cases := loadConfCases(t)
	tclsh := findTclsh(t)
	want := runTclsh(t, tclsh, cases)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, ok := want[c.name]
			if !ok {
				t.Fatalf("tclsh produced no output for this case")
			}
			got := runOurs(c.script)
			if got != w {
				t.Errorf("script:\n%s\n--- tclsh:\n%s--- ours:\n%s", c.script, w, got)
			}
		})
	}
}

func TestConformanceCaseCount(t *testing.T) {
	if n := len(loadConfCases(t)); n < 300 {
		t.Errorf("only %d conformance cases; keep the table large", n)
	}
}
