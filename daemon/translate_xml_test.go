package daemon

import (
	"reflect"
	"strings"
	"testing"
)

// TestXMLProfileTranslated: a virtual's xml profile reaches its HTTP
// engine compiled, with its namespace mappings, queries in order,
// multiple-query-matches, abort-on-error and max-buffer-size, inherited from its parent where it sets
// nothing; a virtual without one has none.
func TestXMLProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.139.2.11:80 }",
		`create ltm profile xml x_soap defaults-from xml namespace-mappings { { mapping-prefix soap mapping-namespace http://schemas.xmlsoap.org/soap/envelope/ } { mapping-prefix e mapping-namespace urn:eai } } xpath-queries { /soap:Envelope/soap:Body/e:Order "//Amount[. > 100]" } multiple-query-matches enabled`,
		"create ltm profile xml x_child defaults-from x_soap multiple-query-matches disabled",
		"create ltm profile xml x_keyed defaults-from xml namespace-mappings { p { mapping-namespace urn:p } } xpath-queries { //p:a } abort-on-error enabled max-buffer-size 2048",
		"create ltm virtual v_soap destination 127.139.2.1:80 pool p profiles replace-all-with { tcp { } http { } x_soap { } }",
		"create ltm virtual v_child destination 127.139.2.2:80 pool p profiles replace-all-with { tcp { } http { } x_child { } }",
		"create ltm virtual v_keyed destination 127.139.2.3:80 pool p profiles replace-all-with { tcp { } http { } x_keyed { } }",
		"create ltm virtual v_builtin destination 127.139.2.4:80 pool p profiles replace-all-with { tcp { } http { } xml { } }",
		"create ltm virtual v_plain destination 127.139.2.5:80 pool p profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	soapNS := map[string]string{"soap": "http://schemas.xmlsoap.org/soap/envelope/", "e": "urn:eai"}
	for _, c := range []struct {
		virtual, profile string
		ns               map[string]string
		queries          []string
		multiple, abort  bool
		buffer           int
	}{
		{"/Common/v_soap", "/Common/x_soap", soapNS, []string{"/soap:Envelope/soap:Body/e:Order", "//Amount[. > 100]"}, true, false, 65536},
		{"/Common/v_child", "/Common/x_child", soapNS, []string{"/soap:Envelope/soap:Body/e:Order", "//Amount[. > 100]"}, false, false, 65536},
		{"/Common/v_keyed", "/Common/x_keyed", map[string]string{"p": "urn:p"}, []string{"//p:a"}, false, true, 2048},
		{"/Common/v_builtin", "/Common/xml", nil, nil, false, false, 65536},
	} {
		got := dc.Virtuals[c.virtual].MBLB.Request.HTTP.XML
		if got == nil {
			t.Errorf("%s: no xml profile", c.virtual)
			continue
		}
		var qs []string
		for _, q := range got.Queries {
			qs = append(qs, q.Text)
		}
		if got.Name != c.profile || !reflect.DeepEqual(got.Namespaces, c.ns) || !reflect.DeepEqual(qs, c.queries) || got.Multiple != c.multiple ||
			got.AbortOnError != c.abort || got.MaxBufferSize != c.buffer {
			t.Errorf("%s: profile %s ns %v queries %q multiple %v abort %v buffer %d", c.virtual, got.Name, got.Namespaces, qs, got.Multiple, got.AbortOnError, got.MaxBufferSize)
		}
	}
	if got := dc.Virtuals["/Common/v_plain"].MBLB.Request.HTTP.XML; got != nil {
		t.Errorf("v_plain: xml profile %s", got.Name)
	}
}

// TestXMLProfileRefused: a query that does not compile (with the query
// and what is wrong), an unmapped prefix, a fourth query, a bad
// namespace-mappings block, a max-buffer-size out of range, an xml profile without an http profile,
// XML_CONTENT_BASED_ROUTING and the parser events without an xml profile
// are refused; nothing changes.
func TestXMLProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.139.2.11:80 }",
		"create ltm profile xml x_keep defaults-from xml xpath-queries { //a }",
		"create ltm rule xr { when XML_CONTENT_BASED_ROUTING { pool p } }",
		"create ltm rule xe { when XML_CDATA { log local0. [XML::element text] } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct{ cmd, err string }{
		{`modify ltm profile xml x_keep xpath-queries replace-all-with { "//a[@b=" }`, `xpath query "//a[@b=" does not compile`},
		{"modify ltm profile xml x_keep xpath-queries replace-all-with { //soap:Body }", `xpath query "//soap:Body" does not compile: prefix "soap" is not in the profile's namespace-mappings`},
		{"modify ltm profile xml x_keep xpath-queries add { /b /c /d }", "xpath-queries has 4 queries: a profile holds at most 3"},
		{"create ltm profile xml x_bad defaults-from xml namespace-mappings { { mapping-prefix p } }", "an entry needs both mapping-prefix and mapping-namespace"},
		{"modify ltm profile xml x_keep max-buffer-size 0", `max-buffer-size "0" is out of range: 1 to 16777216`},
		{"modify ltm profile xml x_keep max-buffer-size 16777217", `max-buffer-size "16777217" is out of range`},
		{"modify ltm profile xml x_keep abort-on-error maybe", `abort-on-error`},
		{"create ltm profile xml x_bad defaults-from xml namespace-mappings { { mapping-prefix p mapping-namespace u colour red } }", `unknown setting "colour"`},
		{"create ltm profile xml x_bad defaults-from xml namespace-mappings { { mapping-prefix 1p mapping-namespace u } }", `"1p" is not a namespace prefix`},
		{"create ltm virtual v_tcp destination 127.139.2.4:80 pool p profiles replace-all-with { tcp { } x_keep { } }", "profile /Common/x_keep (xml) requires an http profile on the virtual server (/Common/v_tcp)"},
		{"create ltm virtual v_rule destination 127.139.2.5:80 pool p profiles replace-all-with { tcp { } http { } } rules { xr }", "XML_CONTENT_BASED_ROUTING in rule (/Common/xr) requires an associated XML profile"},
		{"create ltm virtual v_events destination 127.164.2.6:80 pool p profiles replace-all-with { tcp { } http { } } rules { xe }", "XML_CDATA in rule (/Common/xe) requires an associated XML profile"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list ltm profile xml x_keep"); !strings.Contains(out, "xpath-queries { //a }") {
		t.Errorf("x_keep after the refusals:\n%s", out)
	}
	for _, l := range []string{"list ltm profile xml x_bad", "list ltm virtual v_tcp", "list ltm virtual v_rule", "list ltm virtual v_events"} {
		if _, err := run(t, s, l); err == "" {
			t.Errorf("%s: made", l)
		}
	}
}
