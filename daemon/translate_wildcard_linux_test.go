//go:build linux

package daemon

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/internal/netnstest"
)

// TestWildcardServed: an engine told it owns its namespace
// (Options.OwnNamespace, ltmd --own-namespace) serves wildcard virtuals
// with no warning: `0.0.0.0:any mask any` to a member on an address of
// the namespace (reached, not taken again by the wildcard), `0.0.0.0:PORT`
// with no mask (read as mask any) before it on its port, an ip-forward
// one on another port, and the IPv6, udp and http forms (created with no
// warning; their traffic is dataplane's); a host virtual on a port still
// wins. Their precedence and the plane's own destinations in detail are
// dataplane's TestAnyPortWildcard.
func TestWildcardServed(t *testing.T) {
	if !netnstest.Alone(t, "DAEMON_NETNS") {
		return
	}
	if err := dataplane.AnyPortSupport(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	for _, m := range []struct{ addr, label string }{{"127.253.20.2:30201", "M"}, {"127.253.20.2:30202", "P"}, {"127.253.22.5:30205", "F"}} {
		serveEach(t, m.addr, func(c net.Conn) { io.WriteString(c, m.label+"\n") })
	}
	e, err := Open(Options{StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OwnNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	p := dataplane.New(dataplane.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(p.Close)
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession("admin").(*Session)
	for _, cmd := range []string{
		"create ltm pool p_m members replace-all-with { 127.253.20.2:30201 }",
		"create ltm pool p_p members replace-all-with { 127.253.20.2:30202 }",
		"create ltm virtual w_any destination 0.0.0.0:any mask any pool p_m",
		"create ltm virtual w_port destination 0.0.0.0:30210 pool p_p",
		"create ltm virtual w_fwd destination 0.0.0.0:30205 mask any ip-forward",
		"create ltm virtual w_6 destination any6.any mask any6 pool p_m",
		"create ltm virtual w_udp destination 0.0.0.0:any mask any ip-protocol udp pool p_m profiles replace-all-with { udp { } }",
		"create ltm virtual w_http destination 0.0.0.0:30220 mask any pool p_m profiles replace-all-with { tcp { } http { } }",
		"create ltm virtual host destination 127.253.21.1:30210 pool p_m",
	} {
		if out, errText := run(t, s, cmd); out != "" || errText != "" {
			t.Fatalf("%s: %q %q", cmd, out, errText)
		}
	}
	ask := func(dst string) string {
		c, err := net.DialTimeout("tcp", dst, 5*time.Second)
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err.Error()
		}
		return strings.TrimSpace(line)
	}
	for _, tc := range []struct{ dst, want string }{
		{"127.253.21.9:30209", "M"}, // the wildcard on every port, its member reached
		{"127.253.20.2:30202", "P"}, // a member's own port: its own listener
		{"127.253.21.9:30210", "P"}, // the wildcard on the port
		{"127.253.21.1:30210", "M"}, // the host virtual
		{"127.253.22.5:30205", "F"}, // ip-forward: where the client was going
	} {
		if got := ask(tc.dst); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.dst, got, tc.want)
		}
	}
	out, _ := run(t, s, "show ltm virtual w_any")
	if !strings.Contains(out, "0.0.0.0:any") {
		t.Errorf("show: %s", out)
	}
}
