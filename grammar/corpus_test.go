package grammar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir holds real-world configuration files kept beside the project;
// the test is skipped where they are absent.
const corpusDir = "../../shared/corpus/conf"

func TestCorpus(t *testing.T) {
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Skipf("no corpus: %v", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(e.Name(), src)
			if err != nil {
				t.Fatal(err)
			}
			checkPositions(t, string(src), f)
			checkCoverage(t, string(src), f)
			checkRenderRoundTrip(t, e.Name(), f)
		})
	}
}

// checkCoverage asserts that the statements' Source texts, in order, cover
// every byte of the file that is not white space, a separator, a line
// continuation or a comment.
func checkCoverage(t testing.TB, src string, f *File) {
	t.Helper()
	off := 0
	gap := func(text string, at int) {
		for _, line := range strings.SplitAfter(text, "\n") {
			trimmed := strings.TrimLeft(line, " \t\r\n\v\f;\\")
			if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
				t.Fatalf("text outside any statement near offset %d: %q", at, line)
			}
		}
	}
	for _, s := range f.Statements {
		if s.Pos.Offset < off {
			t.Fatalf("statements overlap at %s", s.Pos)
		}
		gap(src[off:s.Pos.Offset], off)
		off = s.Pos.Offset + len(s.Source)
	}
	gap(src[off:], off)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ltm pool p { members { a:80 { address 1.1.1.1 } } monitor http }\n",
		"#TMSH-VERSION: 15.1.0\nltm rule r {\n# {\nwhen X { set a \\{ }\n}\n",
		"sys icall script s { definition { puts x } }",
		"sys application template t { actions { definition { implementation { x } } } }",
		"a \"b \\\" c\" ; d \\\n e",
		"create script s { }",
		"a { # c\n }",
		"\"", "{", "}", "\\", "a\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := Parse("", []byte(src))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if e.Pos.Offset < 0 || e.Pos.Offset > len(src) || e.Pos.Line < 1 || e.Pos.Column < 1 {
				t.Fatalf("error position %+v outside the source", e.Pos)
			}
			if _, _, serr := SplitStatements(src); (serr == nil) != e.Incomplete {
				t.Fatalf("SplitStatements error %v disagrees with Parse error %v", serr, err)
			}
			return
		}
		checkPositions(t, src, file)
		checkCoverage(t, src, file)
		checkRenderRoundTrip(t, src, file)
		complete, rest, serr := SplitStatements(src)
		if rest != "" && !strings.HasSuffix(strings.TrimRight(rest, "\r\n"), "\\") {
			t.Fatalf("SplitStatements leaves %q unfinished though Parse succeeded", rest)
		}
		if rest != "" && len(complete) < len(file.Statements) {
			// A final backslash holds back the last statement.
			complete = append(complete, file.Statements[len(complete)].Source)
		}
		if serr != nil || len(complete) != len(file.Statements) {
			t.Fatalf("SplitStatements = %d, %q, %v; Parse found %d statements", len(complete), rest, serr, len(file.Statements))
		}
		for i, s := range file.Statements {
			if complete[i] != s.Source {
				t.Fatalf("statement %d: SplitStatements %q, Parse %q", i, complete[i], s.Source)
			}
		}
	})
}

// generatedConfig builds a configuration of about n objects of the common
// kinds, in the saved-file layout.
func generatedConfig(n int) []byte {
	var b strings.Builder
	b.WriteString("#TMSH-VERSION: 15.1.0\n\n")
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "ltm node /Common/10.%d.%d.%d {\n    address 10.%d.%d.%d\n    description \"node %d\"\n}\n", i/65536%256, i/256%256, i%256, i/65536%256, i/256%256, i%256, i)
		case 1:
			fmt.Fprintf(&b, "ltm pool /Common/pool_%d {\n    load-balancing-mode least-connections-member\n    members {\n", i)
			for m := 0; m < 4; m++ {
				fmt.Fprintf(&b, "        /Common/10.1.%d.%d:80 {\n            address 10.1.%d.%d\n            session monitor-enabled\n            state up\n        }\n", i%256, m, i%256, m)
			}
			b.WriteString("    }\n    monitor /Common/http\n}\n")
		case 2:
			fmt.Fprintf(&b, "ltm virtual /Common/vs_%d {\n    destination /Common/192.0.2.%d:443\n    ip-protocol tcp\n    mask 255.255.255.255\n"+
				"    pool /Common/pool_%d\n    profiles {\n        /Common/http { }\n        /Common/tcp { }\n    }\n    rules {\n        /Common/rule_%d\n    }\n"+
				"    source 0.0.0.0/0\n    source-address-translation {\n        type automap\n    }\n    translate-address enabled\n    translate-port enabled\n}\n", i, i%256, i-1, i+1)
		case 3:
			fmt.Fprintf(&b, "ltm rule /Common/rule_%d {\nwhen HTTP_REQUEST priority 10 {\n    # route by host\n    if { [HTTP::host] eq \"h%d.example.com\" } {\n"+
				"        pool /Common/pool_%d\n    } else { HTTP::respond 404 content \"{}\" }\n}\n}\n", i, i, i-2)
		case 4:
			fmt.Fprintf(&b, "ltm monitor http /Common/mon_%d {\n    defaults-from /Common/http\n    interval 5\n    send \"GET /health HTTP/1.1\\r\\nHost: h%d\\r\\n\\r\\n\"\n    recv \"200 OK\"\n    timeout 16\n}\n", i, i)
		}
	}
	return []byte(b.String())
}

func TestGeneratedConfig(t *testing.T) {
	src := generatedConfig(200)
	f, err := Parse("gen.conf", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Statements) != 200 || f.Header != "15.1.0" {
		t.Fatalf("%d statements, header %q", len(f.Statements), f.Header)
	}
	checkCoverage(t, string(src), f)
	if got := RenderFile(f); got != string(src) {
		t.Errorf("a file in the saved layout does not render back identically")
	}
}

func BenchmarkParse(b *testing.B) {
	src := generatedConfig(2000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("bench.conf", src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSplitStatements(b *testing.B) {
	src := string(generatedConfig(2000))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, _, err := SplitStatements(src); err != nil {
			b.Fatal(err)
		}
	}
}
