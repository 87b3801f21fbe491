package daemon

import (
	"net"
	"testing"

	"github.com/openltm/openltm/rules"
)

// TestProfileRefsTranslated: a virtual's profiles reach the dataplane by
// iRules type and full path, with their context and their settings as
// they apply (own, inherited through defaults-from, defaulted), for the
// PROFILE:: commands; the default persistence profile is type persist.
func TestProfileRefsTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.91.3.11:80 }",
		"create ltm profile http web_http redirect-rewrite matching",
		"create ltm profile one-connect oc",
		"create ltm profile tcp wan idle-timeout 120",
		"create ltm profile tcp wan2 defaults-from wan nagle disabled",
		"create ltm persistence cookie ck cookie-name SRV",
		"create ltm virtual v destination 127.91.3.1:80 pool p persist replace-all-with { ck } profiles replace-all-with { wan2 { context clientside } tcp { context serverside } web_http oc }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	got := map[string]rules.ProfileRef{}
	for _, p := range dc.Virtuals["/Common/v"].Profiles {
		got[p.Name] = p
	}
	for _, w := range []struct{ name, typ, ctx, attr, value string }{
		{"/Common/wan2", "tcp", "clientside", "idle-timeout", "120"},
		{"/Common/wan2", "tcp", "clientside", "nagle", "disabled"},
		{"/Common/tcp", "tcp", "serverside", "idle-timeout", "300"},
		{"/Common/web_http", "http", "", "redirect-rewrite", "matching"},
		{"/Common/web_http", "http", "", "defaults-from", "/Common/http"},
		{"/Common/oc", "oneconnect", "", "source-mask", "any"},
		{"/Common/ck", "persist", "", "cookie-name", "SRV"},
		{"/Common/ck", "persist", "", "method", "insert"},
	} {
		p, ok := got[w.name]
		if !ok || p.Type != w.typ || p.Context != w.ctx || p.Attrs[w.attr] != w.value {
			t.Errorf("%s %s: %+v (%s %q), want %s %s %q", w.name, w.attr, p.Type, p.Context, p.Attrs[w.attr], w.typ, w.ctx, w.value)
		}
	}
	if len(got) != 5 {
		t.Errorf("profiles %v, want 5", got)
	}
}

// TestVLANTags: each net vlan's tag by its interfaces' indexes, for
// LINK::vlan_id; an interface the host lacks is left out.
func TestVLANTags(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("skipped: no lo interface: %v", err)
	}
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net vlan internal interfaces { lo { } } tag 91",
		"create net vlan elsewhere interfaces { oltm-none0 { } } tag 92",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	if got := vlanTags(e.Config()); len(got) != 1 || got[lo.Index] != 91 {
		t.Errorf("tags %v, want lo (%d) 91", got, lo.Index)
	}
}
