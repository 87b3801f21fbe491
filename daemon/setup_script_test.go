package daemon

import (
	"strings"
	"testing"
)

// A first-boot setup script of the kind BIG-IP admins publish runs statement
// by statement: F5's own objects (auth user admin, sys provision ltm) exist
// before anything modifies them, and the device settings kinds openltm keeps
// without acting on take their F5 properties. What BIG-IP refuses is refused.
func TestPublishedSetupScriptRuns(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, err string }{
		{cmd: "modify auth user admin shell bash password s3cret"},
		{cmd: "modify sys provision ltm level nominal"},
		{cmd: "modify sys provision gtm level minimal", err: `"minimal" is not a valid value`},
		{cmd: "modify sys provision nosuchmodule level nominal", err: "was not found"},
		{cmd: "modify sys httpd allow replace-all-with { 10.0.0.0/8 } ssl-port 8443 redirect-http-to-https enabled"},
		{cmd: "modify sys sshd allow replace-all-with { 10.0.0.0/8 } inactivity-timeout 600 banner enabled banner-text \"authorised use only\""},
		{cmd: "modify sys snmp allowed-addresses add { 10.0.0.0/8 } sys-contact noc@example.com"},
		{cmd: "modify sys sshd port 99999", err: "out of range"},
		{cmd: "create net trunk t1 interfaces add { 1.1 1.2 } lacp enabled"},
		{cmd: "create net trunk t2 lacp-mode sometimes", err: `"sometimes" is not a valid value`},
		{cmd: "modify auth password-policy minimum-length 12 required-numeric 1"},
		{cmd: "modify auth source type radius fallback true"},
		{cmd: "modify auth remote-user default-role guest"},
		{cmd: "create auth radius-server rs1 server 10.0.0.7 secret x"},
		{cmd: "create auth radius system-auth servers add { rs1 }"},
		{cmd: "create auth user admin", err: "already exists"},
		{cmd: "modify net interface 1.1 media-max auto lldp-admin txrx"},
		{cmd: "modify net interface 1.2 disabled"},
		{cmd: "modify net interface 1.3 lldp-admin sometimes", err: `"sometimes" is not a valid value`},
	} {
		_, err := run(t, s, tc.cmd)
		switch {
		case tc.err == "" && err != "":
			t.Errorf("%s: %s", tc.cmd, err)
		case tc.err != "" && !strings.Contains(err, tc.err):
			t.Errorf("%s: error %q, want it to contain %q", tc.cmd, err, tc.err)
		}
	}
	out, _ := run(t, s, "list auth user admin")
	if !strings.Contains(out, "shell bash") {
		t.Errorf("list auth user admin:\n%s", out)
	}
	out, _ = run(t, s, "list sys provision ltm")
	if !strings.Contains(out, "sys provision ltm {\n    level nominal\n}") {
		t.Errorf("list sys provision ltm:\n%s", out)
	}
	// What was set survives a save and a restart.
	if _, err := run(t, s, "save sys config"); err != "" {
		t.Fatal(err)
	}
	dir := e.opts.StateDir
	e.Close()
	e2 := openTest(t, dir)
	defer e2.Close()
	s2 := e2.NewSession("admin").(*Session)
	for cmd, want := range map[string]string{
		"list sys httpd ssl-port":   "ssl-port 8443",
		"list net trunk t1":         "lacp enabled",
		"list sys provision ltm":    "level nominal",
		"list auth password-policy": "minimum-length 12",
		"list net interface 1.1":    "lldp-admin txrx",
	} {
		if out, err := run(t, s2, cmd); !strings.Contains(out, want) {
			t.Errorf("after restart, %s: %q %s, want %q", cmd, out, err, want)
		}
	}
}
