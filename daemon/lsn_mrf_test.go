package daemon

import (
	"bufio"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// lsnLinePeer is a member of a line protocol that answers each line with
// the address and port the connection (or datagram) came from: the
// translation a message routing peer connection left from.
func lsnLinePeer(t *testing.T, addr string) {
	t.Helper()
	serveEach(t, addr, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(30 * time.Second))
		rd := bufio.NewReader(c)
		for {
			if _, err := rd.ReadString('\n'); err != nil {
				return
			}
			if _, err := c.Write([]byte(c.RemoteAddr().String() + "\n")); err != nil {
				return
			}
		}
	})
	udpFromPeer(t, addr, "\n")
}

// mrfAsk connects from src to vip, sends one line and reads the answer:
// the address the member saw (ok false: no answer, the message failed).
func mrfAsk(t *testing.T, src, vip string) (net.Conn, netip.AddrPort, bool) {
	t.Helper()
	la, err := net.ResolveTCPAddr("tcp", src)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{LocalAddr: la, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", vip)
	if err != nil {
		t.Fatalf("%s -> %s: %v", src, vip, err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	c.SetDeadline(time.Time{})
	if err != nil {
		return c, netip.AddrPort{}, false
	}
	ap, err := netip.ParseAddrPort(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("member said %q", line)
	}
	return c, ap, true
}

// TestLSNMRFPeers: a message routing virtual's peer connections leave
// from lsn translations: the virtual's pool's, or the transport-config's
// own source-address-translation type lsn (which wins; automap or snat
// there keep theirs), TCP and UDP peers alike, per client (the client
// whose message opened the connection is the subscriber: persistence,
// client-connection-limit and exhaustion are counted on it), the
// translation given back when the connection closes.
func TestLSNMRFPeers(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	lsnLinePeer(t, "127.216.0.100:21000")
	runAll(t, s,
		"create ltm pool p members add { 127.216.0.100:21000 }",
		"create ltm lsn-pool va members add { 127.216.10.0/30 } translation-port-range 21000:21999 persistence { mode address timeout 60 }",
		"create ltm lsn-pool tb members add { 127.216.11.1/32 } translation-port-range 22000:22999",
		"create ltm lsn-pool one members add { 127.216.12.1/32 } translation-port-range 23000:23000 persistence { mode none }",
		"create ltm message-routing generic protocol lines { defaults-from genericmsg message-terminator \\n }",
		"create ltm message-routing generic transport-config t_lsn { profiles replace-all-with { tcp lines } source-address-translation { type lsn pool tb } }",
		"create ltm message-routing generic transport-config t_udp { profiles replace-all-with { udp lines } source-address-translation { type lsn pool tb } }",
		"create ltm message-routing generic transport-config t_auto { profiles replace-all-with { tcp lines } source-address-translation { type automap } }",
		"create ltm message-routing generic transport-config t_none { profiles replace-all-with { tcp lines } }",
		"create ltm message-routing generic transport-config t_one { profiles replace-all-with { tcp lines } source-address-translation { type lsn pool one } }",
	)
	for i, tc := range []struct {
		name, transport string
		want            string // the prefix the member saw connections from
		lo, hi          uint16
		pool            string // the lsn pool that counts them ("": none)
	}{
		{"the virtual's pool", "", "127.216.10.0/30", 21000, 21999, "va"},
		{"a transport-config with none of its own", "t_none", "127.216.10.0/30", 21000, 21999, "va"},
		{"the transport-config's lsn pool", "t_lsn", "127.216.11.1/32", 22000, 22999, "tb"},
		{"a UDP transport-config's lsn pool", "t_udp", "127.216.11.1/32", 22000, 22999, "tb"},
		{"the transport-config's automap", "t_auto", "127.216.0.54/32", 1, 65535, ""},
	} {
		n := string(rune('a' + i))
		tcArg := ""
		if tc.transport != "" {
			tcArg = " transport-config " + tc.transport
		}
		vip := "127.216.0.5" + string(rune('0'+i)) + ":21001"
		runAll(t, s,
			"create ltm message-routing generic peer pe"+n+" { pool p connection-mode per-client"+tcArg+" }",
			"create ltm message-routing generic route r"+n+" { peers { pe"+n+" } }",
			"create ltm message-routing generic router rt"+n+" { routes { r"+n+" } }",
			"create ltm virtual v"+n+" destination "+vip+" pool p source-address-translation { type lsn pool va } profiles replace-all-with { tcp { } lines { } rt"+n+" { } }",
		)
		before := map[string]string{}
		for _, lp := range []string{"va", "tb"} {
			out, _ := run(t, s, "show ltm lsn-pool "+lp)
			before[lp] = showField(out, "Translations", "Total")
		}
		c1, a, ok := mrfAsk(t, "127.216.1.1:0", vip)
		if !ok {
			t.Fatalf("%s: no answer", tc.name)
		}
		c2, b, ok := mrfAsk(t, "127.216.1.1:0", vip)
		if !ok {
			t.Fatalf("%s: no answer to a second client", tc.name)
		}
		inPrefix(t, a, tc.want, tc.lo, tc.hi)
		inPrefix(t, b, tc.want, tc.lo, tc.hi)
		if a == b && !strings.Contains(tc.name, "UDP") {
			t.Errorf("%s: two per-client connections from %s", tc.name, a)
		}
		if tc.pool == "va" && a.Addr() != b.Addr() {
			t.Errorf("%s: persistence address: one subscriber from %s and %s", tc.name, a, b)
		}
		for _, lp := range []string{"va", "tb"} {
			out, _ := run(t, s, "show ltm lsn-pool "+lp)
			got, was := showField(out, "Translations", "Total"), before[lp]
			if (lp == tc.pool) == (got == was) {
				t.Errorf("%s: pool %s counted %s translations, was %s", tc.name, lp, got, was)
			}
		}
		if tc.pool != "" {
			// The client gone, its per-client peer connection closes and
			// gives the translation back.
			c1.Close()
			lsnEventually(t, tc.name+": a translation given back", func() string {
				out, _ := run(t, s, "show ltm lsn-pool "+tc.pool)
				if showField(out, "Translations", "Active") != "1" {
					return out
				}
				return ""
			})
		}
		c1.Close()
		c2.Close()
		runAll(t, s, "delete ltm virtual v"+n)
		if tc.pool != "" {
			lsnShowEventually(t, s, tc.name+": all given back", tc.pool, "Translations", "Active", "0")
		}
	}

	// One port: the first client's peer connection holds it, the
	// second's message finds none (no answer), counted as a failure.
	runAll(t, s,
		"create ltm message-routing generic peer pone { pool p connection-mode per-client transport-config t_one }",
		"create ltm message-routing generic route rone { peers { pone } }",
		"create ltm message-routing generic router rtone { routes { rone } }",
		"create ltm virtual vone destination 127.216.0.60:21001 pool p source-address-translation { type lsn pool va } profiles replace-all-with { tcp { } lines { } rtone { } }",
	)
	c, a, ok := mrfAsk(t, "127.216.1.2:0", "127.216.0.60:21001")
	if !ok || a != netip.MustParseAddrPort("127.216.12.1:23000") {
		t.Fatalf("one port: %s %t", a, ok)
	}
	if _, b, ok := mrfAsk(t, "127.216.1.3:0", "127.216.0.60:21001"); ok {
		t.Fatalf("one port taken: a second subscriber's peer connection came from %s", b)
	}
	out, _ := run(t, s, "show ltm lsn-pool one")
	if got := showField(out, "Translations", "Failures"); got != "1" {
		t.Errorf("failures %q, want 1:\n%s", got, out)
	}
	c.Close()
	lsnShowEventually(t, s, "the port given back", "one", "Translations", "Active", "0")
	if _, b, ok := mrfAsk(t, "127.216.1.3:0", "127.216.0.60:21001"); !ok || b != a {
		t.Errorf("the port freed: %s %t, want %s", b, ok, a)
	}
}
