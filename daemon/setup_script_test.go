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

// A kind openltm knows only by F5's name is created, listed, saved and
// deleted from tmsh as a loaded file keeps it: verbatim, with a warning. With
// no property table openltm cannot tell a property's value from a flag, so
// such an object lists on one line, as typed (valid bigip.conf).
func TestVerbatimKindsFromTmsh(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, out, err string }{
		{cmd: "create net ipsec ike-daemon ike1 log-level info", out: "net ipsec ike-daemon is an F5 object kind openltm does not act on"},
		{cmd: "list net ipsec ike-daemon ike1", out: "net ipsec ike-daemon /Common/ike1 { log-level info }\n"},
		{cmd: "create net ipsec ike-daemon ike1", err: "01020066:3: The requested net ipsec ike-daemon (/Common/ike1) already exists in partition Common."},
		{cmd: "create sys sflow receiver r1 address 10.0.0.8 port 6343 state enabled"},
		{cmd: "net"},
		{cmd: "create ipsec ipsec-policy p1 protocol esp ike-phase2-perfect-forward-secrecy modp2048"},
		{cmd: "exit"},
		{cmd: "list net ipsec ipsec-policy", out: "net ipsec ipsec-policy /Common/p1 { protocol esp ike-phase2-perfect-forward-secrecy modp2048 }\n"},
		{cmd: "create net ipsec ike-peer peer1 traffic-selector add { ts1 } remote-address 10.9.9.9", out: "kept verbatim"},
		{cmd: "list net ipsec ike-peer peer1", out: "traffic-selector { ts1 } remote-address 10.9.9.9"},
		{cmd: "create net ipsec ike-peer peer2 traffic-selector delete { ts1 }", err: `"delete" cannot be used when creating an object`},
		{cmd: "modify net ipsec ike-daemon ike1 log-level debug", err: "cannot modify their properties"},
		{cmd: "create net ipsec ike-daemon ike2 { log-level", err: "at 1:"},
		{cmd: "delete net ipsec ike-daemon ike1"},
		{cmd: "delete net ipsec ike-daemon ike1", err: "01020036:3: The requested net ipsec ike-daemon (/Common/ike1) was not found."},
	} {
		out, err := run(t, s, tc.cmd)
		switch {
		case tc.err == "" && err != "":
			t.Errorf("%s: %s", tc.cmd, err)
		case tc.err != "" && !strings.Contains(err, tc.err):
			t.Errorf("%s: error %q, want it to contain %q", tc.cmd, err, tc.err)
		case !strings.Contains(out, tc.out):
			t.Errorf("%s:\n%s\nwant it to contain %q", tc.cmd, out, tc.out)
		}
	}
	if _, err := run(t, s, "save sys config"); err != "" {
		t.Fatal(err)
	}
	dir := e.opts.StateDir
	e.Close()
	e2 := openTest(t, dir)
	defer e2.Close()
	s2 := e2.NewSession("admin").(*Session)
	if out, _ := run(t, s2, "list sys sflow receiver r1"); !strings.Contains(out, "address 10.0.0.8") {
		t.Errorf("after restart: %q", out)
	}
}
