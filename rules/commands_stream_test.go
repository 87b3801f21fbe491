package rules

import (
	"strings"
	"testing"
)

func TestStreamCommands(t *testing.T) {
	cases := []struct {
		name, body  string
		ev          Event
		profile     string
		wantExpr    string
		wantOn      bool
		wantMax     int
		wantUTF8    bool
		err         string
		wantOutVars map[string]string
	}{
		{name: "profile expression starts on", body: "when HTTP_RESPONSE { }", ev: HTTPResponse, profile: "@a@b@", wantExpr: "@a@b@", wantOn: true},
		{name: "no expression starts off", body: "when HTTP_RESPONSE { }", ev: HTTPResponse, wantOn: false},
		{name: "expression then enable", body: "when HTTP_RESPONSE { STREAM::expression {@http://@https://@}; STREAM::enable }", ev: HTTPResponse, wantExpr: "@http://@https://@", wantOn: true},
		{name: "disable in the request", body: "when HTTP_REQUEST { STREAM::disable }", ev: HTTPRequest, profile: "@a@b@", wantExpr: "@a@b@", wantOn: false},
		{name: "expression alone leaves it off", body: "when HTTP_RESPONSE { STREAM::expression {@x@y@ @z@@} }", ev: HTTPResponse, wantExpr: "@x@y@ @z@@", wantOn: false},
		{name: "computed expression checked at run time", body: "when HTTP_RESPONSE { set d @; STREAM::expression \"${d}http://\" }", ev: HTTPResponse, err: "STREAM::expression: "},
		{name: "max_matchsize", body: "when HTTP_RESPONSE { STREAM::max_matchsize 8192; set ::m [STREAM::max_matchsize] }", ev: HTTPResponse, wantMax: 8192, wantOutVars: map[string]string{"m": "8192"}},
		{name: "max_matchsize default", body: "when HTTP_RESPONSE { set ::m [STREAM::max_matchsize] }", ev: HTTPResponse, wantOutVars: map[string]string{"m": "4096"}},
		{name: "max_matchsize zero", body: "when HTTP_RESPONSE { STREAM::max_matchsize 0 }", ev: HTTPResponse, err: `"0" is not a size from 1 to 1048576`},
		{name: "encoding", body: "when HTTP_RESPONSE { set ::a [STREAM::encoding]; STREAM::encoding utf-8; set ::b [STREAM::encoding] }", ev: HTTPResponse, wantUTF8: true, wantOutVars: map[string]string{"a": "ascii", "b": "utf-8"}},
		{name: "encoding unknown", body: "when HTTP_RESPONSE { STREAM::encoding latin1 }", ev: HTTPResponse, err: "neither ascii nor utf-8"},
		{name: "match outside STREAM_MATCHED", body: "when HTTP_RESPONSE { set ::m [STREAM::match] }", ev: HTTPResponse, wantOutVars: map[string]string{"m": ""}},
		{name: "replace outside STREAM_MATCHED", body: "when HTTP_RESPONSE { STREAM::replace x }", ev: HTTPResponse, err: "only valid in STREAM_MATCHED"},
		{name: "enable takes no arguments", body: "when HTTP_RESPONSE { STREAM::enable now }", ev: HTTPResponse, err: "wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "stream", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			s.SetStream(c.profile)
			err := s.Run(c.ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := s.Stream()
			if st.Expr != c.wantExpr || st.On != c.wantOn || st.MaxMatch != c.wantMax || st.UTF8 != c.wantUTF8 {
				t.Errorf("state %+v, want expr %q on %v max %d utf8 %v", *st, c.wantExpr, c.wantOn, c.wantMax, c.wantUTF8)
			}
			for k, want := range c.wantOutVars {
				if got, _ := s.Var(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestStreamMatched(t *testing.T) {
	body := `when STREAM_MATCHED {
    set m [STREAM::match]
    if { $m eq "keep" } {
        STREAM::replace
    } elseif { $m eq "bytes" } {
        STREAM::replace "\xe9t\xe9"
    } elseif { $m ne "default" } {
        STREAM::replace "<$m>"
    }
}`
	p := NewProgram(&Env{}, mustCompile(t, "matched", body))
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	s.SetStream("@x@y@")
	cases := []struct{ match, repl, want string }{
		{"abc", "R", "<abc>"},
		{"keep", "R", "keep"},
		{"default", "R", "R"},
		{"bytes", "R", "\xe9t\xe9"},
		{"caf\xe9", "R", "<caf\xe9>"}, // one character per byte, and back
	}
	for _, c := range cases {
		got, err := s.RunStreamMatched(nil, []byte(c.match), []byte(c.repl))
		if err != nil {
			t.Fatalf("%q: %v", c.match, err)
		}
		if string(got) != c.want {
			t.Errorf("match %q: replaced with %q, want %q", c.match, got, c.want)
		}
	}
	// What goes in the match's place is appended to the caller's bytes.
	if got, err := s.RunStreamMatched([]byte("pre:"), []byte("abc"), []byte("R")); err != nil || string(got) != "pre:<abc>" {
		t.Errorf("appended to dst: %q, %v", got, err)
	}
	// Without handlers the expression's replacement stands, with no run.
	p2 := NewProgram(&Env{}, mustCompile(t, "none", "when HTTP_RESPONSE { }"))
	s2 := p2.NewConnState(newFakeConn())
	defer s2.Release()
	s2.SetStream("@x@y@")
	if got, err := s2.RunStreamMatched(nil, []byte("x"), []byte("y")); err != nil || string(got) != "y" {
		t.Errorf("without STREAM_MATCHED: %q, %v", got, err)
	}
}

func TestStreamWithoutProfile(t *testing.T) {
	_, err := evalIn(t, newFakeConn(), nil, HTTPResponse, "STREAM::enable")
	if err == nil || !strings.Contains(err.Error(), "STREAM::enable: the virtual server has no stream profile") {
		t.Errorf("without a stream profile: %v", err)
	}
}

func TestStreamNeeds(t *testing.T) {
	r := mustCompile(t, "needs", `when RULE_INIT { set ::x 1 }
when HTTP_REQUEST {
  STREAM::disable
}
when STREAM_MATCHED { log local0. [STREAM::match] }
proc p {} { STREAM::enable }`)
	var got []string
	for _, n := range r.StreamNeeds() {
		got = append(got, n.Name+"@"+n.Event.String())
	}
	want := "STREAM_MATCHED@STREAM_MATCHED STREAM::disable@HTTP_REQUEST STREAM::match@STREAM_MATCHED"
	if strings.Join(got, " ") != want {
		t.Errorf("StreamNeeds = %v, want %s", got, want)
	}
	if n := mustCompile(t, "plain", "when HTTP_REQUEST { pool p }").StreamNeeds(); len(n) != 0 {
		t.Errorf("a rule without STREAM:: needs %v", n)
	}
}

func TestStreamExpressionRefusedAtCompile(t *testing.T) {
	for _, body := range []string{
		"when HTTP_RESPONSE {\n  STREAM::expression {@http://}\n}",
		"when HTTP_RESPONSE {\n  STREAM::expression {#a#b#}\n}",
		"when HTTP_RESPONSE {\n  STREAM::expression {@^a@b@}\n}",
	} {
		_, err := Compile("bad", body)
		if err == nil || !strings.Contains(err.Error(), ":2:22: STREAM::expression: ") {
			t.Errorf("%q: %v, want a refusal at 2:22", body, err)
		}
	}
}

func TestStreamStateFilter(t *testing.T) {
	cases := []struct {
		st   StreamState
		want string // the filter's output for "a cat", "" for no filter
	}{
		{StreamState{Expr: "@cat@dog@", On: true}, "a dog"},
		{StreamState{Expr: "@cat@dog@", On: false}, ""},
		{StreamState{Expr: "", On: true}, ""},
		{StreamState{Expr: "@cat@dog@", On: true, MaxMatch: 2}, "a dog"},
	}
	for _, c := range cases {
		f := c.st.Filter(nil)
		if (f == nil) != (c.want == "") {
			t.Fatalf("%+v: filter %v, want one: %v", c.st, f, c.want != "")
		}
		if f != nil {
			if got := string(f.Close(f.Write(nil, []byte("a cat")))); got != c.want {
				t.Errorf("%+v: %q, want %q", c.st, got, c.want)
			}
		}
	}
}
