package daemon

import (
	"strings"
	"testing"
)

// TestLSNNotes: a virtual with an lsn pool is warned of, at commit, for
// each of its server-side paths the pool does not translate, and not
// for those it does (pool members over HTTP/1.1 and HTTP/2, standard
// TCP and UDP flows).
func TestLSNNotes(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool p members add { 127.213.9.10:2100 }",
		"create ltm lsn-pool cg members add { 127.213.9.0/30 }",
		"create ltm profile http2 h2 activation-modes replace-all-with { always }",
	)
	const lsn = " pool p source-address-translation { type lsn pool cg } "
	for i, tc := range []struct {
		name, args string
		warn       string // "" none
	}{
		{"standard", "destination 127.213.9.20:2100" + lsn + "profiles replace-all-with { tcp }", ""},
		{"udp", "destination 127.213.9.20:2101 ip-protocol udp" + lsn + "profiles replace-all-with { udp }", ""},
		{"http", "destination 127.213.9.20:2102" + lsn + "profiles replace-all-with { tcp http }", ""},
		{"http2 members", "destination 127.213.9.20:2103" + lsn + "profiles replace-all-with { tcp http httprouter h2 }", ""},
		{"ftp", "destination 127.213.9.20:2121" + lsn + "profiles replace-all-with { tcp ftp }", "FTP active data connections' listening ports"},
		{"rtsp", "destination 127.213.9.20:2554" + lsn + "profiles replace-all-with { tcp rtsp }", "RTSP media channels"},
		{"dns", "destination 127.213.9.20:2153 ip-protocol udp" + lsn + "profiles replace-all-with { udp dns }", ""},
	} {
		out, err := run(t, s, "create ltm virtual v"+string(rune('a'+i))+" "+tc.args)
		if err != "" {
			t.Errorf("%s: %s", tc.name, err)
			continue
		}
		warned := strings.Contains(out, "source-address-translation type lsn is not acted on")
		if tc.warn == "" && warned {
			t.Errorf("%s: warned of a path the pool translates: %s", tc.name, out)
		}
		if tc.warn != "" && (!warned || !strings.Contains(out, tc.warn)) {
			t.Errorf("%s: %q, want a warning naming %q", tc.name, out, tc.warn)
		}
	}
}
