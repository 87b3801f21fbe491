package daemon

import (
	"os"
	"strings"
	"testing"
)

// TestSNATImplicitTranslations: a snatpool, a snat and a nat create the
// ltm snat-translation of each translation address they name; its
// settings can be modified; deleting it while used is refused with
// nothing changed; deleting the last user keeps it; it survives save
// and load as BIG-IP writes it.
func TestSNATImplicitTranslations(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create ltm snatpool sp members add { 127.229.0.101 127.229.0.102 }"},
		{cmd: "create ltm snat s1 origins add { 127.229.1.0/24 } translation 127.229.0.103"},
		{cmd: "create ltm nat n1 originating-address 127.229.2.10 translation-address 127.229.0.104"},
		{cmd: "list ltm snat-translation", out: "ltm snat-translation 127.229.0.101 {\n    address 127.229.0.101\n    traffic-group /Common/traffic-group-1\n}"},
		{cmd: "list ltm snat-translation 127.229.0.103", out: "address 127.229.0.103"},
		{cmd: "list ltm snat-translation 127.229.0.104", out: "address 127.229.0.104"},
		{cmd: "modify ltm snat-translation 127.229.0.101 connection-limit 5"},
		{cmd: "list ltm snat-translation 127.229.0.101 connection-limit", out: "connection-limit 5"},
		{cmd: "delete ltm snat-translation 127.229.0.101", err: "01070734:3: Configuration error: SNAT translation address (/Common/127.229.0.101) is still referenced by a snat pool (/Common/sp)."},
		{cmd: "delete ltm snat-translation 127.229.0.103", err: "is still referenced by a snat (/Common/s1)"},
		{cmd: "delete ltm snat-translation 127.229.0.104", err: "is still referenced by a nat (/Common/n1)"},
		{cmd: "list ltm snat-translation 127.229.0.101", out: "connection-limit 5"},
		// A member taken away: its translation stays, now deletable.
		{cmd: "modify ltm snatpool sp members delete { 127.229.0.102 }"},
		{cmd: "list ltm snat-translation 127.229.0.102", out: "address 127.229.0.102"},
		{cmd: "delete ltm snat-translation 127.229.0.102"},
		{cmd: "save sys config file " + dir + "/one.conf"},
	})
	b, err := os.ReadFile(dir + "/one.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "ltm snat-translation /Common/127.229.0.101 {\n    address 127.229.0.101\n    connection-limit 5\n    traffic-group /Common/traffic-group-1\n}") ||
		strings.Contains(string(b), "127.229.0.102") {
		t.Errorf("saved:\n%s", b)
	}
	// The last user deleted: the translation stays.
	runSteps(t, s, []step{
		{cmd: "delete ltm snatpool sp"},
		{cmd: "list ltm snat-translation 127.229.0.101", out: "connection-limit 5"},
		{cmd: "delete ltm snat-translation 127.229.0.101"},
	})
	e.Close()
	e2 := openTest(t, t.TempDir())
	defer e2.Close()
	s2 := e2.NewSession("admin").(*Session)
	runSteps(t, s2, []step{
		{cmd: "load sys config file " + dir + "/one.conf"},
		{cmd: "list ltm snat-translation 127.229.0.101", out: "connection-limit 5"},
		{cmd: "delete ltm snat-translation 127.229.0.101", err: "is still referenced by a snat pool (/Common/sp)"},
	})
}
