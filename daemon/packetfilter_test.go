package daemon

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pfClient connects from src to vs, sends a line and says what came
// back: "answer", "reset" or "closed" (a FIN, nothing answered).
func pfClient(t *testing.T, src, vs string) string {
	t.Helper()
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		if errors.Is(err, syscall.ECONNRESET) {
			return "reset"
		}
		t.Fatalf("dial %s from %s: %v", vs, src, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "C1\n"); err != nil {
		return "reset"
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case err == nil:
		return "answer"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF) && line == "":
		return "closed"
	}
	t.Fatalf("from %s: %q %v", src, line, err)
	return ""
}

// TestPacketFilters: packet filters created with tmsh act on a virtual's
// clients once sys db packetfilter is enable, in order; a rule BIG-IP
// refuses is refused with its position inside the rule and nothing
// changes; an expression outside the subset is kept with a warning and
// does not act; show and reset-stats count the matches.
func TestPacketFilters(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.182.20.11:30080", "S1 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.182.20.11:30080 }",
		"create ltm virtual v destination 127.182.20.1:30080 pool p profiles replace-all-with { tcp { } }",
		`create net packet-filter allow-one order 10 action accept rule "src host 127.182.21.7"`,
		`create net packet-filter deny-net order 20 action reject rule "src net 127.182.21.0/24" logging enabled`,
		`create net packet-filter quiet order 30 action discard rule "tcp and src host 127.182.22.1"`,
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// Off by default: everyone is answered.
	if got := pfClient(t, "127.182.21.8", "127.182.20.1:30080"); got != "answer" {
		t.Fatalf("filtering off: %s", got)
	}
	if _, err := run(t, s, "modify sys db packetfilter value enable"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct{ src, want string }{
		{"127.182.21.7", "answer"},
		{"127.182.21.8", "reset"},
		{"127.182.22.1", "closed"},
		{"127.182.23.1", "answer"},
	} {
		if got := pfClient(t, c.src, "127.182.20.1:30080"); got != c.want {
			t.Errorf("client %s: %s, want %s", c.src, got, c.want)
		}
	}
	out, _ := run(t, s, "show net packet-filter deny-net")
	if !regexp.MustCompile(`Matches \(connections and flows\)\s+1\n`).MatchString(out) || !strings.Contains(out, "in force") {
		t.Errorf("show net packet-filter deny-net:\n%s", out)
	}
	// Refused: a bad rule, with its position; a second filter of an order.
	for _, c := range []struct{ cmd, want string }{
		{`create net packet-filter bad order 40 action reject rule "src hots 1.2.3.4"`, `1:5: unknown word "hots"`},
		{`modify net packet-filter deny-net rule "net 127.182.21.1/24"`, "1:5: net \"127.182.21.1/24\" has host bits set"},
		{`create net packet-filter dup order 20 action accept`, "same order (20)"},
		{`create net packet-filter noorder action accept`, "must have an order"},
		{`create net packet-filter badaction order 50 action drop`, "drop"},
		{"modify sys db packetfilter.defaultaction value drop", "01070734"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.want)
		}
	}
	if out, _ := run(t, s, "list net packet-filter deny-net rule"); !strings.Contains(out, `"src net 127.182.21.0/24"`) {
		t.Errorf("a refused modify changed the rule:\n%s", out)
	}
	// Outside the subset: kept with a warning, not acting.
	out, err := run(t, s, `create net packet-filter flags order 5 action reject rule "tcp[13] & 2 != 0"`)
	if err != "" || !strings.Contains(out, "does not act") {
		t.Errorf("unsupported rule: %q %q", out, err)
	}
	if got := pfClient(t, "127.182.23.1", "127.182.20.1:30080"); got != "answer" {
		t.Errorf("an unsupported filter acted: %s", got)
	}
	// The default action and the trusted list.
	for _, c := range []string{"modify sys db packetfilter.defaultaction value reject", "modify net packet-filter-trusted ip-addresses add { 127.182.21.9 }"} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	if got := pfClient(t, "127.182.23.1", "127.182.20.1:30080"); got != "reset" {
		t.Errorf("default reject: %s", got)
	}
	if got := pfClient(t, "127.182.21.9", "127.182.20.1:30080"); got != "answer" {
		t.Errorf("trusted: %s", got)
	}
	if _, err := run(t, s, "reset-stats net packet-filter deny-net"); err != "" {
		t.Fatal(err)
	}
	if out, _ := run(t, s, "show net packet-filter deny-net"); !regexp.MustCompile(`Matches \(connections and flows\)\s+0\n`).MatchString(out) {
		t.Errorf("after reset-stats:\n%s", out)
	}
	if _, err := run(t, s, "modify sys db packetfilter value disable"); err != "" {
		t.Fatal(err)
	}
	if got := pfClient(t, "127.182.21.8", "127.182.20.1:30080"); got != "answer" {
		t.Errorf("filtering off again: %s", got)
	}
}

// TestPacketFilterVLANsEstablished: a filter's vlan (a net vlan whose
// interface is lo, where these clients arrive, or one with none), the
// trusted vlans and mac-addresses set with tmsh; a VLAN that does not
// exist and a MAC that is not one refused, nothing changed; with
// packetfilter.established enable a new filter closes the open
// connection it rejects.
func TestPacketFilterVLANsEstablished(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.192.70.11:30092", "S1 Response")
	s := e.NewSession("admin").(*Session)
	vs := "127.192.70.1:30092"
	for _, c := range []string{
		"create net vlan loop interfaces { lo { } } tag 0",
		"create net vlan nolink",
		"create ltm pool p members add { 127.192.70.11:30092 }",
		"create ltm virtual v destination " + vs + " pool p profiles replace-all-with { tcp { } }",
		`create net packet-filter on-loop order 10 action reject vlan loop rule "src host 127.192.71.1"`,
		"modify sys db packetfilter value enable",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "does not act") {
			t.Fatalf("%s: %q %s", c, out, err)
		}
	}
	if got := pfClient(t, "127.192.71.1", vs); got != "reset" {
		t.Errorf("filter on lo's VLAN: %s, want reset", got)
	}
	if _, err := run(t, s, "modify net packet-filter on-loop vlan nolink"); err != "" {
		t.Fatal(err)
	}
	if got := pfClient(t, "127.192.71.1", vs); got != "answer" {
		t.Errorf("filter on a VLAN the client is not on: %s, want answer", got)
	}
	for _, c := range []struct{ cmd, want string }{
		{"modify net packet-filter on-loop vlan nosuch", "nosuch"},
		{"modify net packet-filter-trusted vlans add { nosuch }", "nosuch"},
		{"modify net packet-filter-trusted mac-addresses add { 00:50:56:zz:00:01 }", "\"00:50:56:zz:00:01\" is not a MAC address: use six octets such as 00:50:56:a1:b2:c3 (at 1:54; expected a MAC address)"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.want)
		}
	}
	if out, _ := run(t, s, "list net packet-filter on-loop vlan"); !strings.Contains(out, "nolink") {
		t.Errorf("a refused modify changed the vlan:\n%s", out)
	}
	// Trusted VLANs under a default reject.
	for _, c := range []string{"modify net packet-filter on-loop vlan loop", "modify sys db packetfilter.defaultaction value reject"} {
		if _, err := run(t, s, c); err != "" {
			t.Fatal(err)
		}
	}
	if got := pfClient(t, "127.192.71.2", vs); got != "reset" {
		t.Errorf("default reject: %s", got)
	}
	if _, err := run(t, s, "modify net packet-filter-trusted vlans add { loop } mac-addresses add { 00:50:56:A1:B2:C3 }"); err != "" {
		t.Fatal(err)
	}
	if got := pfClient(t, "127.192.71.1", vs); got != "answer" {
		t.Errorf("trusted VLAN before a filter on it: %s, want answer", got)
	}
	if out, _ := run(t, s, "list net packet-filter-trusted"); !strings.Contains(out, "00:50:56:a1:b2:c3") || !strings.Contains(out, "loop") {
		t.Errorf("list net packet-filter-trusted:\n%s", out)
	}
	// Established: an open connection a new filter rejects is reset.
	for _, c := range []string{"modify net packet-filter-trusted vlans delete { loop }", "modify sys db packetfilter.defaultaction value accept"} {
		if _, err := run(t, s, c); err != "" {
			t.Fatal(err)
		}
	}
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.192.72.1:0"))}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	exchange := func() error {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "C1\n"); err != nil {
			return err
		}
		_, err := r.ReadString('\n')
		return err
	}
	if err := exchange(); err != nil {
		t.Fatal(err)
	}
	out, errs := run(t, s, "modify sys db packetfilter.established value enable")
	if errs != "" || strings.Contains(out, "kept") {
		t.Fatalf("packetfilter.established: %q %s", out, errs)
	}
	if err := exchange(); err != nil {
		t.Fatalf("a connection no filter rejects: %v", err)
	}
	if _, err := run(t, s, `create net packet-filter cut order 5 action reject rule "src host 127.192.72.1"`); err != "" {
		t.Fatal(err)
	}
	if err := exchange(); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("established connection a new filter rejects: %v, want a reset", err)
	}
	if out, _ := run(t, s, "show net packet-filter cut"); !regexp.MustCompile(`Matches \(connections and flows\)\s+1\n`).MatchString(out) {
		t.Errorf("show net packet-filter cut:\n%s", out)
	}
}
