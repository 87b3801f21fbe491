package daemon

import (
	"testing"
)

// TestProvisionAndDevice: list and show sys provision give ltm and gtm at
// the level openltm runs them (nominal unless set) and every other module
// at none; a level is kept for ltm and gtm, a module openltm does not have
// is refused any level but none, and nothing changes on a refusal. show
// cm device prints the device's own settings.
func TestProvisionAndDevice(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "list sys provision ltm", out: "sys provision ltm {\n    level nominal\n}\n"},
		{cmd: "list sys provision asm", out: "sys provision asm { }\n"},
		{cmd: "show sys provision gtm", out: "gtm        nominal    running\n"},
		{cmd: "show sys provision apm", out: "apm        none       not available\n"},
		{cmd: "modify sys provision ltm level dedicated"},
		{cmd: "list sys provision ltm", out: "sys provision ltm {\n    level dedicated\n}\n"},
		{cmd: "modify sys provision gtm level minimum"},
		{cmd: "show sys provision gtm", out: "gtm        minimum    running\n"},
		{cmd: "modify sys provision asm level nominal", err: "01070356:3: Application Security Manager feature not licensed."},
		{cmd: "modify sys provision afm level dedicated", err: "01070356:3: Advanced Firewall Manager feature not licensed."},
		{cmd: "modify sys provision afm level none"},
		{cmd: "list sys provision afm", out: "sys provision afm { }\n"},
		{cmd: "modify sys provision ltm level none", err: "cannot be deprovisioned"},
		{cmd: "list sys provision ltm", out: "level dedicated"},
		{cmd: "modify sys provision ltm level minimal", err: `"minimal" is not a valid value`},
		{cmd: "modify sys provision nosuch level nominal", err: "01020036:3: The requested provision (nosuch) was not found."},
		{cmd: "list sys provision nosuch", err: "(nosuch) was not found"},
		{cmd: "list sys provision", out: "sys provision afm { }\nsys provision am { }\n"},
		{cmd: "show cm device", out: "CM::Device: /Common/bigip1\n"},
		{cmd: "modify cm device bigip1 configsync-ip 127.18.2.5 management-ip 127.18.2.6 unicast-address { { ip 127.18.2.5 port 1026 } }"},
		{cmd: "show cm device bigip1", out: "  Management IP                  127.18.2.6\n  Configsync IP                  127.18.2.5\n  Failover Unicast Address(es)   127.18.2.5:1026\n"},
		{cmd: "show cm device", out: "  Failover State                 active\n"},
		{cmd: "show cm device other", err: "01020036:3: The requested device (/Common/other) was not found."},
	})
}
