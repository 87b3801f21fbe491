package daemon

import (
	"strings"
	"testing"
)

// TestTrafficMatchingShow: show ltm virtual prints the wildcard
// destination of its family for a virtual built from a
// traffic-matching-criteria, running or kept out, and the plain
// virtual's address and port otherwise; list prints the virtual as
// configured (no destination of its own).
func TestTrafficMatchingShow(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.65.1.100:7000 }",
		"create net address-list dst addresses add { 127.65.1.1 127.65.1.2 }",
		"create net address-list names fqdns add { www.example.com }",
		"create ltm traffic-matching-criteria t4 destination-address-list dst destination-port-inline 8080,8081",
		"create ltm traffic-matching-criteria t6 destination-address-inline ::1 destination-port-inline 8082",
		"create ltm traffic-matching-criteria tout destination-address-list names destination-port-inline 8083",
		"create ltm virtual v4 traffic-matching-criteria t4 pool p",
		"create ltm virtual v6 traffic-matching-criteria t6 pool p",
		"create ltm virtual vout traffic-matching-criteria tout pool p",
		"create ltm virtual plain destination 127.65.1.5:8084 pool p",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tc := range []struct{ name, dest, list string }{
		{"v4", "0.0.0.0:any", "traffic-matching-criteria t4"},
		{"v6", "::.any", "traffic-matching-criteria t6"},
		{"vout", "0.0.0.0:any", "traffic-matching-criteria tout"},
		{"plain", "127.65.1.5:8084", "destination 127.65.1.5:8084"},
	} {
		out, errText := run(t, s, "show ltm virtual "+tc.name)
		if errText != "" || !strings.Contains(out, "Destination      : "+tc.dest+"\n") {
			t.Errorf("show ltm virtual %s: %s\n%s", tc.name, errText, out)
		}
		out, errText = run(t, s, "list ltm virtual "+tc.name)
		if errText != "" || !strings.Contains(out, "    "+tc.list+"\n") || (tc.list != "destination 127.65.1.5:8084" && strings.Contains(out, "destination")) {
			t.Errorf("list ltm virtual %s: %s\n%s", tc.name, errText, out)
		}
	}
}
