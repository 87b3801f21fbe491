package grammar

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// shape prints a tree compactly for table tests: bare words as they are,
// quoted words as Go-quoted strings prefixed with Q, blocks in braces,
// script bodies as tcl<...>, statements separated by " | ".
func shape(n Node, quoted bool) string {
	switch n := n.(type) {
	case *Word:
		if n.Quoted && quoted {
			return "Q" + strconv.Quote(n.Text)
		}
		if !quoted {
			return strconv.Quote(n.Text)
		}
		return n.Text
	case *Block:
		if n.Tcl {
			return "tcl<" + n.Raw + ">"
		}
		parts := []string{"{"}
		for _, it := range n.Items {
			parts = append(parts, shape(it, quoted))
		}
		return strings.Join(append(parts, "}"), " ")
	case *Statement:
		parts := make([]string, 0, len(n.Items))
		for _, it := range n.Items {
			parts = append(parts, shape(it, quoted))
		}
		return strings.Join(parts, " ")
	}
	return "?"
}

func fileShape(f *File, quoted bool) string {
	parts := make([]string, 0, len(f.Statements))
	for _, s := range f.Statements {
		parts = append(parts, shape(s, quoted))
	}
	return strings.Join(parts, " | ")
}

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		opts   Options
		want   string
		header string
	}{
		{name: "empty", src: "", want: ""},
		{name: "only blank lines and comments", src: "\n\n# nothing here\n  ; ;\n", want: ""},
		{name: "one-line object", src: "ltm pool p1 { monitor http }", want: "ltm pool p1 { monitor http }"},
		{
			name: "multi-line nested object",
			src: "ltm pool /Common/web {\n    members {\n        /Common/10.1.20.11:80 {\n            address 10.1.20.11\n        }\n" +
				"    }\n    monitor /Common/http\n}\n",
			want: "ltm pool /Common/web { members { /Common/10.1.20.11:80 { address 10.1.20.11 } } monitor /Common/http }",
		},
		{name: "empty blocks", src: "ltm snat s { origins { 0.0.0.0/0 { } } vlans { } }", want: "ltm snat s { origins { 0.0.0.0/0 { } } vlans { } }"},
		{name: "adjacent braces", src: "a{b{}c}d", want: "a { b { } c } d"},
		{name: "header", src: "#TMSH-VERSION: 15.1.0\n\nltm node /Common/n1 { address 10.0.0.1 }\n", header: "15.1.0", want: "ltm node /Common/n1 { address 10.0.0.1 }"},
		{name: "header with CRLF", src: "#TMSH-VERSION: 13.1.1\r\nsys global-settings { }\r\n", header: "13.1.1", want: "sys global-settings { }"},
		{name: "header only on first line", src: "\n#TMSH-VERSION: 15.1.0\n", want: ""},
		{name: "two statements by newline", src: "create ltm node n1 address 10.0.0.1\ncreate ltm node n2 address 10.0.0.2\n", want: "create ltm node n1 address 10.0.0.1 | create ltm node n2 address 10.0.0.2"},
		{name: "two statements by semicolon", src: "create ltm pool a; create ltm pool b;", want: "create ltm pool a | create ltm pool b"},
		{name: "newline and semicolon inside braces", src: "ltm pool a {\n members { x:80; y:80\n }\n}", want: "ltm pool a { members { x:80 y:80 } }"},
		{name: "line continuation", src: "create ltm pool p \\\n    monitor http \\\r\n    load-balancing-mode round-robin\n", want: "create ltm pool p monitor http load-balancing-mode round-robin"},
		{name: "final backslash is dropped", src: "list ltm pool \\", want: "list ltm pool"},
		{name: "comment at statement start", src: "# pools\nltm pool p { }\n    # indented comment { with a brace\n", want: "ltm pool p { }"},
		{name: "hash mid-statement is a word", src: "list ltm pool #1 p#2", want: "list ltm pool #1 p#2"},
		{name: "comments inside blocks", src: "ltm profile one-connect o {\n    source-mask any  # any is 0.0.0.0\n    # a comment line with { braces\n    max-size 10000\n}", want: "ltm profile one-connect o { source-mask any max-size 10000 }"},
		{name: "hash inside a word in a block", src: "a { b#c }", want: "a { b#c }"},
		{
			name: "bare word varieties",
			src: "x /Common/p1 10.1.1.1%2:80 dead:beef::1.80 any6.any 255.255.255.255 0.0.0.0/0 tcp:22 *:* min 1:0:0 " +
				"/Common/app.app/vs disabled a=b <x> p* ?q [HTTP::host] $v @u !n a,b it's a|b a&b /Common/any%61:0 2001::125.http",
			want: "x /Common/p1 10.1.1.1%2:80 dead:beef::1.80 any6.any 255.255.255.255 0.0.0.0/0 tcp:22 *:* min 1:0:0 " +
				"/Common/app.app/vs disabled a=b <x> p* ?q [HTTP::host] $v @u !n a,b it's a|b a&b /Common/any%61:0 2001::125.http",
		},
		{name: "non-ASCII word", src: "description ünïcode", want: "description ünïcode"},
		{name: "quoted strings", src: `a "b c" "" "x\"y" "back\\slash"`, want: `a Q"b c" Q"" Q"x\"y" Q"back\\slash"`},
		{
			name: "monitor send keeps backslash sequences",
			src:  `ltm monitor http m { send "GET / HTTP/1.1\r\nHost: x\r\n\r\n" recv "200 OK" }`,
			want: `ltm monitor http m { send Q"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" recv Q"200 OK" }`,
		},
		{name: "regex with doubled backslash", src: `c { "vnd\\.excel" }`, want: `c { Q"vnd\\.excel" }`},
		{name: "literal newline in quotes", src: "d \"line1\nline2\"\ne", want: `d Q"line1\nline2" | e`},
		{name: "quote ends a bare word", src: `ab"cd"ef`, want: `ab Q"cd" ef`},
		{name: "braces and semicolons in quotes", src: `a "{ ; }" b`, want: `a Q"{ ; }" b`},
		{
			name: "ltm rule body is raw",
			src:  "ltm rule /Common/r1 {\nwhen HTTP_REQUEST priority 10 {\n    if { [HTTP::uri] eq \"/\\}\" } { pool p }\n}\n}\nltm pool p { }\n",
			want: "ltm rule /Common/r1 tcl<\nwhen HTTP_REQUEST priority 10 {\n    if { [HTTP::uri] eq \"/\\}\" } { pool p }\n}\n> | ltm pool p { }",
		},
		{
			name: "a cipher rule holds properties, not a script",
			src:  "ltm cipher rule /Common/strong { cipher ECDHE+AES-GCM }\nltm cipher group g { allow { strong { } } }",
			want: "ltm cipher rule /Common/strong { cipher ECDHE+AES-GCM } | ltm cipher group g { allow { strong { } } }",
		},
		{
			name: "rule body: top-level comment braces do not count",
			src:  "ltm rule r {\n    # when HTTP_REQUEST {\n#{\nwhen CLIENT_ACCEPTED { log local0. \"x\" }\n}\nltm node n { }",
			want: "ltm rule r tcl<\n    # when HTTP_REQUEST {\n#{\nwhen CLIENT_ACCEPTED { log local0. \"x\" }\n> | ltm node n { }",
		},
		{
			name: "rule body: nested comment braces count as in Tcl",
			src:  "ltm rule r {\nwhen HTTP_REQUEST {\n    # if { [x] } {\n    # }\n}\n}",
			want: "ltm rule r tcl<\nwhen HTTP_REQUEST {\n    # if { [x] } {\n    # }\n}\n>",
		},
		{
			name: "rule body: comment continued by backslash",
			src:  "ltm rule r {\n# a comment \\\n continued { \n}",
			want: "ltm rule r tcl<\n# a comment \\\n continued { \n>",
		},
		{name: "rule body: escaped braces", src: `ltm rule r { set a \{ ; set b \} }`, want: `ltm rule r tcl< set a \{ ; set b \} >`},
		{name: "rule body: quotes do not protect braces", src: `ltm rule r { when X { set a "{" } } }`, want: `ltm rule r tcl< when X { set a "{" } } >`},
		{name: "empty rule body", src: "ltm rule r {}", want: "ltm rule r tcl<>"},
		{name: "gtm rule", src: "gtm rule /Common/g { when DNS_REQUEST { host 10.0.0.1 } }", want: "gtm rule /Common/g tcl< when DNS_REQUEST { host 10.0.0.1 } >"},
		{name: "create ltm rule", src: "create ltm rule r { when HTTP_REQUEST { HTTP::redirect / } }", want: "create ltm rule r tcl< when HTTP_REQUEST { HTTP::redirect / } >"},
		{name: "create rule in module context", src: "create rule r { when CLIENT_ACCEPTED { } }", want: "create rule r tcl< when CLIENT_ACCEPTED { } >"},
		{name: "modify ltm rule with quoted name", src: `modify ltm rule "r 1" { when X { } }`, want: `modify ltm rule Q"r 1" tcl< when X { } >`},
		{name: "rule keyword inside a block is a property", src: "ltm persistence universal u { rule r1 timeout 180 }", want: "ltm persistence universal u { rule r1 timeout 180 }"},
		{name: "rule followed by block inside a block", src: "x y { rule a { b c } }", want: "x y { rule a { b c } }"},
		{name: "rules list", src: "modify ltm virtual v rules { r1 r2 }", want: "modify ltm virtual v rules { r1 r2 }"},
		{
			name: "cli script body is raw",
			src:  "cli script /Common/s {\nproc script::run {} {\n    puts \"hello \\{\"\n}\n}\n",
			want: "cli script /Common/s tcl<\nproc script::run {} {\n    puts \"hello \\{\"\n}\n>",
		},
		{
			name: "sys icall script: properties, definition raw",
			src:  "sys icall script /Common/s {\n    app-service none\n    definition {\n        tmsh::log \"\\{\"\n    }\n    description none\n}",
			want: "sys icall script /Common/s { app-service none definition tcl<\n        tmsh::log \"\\{\"\n    > description none }",
		},
		{name: "definition on the command line", src: "modify sys icall script s definition { puts x }", want: "modify sys icall script s definition tcl< puts x >"},
		{name: "create script under cli", src: "create script s { proc script::run {} { } }", want: "create script s tcl< proc script::run {} { } >"},
		{
			name: "create script under sys icall",
			src:  "create script s { definition { puts {x} } }",
			opts: Options{ModulePath: []string{"sys", "icall"}},
			want: "create script s { definition tcl< puts {x} > }",
		},
		{
			name: "application template",
			src: "sys application template /Common/t {\n    actions {\n        definition {\n            html-help {\n<p>it's \"quoted</p>\n            }\n" +
				"            implementation {\n                set x {a}\n            }\n            macro { }\n            presentation {\n                section s { string h }\n            }\n" +
				"            role-acl none\n        }\n    }\n    description none\n}",
			want: "sys application template /Common/t { actions { definition { html-help tcl<\n<p>it's \"quoted</p>\n            > implementation tcl<\n                set x {a}\n            >" +
				" macro tcl< > presentation tcl<\n                section s { string h }\n            > role-acl none } } description none }",
		},
		{name: "template actions on the command line", src: "modify sys application template t actions replace-all-with { definition { implementation { x } } }", want: "modify sys application template t actions replace-all-with { definition { implementation tcl< x > } }"},
		{name: "quoted definition is not a script key", src: `a { "definition" { b } }`, want: `a { Q"definition" { b } }`},
		{name: "CRLF line endings", src: "ltm node n {\r\n    address 10.0.0.1\r\n}\r\nltm node m { }\r\n", want: "ltm node n { address 10.0.0.1 } | ltm node m { }"},
		{name: "no final newline", src: "ltm node n { }", want: "ltm node n { }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseWith("t.conf", []byte(tt.src), tt.opts)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			if got := fileShape(f, true); got != tt.want {
				t.Errorf("Parse(%q)\n got: %s\nwant: %s", tt.src, got, tt.want)
			}
			if f.Header != tt.header {
				t.Errorf("Header = %q, want %q", f.Header, tt.header)
			}
			checkPositions(t, tt.src, f)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		src        string
		want       string
		expected   string
		incomplete bool
	}{
		{name: "unclosed block", file: "bigip.conf", src: "ltm pool p {\n    members {\n", want: `bigip.conf:3:1: unexpected end of input: missing "}" to close the block opened at 2:13`, expected: `"}"`, incomplete: true},
		{name: "unclosed outer block", file: "bigip.conf", src: "ltm pool p { members { a:80 }", want: `bigip.conf:1:30: unexpected end of input: missing "}" to close the block opened at 1:12`, expected: `"}"`, incomplete: true},
		{name: "unterminated quote at the prompt", src: `modify ltm pool p description "abc`, want: `1:31: unterminated quoted string started here`, expected: `a closing '"'`, incomplete: true},
		{name: "quote ending in backslash", src: `a "abc\"`, want: `1:3: unterminated quoted string started here`, incomplete: true, expected: `a closing '"'`},
		{name: "stray close brace", file: "x.conf", src: "ltm pool p { }\n}\n", want: `x.conf:2:1: unexpected "}": no block is open here`, expected: `a word, a quoted string, "{" or the end of the statement`},
		{name: "stray brace after statement", src: "list ltm pool }", want: `1:15: unexpected "}": no block is open here`, expected: `a word, a quoted string, "{" or the end of the statement`},
		{name: "unclosed rule", file: "r.conf", src: "ltm rule r {\nwhen HTTP_REQUEST {\n}\n", want: `r.conf:4:1: unexpected end of input: missing "}" to close the script body opened at 1:12`, expected: `"}"`, incomplete: true},
		{name: "column counts characters", src: `ünï "x`, want: `1:5: unterminated quoted string started here`, expected: `a closing '"'`, incomplete: true},
		{name: "control characters are not text", file: "b.conf", src: "a\x00b c\x7f", want: `b.conf:1:2: byte 0x00 is not text; a configuration is text (is this a binary or compressed file?)`, expected: "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.file, []byte(tt.src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error = %v (%T), want *Error", tt.src, err, err)
			}
			if e.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", e.Error(), tt.want)
			}
			if e.Expected != tt.expected || e.Incomplete != tt.incomplete {
				t.Errorf("Expected, Incomplete = %q, %v; want %q, %v", e.Expected, e.Incomplete, tt.expected, tt.incomplete)
			}
		})
	}
}

func TestPositions(t *testing.T) {
	src := "#TMSH-VERSION: 15.1.0\nltm pool /Common/p {\n    members {\n        a:80 { }\n    }\n    description \"two\nlines\" monitor http\n}\n"
	f, err := Parse("p.conf", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	st := f.Statements[0]
	if got := st.Pos.String(); got != "p.conf:2:1" {
		t.Errorf("statement at %s", got)
	}
	blk := st.Items[3].(*Block)
	if blk.Pos.String() != "p.conf:2:20" || blk.End.String() != "p.conf:8:1" {
		t.Errorf("block %s..%s", blk.Pos, blk.End)
	}
	members := blk.Items[1].(*Block)
	if members.Pos.Line != 3 || members.Pos.Column != 13 || members.End.Line != 5 || members.End.Column != 5 {
		t.Errorf("members block %s..%s", members.Pos, members.End)
	}
	a := members.Items[0].(*Word)
	if a.Pos.Line != 4 || a.Pos.Column != 9 || a.Text != "a:80" {
		t.Errorf("member word %+v", a)
	}
	monitor := blk.Items[4].(*Word)
	if monitor.Pos.Line != 7 || monitor.Pos.Column != 8 {
		t.Errorf("word after a two-line string at %s", monitor.Pos)
	}
	if got := End(blk.Items[3]); got.Line != 7 || got.Column != 7 {
		t.Errorf("End of the two-line string = %s", got)
	}
	if got := blk.Lines(); len(got) != 2 || len(got[0]) != 2 || len(got[1]) != 4 {
		t.Errorf("Lines() = %d groups", len(got))
	}
	checkPositions(t, src, f)
}

// checkPositions verifies that every node's position and raw text agree
// with the source.
func checkPositions(t testing.TB, src string, f *File) {
	t.Helper()
	var walk func(n Node)
	inSrc := func(p Pos, what string) bool {
		if p.Offset < 0 || p.Offset > len(src) || p.Line < 1 || p.Column < 1 {
			t.Fatalf("%s position %+v outside the source (%d bytes)", what, p, len(src))
			return false
		}
		if want := strings.Count(src[:p.Offset], "\n") + 1; p.Line != want {
			t.Fatalf("%s at offset %d: line %d, want %d", what, p.Offset, p.Line, want)
		}
		return true
	}
	walk = func(n Node) {
		switch n := n.(type) {
		case *Word:
			inSrc(n.Pos, "word")
			if !strings.HasPrefix(src[n.Pos.Offset:], n.Raw) || n.Raw == "" {
				t.Fatalf("word %q at %d: source has %q", n.Raw, n.Pos.Offset, src[n.Pos.Offset:min(len(src), n.Pos.Offset+len(n.Raw))])
			}
		case *Block:
			inSrc(n.Pos, "block")
			inSrc(n.End, "block end")
			if src[n.Pos.Offset] != '{' || src[n.End.Offset] != '}' || src[n.Pos.Offset+1:n.End.Offset] != n.Raw {
				t.Fatalf("block %s..%s does not match its braces or Raw", n.Pos, n.End)
			}
			if n.Tcl && n.Items != nil {
				t.Fatalf("script block with items")
			}
			for _, it := range n.Items {
				walk(it)
			}
		case *Statement:
			inSrc(n.Pos, "statement")
			if !strings.HasPrefix(src[n.Pos.Offset:], n.Source) || n.Source == "" {
				t.Fatalf("statement Source %q not at %d", n.Source, n.Pos.Offset)
			}
			if end := nodeEnd(n.Items[len(n.Items)-1]); end != n.Pos.Offset+len(n.Source) {
				t.Fatalf("statement Source ends at %d, last item at %d", n.Pos.Offset+len(n.Source), end)
			}
			for _, it := range n.Items {
				walk(it)
			}
		}
	}
	for _, s := range f.Statements {
		walk(s)
	}
}

func TestParseStatement(t *testing.T) {
	st, err := ParseStatement("create ltm pool p members add { a:80 }\n", Options{})
	if err != nil || shape(st, true) != "create ltm pool p members add { a:80 }" {
		t.Fatalf("ParseStatement = %v, %v", st, err)
	}
	if got := st.Words(); strings.Join(got, ",") != "create,ltm,pool,p,members,add" {
		t.Errorf("Words() = %q", got)
	}
	if got := len(st.Head()); got != 6 {
		t.Errorf("Head() has %d words", got)
	}
	for src, want := range map[string]string{
		"":          "1:1: empty command",
		"a\nb":      "2:1: more than one command: a new command starts here",
		"a { b } }": `1:9: unexpected "}": no block is open here`,
	} {
		if _, err := ParseStatement(src, Options{}); err == nil || err.Error() != want {
			t.Errorf("ParseStatement(%q) error = %v, want %s", src, err, want)
		}
	}
}

func TestGrammarBuilds(t *testing.T) {
	if _, err := participle.Build[pFile](participle.Lexer(definition{}), participle.UseLookahead(1)); err != nil {
		t.Fatal(err)
	}
	g := Grammar()
	for _, want := range []string{"PStmt", "PBlock", "<tclbody>", "<rbrace>"} {
		if !strings.Contains(g, want) {
			t.Errorf("grammar lacks %s:\n%s", want, g)
		}
	}
	// The generic lexer entry points give the same tokens as Parse.
	for _, lex := range []func() ([]string, error){
		func() ([]string, error) { return lexValues(parser.Lex("x", strings.NewReader("a { b }"))) },
	} {
		got, err := lex()
		if err != nil || strings.Join(got, " ") != "a { b } " {
			t.Errorf("Lex = %q, %v", got, err)
		}
	}
	if _, err := parser.ParseString("x", "ltm rule r { } ; a"); err != nil {
		t.Errorf("ParseString: %v", err)
	}
}

func lexValues(toks []lexer.Token, err error) ([]string, error) {
	out := make([]string, 0, len(toks))
	for _, t := range toks {
		out = append(out, t.Value)
	}
	return out, err
}

func TestNotText(t *testing.T) {
	for _, tc := range []struct {
		src, at string
	}{
		{"\x00\xffltm pool p { }", "1:1"},
		{"ltm pool p {\n    description \"a\x01b\"\n}", "2:19"},
		{"ltm pool p { description caf\xe9 }", "1:29"},
		{"ltm pool p { description \"caf\u00e9\" }\n", ""},
		{"ltm pool p {\r\n\tdescription x\f}\n", ""},
	} {
		_, err := Parse("f.conf", []byte(tc.src))
		if tc.at == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.src, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Pos.String() != "f.conf:"+tc.at || !strings.Contains(e.Msg, "is not text") {
			t.Errorf("%q: error %v, want one at f.conf:%s saying it is not text", tc.src, err, tc.at)
		}
	}
}
