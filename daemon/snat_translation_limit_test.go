package daemon

import (
	"bufio"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"
)

// dialFrom connects to vip from the address from (port 0: any) and reads
// the member's line: the source it saw, "" when the connection was
// refused or reset first (the virtual may refuse the handshake itself
// or reset it once made). The connection stays open (nil on failure).
func dialFrom(t *testing.T, from string, port uint16, vip string) (string, net.Conn) {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), port))}
	c, err := d.Dial("tcp", vip)
	if err != nil {
		return "", nil
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		c.Close()
		return "", nil
	}
	c.SetReadDeadline(time.Time{})
	return strings.TrimSpace(line), c
}

// TestSNATTranslationLimit: an ltm snat-translation's connection-limit
// 1 refuses (resets) a second concurrent connection of its SNAT and
// takes one again once the first closed; a snatpool passes over the
// full address; show ltm snat-translation prints the current, maximum
// and refused connections; preserve-strict resets a client whose port
// the translation address has in use; a bad idle timeout is refused.
func TestSNATTranslationLimit(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.227.0.11:30001", fromHost, true)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.227.0.11:30001 }",
		"create ltm virtual v1 destination 127.227.0.1:30000 pool p profiles replace-all-with { tcp { } }",
		"create ltm snat-translation 127.227.0.100 address 127.227.0.100 connection-limit 1",
		"create ltm snat s_lim origins add { 127.227.1.0/24 } translation 127.227.0.100",
		"create ltm snatpool sp members add { 127.227.0.100 127.227.0.102 }",
		"create ltm snat s_pool origins add { 127.227.3.0/24 } snatpool sp",
		"create ltm snat s_strict origins add { 127.227.2.0/24 } translation 127.227.0.101 source-port preserve-strict",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	const vip = "127.227.0.1:30000"
	got, first := dialFrom(t, "127.227.1.5", 0, vip)
	if got != "127.227.0.100" {
		t.Fatalf("first connection: the member saw %q, want 127.227.0.100", got)
	}
	if got, c := dialFrom(t, "127.227.1.6", 0, vip); got != "" {
		c.Close()
		t.Errorf("second connection at the limit: the member saw %q, want a reset", got)
	}
	// The snatpool: 127.227.0.100 is full, 127.227.0.102 is given.
	for i := 0; i < 2; i++ {
		if got, c := dialFrom(t, "127.227.3.5", 0, vip); got != "127.227.0.102" {
			t.Errorf("snatpool with a full address: the member saw %q, want 127.227.0.102", got)
		} else {
			c.Close()
		}
	}
	show := `Translation: 127.227.0.100\n-+\nTraffic +ServerSide\n +Current Connections +1\n +Maximum Connections +1\n +Total Connections +1\n +Refused \(limit\) +1\n`
	if out, err := run(t, s, "show ltm snat-translation 127.227.0.100"); err != "" || !regexp.MustCompile(show).MatchString(out) {
		t.Errorf("show: %s\n%s\nwant %q", err, out, show)
	}
	if out, _ := run(t, s, "show ltm snat-translation 127.227.0.102"); strings.Contains(out, "Current") {
		t.Errorf("an address without a limit shows current connections:\n%s", out)
	}
	first.Close()
	var again string
	for i := 0; i < 50 && again == ""; i++ { // the flow's end gives the address back
		time.Sleep(100 * time.Millisecond)
		var c net.Conn
		if again, c = dialFrom(t, "127.227.1.6", 0, vip); c != nil {
			c.Close()
		}
	}
	if again != "127.227.0.100" {
		t.Errorf("after the first closed: the member saw %q, want 127.227.0.100", again)
	}

	// preserve-strict: the client's port taken on the translation address.
	taken, err := net.Listen("tcp", "127.227.0.101:31234")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if got, c := dialFrom(t, "127.227.2.5", 31234, vip); got != "" {
		c.Close()
		t.Errorf("preserve-strict, port in use: the member saw %q, want a reset", got)
	}
	if got, c := dialFrom(t, "127.227.2.5", 0, vip); got != "127.227.0.101" {
		t.Errorf("preserve-strict, port free: the member saw %q, want 127.227.0.101", got)
	} else {
		c.Close()
	}

	for _, tc := range []struct{ cmd, err string }{
		{"modify ltm snat-translation 127.227.0.100 tcp-idle-timeout soon", "tcp-idle-timeout soon is not indefinite or a number of seconds"},
		{"modify ltm snat-translation 127.227.0.100 udp-idle-timeout -5", "udp-idle-timeout"},
		{"modify ltm snat-translation 127.227.0.100 connection-limit -1", "connection-limit"},
	} {
		if _, err := run(t, s, tc.cmd); !strings.Contains(err, tc.err) {
			t.Errorf("%s: error %q, want one with %q", tc.cmd, err, tc.err)
		}
	}
	if out, _ := run(t, s, "list ltm snat-translation 127.227.0.100"); strings.Contains(out, "idle-timeout soon") {
		t.Errorf("a refused idle timeout was kept:\n%s", out)
	}
}

// udpSourceFrom sends one datagram to vip from the address from (any
// port: a new flow) and returns the member's answer ("" when none came
// within wait).
func udpSourceFrom(t *testing.T, from, vip string, wait time.Duration) (string, *net.UDPConn) {
	t.Helper()
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), 0)), net.UDPAddrFromAddrPort(netip.MustParseAddrPort(vip)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(wait))
	b := make([]byte, 64)
	n, err := c.Read(b)
	if err != nil {
		return "", c
	}
	return string(b[:n]), c
}

// TestSNATTranslationLimitUDP: on a UDP virtual, a connection-limit 1
// address gives a second client's flow no server side while the first
// flow holds it, and udp-idle-timeout 2 (the udp profile's is 60
// seconds) ends the first flow, whose address the next client then gets.
func TestSNATTranslationLimitUDP(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	udpFromMember(t, "127.227.0.21:30011", fromHost)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool pu members add { 127.227.0.21:30011 }",
		"create ltm virtual v_udp destination 127.227.0.2:30010 ip-protocol udp profiles replace-all-with { udp { } } pool pu",
		"create ltm snat-translation 127.227.0.103 address 127.227.0.103 connection-limit 1 udp-idle-timeout 2",
		"create ltm snat s_udp origins add { 127.227.4.0/24 } translation 127.227.0.103",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	const vip = "127.227.0.2:30010"
	got, first := udpSourceFrom(t, "127.227.4.5", vip, 3*time.Second)
	defer first.Close()
	if got != "127.227.0.103" {
		t.Fatalf("first flow: the member saw %q, want 127.227.0.103", got)
	}
	got, c := udpSourceFrom(t, "127.227.4.6", vip, 300*time.Millisecond)
	c.Close()
	l, ok := p.SNATTranslationLimit(netip.MustParseAddr("127.227.0.103"))
	if got != "" || !ok || l.Refused != 1 || l.Cur != 1 {
		t.Errorf("second flow at the limit: answer %q, %+v (%v); want none, 1 current, 1 refused", got, l, ok)
	}
	// The first flow is silent: its udp-idle-timeout ends it and gives
	// the address back.
	var again string
	for i := 0; i < 60 && again != "127.227.0.103"; i++ {
		time.Sleep(250 * time.Millisecond)
		again, c = udpSourceFrom(t, "127.227.4.7", vip, 300*time.Millisecond)
		c.Close()
	}
	if again != "127.227.0.103" {
		t.Errorf("after the first flow's idle timeout: the member saw %q, want 127.227.0.103", again)
	}
}
