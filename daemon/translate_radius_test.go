package daemon

import (
	"strings"
	"testing"
)

// TestRADIUSProfileTranslated: persist-avp by name or number, the
// clients data group's networks most specific first with their
// secrets, and the refusals (a TCP virtual, beside sip, a bad
// persist-avp, clients not an address data group), each leaving the
// configuration as it was.
func TestRADIUSProfileTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.105.20.11:1812 }",
		"create ltm data-group internal nas type ip records add { 127.105.0.0/16 { data wide } 127.105.20.7 { data exact } 127.105.21.0/24 { } }",
		"create ltm profile radius r_name persist-avp Calling-Station-Id clients nas",
		"create ltm profile radius r_num defaults-from radiusLB-subscriber-aware persist-avp 1",
		"create ltm virtual v1 destination 127.105.20.1:1812 ip-protocol udp pool p profiles replace-all-with { udp { } r_name { } }",
		"create ltm virtual v2 destination 127.105.20.2:1812 ip-protocol udp pool p profiles replace-all-with { udp { } r_num { } }",
		"create ltm data-group internal words type string",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	v1, v2 := dc.Virtuals["/Common/v1"], dc.Virtuals["/Common/v2"]
	if v1 == nil || v1.RADIUS == nil || v2 == nil || v2.RADIUS == nil {
		t.Fatalf("no RADIUS virtuals: %+v %+v", v1, v2)
	}
	if v1.RADIUS.PersistAVP != 31 || v2.RADIUS.PersistAVP != 1 {
		t.Fatalf("persist-avp %d %d", v1.RADIUS.PersistAVP, v2.RADIUS.PersistAVP)
	}
	cl := v1.RADIUS.Clients
	if len(cl) != 2 || cl[0].Net.String() != "127.105.20.7/32" || string(cl[0].Secret) != "exact" || string(cl[1].Secret) != "wide" {
		t.Fatalf("clients %+v", cl)
	}
	for _, c := range []struct{ cmd, want string }{
		{"create ltm virtual bad_tcp destination 127.105.20.3:1812 pool p profiles replace-all-with { tcp { } r_name { } }", "requires a udp profile"},
		{"create ltm virtual bad_sip destination 127.105.20.4:5060 ip-protocol udp pool p profiles replace-all-with { udp { } sip { } r_name { } }", "cannot be used with sip profile"},
		{"modify ltm profile radius r_num persist-avp 0", "outside 1..255"},
		{"create ltm profile radius r_bad persist-avp Bogus", "neither an attribute number"},
		{"modify ltm profile radius r_name clients words", "not an address data group"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.want)
		}
	}
	out, _ := run(t, s, "list ltm profile radius r_num")
	if !strings.Contains(out, "persist-avp 1") {
		t.Errorf("r_num changed:\n%s", out)
	}
	if out, _ := run(t, s, "list ltm virtual"); strings.Contains(out, "bad_") {
		t.Errorf("a refused virtual was kept:\n%s", out)
	}
}
