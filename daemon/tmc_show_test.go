package daemon

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestTrafficMatchingProtocol: the criteria's protocol must agree with
// the virtual's ip-protocol (any agrees with every one), and its
// route-domain must be the default; anything else is refused saying
// why, with nothing changed.
func TestTrafficMatchingProtocol(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.65.2.100:7000 }",
		"create ltm traffic-matching-criteria tc destination-address-inline 127.65.2.1 destination-port-inline 8080",
		"create ltm virtual v traffic-matching-criteria tc pool p",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tc := range []struct{ cmd, err string }{
		{"modify ltm traffic-matching-criteria tc protocol udp", "protocol udp does not match the virtual server's ip-protocol tcp"},
		{"modify ltm virtual v ip-protocol udp profiles replace-all-with { udp { } }", "protocol tcp does not match the virtual server's ip-protocol udp"},
		{"modify ltm traffic-matching-criteria tc route-domain 2", "route-domain 2: openltm binds in one routing table"},
		{"modify ltm traffic-matching-criteria tc route-domain /Common/rd7", "route-domain /Common/rd7: openltm binds in one routing table"},
		{"modify ltm traffic-matching-criteria tc protocol any", ""},
		{"modify ltm traffic-matching-criteria tc route-domain 0", ""},
		{"modify ltm traffic-matching-criteria tc protocol tcp route-domain any", ""},
	} {
		before := e.Config().Get(ltmTMC, "/Common/tc")
		bp, brd := tmcProtocol.Str(before), tmcRouteDomain.Str(before)
		_, err := run(t, s, tc.cmd)
		if tc.err == "" && err != "" || tc.err != "" && !strings.Contains(err, tc.err) {
			t.Errorf("%s: %q, want %q", tc.cmd, err, tc.err)
		}
		after := e.Config().Get(ltmTMC, "/Common/tc")
		if tc.err != "" && (tmcProtocol.Str(after) != bp || tmcRouteDomain.Str(after) != brd || virtualIPProtocol.Str(e.Config().Get(ltmVirtual, "/Common/v")) == "udp") {
			t.Errorf("%s: a refused change was kept", tc.cmd)
		}
	}
	// udp on both sides (changed through any): the virtual answers on UDP.
	udpEcho(t, "127.65.2.100:7000")
	for _, c := range []string{
		"modify ltm traffic-matching-criteria tc protocol any",
		"modify ltm virtual v ip-protocol udp profiles replace-all-with { udp { } }",
		"modify ltm traffic-matching-criteria tc protocol udp",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	c, err := net.Dial("udp", "127.65.2.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 64)
	var n int
	for try := 0; try < 20 && n == 0; try++ { // the listener may be a commit behind
		c.Write([]byte("ping"))
		c.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
		n, _ = c.Read(buf)
	}
	if string(buf[:n]) != "ping" {
		t.Fatalf("udp through the criteria's virtual: %q", buf[:n])
	}
}

// TestTrafficMatchingFQDNs: the FQDNs of a criteria's destination list
// are resolved through sys dns name-servers and listened on beside the
// list's addresses, following the answer; a name that is not a domain
// name is refused.
func TestTrafficMatchingFQDNs(t *testing.T) {
	t.Parallel()
	dnsAddr, set := startDNS(t, "127.65.3.53", map[string][]string{"vip.example": {"127.65.3.2"}})
	labelServer(t, "127.65.3.100:7000", "S1 Response")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"modify sys dns name-servers replace-all-with { " + dnsAddr + " }",
		"create ltm pool p members add { 127.65.3.100:7000 }",
		"create net address-list vips addresses add { 127.65.3.1 } fqdns add { vip.example }",
		"create net address-list names fqdns add { late.example }",
		"create ltm traffic-matching-criteria tc destination-address-list vips destination-port-inline 8080",
		"create ltm traffic-matching-criteria tn destination-address-list names destination-port-inline 8081",
		"create ltm virtual v traffic-matching-criteria tc pool p",
		"create ltm virtual vn traffic-matching-criteria tn pool p",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	answered := func(to string) func() bool {
		return func() bool { return askFrom(t, "127.65.3.9", to) == "S1 Response" }
	}
	for _, step := range []struct {
		vip, late []string
		on, off   []string
	}{
		{[]string{"127.65.3.2"}, nil, []string{"127.65.3.1:8080", "127.65.3.2:8080"}, nil},
		{[]string{"127.65.3.3"}, []string{"127.65.3.6"}, []string{"127.65.3.3:8080", "127.65.3.6:8081"}, []string{"127.65.3.2:8080"}},
	} {
		set("vip.example", step.vip...)
		set("late.example", step.late...)
		for _, to := range step.on {
			eventually(t, 10*time.Second, to+" answers", answered(to))
		}
		for _, to := range step.off {
			eventually(t, 10*time.Second, to+" no longer answers", func() bool { return askFrom(t, "127.65.3.9", to) == "refused" })
		}
	}
	for _, tc := range []struct{ cmd, err string }{
		{"modify net address-list names fqdns add { bad/name }", `fqdn "bad/name" is not a domain name`},
	} {
		if out, err := run(t, s, tc.cmd); !strings.Contains(out+err, tc.err) {
			t.Errorf("%s: %q, want %q", tc.cmd, err, tc.err)
		}
	}
}

// TestTrafficMatchingSourceFQDNs: the names of a criteria's source list
// admit the clients they resolve to, A and AAAA, following the answer
// without moving a listener; a destination list's AAAA records are
// listened on (::1), and the virtual stops when its name has none.
func TestTrafficMatchingSourceFQDNs(t *testing.T) {
	t.Parallel()
	dnsAddr, set := startDNS(t, "127.86.1.53", map[string][]string{})
	labelServer(t, "127.86.1.100:7000", "S1 Response")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	set("client.example", "127.86.1.7", "::1")
	set("v6vip.example", "::1")
	for _, c := range []string{
		"modify sys dns name-servers replace-all-with { " + dnsAddr + " }",
		"create ltm pool p members add { 127.86.1.100:7000 }",
		"create net address-list clients fqdns add { client.example }",
		"create net address-list v6vips fqdns add { v6vip.example }",
		"create ltm traffic-matching-criteria t4 destination-address-inline 127.86.1.1 destination-port-inline 8086 source-address-list clients",
		"create ltm traffic-matching-criteria t6 destination-address-list v6vips destination-port-inline 28613 source-address-list clients",
		"create ltm virtual v4 traffic-matching-criteria t4 pool p",
		"create ltm virtual v6 traffic-matching-criteria t6 pool p",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, step := range []struct {
		client, vip []string
		want        map[[2]string]string // from, to: answer, or answers by |
	}{
		{[]string{"127.86.1.7", "::1"}, []string{"::1"}, map[[2]string]string{
			{"127.86.1.7", "127.86.1.1:8086"}: "S1 Response",
			{"127.86.1.8", "127.86.1.1:8086"}: "reset|refused", // during the handshake or after
			{"::1", "[::1]:28613"}:            "S1 Response",
		}},
		{[]string{"127.86.1.8"}, []string{"::1"}, map[[2]string]string{
			{"127.86.1.8", "127.86.1.1:8086"}: "S1 Response",
			{"127.86.1.7", "127.86.1.1:8086"}: "reset|refused",
			{"::1", "[::1]:28613"}:            "reset|refused",
		}},
		{[]string{"::1"}, nil, map[[2]string]string{
			{"127.86.1.8", "127.86.1.1:8086"}: "reset|refused",
			{"::1", "[::1]:28613"}:            "refused",
		}},
	} {
		set("client.example", step.client...)
		set("v6vip.example", step.vip...)
		for ft, want := range step.want {
			eventually(t, 10*time.Second, ft[0]+" -> "+ft[1]+": "+want, func() bool {
				return slices.Contains(strings.Split(want, "|"), askFrom(t, ft[0], ft[1]))
			})
		}
	}
}
