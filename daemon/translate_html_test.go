package daemon

import (
	"slices"
	"strings"
	"testing"
)

// TestHTMLProfileTranslated: a virtual's html profile reaches its HTTP
// engine with its content types (the built-in's by default) and its
// rules in order; a virtual without one has none.
func TestHTMLProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.102.2.11:80 }",
		`create ltm html-rule tag-append-html inj match { tag-name /head } action { text "<meta x>" }`,
		"create ltm html-rule comment-remove nocom",
		"create ltm html-rule tag-raise-event ev match { tag-name a attribute-name href }",
		"create ltm profile html h1 defaults-from html rules { inj nocom ev }",
		"create ltm profile html h2 defaults-from html content-selection { text/html application/xhtml+xml }",
		"create ltm virtual v1 destination 127.102.2.1:80 pool p profiles replace-all-with { tcp { } http { } h1 { } }",
		"create ltm virtual v2 destination 127.102.2.2:80 pool p profiles replace-all-with { tcp { } http { } h2 { } }",
		"create ltm virtual v3 destination 127.102.2.3:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	h1 := dc.Virtuals["/Common/v1"].MBLB.Request.HTTP.HTML
	if h1 == nil || h1.Rules.Len() != 3 || !h1.Rules.TagEvents || !slices.Equal(h1.Types, []string{"text/html", "text/xhtml"}) {
		t.Errorf("v1: html %+v", h1)
	}
	if h2 := dc.Virtuals["/Common/v2"].MBLB.Request.HTTP.HTML; h2 == nil || h2.Rules.Len() != 0 || !slices.Equal(h2.Types, []string{"text/html", "application/xhtml+xml"}) {
		t.Errorf("v2: html %+v", h2)
	}
	if h3 := dc.Virtuals["/Common/v3"].MBLB.Request.HTTP.HTML; h3 != nil {
		t.Errorf("v3: html %+v", h3)
	}
}

// TestHTMLProfileRefused: a rule the profile could not apply, a profile
// naming no such rule, an html profile without an http profile and
// HTML_ events without an html profile are refused; nothing changes.
func TestHTMLProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.102.2.11:80 }",
		"create ltm html-rule tag-remove rm match { tag-name img }",
		"create ltm profile html hk defaults-from html rules { rm }",
		"create ltm rule hr { when HTML_TAG_MATCHED { HTML::tag remove } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct{ cmd, err string }{
		{"create ltm html-rule tag-append-html noText match { tag-name p }", "action needs a text"},
		{"create ltm html-rule tag-remove noName", "match needs a tag-name"},
		{"create ltm html-rule tag-remove-attribute noAttr match { tag-name p }", "action needs an attribute-name"},
		{"create ltm profile html hbad defaults-from html rules { nosuch }", "nosuch"},
		{"create ltm virtual v_tcp destination 127.102.2.4:80 pool p profiles replace-all-with { tcp { } hk { } }", "requires an http profile"},
		{"create ltm virtual v_rule destination 127.102.2.5:80 pool p profiles replace-all-with { tcp { } http { } } rules { hr }", "HTML_TAG_MATCHED in rule (/Common/hr) requires an associated HTML profile"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	for _, l := range []string{"list ltm html-rule tag-append-html noText", "list ltm profile html hbad", "list ltm virtual v_tcp", "list ltm virtual v_rule"} {
		if _, err := run(t, s, l); err == "" {
			t.Errorf("%s: made", l)
		}
	}
}
