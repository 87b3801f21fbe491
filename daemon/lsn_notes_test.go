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
		"create ltm message-routing generic protocol lines { defaults-from genericmsg message-terminator \\n }",
		"create ltm message-routing generic router rt { }",
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
		{"ftp", "destination 127.213.9.20:2121" + lsn + "profiles replace-all-with { tcp ftp }", ""},
		{"rtsp", "destination 127.213.9.20:2554" + lsn + "profiles replace-all-with { tcp rtsp }", ""},
		{"dns", "destination 127.213.9.20:2153 ip-protocol udp" + lsn + "profiles replace-all-with { udp dns }", ""},
		{"tftp", "destination 127.216.9.20:21169 ip-protocol udp" + lsn + "profiles replace-all-with { udp tftp }", ""},
		{"gtp", "destination 127.216.9.20:22124 ip-protocol udp" + lsn + "profiles replace-all-with { udp gtp }", ""},
		{"message routing", "destination 127.216.9.20:21170" + lsn + "profiles replace-all-with { tcp lines rt }", ""},
		{"diameter profile", "destination 127.216.9.20:23869" + lsn + "profiles replace-all-with { tcp diameter }", ""},
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

// TestLSNTransportConfig: a transport-config's source-address-translation
// type lsn names a running lsn pool; one that names none, or a pool
// that does not exist, is kept with a warning saying its connections keep
// the host's address.
func TestLSNTransportConfig(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm lsn-pool cg members add { 127.216.9.0/30 }",
		"create ltm message-routing generic protocol lines { defaults-from genericmsg message-terminator \\n }",
		"create ltm pool p members add { 127.216.9.10:21000 }",
	)
	for i, tc := range []struct {
		sat, warn string
	}{
		{"{ type lsn pool cg }", ""},
		{"{ type lsn pool nosuch }", "lsn pool nosuch does not exist; its connections keep the host's address"},
		{"{ type lsn }", "source-address-translation type lsn names no pool"},
	} {
		n := string(rune('a' + i))
		runAll(t, s,
			"create ltm message-routing generic transport-config t"+n+" { profiles replace-all-with { tcp lines } source-address-translation "+tc.sat+" }",
			"create ltm message-routing generic peer pe"+n+" { pool p transport-config t"+n+" }",
			"create ltm message-routing generic route r"+n+" { peers { pe"+n+" } }",
			"create ltm message-routing generic router rt"+n+" { routes { r"+n+" } }",
		)
		if _, err := run(t, s, "create ltm virtual v"+n+" destination 127.216.9.2"+string(rune('0'+i))+":21001 pool p profiles replace-all-with { tcp lines rt"+n+" }"); err != "" {
			t.Fatalf("%s: %s", tc.sat, err)
		}
		dc, notes := Translate(e.schema, e.Config())
		var warned string
		for _, w := range notes {
			if strings.Contains(w, "transport-config /Common/t"+n+":") {
				warned = w
			}
		}
		if tc.warn == "" && warned != "" || tc.warn != "" && !strings.Contains(warned, tc.warn) {
			t.Errorf("%s: %q, want warning %q", tc.sat, warned, tc.warn)
		}
		x := dc.Virtuals["/Common/v"+n].MRF.Transports["/Common/t"+n]
		if got := x.LSN; (tc.warn == "") != (got == "/Common/cg") {
			t.Errorf("%s: the transport's lsn pool %q", tc.sat, got)
		}
	}
}
