package daemon

import (
	"slices"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/httpcompress"
)

// TestCompressProfileTranslated: an http-compression profile's
// properties, its own, its defaults-from chain's and the built-in's,
// reach the virtual's HTTP options as a compiled policy; a virtual
// without the profile has none.
func TestCompressProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.0.11:80 }",
		`create ltm profile http-compression z_edge defaults-from httpcompression content-type-include { text/html application/json } content-type-exclude { text/csv } uri-include { ^/app/ } uri-exclude { "\.jpg$" ^/app/raw/ } min-size 200 gzip-level 6 method-prefer deflate keep-accept-encoding enabled vary-header disabled allow-http-10 enabled browser-workarounds enabled selective enabled cpu-saver-high 80 cpu-saver-low 40`,
		"create ltm profile http-compression z_child defaults-from z_edge gzip-level 9 uri-include none",
		"create ltm virtual v_builtin destination 127.47.0.1:80 pool p profiles replace-all-with { tcp { } http { } httpcompression { } }",
		"create ltm virtual v_edge destination 127.47.0.2:80 pool p profiles replace-all-with { tcp { } http { } z_edge { } }",
		"create ltm virtual v_child destination 127.47.0.3:80 pool p profiles replace-all-with { tcp { } http { } z_child { } }",
		"create ltm virtual v_plain destination 127.47.0.4:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	policy := func(n string) *httpcompress.Policy {
		t.Helper()
		v := dc.Virtuals["/Common/"+n]
		if v == nil || v.MBLB == nil {
			t.Fatalf("%s: not translated as an HTTP virtual: %+v", n, v)
		}
		return v.MBLB.Request.HTTP.Compress
	}

	if p := policy("v_plain"); p != nil {
		t.Errorf("v_plain (no http-compression profile): Compress %+v", p.Config)
	}

	b := policy("v_builtin")
	if b == nil {
		t.Fatal("v_builtin: no Compress")
	}
	want := httpcompress.Config{
		Profile:            "/Common/httpcompression",
		ContentTypeInclude: []string{"text/", "application/(xml|x-javascript)"},
		MinSize:            1024,
		Level:              1,
		Prefer:             httpcompress.Gzip,
		Vary:               true,
		CPUSaver:           true,
		CPUSaverHigh:       90,
		CPUSaverLow:        75,
	}
	if !sameCompressConfig(b.Config, want) {
		t.Errorf("v_builtin: %+v\nwant %+v", b.Config, want)
	}
	for ct, ok := range map[string]bool{
		"text/html":                 true,
		"Text/Plain; charset=utf-8": true,
		"application/xml":           true,
		"application/x-javascript":  true,
		"application/json":          false,
		"image/png":                 false,
		"":                          false,
	} {
		if got := b.TypeAllowed([]byte(ct)); got != ok {
			t.Errorf("v_builtin: TypeAllowed(%q) = %v, want %v", ct, got, ok)
		}
	}
	if !b.URIAllowed([]byte("/any/thing.jpg")) {
		t.Error("v_builtin: a URI excluded with no URI lists")
	}

	edge := policy("v_edge")
	if edge == nil {
		t.Fatal("v_edge: no Compress")
	}
	want = httpcompress.Config{
		Profile:            "/Common/z_edge",
		ContentTypeInclude: []string{"text/html", "application/json"},
		ContentTypeExclude: []string{"text/csv"},
		URIInclude:         []string{"^/app/"},
		URIExclude:         []string{`\.jpg$`, "^/app/raw/"},
		MinSize:            200,
		Level:              6,
		Prefer:             httpcompress.Deflate,
		KeepAcceptEncoding: true,
		Vary:               false,
		AllowHTTP10:        true,
		BrowserWorkarounds: true,
		Selective:          true,
		CPUSaver:           true,
		CPUSaverHigh:       80,
		CPUSaverLow:        40,
	}
	if !sameCompressConfig(edge.Config, want) {
		t.Errorf("v_edge: %+v\nwant %+v", edge.Config, want)
	}
	for uri, ok := range map[string]bool{
		"/app/page":        true,
		"/app/photo.JPG":   false, // the lists match without regard to case
		"/app/raw/page":    false,
		"/other/page":      false, // not under uri-include
		"/app/x.jpg?big=1": true,  // "\.jpg$" is anchored at the end
	} {
		if got := edge.URIAllowed([]byte(uri)); got != ok {
			t.Errorf("v_edge: URIAllowed(%q) = %v, want %v", uri, got, ok)
		}
	}
	facts := httpcompress.ResponseFacts{Status: 200, ContentLength: 199, ContentType: []byte("text/html")}
	if edge.ResponseAllowed(&facts) {
		t.Error("v_edge: a 199-byte response allowed under min-size 200")
	}
	facts.ContentLength = 200
	if !edge.ResponseAllowed(&facts) {
		t.Error("v_edge: a 200-byte response refused at min-size 200")
	}
	facts.ContentType = []byte("text/csv")
	if edge.ResponseAllowed(&facts) {
		t.Error("v_edge: text/csv allowed though content-type-exclude names it")
	}

	// The child: its own level and uri-include, the rest from z_edge.
	child := policy("v_child")
	if child == nil {
		t.Fatal("v_child: no Compress")
	}
	want.Profile, want.Level, want.URIInclude = "/Common/z_child", 9, nil
	if !sameCompressConfig(child.Config, want) {
		t.Errorf("v_child: %+v\nwant %+v", child.Config, want)
	}
	if !child.URIAllowed([]byte("/other/page")) {
		t.Error("v_child: uri-include none still limits the URIs")
	}

	// A change to the profile reaches the next translation.
	if _, err := run(t, s, "modify ltm profile http-compression z_edge gzip-level 3 min-size 0 method-prefer gzip"); err != "" {
		t.Fatal(err)
	}
	dc, skipped = Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	if c := policy("v_edge").Config; c.Level != 3 || c.MinSize != 0 || c.Prefer != httpcompress.Gzip {
		t.Errorf("v_edge after the change: %+v", c)
	}
	if c := policy("v_child").Config; c.Level != 9 || c.MinSize != 0 || c.Prefer != httpcompress.Gzip {
		t.Errorf("v_child after its parent's change: %+v", c)
	}
}

// sameCompressConfig compares two configs, an empty list and none alike.
func sameCompressConfig(a, b httpcompress.Config) bool {
	lists := func(c httpcompress.Config) [][]string {
		return [][]string{c.ContentTypeInclude, c.ContentTypeExclude, c.URIInclude, c.URIExclude}
	}
	la, lb := lists(a), lists(b)
	for i := range la {
		if !slices.Equal(la[i], lb[i]) {
			return false
		}
	}
	return a.Profile == b.Profile && a.MinSize == b.MinSize && a.Level == b.Level && a.Prefer == b.Prefer &&
		a.KeepAcceptEncoding == b.KeepAcceptEncoding && a.Vary == b.Vary && a.AllowHTTP10 == b.AllowHTTP10 &&
		a.BrowserWorkarounds == b.BrowserWorkarounds && a.Selective == b.Selective &&
		a.CPUSaver == b.CPUSaver && a.CPUSaverHigh == b.CPUSaverHigh && a.CPUSaverLow == b.CPUSaverLow
}

// TestCompressRuleNeedsProfile: as BIG-IP (01070394), a rule using
// COMPRESS:: commands is refused on a virtual server without an
// http-compression profile, whichever way the two meet; the message
// names the first such command.
func TestCompressRuleNeedsProfile(t *testing.T) {
	t.Parallel()
	const (
		base = "create ltm pool p members add { 127.47.0.21:80 }"
		zr   = "create ltm rule zr { when HTTP_REQUEST { if { [HTTP::path] starts_with \"/raw/\" } { COMPRESS::disable } } }"
		ev   = "01070394:3: COMPRESS::disable in rule (/Common/zr) requires an associated HTTPCOMPRESSION profile on the virtual server (/Common/vs)."
		zp   = "profiles replace-all-with { tcp http httpcompression }"
	)
	file := func(profiles string) string {
		return "ltm rule /Common/zr {\n    when HTTP_REQUEST { COMPRESS::disable }\n}\n" +
			"ltm pool /Common/p {\n    members {\n        /Common/127.47.0.21:80 {\n            address 127.47.0.21\n        }\n    }\n}\n" +
			"ltm virtual /Common/vs {\n    destination /Common/127.47.0.20:80\n    pool /Common/p\n    profiles {\n" + profiles + "    }\n    rules {\n        /Common/zr\n    }\n}\n"
	}
	cases := []struct {
		name  string
		setup []string
		cmd   string // "load:TEXT" loads TEXT as a file
		err   string // "" : accepted
	}{
		{"create, http only", []string{base, zr},
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } profiles replace-all-with { tcp http }", ev},
		{"create, with the profile", []string{base, zr},
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } " + zp, ""},
		{"create, a custom profile", []string{base, zr, "create ltm profile http-compression zc defaults-from httpcompression"},
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } profiles replace-all-with { tcp http zc }", ""},
		{"COMPRESS::gzip in HTTP_RESPONSE", []string{base, "create ltm rule zr { when HTTP_RESPONSE { COMPRESS::gzip level 9 } }"},
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } profiles replace-all-with { tcp http }",
			"01070394:3: COMPRESS::gzip in rule (/Common/zr) requires an associated HTTPCOMPRESSION profile on the virtual server (/Common/vs)."},
		{"COMPRESS::enable after other commands", []string{base, "create ltm rule zr { when HTTP_REQUEST { HTTP::header insert X-A 1\n COMPRESS::enable } }"},
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } profiles replace-all-with { tcp http }",
			"01070394:3: COMPRESS::enable in rule (/Common/zr) requires an associated HTTPCOMPRESSION profile on the virtual server (/Common/vs)."},
		{"second rule of the list", []string{base, zr, "create ltm rule hr { when HTTP_REQUEST { HTTP::header insert X-A 1 } }"},
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { hr zr } profiles replace-all-with { tcp http }", ev},
		{"modify profiles: the profile removed", []string{base, zr,
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } " + zp},
			"modify ltm virtual vs profiles replace-all-with { tcp http }", ev},
		{"modify rules: added to a virtual without it", []string{base, zr,
			"create ltm virtual vs destination 127.47.0.20:80 pool p profiles replace-all-with { tcp http }"},
			"modify ltm virtual vs rules { zr }", ev},
		{"modify rule: gains COMPRESS::", []string{base, "create ltm rule zr { when HTTP_REQUEST { HTTP::header insert X-A 1 } }",
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } profiles replace-all-with { tcp http }"},
			"modify ltm rule zr { when HTTP_REQUEST { COMPRESS::disable } }", ev},
		{"load merge", nil,
			"load:" + file("        /Common/http { }\n        /Common/tcp { }\n"), ev},
		{"load merge, with the profile", nil,
			"load:" + file("        /Common/http { }\n        /Common/httpcompression { }\n        /Common/tcp { }\n"), ""},
		{"transaction", []string{base, zr, "create cli transaction",
			"create ltm virtual vs destination 127.47.0.20:80 pool p rules { zr } profiles replace-all-with { tcp http }"},
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
			vs, _ := run(t, s, "list ltm virtual vs profiles rules")
			rule, _ := run(t, s, "list ltm rule zr")
			if c.err != "" && strings.Contains(vs, "zr") && !strings.Contains(vs, "compression") && strings.Contains(rule, "COMPRESS::") {
				t.Fatalf("after the refusal:\n%s%s", vs, rule)
			}
			if c.err == "" && !strings.Contains(vs, "zr") {
				t.Fatalf("accepted, but the virtual has not the rule:\n%s", vs)
			}
		})
	}
}

// TestCompressNeedsHTTP: the profile on a virtual server without an http
// profile is refused, created so or losing the http profile later.
func TestCompressNeedsHTTP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.0.31:80 }",
		"create ltm profile http-compression zc defaults-from httpcompression",
		"create ltm virtual v_ok destination 127.47.0.32:80 pool p profiles replace-all-with { tcp http zc }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	_, err := run(t, s, "create ltm virtual v_tcp destination 127.47.0.30:80 pool p profiles replace-all-with { tcp httpcompression }")
	if want := "profile /Common/httpcompression (http-compression) requires an http profile on the virtual server (/Common/v_tcp)"; !strings.Contains(err, want) {
		t.Fatalf("tcp and httpcompression: error %q, want %q", err, want)
	}
	if out, err := run(t, s, "list ltm virtual v_tcp"); err == "" {
		t.Fatalf("the refused virtual exists:\n%s", out)
	}
	_, err = run(t, s, "modify ltm virtual v_ok profiles replace-all-with { tcp zc }")
	if want := "profile /Common/zc (http-compression) requires an http profile on the virtual server (/Common/v_ok)"; !strings.Contains(err, want) {
		t.Fatalf("http removed: error %q, want %q", err, want)
	}
	if out, _ := run(t, s, "list ltm virtual v_ok profiles"); !strings.Contains(out, "http") {
		t.Fatalf("after the refusal:\n%s", out)
	}
}

// TestCompressProfileRefused: a list entry that is no regular expression,
// or a gzip-level out of 1 to 9, is refused when the profile is created
// or changed (used by a virtual or not), the message naming the
// property and the value; nothing is made or changed.
func TestCompressProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.0.41:80 }",
		"create ltm profile http-compression z_used defaults-from httpcompression uri-exclude { ^/raw/ }",
		"create ltm profile http-compression z_idle defaults-from httpcompression",
		"create ltm virtual v destination 127.47.0.40:80 pool p profiles replace-all-with { tcp http z_used }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct {
		props string
		want  []string // substrings of the error
	}{
		{`uri-exclude { "*.jpg" }`, []string{`uri-exclude "*.jpg" is not a regular expression`, "missing argument to repetition operator"}},
		{`uri-include { "/app/(" }`, []string{`uri-include "/app/(" is not a regular expression`, "missing closing )"}},
		{`content-type-include { text/ "[html" }`, []string{`content-type-include "[html" is not a regular expression`}},
		{`content-type-exclude { "image/**" }`, []string{`content-type-exclude "image/**" is not a regular expression`}},
		{"gzip-level 0", []string{"gzip-level 0 is out of range: 1 to 9"}},
		{"gzip-level 10", []string{"gzip-level 10 is out of range: 1 to 9"}},
		{"cpu-saver-low 95", []string{"cpu-saver-low 95 is above cpu-saver-high 90"}},
		{"cpu-saver-high 50 cpu-saver-low 60", []string{"cpu-saver-low 60 is above cpu-saver-high 50"}},
		{"cpu-saver-high 101", []string{"cpu-saver-high 101 and cpu-saver-low 75 must be percents, 0 to 100"}},
	} {
		_, err := run(t, s, "create ltm profile http-compression z_bad defaults-from httpcompression "+c.props)
		for _, w := range append([]string{"ltm profile http-compression /Common/z_bad"}, c.want...) {
			if !strings.Contains(err, w) {
				t.Errorf("create with %s: error %q, want it to say %q", c.props, err, w)
			}
		}
		if out, err := run(t, s, "list ltm profile http-compression z_bad"); err == "" {
			t.Errorf("create with %s: the profile exists:\n%s", c.props, out)
		}
		for _, name := range []string{"z_used", "z_idle"} {
			_, err := run(t, s, "modify ltm profile http-compression "+name+" "+c.props)
			for _, w := range append([]string{"/Common/" + name}, c.want...) {
				if !strings.Contains(err, w) {
					t.Errorf("modify %s with %s: error %q, want it to say %q", name, c.props, err, w)
				}
			}
		}
	}
	// Nothing changed.
	if out, _ := run(t, s, "list ltm profile http-compression z_used"); !strings.Contains(out, "uri-exclude { ^/raw/ }") || strings.Contains(out, "gzip-level") || strings.Contains(out, "content-type") {
		t.Errorf("z_used after the refusals:\n%s", out)
	}
	if out, _ := run(t, s, "list ltm profile http-compression z_idle"); strings.Contains(out, "gzip-level") || strings.Contains(out, "uri-") || strings.Contains(out, "content-type") {
		t.Errorf("z_idle after the refusals:\n%s", out)
	}
	// A parent's bad change is refused for what inherits it too.
	if _, err := run(t, s, "create ltm profile http-compression z_kid defaults-from z_idle"); err != "" {
		t.Fatal(err)
	}
	if _, err := run(t, s, "modify ltm profile http-compression z_idle gzip-level 9"); err != "" {
		t.Fatalf("a good level: %s", err)
	}
	if _, err := run(t, s, `modify ltm profile http-compression z_idle uri-include { "^/(a|b" }`); !strings.Contains(err, `uri-include "^/(a|b" is not a regular expression`) {
		t.Errorf("a parent's bad uri-include: error %q", err)
	}
}

// TestCompressProfileLoadedBad: a loaded file's profile with a pattern
// that is no regular expression is kept, as what a file brings is, and
// the virtual using it is left without traffic, saying why.
func TestCompressProfileLoadedBad(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	err := runOrLoad(t, s, dir, "load:"+
		"ltm profile http-compression /Common/zb {\n    defaults-from /Common/httpcompression\n    uri-exclude { \"*.jpg\" }\n}\n"+
		"ltm pool /Common/p {\n    members {\n        /Common/127.47.0.51:80 {\n            address 127.47.0.51\n        }\n    }\n}\n"+
		"ltm virtual /Common/vb {\n    destination /Common/127.47.0.50:80\n    pool /Common/p\n    profiles {\n        /Common/http { }\n        /Common/tcp { }\n        /Common/zb { }\n    }\n}\n")
	if err != "" {
		t.Fatalf("load: %s", err)
	}
	if out, _ := run(t, s, "list ltm profile http-compression zb"); !strings.Contains(out, "uri-exclude { *.jpg }") {
		t.Fatalf("the loaded profile:\n%s", out)
	}
	dc, skipped := Translate(e.schema, e.Config())
	if dc.Virtuals["/Common/vb"] != nil {
		t.Error("the virtual with the bad profile is translated")
	}
	joined := strings.Join(skipped, "\n")
	for _, w := range []string{
		`ltm profile http-compression /Common/zb: uri-exclude "*.jpg" is not a regular expression`,
		`ltm virtual /Common/vb: profile /Common/zb: uri-exclude "*.jpg" is not a regular expression`,
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("skipped %q, want %q", joined, w)
		}
	}
	if out, _ := run(t, s, "show ltm virtual vb"); !strings.Contains(out, `openltm does not run it: profile /Common/zb: uri-exclude "*.jpg"`) {
		t.Errorf("show ltm virtual vb:\n%s", out)
	}
}
