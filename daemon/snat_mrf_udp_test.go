package daemon

import (
	"net/netip"
	"testing"
)

// TestSNATTranslationMRFSnatpoolUDP: a message routing transport-config
// whose peers speak UDP (profiles udp and a line protocol) takes its
// snatpool's address through the same hold as a TCP one: at
// connection-limit 1 a first client's per-client UDP peer connection
// leaves from it, a second client's is refused (no answer) and counted
// as Refused in show ltm snat-translation, and once the first client
// leaves its peer connection gives the address back and the second is
// served. With udp-idle-timeout 2 the idle UDP peer connection is
// closed while its client stays, giving the address back.
func TestSNATTranslationMRFSnatpoolUDP(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	lsnLinePeer(t, "127.255.143.11:30821") // TCP and UDP on the address
	s := e.NewSession("admin").(*Session)
	const xlat, vip = "127.255.143.100", "127.255.143.1:30820"
	runAll(t, s,
		"create ltm pool p members add { 127.255.143.11:30821 }",
		"create ltm snatpool sp_udp members add { "+xlat+" }",
		"create ltm message-routing generic protocol lines { defaults-from genericmsg message-terminator \\n }",
		"create ltm message-routing generic transport-config t_udp { profiles replace-all-with { udp lines } source-address-translation { type snat pool sp_udp } }",
		"create ltm message-routing generic peer pe { pool p connection-mode per-client transport-config t_udp }",
		"create ltm message-routing generic route r { peers { pe } }",
		"create ltm message-routing generic router rt { routes { r } }",
		"create ltm virtual v destination "+vip+" pool p profiles replace-all-with { tcp { } lines { } rt { } }",
		"modify ltm snat-translation "+xlat+" connection-limit 1",
	)
	c1, a, ok := mrfAsk(t, "127.255.144.1:0", vip)
	if !ok || a.Addr() != netip.MustParseAddr(xlat) {
		t.Fatalf("first client: the member saw %s (%t), want %s over UDP", a, ok, xlat)
	}
	if l, _ := p.SNATTranslationLimit(netip.MustParseAddr(xlat)); l.Cur != 1 {
		t.Errorf("the first UDP peer connection: %d holding the address, want 1", l.Cur)
	}
	if _, b, ok := mrfAsk(t, "127.255.144.2:0", vip); ok {
		t.Errorf("second client at the limit: its UDP peer connection came from %s, want it refused", b)
	}
	out, _ := run(t, s, "show ltm snat-translation "+xlat)
	if !regexpMatch(`Total Connections\s+1\b`, out) || !regexpMatch(`Current Connections\s+1\b`, out) || !regexpMatch(`Refused \(limit\)\s+[1-9]`, out) {
		t.Errorf("show ltm snat-translation does not count the UDP peer connection and the refusal:\n%s", out)
	}
	c1.Close()
	if cur := waitCur(p, xlat, 0); cur != 0 {
		t.Fatalf("the first client gone: %d holding the address, want 0", cur)
	}
	c2, b, ok := mrfAsk(t, "127.255.144.2:0", vip)
	if !ok || b.Addr() != netip.MustParseAddr(xlat) {
		t.Errorf("second client once the address came back: %s (%t), want %s", b, ok, xlat)
	}
	c2.Close()
	if cur := waitCur(p, xlat, 0); cur != 0 {
		t.Fatalf("the second client gone: %d holding the address, want 0", cur)
	}
	if out, _ := run(t, s, "show ltm snat-translation "+xlat); !regexpMatch(`Total Connections\s+2\b`, out) {
		t.Errorf("show ltm snat-translation after two UDP peer connections:\n%s", out)
	}

	// udp-idle-timeout ends an idle UDP peer connection while its
	// client stays connected.
	runAll(t, s, "modify ltm snat-translation "+xlat+" udp-idle-timeout 2")
	c3, b, ok := mrfAsk(t, "127.255.144.3:0", vip)
	if !ok || b.Addr() != netip.MustParseAddr(xlat) {
		t.Fatalf("third client: %s (%t), want %s", b, ok, xlat)
	}
	defer c3.Close()
	if l, _ := p.SNATTranslationLimit(netip.MustParseAddr(xlat)); l.Cur != 1 {
		t.Errorf("the third client's UDP peer connection: %d holding the address, want 1", l.Cur)
	}
	if cur := waitCur(p, xlat, 0); cur != 0 {
		t.Fatalf("idle past udp-idle-timeout with its client connected: %d holding the address, want 0", cur)
	}
}
