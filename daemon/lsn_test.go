package daemon

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lsnPeer is a member that answers every connection with the address
// and port it came from (the translation), then holds the connection
// until the client closes it.
func lsnPeer(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, c.RemoteAddr().String()+"\n")
				c.SetReadDeadline(time.Now().Add(30 * time.Second))
				io.Copy(io.Discard, c)
			}()
		}
	}()
}

// reuse sets SO_REUSEADDR and SO_REUSEPORT, so that a subscriber's
// connections and its inbound listener share an address and port.
func reuse(_, _ string, rc syscall.RawConn) error {
	return rc.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 15, 1)
	})
}

// lsnConn is one subscriber connection through a virtual: the
// translation address and port the member saw, and the connection,
// held open until the test ends or closes it.
type lsnConn struct {
	c    net.Conn
	seen netip.AddrPort
}

// lsnDial connects from src (port 0: any) to vip and reads what the
// member saw; err is set when the connection was refused or reset.
func lsnDial(t *testing.T, src, vip string) (*lsnConn, error) {
	t.Helper()
	la, err := net.ResolveTCPAddr("tcp", src)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{LocalAddr: la, Timeout: 5 * time.Second, Control: reuse}
	c, err := d.Dial("tcp", vip)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %v", vip, err)
	}
	c.SetReadDeadline(time.Time{})
	ap, err := netip.ParseAddrPort(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("member said %q", line)
	}
	return &lsnConn{c: c, seen: ap}, nil
}

func mustLSNDial(t *testing.T, src, vip string) *lsnConn {
	t.Helper()
	c, err := lsnDial(t, src, vip)
	if err != nil {
		t.Fatalf("%s -> %s: %v", src, vip, err)
	}
	return c
}

func runAll(t *testing.T, s *Session, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
}

// showField is the value of a row of show's output (the first row
// titled name after the row titled after, "" for the first).
func showField(out, after, name string) string {
	seen := after == ""
	for _, l := range strings.Split(out, "\n") {
		f := strings.TrimSpace(l)
		if !seen {
			seen = f == after
			continue
		}
		if strings.HasPrefix(f, name+" ") {
			return strings.TrimSpace(strings.TrimPrefix(f, name))
		}
	}
	return ""
}

// lsnEventually retries f until it returns "" or the time is over.
func lsnEventually(t *testing.T, what string, f func() string) {
	t.Helper()
	var last string
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if last = f(); last == "" {
			return
		}
	}
	t.Fatalf("%s: %s", what, last)
}

func inPrefix(t *testing.T, ap netip.AddrPort, prefix string, lo, hi uint16) {
	t.Helper()
	p := netip.MustParsePrefix(prefix)
	if !p.Contains(ap.Addr()) || ap.Port() < lo || ap.Port() > hi {
		t.Errorf("translation %s, want an address of %s and a port %d-%d", ap, prefix, lo, hi)
	}
}

// TestLSNPoolNAPT: a standard TCP virtual with source-address-translation
// type lsn makes its server sides from the napt pool's addresses and
// ports; persistence none turns over the addresses, address keeps a
// subscriber on one, address-port on one address and port; the show
// counts them.
func TestLSNPoolNAPT(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	lsnPeer(t, "127.154.0.100:9000")
	lsnPeer(t, "127.154.0.101:9000")
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.100:9000 }",
		"create ltm pool p2 members add { 127.154.0.101:9000 }",
		"create ltm lsn-pool cgnat members add { 127.154.10.0/30 } translation-port-range 20000:29999 persistence { mode none }",
		"create ltm virtual v destination 127.154.0.1:9000 pool p source-address-translation { type lsn pool cgnat } profiles replace-all-with { tcp { } }",
		"create ltm virtual v2 destination 127.154.0.2:9000 pool p2 source-address-translation { type lsn pool cgnat } profiles replace-all-with { tcp { } }",
	)
	out, _ := run(t, s, "list ltm lsn-pool cgnat")
	for _, want := range []string{"members {\n        127.154.10.0/30\n    }", "translation-port-range 20000:29999"} {
		if !strings.Contains(out, want) {
			t.Errorf("list: want %q in\n%s", want, out)
		}
	}
	// persistence none: each connection takes the next address.
	a := mustLSNDial(t, "127.154.1.10:0", "127.154.0.1:9000")
	b := mustLSNDial(t, "127.154.1.10:0", "127.154.0.1:9000")
	inPrefix(t, a.seen, "127.154.10.0/30", 20000, 29999)
	inPrefix(t, b.seen, "127.154.10.0/30", 20000, 29999)
	if a.seen.Addr() == b.seen.Addr() {
		t.Errorf("persistence none: both connections from %s", a.seen.Addr())
	}
	out, _ = run(t, s, "show ltm lsn-pool cgnat")
	if got := showField(out, "Translations", "Active"); got != "2" {
		t.Errorf("active %q, want 2:\n%s", got, out)
	}
	a.c.Close()
	b.c.Close()
	lsnEventually(t, "translations end", func() string {
		out, _ := run(t, s, "show ltm lsn-pool cgnat")
		if got := showField(out, "Translations", "Active"); got != "0" {
			return out
		}
		return ""
	})

	// persistence address: one subscriber, one translation address.
	runAll(t, s, "modify ltm lsn-pool cgnat persistence { mode address timeout 60 }")
	a = mustLSNDial(t, "127.154.1.11:0", "127.154.0.1:9000")
	b = mustLSNDial(t, "127.154.1.11:0", "127.154.0.1:9000")
	if a.seen.Addr() != b.seen.Addr() || a.seen == b.seen {
		t.Errorf("persistence address: %s and %s, want one address, two ports", a.seen, b.seen)
	}
	// persistence address-port: one subscriber address and port, one
	// translation address and port, whichever server it reaches.
	runAll(t, s, "modify ltm lsn-pool cgnat persistence { mode address-port timeout 60 }")
	c := mustLSNDial(t, "127.154.1.12:41001", "127.154.0.1:9000")
	d := mustLSNDial(t, "127.154.1.12:41001", "127.154.0.2:9000")
	if c.seen != d.seen {
		t.Errorf("persistence address-port: %s and %s, want the same", c.seen, d.seen)
	}
	out, _ = run(t, s, "show ltm lsn-pool cgnat")
	if got := showField(out, "Persistence", "Hits"); got == "0" || got == "" {
		t.Errorf("persistence hits %q:\n%s", got, out)
	}
	run(t, s, "reset-stats ltm lsn-pool cgnat")
	out, _ = run(t, s, "show ltm lsn-pool cgnat")
	if got := showField(out, "Translations", "Total"); got != "0" {
		t.Errorf("after reset-stats: total %q:\n%s", got, out)
	}
	if got := showField(out, "Translations", "Active"); got != "4" {
		t.Errorf("after reset-stats: active %q, want 4:\n%s", got, out)
	}
}
