package daemon

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestNetListsCommands: address and port lists are created, listed in
// BIG-IP's layout and checked as BIG-IP checks them; a bad entry, a
// missing nested list, a nesting loop and deleting a list in use are
// refused and change nothing.
func TestNetListsCommands(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create net address-list al_a addresses add { 127.56.10.1 127.56.10.2-127.56.10.3 127.56.10.8/30 }",
		"create net address-list al_b address-lists add { al_a } addresses add { 127.56.10.20 }",
		"create net port-list pl_a ports add { 8080 9000-9001 }",
		"create net port-list pl_b port-lists add { pl_a }",
		"create ltm traffic-matching-criteria tmc_a destination-address-list al_b destination-port-list pl_b",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, _ := run(t, s, "list net address-list al_a")
	want := "net address-list al_a {\n    addresses {\n        127.56.10.1 { }\n        127.56.10.2-127.56.10.3 { }\n        127.56.10.8/30 { }\n    }\n}\n"
	if out != want {
		t.Errorf("list net address-list al_a:\n%s\nwant\n%s", out, want)
	}
	out, _ = run(t, s, "list net port-list pl_b")
	if want := "net port-list pl_b {\n    port-lists {\n        pl_a { }\n    }\n}\n"; out != want {
		t.Errorf("list net port-list pl_b:\n%s\nwant\n%s", out, want)
	}
	for _, tc := range []struct{ cmd, err string }{
		{"create net address-list bad addresses add { 127.56.10.300 }", `"127.56.10.300" is not an address, address range or prefix`},
		{"create net address-list bad addresses add { 127.56.10.9-127.56.10.1 }", "first address is above its last"},
		{"create net address-list bad addresses add { 127.56.10.1-::1 }", "one family"},
		{"create net address-list bad addresses add { 127.56.10.1/24 }", "host bits are set (the network is 127.56.10.0/24)"},
		{"create net address-list bad addresses add { 127.56.10.1%2 }", "route domains"},
		{"create net address-list bad address-lists add { nosuch }", "01020036"},
		{"create net port-list bad ports add { 0 }", `"0" is not a port or port range`},
		{"create net port-list bad ports add { 70000 }", `"70000" is not a port`},
		{"create net port-list bad ports add { 9000-8000 }", "first port is above its last"},
		{"create net port-list bad port-lists add { nosuch }", "01020036"},
		{"modify net address-list al_a address-lists add { al_a }", "includes itself through /Common/al_a -> /Common/al_a"},
		{"modify net address-list al_a address-lists add { al_b }", "includes itself through /Common/al_a -> /Common/al_b -> /Common/al_a"},
		{"modify net port-list pl_a port-lists add { pl_b }", "includes itself"},
		{"delete net address-list al_a", "01070265"},
		{"delete net port-list pl_b", "cannot be deleted because it is in use by a Traffic Matching Criteria (/Common/tmc_a)"},
		{"create ltm traffic-matching-criteria bad destination-address-list nosuch", "The requested address list (/Common/nosuch) was not found"},
		{"create ltm traffic-matching-criteria bad source-port-list nosuch", "The requested port list (/Common/nosuch) was not found"},
		{"create ltm traffic-matching-criteria bad destination-address-inline 127.56.10.1/24", "not an address or a prefix without host bits"},
		{"create ltm traffic-matching-criteria bad source-address-inline nowhere", `source-address-inline "nowhere" is not an address`},
		{"create ltm traffic-matching-criteria bad source-port-inline 5-1", "first port is above its last"},
	} {
		before := e.Config().Len()
		_, err := run(t, s, tc.cmd)
		if !strings.Contains(err, tc.err) {
			t.Errorf("%s: error %q, want one with %q", tc.cmd, err, tc.err)
		}
		if e.Config().Len() != before || e.Config().Get(netAddressList, "/Common/bad") != nil {
			t.Errorf("%s: the configuration changed", tc.cmd)
		}
	}
	if out, _ := run(t, s, "list net address-list al_a address-lists"); strings.Contains(out, "al_b") {
		t.Errorf("a refused loop was kept:\n%s", out)
	}
}

// TestTrafficMatchingTranslated: a virtual's criteria become the
// addresses and ports it binds and the source filter it admits by; a
// prefix or list past the address bound is refused with openltm's
// reason, and a list holding only FQDNs keeps the virtual out.
func TestTrafficMatchingTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.56.11.100:7000", "S1 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.56.11.100:7000 }",
		"create net address-list dst2 addresses add { 127.56.11.8/31 }",
		"create net address-list dst addresses add { 127.56.11.1 127.56.11.2-127.56.11.3 } address-lists add { dst2 }",
		"create net port-list ports ports add { 8080 9000-9001 }",
		"create net address-list src addresses add { 127.56.12.0/24 127.56.13.5 }",
		"create net port-list sports ports add { 1000-2000 }",
		"create ltm traffic-matching-criteria t_list destination-address-list dst destination-port-list ports source-address-list src",
		"create ltm traffic-matching-criteria t_inline destination-address-inline 127.56.11.16/30 destination-port-inline 7001,7005-7006 source-address-inline 127.56.14.0/24 source-port-inline 3000 source-port-list sports",
		"create ltm traffic-matching-criteria t_one destination-address-inline 127.56.11.40 destination-port-inline 7100",
		"create ltm virtual v_list traffic-matching-criteria t_list pool p",
		"create ltm virtual v_inline traffic-matching-criteria t_inline pool p",
		"create ltm virtual v_one traffic-matching-criteria t_one pool p",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) > 0 {
		t.Fatalf("skipped: %q", skipped)
	}
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		addrs     []netip.Addr
		dst       string
		listeners int
		admit     map[string]bool
	}{
		{"/Common/v_list", addrs("127.56.11.1", "127.56.11.2", "127.56.11.3", "127.56.11.8", "127.56.11.9"), "127.56.11.1:0", 15, map[string]bool{
			"127.56.12.7:1500": true, "127.56.13.5:1000": true, "127.56.13.6:1500": false, "127.56.12.7:40000": true, "127.0.0.1:1500": false,
		}},
		{"/Common/v_inline", addrs("127.56.11.16", "127.56.11.17", "127.56.11.18", "127.56.11.19"), "127.56.11.16:0", 12, map[string]bool{
			"127.56.14.9:3000": true, "127.56.14.9:1500": true, "127.56.14.9:3001": false, "127.56.15.9:3000": false,
		}},
		{"/Common/v_one", nil, "127.56.11.40:0", 1, map[string]bool{"127.0.0.1:40000": true}},
	} {
		v := dc.Virtuals[tc.name]
		if v == nil {
			t.Fatalf("%s not translated", tc.name)
		}
		if !slices.Equal(v.Addresses, tc.addrs) || v.Destination.String() != tc.dst {
			t.Errorf("%s: addresses %v destination %v, want %v %s", tc.name, v.Addresses, v.Destination, tc.addrs, tc.dst)
		}
		if l, err := v.Listeners(); err != nil || len(l) != tc.listeners {
			t.Errorf("%s: %d listeners (%v), want %d", tc.name, len(l), err, tc.listeners)
		}
		for c, want := range tc.admit {
			if got := v.Match.Admits(netip.MustParseAddrPort(c)); got != want {
				t.Errorf("%s: client %s admitted %v, want %v", tc.name, c, got, want)
			}
		}
	}
	if v := dc.Virtuals["/Common/v_one"]; v.Match != nil {
		t.Errorf("v_one: a source filter without source criteria: %+v", v.Match)
	}
	// Changing a list re-applies to the virtual that uses it.
	if _, err := run(t, s, "modify net port-list ports ports replace-all-with { 8081 }"); err != "" {
		t.Fatal(err)
	}
	dc, _ = Translate(e.schema, e.Config())
	if pr := dc.Virtuals["/Common/v_list"].PortRanges; !slices.Equal(pr, []dataplane.PortRange{{Low: 8081, High: 8081}}) {
		t.Errorf("v_list after the port list changed: %v", pr)
	}
	// ... and the dataplane follows: the new port is served on every
	// address, the old one no longer; a source outside the list is reset.
	for _, tc := range []struct{ from, to, want string }{
		{"127.56.12.7", "127.56.11.1:8081", "S1 Response"},
		{"127.56.12.7", "127.56.11.9:8081", "S1 Response"},
		{"127.56.13.5", "127.56.11.3:8081", "S1 Response"},
		{"127.56.12.7", "127.56.11.1:8080", "refused"},
		{"127.56.12.7", "127.56.11.4:8081", "refused"},
		{"127.56.13.6", "127.56.11.1:8081", "reset|refused"}, // reset, during the handshake or after
	} {
		if got := askFrom(t, tc.from, tc.to); !slices.Contains(strings.Split(tc.want, "|"), got) {
			t.Errorf("%s -> %s: %s, want %s", tc.from, tc.to, got, tc.want)
		}
	}
	// Past the address bound: refused, saying why, nothing changed.
	_, err := run(t, s, "modify net address-list dst2 addresses add { 127.56.16.0/23 }")
	if !strings.Contains(err, "more than 256 addresses") || !strings.Contains(err, "one socket per address and port") {
		t.Errorf("a /23 in a destination list: %q", err)
	}
	_, err = run(t, s, "modify ltm traffic-matching-criteria t_inline destination-address-inline 127.56.16.0/22")
	if !strings.Contains(err, "more than 256 addresses") {
		t.Errorf("an inline /22: %q", err)
	}
	// 256 addresses on 17 ports pass the address bound, not the listener one.
	_, err = run(t, s, "modify ltm traffic-matching-criteria t_inline destination-address-inline 127.56.16.0/24 destination-port-inline 7000-7016")
	if !strings.Contains(err, "make 4352 listeners; at most 4096") {
		t.Errorf("256 x 17 listeners: %q", err)
	}
	if v := e.Config().Get(ltmTMC, "/Common/t_inline"); tmcDestAddress.Str(v) != "127.56.11.16/30" {
		t.Errorf("a refused change was kept: %s", tmcDestAddress.Str(v))
	}
	// A source list of FQDNs only: run, its names left to the plane,
	// admitting no client until one resolves; an empty one is kept out,
	// saying why.
	for _, c := range []string{
		"create net address-list names fqdns add { www.example.com }",
		"create net address-list empty_src",
		"create ltm traffic-matching-criteria t_empty destination-address-inline 127.86.0.20 destination-port-inline 8082 source-address-list empty_src",
		"create ltm virtual v_empty traffic-matching-criteria t_empty pool p",
		"modify ltm traffic-matching-criteria t_one source-address-list names",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped = Translate(e.schema, e.Config())
	if v := dc.Virtuals["/Common/v_one"]; v == nil || !slices.Equal(v.SourceFQDNs, []string{"www.example.com"}) || v.Match == nil || !v.Match.NoAddrs || v.Match.Admits(netip.MustParseAddrPort("127.56.12.7:1000")) {
		t.Errorf("v_one with an FQDN-only source list: %+v, skipped %q", v, skipped)
	}
	if dc.Virtuals["/Common/v_empty"] != nil || !strings.Contains(strings.Join(skipped, "\n"), "source-address-list /Common/empty_src holds no address or name openltm can match") {
		t.Errorf("v_empty with an empty source list: %q", skipped)
	}
}

// askFrom sends one line from address from to to and names the outcome:
// the answer, "refused" (nothing listens) or "reset" (closed unanswered).
func askFrom(t *testing.T, from, to string) string {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", to)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return "refused"
		}
		if errors.Is(err, syscall.ECONNRESET) { // reset before connect returned
			return "reset"
		}
		t.Fatalf("%s -> %s: %v", from, to, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "C1\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return "reset"
		}
		t.Fatalf("%s -> %s: %v", from, to, err)
	}
	return strings.TrimSpace(line)
}
