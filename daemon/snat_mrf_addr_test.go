package daemon

import (
	"net/netip"
	"testing"
)

// TestSNATTranslationMRFAddr: a message routing peer connection's
// source that no snatpool gives holds its address's ltm
// snat-translation as a transport-config's snatpool does: a
// transport-config's automap (the virtual's address) and a rule's
// MR::message snat. At connection-limit 1 the first client's
// per-client peer connection leaves from the address, the second's is
// refused (no answer, counted as Refused) and show ltm
// snat-translation counts both; once the first client leaves its peer
// connection gives the address back and the second is served.
func TestSNATTranslationMRFAddr(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	lsnLinePeer(t, "127.250.30.11:30811")
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool p members add { 127.250.30.11:30811 }",
		"create ltm message-routing generic protocol lines { defaults-from genericmsg message-terminator \\n }",
		"create ltm message-routing generic transport-config t_am { profiles replace-all-with { tcp lines } source-address-translation { type automap } }",
		"create ltm message-routing generic peer pe_am { pool p connection-mode per-client transport-config t_am }",
		"create ltm message-routing generic route r_am { peers { pe_am } }",
		"create ltm message-routing generic router rt_am { routes { r_am } }",
		"create ltm virtual v_am destination 127.250.30.1:30810 pool p profiles replace-all-with { tcp { } lines { } rt_am { } }",
		"create ltm message-routing generic peer pe_rule { pool p connection-mode per-client }",
		"create ltm message-routing generic route r_rule { peers { pe_rule } }",
		"create ltm message-routing generic router rt_rule { routes { r_rule } }",
		"create ltm rule mr_snat { when MR_INGRESS { MR::message snat address 127.250.30.100 } }",
		"create ltm virtual v_rule destination 127.250.30.2:30810 pool p rules { mr_snat } profiles replace-all-with { tcp { } lines { } rt_rule { } }",
		"create ltm snat-translation 127.250.30.1 address 127.250.30.1 connection-limit 1",
		"create ltm snat-translation 127.250.30.100 address 127.250.30.100 connection-limit 1",
	)
	for _, tc := range []struct{ name, vip, xlat, c1, c2 string }{
		{"transport-config automap", "127.250.30.1:30810", "127.250.30.1", "127.250.31.1:0", "127.250.31.2:0"},
		{"MR::message snat", "127.250.30.2:30810", "127.250.30.100", "127.250.31.3:0", "127.250.31.4:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xlat := netip.MustParseAddr(tc.xlat)
			c1, a, ok := mrfAsk(t, tc.c1, tc.vip)
			if !ok || a.Addr() != xlat {
				t.Fatalf("first client: the member saw %s (%t), want %s", a, ok, xlat)
			}
			if l, _ := p.SNATTranslationLimit(xlat); l.Cur != 1 {
				t.Errorf("the first peer connection: %d holding the address, want 1", l.Cur)
			}
			if _, b, ok := mrfAsk(t, tc.c2, tc.vip); ok {
				t.Errorf("second client at the limit: its peer connection came from %s, want it refused", b)
			}
			out, _ := run(t, s, "show ltm snat-translation "+tc.xlat)
			if !regexpMatch(`Total Connections\s+1\b`, out) || !regexpMatch(`Refused \(limit\)\s+[1-9]`, out) {
				t.Errorf("show ltm snat-translation does not count the connection and the refusal:\n%s", out)
			}
			c1.Close()
			if cur := waitCur(p, tc.xlat, 0); cur != 0 {
				t.Fatalf("the first client gone: %d holding the address, want 0", cur)
			}
			c2, b, ok := mrfAsk(t, tc.c2, tc.vip)
			if !ok || b.Addr() != xlat {
				t.Errorf("second client once the address came back: %s (%t), want %s", b, ok, xlat)
			}
			c2.Close()
			if cur := waitCur(p, tc.xlat, 0); cur != 0 {
				t.Fatalf("the second client gone: %d holding the address, want 0", cur)
			}
			if out, _ := run(t, s, "show ltm snat-translation "+tc.xlat); !regexpMatch(`Total Connections\s+2\b`, out) {
				t.Errorf("show ltm snat-translation does not count both clients' peer connections:\n%s", out)
			}
		})
	}
}
