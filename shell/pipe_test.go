package shell

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const pipeInput = `ltm pool web {
    members {
        10.0.0.1:http {
            address 10.0.0.1
        }
        10.0.0.2:http {
            address 10.0.0.2
        }
    }
    monitor http
}
ltm pool app {
    monitor tcp
}
`

var pipelineCases = []string{
	"grep address",
	"grep -v '^ '",
	"grep -c monitor",
	"grep -ci MONITOR",
	"grep -n monitor",
	"grep -A1 monitor",
	"grep -B 1 -n 'tcp'",
	"grep -C1 'pool app'",
	"grep -m1 address",
	`grep 'address 10\.0\.0\.[2]$'`,
	`grep 'monitor \(http\|tcp\)'`,
	`grep -E 'monitor (http|tcp)'`,
	`egrep "web|app" | wc -l`,
	`fgrep '10.0.0.'`,
	`grep 'a+b'`,
	`grep -w pool | grep -x 'ltm pool app {'`,
	"grep -e http -e tcp | grep -c .",
	"grep nothing-matches",
	"head -2",
	"head -n 1",
	"tail -n 2",
	"tail -1",
	"tail -n +12",
	"tail +13",
	"wc -l",
	"grep monitor | wc",
	"grep address | sort -r",
	"grep '^ *}' | uniq -c",
	"grep '}' | sort | uniq -c | sort -n -r | head -1",
	"grep pool | cat | more | less",
}

// TestPipeline runs each case; TestPipelineLikeCoreutils checks the same
// cases against the system's own tools.
func TestPipeline(t *testing.T) {
	for _, c := range []struct {
		filters, want string
	}{
		{"grep address", "            address 10.0.0.1\n            address 10.0.0.2\n"},
		{"grep -v '^ '", "ltm pool web {\n}\nltm pool app {\n}\n"},
		{"grep -c monitor", "2\n"},
		{"grep -ci MONITOR", "2\n"},
		{"grep -n monitor", "10:    monitor http\n13:    monitor tcp\n"},
		{"grep -A1 monitor", "    monitor http\n}\n--\n    monitor tcp\n}\n"},
		{"grep -B 1 -n 'tcp'", "12-ltm pool app {\n13:    monitor tcp\n"},
		{"grep -C1 'pool app'", "}\nltm pool app {\n    monitor tcp\n"},
		{"grep -m1 address", "            address 10.0.0.1\n"},
		{`grep 'address 10\.0\.0\.[2]$'`, "            address 10.0.0.2\n"},
		{`grep 'monitor \(http\|tcp\)'`, "    monitor http\n    monitor tcp\n"},
		{`grep -E 'monitor (http|tcp)'`, "    monitor http\n    monitor tcp\n"},
		{`egrep "web|app" | wc -l`, "2\n"},
		{`fgrep '10.0.0.'`, "        10.0.0.1:http {\n            address 10.0.0.1\n        10.0.0.2:http {\n            address 10.0.0.2\n"},
		{`grep 'a+b'`, ""}, // basic: + is a literal
		{`grep -w pool | grep -x 'ltm pool app {'`, "ltm pool app {\n"},
		{"grep -e http -e tcp | grep -c .", "4\n"},
		{"grep nothing-matches", ""},
		{"head -2", "ltm pool web {\n    members {\n"},
		{"head -n 1", "ltm pool web {\n"},
		{"tail -n 2", "    monitor tcp\n}\n"},
		{"tail -1", "}\n"},
		{"tail -n +12", "ltm pool app {\n    monitor tcp\n}\n"},
		{"tail +13", "    monitor tcp\n}\n"},
		{"wc -l", "14\n"},
		{"grep monitor | wc", "      2       4      33\n"},
		{"grep address | sort -r", "            address 10.0.0.2\n            address 10.0.0.1\n"},
		{"grep '^ *}' | uniq -c", "      2         }\n      1     }\n      2 }\n"},
		{"grep '}' | sort | uniq -c | sort -n -r | head -1", "      2 }\n"},
		{"grep pool | cat | more | less", "ltm pool web {\nltm pool app {\n"},
	} {
		p, err := parsePipeline(c.filters)
		if err != nil {
			t.Errorf("%q: %v", c.filters, err)
			continue
		}
		if got := string(p.run([]byte(pipeInput))); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.filters, got, c.want)
		}
	}
}

// TestPipelineLikeCoreutils runs the same pipelines through the system's
// grep, head, tail, wc, sort and uniq: the filters must print what they do.
func TestPipelineLikeCoreutils(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh is needed to compare with the system's grep, head, tail, wc, sort and uniq")
	}
	for _, filters := range pipelineCases {
		p, err := parsePipeline(filters)
		if err != nil {
			t.Errorf("%q: %v", filters, err)
			continue
		}
		cmd := exec.Command(sh, "-c", filters)
		cmd.Stdin = strings.NewReader(pipeInput)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		want, err := cmd.Output()
		if err != nil && len(want) > 0 {
			t.Errorf("%q: the system's tools failed: %v", filters, err)
			continue
		}
		if got := string(p.run([]byte(pipeInput))); got != string(want) {
			t.Errorf("%q:\n got %q\nthe system's tools %q", filters, got, want)
		}
	}
}

func TestPipelineRefused(t *testing.T) {
	for _, c := range []struct{ filters, want string }{
		{"", `"|" must be followed by a command; valid: cat, egrep`},
		{"grep x | ", `"|" must be followed by a command`},
		{"bash -c id", `"bash" is not a command output can be piped to; valid: cat, egrep, fgrep, grep, head, less, more, sort, tail, uniq, wc`},
		{"grep", "grep: a pattern is needed"},
		{"grep -z x", "grep: unknown option -z; valid: -i -v"},
		{"grep -A x y", `grep: -A needs a number, not "x"`},
		{"grep -A", "grep: option -A needs a value"},
		{"grep x /etc/passwd", `grep: reads the command's output, not files: "/etc/passwd"`},
		{"grep -E '('", "not a valid regular expression"},
		{`grep "x`, "the quote \" opened at column 6 of the pipe is not closed"},
		{"head -n -3", `head: -n needs a number, not "-3"`},
		{"tail /var/log/ltm", "tail: reads the command's output, not files"},
		{"wc -x", "wc: unknown option -x; valid: -l -w -c"},
		{"sort -k2", "sort: unknown option -k; valid: -r -n -u -f"},
		{"uniq -z", "uniq: unknown option -z"},
	} {
		_, err := parsePipeline(c.filters)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.filters, err, c.want)
		}
	}
}

func TestPipeSuggestions(t *testing.T) {
	names := func(filters string) string {
		var out []string
		for _, s := range pipeSuggestions(filters) {
			out = append(out, s.Text)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ filters, want string }{
		{" ", "cat egrep fgrep grep head less more sort tail uniq wc"},
		{" g", "grep"},
		{" grep x | h", "head"},
		{" grep ", ""},
		{" grep x", ""},
	} {
		if got := names(c.filters); got != c.want {
			t.Errorf("%q: %q, want %q", c.filters, got, c.want)
		}
	}
}
