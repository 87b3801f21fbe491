package daemon

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sourceSeenFrom is the source address the member behind vip saw for
// one connection from the client address from (vip http://ADDR:PORT:
// one HTTP request).
func sourceSeenFrom(t *testing.T, from, vip string) string {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), 0))}
	c, err := d.Dial("tcp", strings.TrimPrefix(vip, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if strings.HasPrefix(vip, "http://") {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("%s from %s: %v", vip, from, err)
	}
	if strings.HasPrefix(vip, "http://") {
		if r, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil); err == nil {
			b, _ = io.ReadAll(r.Body)
		}
	}
	return strings.TrimSpace(string(b))
}

// TestSNATObjects: an ltm snat translates the server connections of the
// clients in its origins on a virtual without source-address-translation
// of its own, the most specific origin first (translation address,
// snatpool, automap); a virtual's own translation and a rule's snat come
// first; a disabled snat-translation is not given out; what BIG-IP
// refuses is refused with nothing changed.
func TestSNATObjects(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.218.0.11:30001", fromHost, false)
	ln, err := net.Listen("tcp", "127.218.0.12:30002")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		io.WriteString(w, host)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.218.0.11:30001 }",
		"create ltm virtual v1 destination 127.218.0.1:30000 pool p profiles replace-all-with { tcp { } }",
		"create ltm virtual v2 destination 127.218.0.2:30000 pool p source-address-translation { type automap } profiles replace-all-with { tcp { } }",
		"create ltm pool p_http members add { 127.218.0.12:30002 }",
		"create ltm virtual v4 destination 127.218.0.4:30000 pool p_http profiles replace-all-with { tcp { } http { } }",
		"create ltm rule r_none { when CLIENT_ACCEPTED { snat none } }",
		"create ltm virtual v3 destination 127.218.0.3:30000 pool p rules { r_none } profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	type probe struct{ from, vip, want string }
	for _, tc := range []struct {
		name   string
		cmds   []string
		err    string // a substring of the last command's error
		probes []probe
	}{
		{name: "no snat objects", probes: []probe{{"127.218.1.5", "127.218.0.1:30000", "127.218.1.5"}}},
		{name: "translation address",
			cmds: []string{"create ltm snat s_net origins add { 127.218.1.0/24 } translation 127.218.0.100"},
			probes: []probe{
				{"127.218.1.5", "127.218.0.1:30000", "127.218.0.100"},
				{"127.218.1.5", "http://127.218.0.4:30000", "127.218.0.100"}, // an HTTP virtual
				{"127.218.2.5", "127.218.0.1:30000", "127.218.2.5"},          // not an origin
				{"127.218.1.5", "127.218.0.2:30000", "127.218.0.2"},          // the virtual's automap first
				{"127.218.1.5", "127.218.0.3:30000", "127.218.1.5"}}},        // the rule's snat none first
		{name: "most specific origin",
			cmds: []string{
				"create ltm snatpool sp members add { 127.218.0.101 }",
				"create ltm snat s_host origins add { 127.218.1.5 } snatpool sp",
			},
			probes: []probe{
				{"127.218.1.5", "127.218.0.1:30000", "127.218.0.101"},
				{"127.218.1.6", "127.218.0.1:30000", "127.218.0.100"}}},
		{name: "automap",
			cmds: []string{"create ltm snat s_auto origins add { 127.218.2.0/24 } automap"},
			probes: []probe{
				{"127.218.2.5", "127.218.0.1:30000", "127.218.0.1"}}}, // no self IP: the virtual's address
		{name: "disabled translation",
			cmds: []string{
				"modify ltm snatpool sp members add { 127.218.0.102 }",
				"modify ltm snat-translation 127.218.0.101 enabled no", // made with the snatpool
			},
			probes: []probe{
				{"127.218.1.5", "127.218.0.1:30000", "127.218.0.102"},
				{"127.218.1.5", "127.218.0.1:30000", "127.218.0.102"}}},
		{name: "no origins", cmds: []string{"create ltm snat bad translation 127.218.0.100"}, err: "origins"},
		{name: "no translation", cmds: []string{"create ltm snat bad origins add { 127.218.3.0/24 }"}, err: "exactly one of"},
		{name: "two translations", cmds: []string{"create ltm snat bad origins add { 127.218.3.0/24 } translation 127.218.0.100 automap"}, err: "exactly one of"},
		{name: "duplicate origin", cmds: []string{"create ltm snat z_dup origins add { 127.218.1.0/24 } automap"}, err: "already an origin of ltm snat /Common/s_net"},
		{name: "missing snatpool", cmds: []string{"create ltm snat bad origins add { 127.218.3.0/24 } snatpool nosuch"}, err: "nosuch"},
		{name: "bad origin", cmds: []string{"create ltm snat bad origins add { 127.218.3.0/33 } automap"}, err: "127.218.3.0/33"},
		{name: "after refusals", probes: []probe{
			{"127.218.3.5", "127.218.0.1:30000", "127.218.3.5"},
			{"127.218.1.6", "127.218.0.1:30000", "127.218.0.100"}}},
		{name: "deleted",
			cmds:   []string{"delete ltm snat s_net"},
			probes: []probe{{"127.218.1.6", "127.218.0.1:30000", "127.218.1.6"}}},
	} {
		for i, c := range tc.cmds {
			_, err := run(t, s, c)
			if i == len(tc.cmds)-1 && tc.err != "" {
				if !strings.Contains(err, tc.err) {
					t.Errorf("%s: %s: error %q, want one with %q", tc.name, c, err, tc.err)
				}
			} else if err != "" {
				t.Fatalf("%s: %s: %s", tc.name, c, err)
			}
		}
		for _, p := range tc.probes {
			if got := sourceSeenFrom(t, p.from, p.vip); got != p.want {
				t.Errorf("%s: from %s to %s, the member saw %s, want %s", tc.name, p.from, p.vip, got, p.want)
			}
		}
	}
	for _, tc := range []struct{ cmd, want string }{
		{"show ltm snat s_host", `Ltm::SNAT: s_host\n-+\nTraffic +ServerSide\n +Total Connections +3\n`},
		{"show ltm snat s_auto", `Ltm::SNAT: s_auto\n-+\nTraffic +ServerSide\n +Total Connections +1\n`},
		{"show ltm snat-translation 127.218.0.101", `Translation: 127.218.0.101\n-+\nTraffic +ServerSide\n +Total Connections +1\n`},
		// every translation address, with those of the snatpools
		{"show ltm snat-translation", `Translation: 127.218.0.102\n-+\nTraffic +ServerSide\n +Total Connections +2\n`},
	} {
		if out, err := run(t, s, tc.cmd); err != "" || !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("%s: %s\n%s\nwant %q", tc.cmd, err, out, tc.want)
		}
	}
	if out, _ := run(t, s, "list ltm snat"); strings.Contains(out, "bad") || strings.Contains(out, "z_dup") {
		t.Errorf("a refused snat was kept:\n%s", out)
	}
}
