//go:build linux

package daemon

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/internal/netnstest"
)

// TestWildcardBySourceServed: in a namespace of its own, a standard and
// an ip-forward wildcard on every port, created through tmsh with the
// same destination and different sources, both commit and run: a client
// of the standard one's source reaches its member, another is forwarded
// where it was going. Two of one source are refused as already used.
func TestWildcardBySourceServed(t *testing.T) {
	if !netnstest.Alone(t, "DAEMON_NETNS") {
		return
	}
	if err := dataplane.AnyPortSupport(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	for _, m := range []struct{ addr, label string }{{"127.222.30.2:30301", "M"}, {"127.222.31.5:30305", "F"}} {
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
		"create ltm pool p_m members replace-all-with { 127.222.30.2:30301 }",
		"create ltm virtual w_fwd destination 0.0.0.0:any mask any ip-forward",
		"create ltm virtual w_std destination 0.0.0.0:any mask any source 127.222.64.0/18 pool p_m",
	} {
		if out, errText := run(t, s, cmd); out != "" || errText != "" {
			t.Fatalf("%s: %q %q", cmd, out, errText)
		}
	}
	ask := func(src, dst string) string {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))}
		c, err := d.Dial("tcp", dst)
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
	if got := ask("127.222.64.9", "127.222.31.5:30305"); got != "M" {
		t.Errorf("a client of the standard wildcard's source: %q, want its member M", got)
	}
	if got := ask("127.222.1.9", "127.222.31.5:30305"); got != "F" {
		t.Errorf("another client: %q, want forwarded to F", got)
	}
	if _, errText := run(t, s, "create ltm virtual w_std2 destination 0.0.0.0:any mask any source 127.222.64.0/18 pool p_m"); !strings.Contains(errText, "already used") {
		t.Errorf("a third of one source: %q, want refused as already used", errText)
	}
}
