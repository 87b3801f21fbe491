package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/ftpalg"
)

// TestFTPProfileTranslated: a virtual's ftp profile reaches the
// dataplane with its data port, translate-extended and allow-ftps; a
// virtual without one has none; the properties kept only warn.
func TestFTPProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.3.11:21 }",
		"create ltm profile ftp ftp_custom defaults-from ftp port 2020 translate-extended disabled allow-ftps enabled",
		"create ltm virtual v_ftp destination 127.47.3.1:21 pool p profiles replace-all-with { tcp { } ftp_custom { } }",
		"create ltm virtual v_builtin destination 127.47.3.2:21 pool p profiles replace-all-with { tcp { } ftp { } }",
		"create ltm virtual v_plain destination 127.47.3.3:21 pool p profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// The properties the gateway does not use are kept with a warning;
	// those it uses are not.
	out, _ := run(t, s, "modify ltm profile ftp ftp_custom log-publisher pub security enabled port 2021")
	for _, name := range []string{"log-publisher", "security"} {
		if !strings.Contains(out, `property "`+name+`" is kept`) {
			t.Errorf("no warning for %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, `"port"`) {
		t.Errorf("a warning for port:\n%s", out)
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for name, want := range map[string]*ftpalg.Options{
		"/Common/v_ftp":     {Profile: "/Common/ftp_custom", DataPort: 2021, AllowFTPS: true},
		"/Common/v_builtin": {Profile: "/Common/ftp", DataPort: 20, TranslateExtended: true},
		"/Common/v_plain":   nil,
	} {
		got := dc.Virtuals[name].FTP
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("%s: ftp %+v, want %+v", name, got, want)
		}
	}
}

// TestFTPProfileRefused: an ftp profile needs a tcp profile and may not
// sit beside an http profile; a commit that would add either is refused
// with the reason.
func TestFTPProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm pool p members add { 127.47.3.11:21 }"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd, want string
	}{
		{"create ltm virtual v_http destination 127.47.3.4:21 pool p profiles replace-all-with { tcp { } http { } ftp { } }", "cannot be used with http profile"},
		{"create ltm virtual v_fast destination 127.47.3.5:21 pool p profiles replace-all-with { fastL4 { } ftp { } }", "requires a tcp profile"},
		{"create ltm virtual v_udp destination 127.47.3.6:21 ip-protocol udp pool p profiles replace-all-with { udp { } ftp { } }", "requires a tcp profile"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
		if out, err := run(t, s, "list ltm virtual "+strings.Fields(c.cmd)[3]); err == "" {
			t.Errorf("the refused virtual exists:\n%s", out)
		}
	}
}

// TestFTPProfileWithRules: the gateway runs beside rules that handle
// connection events (their FTP:: commands change it); where the rules
// read the flow's bytes (CLIENT_DATA, SERVER_DATA) it does not, and the
// virtual is still served, passing FTP through, with a warning.
func TestFTPProfileWithRules(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.91.3.11:21 }",
		"create ltm rule allow_list { when CLIENT_ACCEPTED { if { [IP::addr [IP::client_addr] equals 10.0.0.0/8] } { reject } else { FTP::allow_active_mode disable } } }",
		"create ltm rule reader { when CLIENT_DATA { if { [TCP::payload length] > 0 } { TCP::release } } }",
		"create ltm virtual v_rules destination 127.91.3.7:21 pool p rules { allow_list } profiles replace-all-with { tcp { } ftp { } }",
		"create ltm virtual v_data destination 127.91.3.8:21 pool p rules { reader } profiles replace-all-with { tcp { } ftp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, notes := Translate(e.schema, e.Config())
	if v := dc.Virtuals["/Common/v_rules"]; v == nil || v.FTP == nil || v.Rules == nil {
		t.Fatalf("v_rules: %+v", v)
	}
	if v := dc.Virtuals["/Common/v_data"]; v == nil || v.FTP != nil || v.Rules == nil {
		t.Fatalf("v_data: %+v", v)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "FTP gateway does not run on virtuals whose rules handle CLIENT_DATA; the virtual passes FTP through without it") {
		t.Errorf("notes %q", notes)
	}
}
