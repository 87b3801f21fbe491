package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSysDB: list shows every known key at its default until set;
// modify refuses what a key does not take, and misspelt keys, changing
// nothing; a kept key says why it changes nothing; a load keeps what it
// would refuse, with a warning.
func TestSysDB(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	steps := []struct {
		cmd, out, err string // substrings; err "" expects none
		not           string // a substring the output must not have
	}{
		{cmd: "list sys db tm.maxrejectrate", out: "sys db tm.maxrejectrate {\n    value \"250\"\n}\n"},
		{cmd: "list sys db", out: "sys db tm.rejectunmatched {\n    value \"true\"\n}\n"},
		{cmd: "list sys db", out: "sys db bigpipe.displayservicenames {\n    value \"true\"\n}\n"},
		{cmd: "list sys db tm.rstcause.*", out: "sys db tm.rstcause.log {\n    value \"disable\"\n}\nsys db tm.rstcause.pkt {\n    value \"disable\"\n}\n"},
		{cmd: "list sys db ui.advisory.*", out: "ui.advisory.text", not: "tm.rstcause"},
		{cmd: "modify sys db tm.maxrejectrate value fast", err: "01070734:3: Configuration error: DB validation exception, invalid value (fast) for db variable (tm.maxrejectrate): expected an integer from 0 to 4294967295"},
		{cmd: "modify sys db tm.rejectunmatched value disable", err: "expected true or false"},
		{cmd: "modify sys db statemirror.clustermirroring value across", err: "expected within or between"},
		{cmd: "modify sys db tm.maxrejectrat value 100", err: "01020036:3: The requested database variable (tm.maxrejectrat) was not found; did you mean tm.maxrejectrate?"},
		{cmd: "list sys db tm.maxrejectrate", out: "value \"250\""}, // nothing changed
		{cmd: "modify sys db tm.maxrejectrate value 1000"},
		{cmd: "list sys db tm.maxrejectrate", out: "value \"1000\""},
		{cmd: "modify sys db tm.maxrejectrate reset-to-default"},
		{cmd: "list sys db tm.maxrejectrate", out: "value \"250\""},
		{cmd: "modify sys db tm.maxrejectrate reset-to-default"}, // already at its default
		{cmd: "modify sys db tm.maxrejectrat reset-to-default", err: "01020036:3: The requested database variable (tm.maxrejectrat) was not found; did you mean tm.maxrejectrate?"},
		{cmd: "modify sys db no.such.key reset-to-default", err: "01020036:3: The requested database variable (no.such.key) was not found."},
		{cmd: "modify sys db tm.maxrejectrate value 7 reset-to-default", err: "reset-to-default takes no other property"},
		{cmd: "list sys db tm.maxrejectrate", out: "value \"250\""},
		{cmd: "modify sys db tm.maxrejectrate value reset-to-default", err: "invalid value (reset-to-default)"},
		{cmd: "modify sys db tm.maxrejectrate value default", err: "invalid value (default)"},
		{cmd: "modify sys db no.such.key value x", out: "not one of the db keys openltm knows"},
		{cmd: "modify sys db no.such.key reset-to-default"},
		{cmd: "list sys db no.such.key", out: "sys db no.such.key { }"},
		{cmd: "modify sys db tm.maxrejectrate value 1000"},
		{cmd: "modify sys db tm.rejectunmatched value false", out: "answered by the Linux kernel"},
		{cmd: "modify sys db ui.advisory.enabled value true", out: "kept and saved back; openltm does not act on it"},
		{cmd: "modify sys db tmm.ssl.useffdhe value true", out: "not one of the db keys openltm knows"},
		{cmd: "list sys db tmm.ssl.useffdhe", out: "value \"true\""},
		{cmd: "modify sys db log.ssl.level value Debug", not: "not act"},
		{cmd: "modify sys db log.gtm.level value verbose", err: "expected one of emergency"},
		{cmd: "save sys config"},
	}
	for _, st := range steps {
		out, errText := run(t, s, st.cmd)
		if st.err == "" && errText != "" || !strings.Contains(errText, st.err) {
			t.Fatalf("%s: error %q, want %q", st.cmd, errText, st.err)
		}
		if !strings.Contains(out, st.out) || st.not != "" && strings.Contains(out, st.not) {
			t.Fatalf("%s: output %q, want %q without %q", st.cmd, out, st.out, st.not)
		}
	}
	// What is saved is what was set, not the defaults.
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	saved := string(b)
	for _, want := range []string{"tm.maxrejectrate", "tm.rejectunmatched", "tmm.ssl.useffdhe"} {
		if !strings.Contains(saved, "sys db "+want+" {") {
			t.Errorf("saved configuration lacks %s:\n%s", want, saved)
		}
	}
	if strings.Contains(saved, "tm.rstcause.pkt") || strings.Contains(saved, "no.such.key") {
		t.Errorf("saved configuration has an unset key at its default:\n%s", saved)
	}
}

// TestSysDBLoad: a loaded file keeps what modify refuses, with a warning,
// so that a configuration from a newer BIG-IP still loads.
func TestSysDBLoad(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	f := filepath.Join(dir, "in.conf")
	if err := os.WriteFile(f, []byte("sys db tm.maxrejectrate {\n    value \"lots\"\n}\nsys db tm.rstcause.lgo {\n    value \"enable\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errText := run(t, s, "load sys config merge file "+f)
	if errText != "" {
		t.Fatal(errText)
	}
	for _, want := range []string{"invalid value (lots) for db variable (tm.maxrejectrate)", "did you mean tm.rstcause.log?"} {
		if !strings.Contains(out, want) {
			t.Errorf("load: no warning %q in %q", want, out)
		}
	}
	if out, _ := run(t, s, "list sys db tm.maxrejectrate"); !strings.Contains(out, `value "lots"`) {
		t.Errorf("the loaded value was not kept: %q", out)
	}
}

// TestDisplayServiceNames: list prints ports by service name until
// bigpipe.displayservicenames is false, then by number; the saved
// configuration is the same either way.
func TestDisplayServiceNames(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, cmd := range []string{
		"create ltm pool p members add { 127.37.0.11:80 127.37.0.12:8080 }",
		"create ltm virtual vs destination 127.37.0.1:443 ip-protocol tcp pool p",
	} {
		if _, errText := run(t, s, cmd); errText != "" {
			t.Fatalf("%s: %s", cmd, errText)
		}
	}
	steps := []struct {
		cmd      string
		out, not []string
	}{
		{"list ltm virtual vs", []string{"destination 127.37.0.1:https"}, []string{":443"}},
		{"list ltm pool p members", []string{"127.37.0.11:http {", "127.37.0.12:webcache {"}, []string{":80 "}},
		{"modify sys db bigpipe.displayservicenames value false", nil, []string{"does not act"}},
		{"list ltm virtual vs", []string{"destination 127.37.0.1:443"}, []string{"https"}},
		{"list ltm pool p", []string{"127.37.0.11:80 {", "127.37.0.12:8080 {"}, []string{"http {", "webcache"}},
		{"list sys db bigpipe.displayservicenames", []string{`value "false"`}, nil},
		{"save sys config", nil, nil},
		{"modify sys db bigpipe.displayservicenames value true", nil, nil},
		{"list ltm virtual vs", []string{"destination 127.37.0.1:https"}, nil},
	}
	for _, st := range steps {
		out, errText := run(t, s, st.cmd)
		if errText != "" {
			t.Fatalf("%s: %s", st.cmd, errText)
		}
		for _, w := range st.out {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", st.cmd, w, out)
			}
		}
		for _, w := range st.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", st.cmd, w, out)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "destination /Common/127.37.0.1:https") {
		t.Errorf("saved with numeric ports:\n%s", b)
	}
}
