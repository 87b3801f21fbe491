package daemon

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/httpcache"
)

// TestHeaderValues: header-insert and the hsts block read into the lines
// the engine adds, or an error naming the property and what is wrong.
func TestHeaderValues(t *testing.T) {
	for _, c := range []struct {
		read          func(string) ([]byte, error)
		in, want, err string
	}{
		{headerInsert, "none", "", ""},
		{headerInsert, "X-Foo: bar", "X-Foo: bar\r\n", ""},
		{headerInsert, `X-A: 1\r\nX-B:2`, "X-A: 1\r\nX-B: 2\r\n", ""},
		{headerInsert, "X-A: 1\r\nX-B: two words", "X-A: 1\r\nX-B: two words\r\n", ""},
		{headerInsert, "no colon", "", `"no colon" is not a header (Name: value)`},
		{headerInsert, "Bad Name: x", "", `"Bad Name: x" is not a header`},
		{hsts(t), "", "", ""},
		{hsts(t), "{ mode disabled }", "", ""},
		{hsts(t), "{ mode enabled }", "Strict-Transport-Security: max-age=16070400; includeSubDomains\r\n", ""},
		{hsts(t), "{ include-subdomains disabled maximum-age 300 mode enabled preload enabled }", "Strict-Transport-Security: max-age=300; preload\r\n", ""},
		{hsts(t), "{ mode enabled maximum-age 4294967296 }", "", `hsts maximum-age "4294967296"`},
	} {
		got, err := c.read(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// hsts reads an hsts block as typed, then into its line.
func hsts(t *testing.T) func(string) ([]byte, error) {
	return func(block string) ([]byte, error) {
		line, on, err := hstsLine(blockValue(t, "ltm profile http", "hsts", block))
		if !on {
			line = nil // the line HTTP::hsts would start from: not added
		}
		return line, err
	}
}

// TestHTTPProfileEditsTranslated: header-insert, header-erase, hsts and
// encrypt-cookies reach the virtual's HTTP options; a header-insert with
// iRule commands keeps its virtual out, with the reason; a bad value is
// refused with the property named.
func TestHTTPProfileEditsTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.1.11:80 }",
		`create ltm profile http h_edits header-insert "X-A: 1\r\nX-B: 2" header-erase X-Secret hsts { mode enabled maximum-age 600 } encrypt-cookies { sid cart } encrypt-cookie-secret "k3y"`,
		`create ltm profile http h_tcl header-insert "X-Client: [IP::client_addr]"`,
		`create ltm profile http h_nosecret encrypt-cookies { sid }`,
		"create ltm virtual v_edits destination 127.47.1.1:80 pool p profiles replace-all-with { tcp { } h_edits { } }",
		"create ltm virtual v_tcl destination 127.47.1.2:80 pool p profiles replace-all-with { tcp { } h_tcl { } }",
		"create ltm virtual v_nosecret destination 127.47.1.3:80 pool p profiles replace-all-with { tcp { } h_nosecret { } }",
		`create ltm profile http h_via header-insert "X-A: 1" via-request append via-response remove via-host-name edge1 response-headers-permitted { Content-Type Set-Cookie }`,
		"create ltm virtual v_via destination 127.47.1.4:80 pool p profiles replace-all-with { tcp { } h_via { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 1 || !strings.Contains(skipped[0], `ltm virtual /Common/v_tcl: profile /Common/h_tcl: header-insert "X-Client: [IP::client_addr]" has iRule commands`) {
		t.Errorf("skipped %q", skipped)
	}
	if dc.Virtuals["/Common/v_tcl"] != nil {
		t.Error("v_tcl runs")
	}
	o := dc.Virtuals["/Common/v_edits"].MBLB.Request.HTTP
	if string(o.HeaderInsert) != "X-A: 1\r\nX-B: 2\r\n" || o.HeaderErase != "x-secret" ||
		string(o.HSTS) != "Strict-Transport-Security: max-age=600; includeSubDomains\r\n" {
		t.Errorf("insert %q erase %q hsts %q", o.HeaderInsert, o.HeaderErase, o.HSTS)
	}
	cc := o.CookieCrypt
	if cc == nil || !slices.Equal(cc.Names, []string{"sid", "cart"}) {
		t.Fatalf("CookieCrypt %+v", cc)
	}
	enc := cc.Cipher.Encrypt("sid", "v")
	again, _ := Translate(e.schema, e.Config())
	if v, ok := again.Virtuals["/Common/v_edits"].MBLB.Request.HTTP.CookieCrypt.Cipher.Decrypt("sid", enc); !ok || v != "v" {
		t.Error("a cookie encrypted before a commit does not decrypt after it")
	}
	via := dc.Virtuals["/Common/v_via"].MBLB.Request.HTTP
	if string(via.HeaderInsert) != "X-A: 1\r\nVia: 1.1 edge1\r\n" || via.DropRequestVia || via.ResponseVia != nil ||
		via.ResponseFields == nil || !via.ResponseFields.DropVia || len(via.ResponseFields.Permitted) != 2 || !via.ResponseFields.Permitted["set-cookie"] {
		t.Errorf("via: insert %q drop %v response %q fields %+v", via.HeaderInsert, via.DropRequestVia, via.ResponseVia, via.ResponseFields)
	}
	ns := dc.Virtuals["/Common/v_nosecret"].MBLB.Request.HTTP.CookieCrypt
	if ns == nil {
		t.Fatal("encrypt-cookies without a secret: none")
	}
	if _, ok := ns.Cipher.Decrypt("sid", enc); ok {
		t.Error("the process secret decrypts a cookie of the profile's own secret")
	}
	for i, c := range []struct{ cmd, err string }{
		{`create ltm profile http h_bad1 header-insert "no colon"`, `header-insert "no colon"`},
		{`create ltm profile http h_bad2 hsts { mode enabled maximum-age 4294967296 }`, `hsts maximum-age "4294967296"`},
		{`create ltm profile http h_bad3 header-erase "X Y"`, `header-erase "X Y": not a header name`},
	} {
		prof := strings.Fields(c.cmd)[4]
		v := fmt.Sprintf("v_bad%d", i+1)
		for _, cmd := range []string{c.cmd, "create ltm virtual " + v + " destination 127.47.1.9:8" + fmt.Sprint(i) + " pool p profiles replace-all-with { tcp { } " + prof + " { } }"} {
			if _, err := run(t, s, cmd); err != "" {
				t.Fatalf("%s: %s", cmd, err)
			}
		}
		_, skipped := Translate(e.schema, e.Config())
		if !slices.ContainsFunc(skipped, func(m string) bool {
			return strings.Contains(m, "ltm virtual /Common/"+v+": profile /Common/"+prof+": "+c.err)
		}) {
			t.Errorf("%s: skipped %q, want %q", c.cmd, skipped, c.err)
		}
	}
}

// TestWebAccelerationTranslated: a web-acceleration profile gives its
// virtuals one shared cache, kept (with what it holds) by a commit that
// leaves the profile as it was and made anew when it changes; a bad
// pattern refuses the profile.
func TestWebAccelerationTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.2.11:80 }",
		"create ltm profile web-acceleration wa defaults-from webacceleration cache-size 2 cache-max-age 60 cache-uri-exclude { ^/private/ }",
		"create ltm virtual v1 destination 127.47.2.1:80 pool p profiles replace-all-with { tcp { } http { } wa { } }",
		"create ltm virtual v2 destination 127.47.2.2:80 pool p profiles replace-all-with { tcp { } http { } wa { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	cache := func(v string) *httpcache.Cache {
		t.Helper()
		c := e.translate(e.Config()).dc.Virtuals["/Common/"+v].MBLB.Request.HTTP.Cache
		if c == nil {
			t.Fatalf("%s: no cache", v)
		}
		return c
	}
	c1 := cache("v1")
	if c2 := cache("v2"); c1 != c2 || e.caches.lookup("/Common/wa") != c1 {
		t.Fatal("the virtuals of one profile do not share its cache")
	}
	if c1.Cacheable([]byte("GET /private/x HTTP/1.1\r\nHost: a\r\n\r\n")) || !c1.Cacheable([]byte("GET /x HTTP/1.1\r\nHost: a\r\n\r\n")) {
		t.Error("cache-uri-exclude not applied")
	}
	if _, err := run(t, s, "create ltm pool other members add { 127.47.2.12:80 }"); err != "" {
		t.Fatal(err)
	}
	if cache("v1") != c1 {
		t.Error("a commit that leaves the profile as it was made a new cache")
	}
	if _, err := run(t, s, "modify ltm profile web-acceleration wa cache-max-age 120"); err != "" {
		t.Fatal(err)
	}
	if cache("v1") == c1 {
		t.Error("a changed profile kept its old cache")
	}
	if _, err := run(t, s, "create ltm profile web-acceleration bad cache-uri-pinned { *.png }"); !strings.Contains(err, `cache-uri-pinned "*.png" is not a regular expression`) {
		t.Errorf("a glob pattern: %q", err)
	}
	for _, c := range []string{"delete ltm virtual v1", "delete ltm virtual v2", "delete ltm profile web-acceleration wa"} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	if e.caches.lookup("/Common/wa") != nil {
		t.Error("a deleted profile's cache is still kept")
	}
}
