package daemon

import (
	"strings"
	"testing"
)

// TestVirtualSourcePortTranslated: a virtual's own source-port reaches
// the data path (change, preserve-strict; preserve sets neither) with
// no warning, whatever its source-address-translation; with type lsn,
// whose lsn pool gives the ports, and on a message-routing virtual,
// whose peer connections take the transport-config's translation,
// change is kept with a warning naming the virtual.
func TestVirtualSourcePortTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool p members add { 127.247.234.11:30851 }",
		"create ltm snatpool sp members add { 127.247.234.100 }",
		"create ltm virtual v destination 127.247.234.1:30850 pool p profiles replace-all-with { tcp { } }",
	)
	for _, c := range []struct {
		set            string
		change, strict bool
	}{
		{"source-port change", true, false},
		{"source-port preserve-strict source-address-translation { type automap }", false, true},
		{"source-port change source-address-translation { type snat pool sp }", true, false},
		{"source-port preserve source-address-translation { type none }", false, false},
	} {
		out, errs := run(t, s, "modify ltm virtual v "+c.set)
		if errs != "" {
			t.Fatalf("%s: %s", c.set, errs)
		}
		if strings.Contains(out, "not acted on") {
			t.Errorf("%s: warned %q", c.set, out)
		}
		dc, skipped := Translate(e.schema, e.Config())
		if len(skipped) != 0 {
			t.Fatalf("%s: skipped %v", c.set, skipped)
		}
		v := dc.Virtuals["/Common/v"]
		if v == nil {
			t.Fatalf("%s: no virtual", c.set)
		}
		if v.SNAT.ChangePort != c.change || v.SNAT.StrictPort != c.strict {
			t.Errorf("%s: SNAT %+v, want change %v strict %v", c.set, v.SNAT, c.change, c.strict)
		}
	}
	mustRun(t, s,
		"create ltm lsn-pool u members add { 127.247.235.0/31 } translation-port-range 31600:31699",
		"create ltm virtual vl destination 127.247.234.2:30852 pool p source-address-translation { type lsn pool u } profiles replace-all-with { tcp { } }",
	)
	out, errs := run(t, s, "modify ltm virtual vl source-port change")
	if errs != "" {
		t.Fatal(errs)
	}
	if !strings.Contains(out, "/Common/vl") || !strings.Contains(out, "source-port change is kept but not acted on: with source-address-translation lsn") {
		t.Errorf("no warning naming the lsn virtual: %q", out)
	}
	mustRun(t, s,
		"create ltm message-routing generic protocol lines { defaults-from genericmsg message-terminator \\n }",
		"create ltm message-routing generic peer pm { pool p }",
		"create ltm message-routing generic route rm { peers { pm } }",
		"create ltm message-routing generic router rtm { routes { rm } }",
		"create ltm virtual vm destination 127.247.234.3:30853 pool p profiles replace-all-with { tcp { } lines { } rtm { } }",
	)
	out, errs = run(t, s, "modify ltm virtual vm source-port preserve-strict")
	if errs != "" {
		t.Fatal(errs)
	}
	if !strings.Contains(out, "/Common/vm") || !strings.Contains(out, "source-port preserve-strict is kept but not acted on: the message-routing peer connections") {
		t.Errorf("no warning naming the message-routing virtual: %q", out)
	}
	if strings.Contains(out, "/Common/v:") || strings.Contains(out, "/Common/vl:") {
		t.Errorf("warned again of other virtuals: %q", out)
	}
}
