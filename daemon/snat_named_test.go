package daemon

import (
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSnatPoolNamedTranslation: a snatpool member may name an ltm
// snat-translation (full path or short name) instead of its address, as
// BIG-IP allows: the pool gives out the translation's address, with its
// settings and its enabled state; a member naming nothing is refused
// with BIG-IP's 01020036; the translation cannot be deleted while the
// snatpool names it; list shows the member as written; save and load
// keep it; a NAT may not take the address a named member gives.
func TestSnatPoolNamedTranslation(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	s := e.NewSession("admin").(*Session)
	pools := func() map[string][]netip.Addr {
		t.Helper()
		dc, _ := Translate(e.schema, e.Config())
		return dc.SnatPools
	}
	a := netip.MustParseAddr
	runSteps(t, s, []step{
		{cmd: "create ltm snat-translation xlat_1 address 127.30.0.1 connection-limit 3"},
		{cmd: "create ltm snat-translation /Common/xlat_2 address 127.30.0.2"},
		{cmd: "create ltm snatpool sp members add { xlat_1 /Common/xlat_2 127.30.0.3 }"},
		{cmd: "create ltm snatpool z_bad members add { nosuch }", err: "01020036:3: The requested snat translation (/Common/nosuch) was not found."},
		{cmd: "modify ltm snatpool sp members add { /Common/nosuch }", err: "01020036:3: The requested snat translation (/Common/nosuch) was not found."},
		{cmd: "create ltm snatpool z_bad members add { a*b }", err: `"a*b" is not an IP address`},
		{cmd: "list ltm snatpool sp", out: "members {\n        xlat_1\n        xlat_2\n        127.30.0.3\n    }"},
		{cmd: "delete ltm snat-translation xlat_1", err: "01070734:3: Configuration error: SNAT translation address (/Common/xlat_1) is still referenced by a snat pool (/Common/sp)."},
		{cmd: "create ltm nat z_nat originating-address 127.30.1.1 translation-address 127.30.0.2"},
	})
	if got, want := pools()["/Common/sp"], []netip.Addr{a("127.30.0.1"), a("127.30.0.2"), a("127.30.0.3")}; !slices.Equal(got, want) {
		t.Errorf("snatpool addresses %v, want %v", got, want)
	}
	dc, skipped := Translate(e.schema, e.Config())
	if j := strings.Join(skipped, "\n"); !strings.Contains(j, "translation-address 127.30.0.2 is already a member of ltm snatpool /Common/sp") {
		t.Errorf("the nat on xlat_2's address not refused:\n%s", j)
	}
	if st := dc.SNATSettings[a("127.30.0.1")]; st.ConnLimit != 3 {
		t.Errorf("127.30.0.1's settings %+v, want connection-limit 3 (xlat_1's)", st)
	}
	// The named translation decides: its address moved, or disabled.
	runSteps(t, s, []step{
		{cmd: "modify ltm snat-translation xlat_2 address 127.30.0.12"},
		{cmd: "modify ltm snat-translation xlat_1 enabled no"},
	})
	if got, want := pools()["/Common/sp"], []netip.Addr{a("127.30.0.12"), a("127.30.0.3")}; !slices.Equal(got, want) {
		t.Errorf("snatpool addresses %v, want %v", got, want)
	}
	runSteps(t, s, []step{
		{cmd: "modify ltm snat-translation xlat_1 enabled yes"},
		{cmd: "delete ltm nat z_nat"},
		{cmd: "save sys config file " + dir + "/one.conf"},
	})
	b, err := os.ReadFile(dir + "/one.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "ltm snatpool /Common/sp {\n    members {\n        /Common/xlat_1\n        /Common/xlat_2\n        /Common/127.30.0.3\n    }\n}") {
		t.Errorf("saved:\n%s", b)
	}
	e.Close()
	e2 := openTest(t, t.TempDir())
	defer e2.Close()
	s2 := e2.NewSession("admin").(*Session)
	runSteps(t, s2, []step{
		{cmd: "load sys config file " + dir + "/one.conf"},
		{cmd: "list ltm snatpool sp", out: "xlat_1"},
		{cmd: "delete ltm snat-translation xlat_2", err: "is still referenced by a snat pool (/Common/sp)"},
		// Taken out of the snatpool, the translation can go.
		{cmd: "modify ltm snatpool sp members delete { /Common/xlat_2 }"},
		{cmd: "delete ltm snat-translation xlat_2"},
	})
	dc2, _ := Translate(e2.schema, e2.Config())
	if got, want := dc2.SnatPools["/Common/sp"], []netip.Addr{a("127.30.0.1"), a("127.30.0.3")}; !slices.Equal(got, want) {
		t.Errorf("loaded snatpool addresses %v, want %v", got, want)
	}
}
