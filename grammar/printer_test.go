package grammar

import (
	"testing"
)

func TestPrinter(t *testing.T) {
	write := func(p *Printer) {
		p.Open("ltm", "pool", "/Common/p")
		p.Open("members")
		p.Open("a:80")
		p.Line("address", "1.1.1.1")
		p.Close()
		p.Empty("b:80")
		p.Close()
		p.Line("description", "two words")
		p.Line("monitor", "http")
		p.Close()
		p.Empty("ltm", "node", "n")
		p.Script("\nwhen HTTP_REQUEST { pool p }\n", "ltm", "rule", "r")
		p.Line("list", "ltm", "pool")
	}
	multi := NewPrinter(false)
	write(multi)
	wantMulti := `ltm pool /Common/p {
    members {
        a:80 {
            address 1.1.1.1
        }
        b:80 { }
    }
    description "two words"
    monitor http
}
ltm node n { }
ltm rule r {
when HTTP_REQUEST { pool p }
}
list ltm pool
`
	if got := multi.String(); got != wantMulti {
		t.Errorf("multi-line:\n%s\nwant:\n%s", got, wantMulti)
	}
	one := NewPrinter(true)
	write(one)
	wantOne := `ltm pool /Common/p { members { a:80 { address 1.1.1.1 } b:80 { } } description "two words" monitor http }
ltm node n { }
ltm rule r {
when HTTP_REQUEST { pool p }
}
list ltm pool
`
	if got := one.String(); got != wantOne {
		t.Errorf("one-line:\n%s\nwant:\n%s", got, wantOne)
	}
	// Both layouts read back as the same statements.
	for _, text := range []string{multi.String(), one.String()} {
		f, err := Parse("", []byte(text))
		if err != nil || len(f.Statements) != 4 {
			t.Fatalf("printed text does not parse back: %v", err)
		}
	}
	one.Reset()
	one.Verbatim("ltm unknown thing { kept as is }")
	one.Close() // a stray Close is ignored
	if got := one.String(); got != "ltm unknown thing { kept as is }\n" {
		t.Errorf("Verbatim after Reset = %q", got)
	}
}

func TestRender(t *testing.T) {
	tests := []struct{ name, src, want, oneLine string }{
		{
			name:    "saved layout is kept",
			src:     "ltm pool /Common/p {\n  members {\n    a:80 { address 1.1.1.1 }\n        b:80 {\n   address 2.2.2.2\n }\n  }\n    monitor   http\n}",
			want:    "ltm pool /Common/p {\n    members {\n        a:80 { address 1.1.1.1 }\n        b:80 {\n            address 2.2.2.2\n        }\n    }\n    monitor http\n}\n",
			oneLine: "ltm pool /Common/p { members { a:80 { address 1.1.1.1 } b:80 { address 2.2.2.2 } } monitor http }",
		},
		{
			name:    "one-line stays one line",
			src:     `create ltm pool p   members add { a:80 {  } } description "x y" monitor "http"`,
			want:    "create ltm pool p members add { a:80 { } } description \"x y\" monitor \"http\"\n",
			oneLine: `create ltm pool p members add { a:80 { } } description "x y" monitor "http"`,
		},
		{
			name:    "several properties on one source line",
			src:     "ltm x y {\n    a 1 b 2\n    c { d }\n}",
			want:    "ltm x y {\n    a 1 b 2\n    c { d }\n}\n",
			oneLine: "ltm x y { a 1 b 2 c { d } }",
		},
		{
			name:    "a multi-line block mid-statement is joined",
			src:     "modify ltm pool p members {\n a:80\n} monitor http",
			want:    "modify ltm pool p members { a:80 } monitor http\n",
			oneLine: "modify ltm pool p members { a:80 } monitor http",
		},
		{
			name:    "script bodies are kept",
			src:     "ltm rule r {\n# {\nwhen X {\n  # {}\n}\n}",
			want:    "ltm rule r {\n# {\nwhen X {\n  # {}\n}\n}\n",
			oneLine: "ltm rule r {\n# {\nwhen X {\n  # {}\n}\n}",
		},
		{
			name:    "continuation lines are joined",
			src:     "create ltm node n \\\n address 1.1.1.1",
			want:    "create ltm node n address 1.1.1.1\n",
			oneLine: "create ltm node n address 1.1.1.1",
		},
		{
			name:    "words needing quotes",
			src:     "a b\\c { x \"#y\" }",
			want:    "a \"b\\c\" { x \"#y\" }\n",
			oneLine: "a \"b\\c\" { x \"#y\" }",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := Render(f.Statements[0]); got != tt.want {
				t.Errorf("Render:\n%s\nwant:\n%s", got, tt.want)
			}
			if got := RenderOneLine(f.Statements[0]); got != tt.oneLine {
				t.Errorf("RenderOneLine:\n%s\nwant:\n%s", got, tt.oneLine)
			}
			checkRenderRoundTrip(t, tt.src, f)
		})
	}
	w := &Word{Text: "x y"}
	if Render(w) != "\"x y\"\n" || w.String() != `"x y"` {
		t.Errorf("Render(word) = %q", Render(w))
	}
	f, _ := Parse("", []byte("#TMSH-VERSION: 15.1.0\na { b }\n"))
	if got := RenderFile(f); got != "#TMSH-VERSION: 15.1.0\n\na { b }\n" {
		t.Errorf("RenderFile = %q", got)
	}
	b := f.Statements[0].Items[1].(*Block)
	if got := Render(b); got != "{ b }\n" || b.String() != "{ b }" || b.Empty() || b.Words()[0] != "b" {
		t.Errorf("Render(block) = %q", got)
	}
}

// checkRenderRoundTrip asserts that the rendered file parses to the same
// words and blocks.
func checkRenderRoundTrip(t testing.TB, src string, f *File) {
	t.Helper()
	for _, text := range []string{RenderFile(f), oneLineFile(f)} {
		g, err := Parse("", []byte(text))
		if err != nil {
			t.Fatalf("rendering of %q does not parse: %v\n%s", src, err, text)
		}
		if a, b := fileShape(f, false), fileShape(g, false); a != b {
			t.Fatalf("rendering of %q changes the tree:\n%s\n%s\nrendered:\n%s", src, a, b, text)
		}
	}
}

func oneLineFile(f *File) string {
	out := ""
	for _, s := range f.Statements {
		out += RenderOneLine(s) + "\n"
	}
	return out
}
