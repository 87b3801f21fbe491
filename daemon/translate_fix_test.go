package daemon

import (
	"strings"
	"testing"
	"time"
)

// TestFIXProfileTranslated: a fix profile's settings reach the virtual
// (error-action, the parsing switches, sender-tag-class's maps read from
// the data group), and the refusals (no tcp profile, beside http or
// mqtt, a tag map that maps badly or is an address group, FIX_ events
// without the profile), each leaving the configuration as it was.
func TestFIXProfileTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.110.20.11:9878 }",
		"create ltm data-group internal tags type integer records add { 10001 { data 20001 } 10002 { data 20002 } }",
		"create ltm data-group internal addrs type ip records add { 127.110.0.0/16 { } }",
		"create ltm data-group internal twice type string records add { 1 { data 3 } 2 { data 3 } }",
		"create ltm profile fix f1 error-action drop-connection quick-parsing true response-parsing true sender-tag-class add { a { sender-id CLIENT1 tag-map-class tags } }",
		"create ltm virtual v1 destination 127.110.20.1:9878 pool p profiles replace-all-with { tcp { } f1 { } }",
		"create ltm virtual v2 destination 127.110.20.2:9878 pool p profiles replace-all-with { tcp { } fix { } }",
		"create ltm rule fr { when FIX_MESSAGE { log local0. [FIX::tag get 49] } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	v1, v2 := dc.Virtuals["/Common/v1"], dc.Virtuals["/Common/v2"]
	if v1 == nil || v1.FIX == nil || v2 == nil || v2.FIX == nil {
		t.Fatalf("no FIX virtuals: %+v %+v", v1, v2)
	}
	f1, f2 := v1.FIX, v2.FIX
	if !f1.DropConnection || !f1.Quick || !f1.Response || !f1.FullLogon || f1.SenderTags["CLIENT1"][10001] != 20001 || f1.SenderTags["CLIENT1"][10002] != 20002 {
		t.Fatalf("f1 %+v", f1)
	}
	if f2.DropConnection || f2.Quick || f2.Response || !f2.FullLogon || f2.SenderTags != nil {
		t.Fatalf("the built-in fix %+v", f2)
	}
	for _, c := range []struct{ cmd, want string }{
		{"create ltm virtual bad_udp destination 127.110.20.3:9878 ip-protocol udp pool p profiles replace-all-with { udp { } f1 { } }", "requires a tcp profile"},
		{"create ltm virtual bad_http destination 127.110.20.4:80 pool p profiles replace-all-with { tcp { } http { } f1 { } }", "cannot be used with http profile"},
		{"create ltm virtual bad_mqtt destination 127.110.20.5:1883 pool p profiles replace-all-with { tcp { } mqtt { } f1 { } }", "cannot be used with mqtt profile"},
		{"modify ltm profile fix f1 sender-tag-class replace-all-with { a { sender-id CLIENT1 tag-map-class twice } }", "both map to 3"},
		{"modify ltm profile fix f1 sender-tag-class replace-all-with { a { sender-id CLIENT1 tag-map-class addrs } }", "address data group"},
		{"modify ltm profile fix f1 error-action ignore", "ignore"},
		{"create ltm virtual bad_rule destination 127.110.20.6:9878 pool p profiles replace-all-with { tcp { } } rules { fr }", "requires an associated FIX profile"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.want)
		}
	}
	out, _ := run(t, s, "list ltm profile fix f1")
	if !strings.Contains(out, "tag-map-class tags") || !strings.Contains(out, "error-action drop-connection") {
		t.Errorf("f1 changed:\n%s", out)
	}
	if out, _ := run(t, s, "list ltm virtual"); strings.Contains(out, "bad_") {
		t.Errorf("a refused virtual was kept:\n%s", out)
	}
}

// TestFIXProfileLogPublishers: message-log-publisher, report-log-publisher
// and statistics-sample-interval reach the virtual (the publishers' full
// names, a sender into the running publishers); a profile without them
// logs nothing; a publisher that does not exist is refused, and one a
// profile names cannot be deleted.
func TestFIXProfileLogPublishers(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.180.20.11:9878 }",
		"create sys log-config publisher fixmsgs destinations replace-all-with { local-syslog }",
		"create sys log-config publisher fixreports destinations replace-all-with { local-syslog }",
		"create ltm profile fix flog message-log-publisher fixmsgs report-log-publisher fixreports statistics-sample-interval 5",
		"create ltm profile fix fmsg message-log-publisher fixmsgs statistics-sample-interval 0",
		"create ltm virtual v1 destination 127.180.20.1:9878 pool p profiles replace-all-with { tcp { } flog { } }",
		"create ltm virtual v2 destination 127.180.20.2:9878 pool p profiles replace-all-with { tcp { } fix { } }",
		"create ltm virtual v3 destination 127.180.20.3:9878 pool p profiles replace-all-with { tcp { } fmsg { } }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not acted on") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	l := dc.Virtuals["/Common/v1"].FIX.Log
	if l == nil || l.Message != "/Common/fixmsgs" || l.Report != "/Common/fixreports" || l.Interval != 5*time.Second {
		t.Fatalf("flog's log %+v", l)
	}
	if l := dc.Virtuals["/Common/v2"].FIX.Log; l != nil {
		t.Fatalf("the built-in fix logs: %+v", l)
	}
	if l := dc.Virtuals["/Common/v3"].FIX.Log; l == nil || l.Message != "/Common/fixmsgs" || l.Report != "" || l.Interval != 0 {
		t.Fatalf("fmsg's log %+v", l)
	}
	for _, c := range []struct{ cmd, want string }{
		{"modify ltm profile fix flog report-log-publisher nosuch", "nosuch"},
		{"delete sys log-config publisher fixmsgs", "fixmsgs"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.want)
		}
	}
	if out, _ := run(t, s, "list ltm profile fix flog"); !strings.Contains(out, "report-log-publisher fixreports") {
		t.Errorf("flog changed:\n%s", out)
	}
}
