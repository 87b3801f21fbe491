package rules

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/htmlfilter"
)

// TestHTMLEvents runs HTML_TAG_MATCHED and HTML_COMMENT_MATCHED through a
// real pass over a page, each case a rule editing what it is handed.
func TestHTMLEvents(t *testing.T) {
	page := `<html><body><a href="/x" id=a1>x</a><!-- note --><img src=i.png><a href='/y'>y</a></body></html>`
	cases := []struct {
		name, body, want, err string
		vars                  map[string]string
	}{
		{name: "name and attribute names", body: `when HTML_TAG_MATCHED { lappend ::n [HTML::tag name] [HTML::tag attribute names] [HTML::tag attribute count] }`,
			want: page, vars: map[string]string{"n": "a {href id} 2 a href 1"}},
		{name: "attribute value and exists", body: `when HTML_TAG_MATCHED { lappend ::v [HTML::tag attribute value href] [HTML::tag attribute exists id] }`,
			want: page, vars: map[string]string{"v": "/x 1 /y 0"}},
		{name: "replace insert remove", body: `when HTML_TAG_MATCHED {
    if { [HTML::tag attribute exists id] } { HTML::tag attribute remove id } else { HTML::tag attribute insert rel nofollow }
    HTML::tag attribute replace href "/new[HTML::tag attribute value href]"
}`, want: strings.NewReplacer(`<a href="/x" id=a1>`, `<a href="/new/x">`, `<a href='/y'>`, `<a href="/new/y" rel="nofollow">`).Replace(page)},
		{name: "append prepend remove", body: `when HTML_TAG_MATCHED {
    if { [HTML::tag attribute value href] eq "/x" } { HTML::tag prepend "<b>"; HTML::tag append "</b>" } else { HTML::tag remove }
}`, want: strings.NewReplacer(`<a href="/x" id=a1>`, `<b><a href="/x" id=a1></b>`, `<a href='/y'>`, ``).Replace(page)},
		{name: "comment read and replace", body: `when HTML_COMMENT_MATCHED { set ::c [HTML::comment]; HTML::comment replace "<!-- seen -->" }`,
			want: strings.Replace(page, "<!-- note -->", "<!-- seen -->", 1), vars: map[string]string{"c": "<!-- note -->"}},
		{name: "comment append prepend", body: `when HTML_COMMENT_MATCHED { HTML::comment prepend "\[" ; HTML::comment append "\]" }`,
			want: strings.Replace(page, "<!-- note -->", "[<!-- note -->]", 1)},
		{name: "comment remove", body: `when HTML_COMMENT_MATCHED { HTML::comment remove }`, want: strings.Replace(page, "<!-- note -->", "", 1)},
		{name: "disable from a tag on", body: `when HTML_TAG_MATCHED { HTML::tag remove; HTML::disable }`,
			want: strings.Replace(page, `<a href="/x" id=a1>`, "", 1)},
		{name: "tag command bad arguments", body: `when HTML_TAG_MATCHED { HTML::tag attribute insert x }`, err: "wrong # args"},
		{name: "comment command in a tag event", body: `when HTML_TAG_MATCHED { HTML::comment }`, err: "only valid in HTML_COMMENT_MATCHED"},
	}
	rs, err := htmlfilter.Compile([]htmlfilter.Rule{{Name: "ev", Kind: htmlfilter.TagRaiseEvent, TagName: "a"}, {Name: "cev", Kind: htmlfilter.CommentRaiseEvent}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "html", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			s.SetHTML(true)
			var runErr error
			var pass *htmlfilter.Pass
			after := func(err error) {
				if err != nil && runErr == nil {
					runErr = err
				}
				pass.SetEnabled(!s.HTML().Off)
			}
			pass = rs.New(func(tg *htmlfilter.Tag) { after(s.RunHTMLTag(tg)) }, func(cm *htmlfilter.Comment) { after(s.RunHTMLComment(cm)) })
			var out []byte
			for i := 0; i < len(page); i += 5 {
				out = pass.Write(out, []byte(page[i:min(i+5, len(page))]))
			}
			out = pass.Close(out)
			if c.err != "" {
				if runErr == nil || !strings.Contains(runErr.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", runErr, c.err)
				}
				return
			}
			if runErr != nil {
				t.Fatal(runErr)
			}
			if string(out) != c.want {
				t.Errorf("got  %s\nwant %s", out, c.want)
			}
			for k, want := range c.vars {
				if got, _ := s.Var(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestHTMLWithoutProfile: the HTML:: commands are errors on a virtual
// server without an html profile, and HTML::disable is read once.
func TestHTMLWithoutProfile(t *testing.T) {
	p := NewProgram(&Env{}, mustCompile(t, "html", `when HTTP_RESPONSE { HTML::disable }`))
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(HTTPResponse); err == nil || !strings.Contains(err.Error(), "no html profile") {
		t.Fatalf("error %v", err)
	}
	s.SetHTML(true)
	if err := s.Run(HTTPResponse); err != nil {
		t.Fatal(err)
	}
	if !s.HTML().TakeOff() || s.HTML().TakeOff() {
		t.Error("HTML::disable not read once")
	}
}
