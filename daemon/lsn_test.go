package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lsnUDPPeer is a UDP member that answers every datagram with the
// address and port it came from (the translation).
func lsnUDPPeer(t *testing.T, addr string) {
	t.Helper()
	udpFromPeer(t, addr, "")
}

// udpFromPeer answers every datagram to addr with the address and port
// it came from, then end (a line protocol's newline, or nothing).
func udpFromPeer(t *testing.T, addr, end string) {
	t.Helper()
	udpFromMember(t, addr, func(from netip.AddrPort) string { return fromHostPort(from) + end })
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

// lsnShowEventually waits until show ltm lsn-pool POOL gives field of
// section the value want.
func lsnShowEventually(t *testing.T, s *Session, what, pool, section, field, want string) {
	t.Helper()
	lsnEventually(t, what, func() string {
		out, _ := run(t, s, "show ltm lsn-pool "+pool)
		if showField(out, section, field) != want {
			return out
		}
		return ""
	})
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
	fromMember(t, "127.154.0.100:9000", fromHostPort, true)
	fromMember(t, "127.154.0.101:9000", fromHostPort, true)
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
	lsnShowEventually(t, s, "translations end", "cgnat", "Translations", "Active", "0")

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
	// A performance (fastL4) virtual translates alike.
	runAll(t, s, "create ltm virtual v4 destination 127.154.0.4:9000 pool p source-address-translation { type lsn pool cgnat } profiles replace-all-with { fastL4 { } }")
	f := mustLSNDial(t, "127.154.1.13:0", "127.154.0.4:9000")
	inPrefix(t, f.seen, "127.154.10.0/30", 20000, 29999)
	f.c.Close()
	lsnShowEventually(t, s, "the fastL4 translation ends", "cgnat", "Translations", "Active", "4")
	run(t, s, "reset-stats ltm lsn-pool cgnat")
	out, _ = run(t, s, "show ltm lsn-pool cgnat")
	if got := showField(out, "Translations", "Total"); got != "0" {
		t.Errorf("after reset-stats: total %q:\n%s", got, out)
	}
	if got := showField(out, "Translations", "Active"); got != "4" {
		t.Errorf("after reset-stats: active %q, want 4:\n%s", got, out)
	}
}

// TestLSNPoolDeterministic: a deterministic pool maps each subscriber of
// its virtual's source prefix to one address and port range, the same
// every time; a virtual without a source prefix is refused, and so are
// more subscribers than the ports can share.
func TestLSNPoolDeterministic(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.154.0.110:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.110:9000 }",
		"create ltm lsn-pool det mode deterministic members add { 127.154.20.0/31 } translation-port-range 30000:30099",
	)
	if _, err := run(t, s, "create ltm virtual bad destination 127.154.0.10:9000 pool p source-address-translation { type lsn pool det } profiles replace-all-with { tcp { } }"); !strings.Contains(err, "must specify a source other than 0.0.0.0/0") {
		t.Errorf("a deterministic virtual without source: %q", err)
	}
	runAll(t, s, "create ltm virtual v destination 127.154.0.11:9000 source 127.154.2.0/30 pool p source-address-translation { type lsn pool det } profiles replace-all-with { tcp { } }")
	// 4 subscribers over 2 addresses: 2 each, 50 ports each.
	for _, tc := range []struct {
		client, addr string
		lo, hi       uint16
	}{
		{"127.154.2.0", "127.154.20.0", 30000, 30049},
		{"127.154.2.1", "127.154.20.0", 30050, 30099},
		{"127.154.2.2", "127.154.20.1", 30000, 30049},
		{"127.154.2.3", "127.154.20.1", 30050, 30099},
	} {
		for i := 0; i < 2; i++ {
			c := mustLSNDial(t, tc.client+":0", "127.154.0.11:9000")
			inPrefix(t, c.seen, tc.addr+"/32", tc.lo, tc.hi)
		}
	}
	// 3 subscribers on 2 addresses of 1 port each: refused.
	runAll(t, s, "create ltm lsn-pool tiny mode deterministic members add { 127.154.21.0/31 } translation-port-range 30000:30000")
	if _, err := run(t, s, "create ltm virtual v3 destination 127.154.0.12:9000 source 127.154.3.0/30 pool p source-address-translation { type lsn pool tiny } profiles replace-all-with { tcp { } }"); !strings.Contains(err, "deterministic mode cannot give 4 subscribers") {
		t.Errorf("too many subscribers: %q", err)
	}
}

// TestLSNPoolExhaustion: when a napt pool has no port left, the
// subscriber's connection is reset and the pool counts the failure;
// a port freed is taken again.
func TestLSNPoolExhaustion(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.154.0.120:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.120:9000 }",
		"create ltm lsn-pool small members add { 127.154.22.1/32 } translation-port-range 31000:31001 persistence { mode none }",
		"create ltm virtual v destination 127.154.0.20:9000 pool p source-address-translation { type lsn pool small } profiles replace-all-with { tcp { } }",
	)
	a := mustLSNDial(t, "127.154.1.40:0", "127.154.0.20:9000")
	mustLSNDial(t, "127.154.1.41:0", "127.154.0.20:9000")
	if c, err := lsnDial(t, "127.154.1.42:0", "127.154.0.20:9000"); err == nil {
		t.Fatalf("a third connection on two ports got %s", c.seen)
	}
	out, _ := run(t, s, "show ltm lsn-pool small")
	if got := showField(out, "Translations", "Failures"); got != "1" {
		t.Errorf("failures %q, want 1:\n%s", got, out)
	}
	a.c.Close()
	lsnEventually(t, "a port freed", func() string {
		c, err := lsnDial(t, "127.154.1.42:0", "127.154.0.20:9000")
		if err != nil {
			return err.Error()
		}
		inPrefix(t, c.seen, "127.154.22.1/32", 31000, 31001)
		return ""
	})
	// client-connection-limit: one subscriber's connections at once.
	runAll(t, s, "modify ltm lsn-pool small translation-port-range 31000:31099 client-connection-limit 1")
	mustLSNDial(t, "127.154.1.43:0", "127.154.0.20:9000")
	if _, err := lsnDial(t, "127.154.1.43:0", "127.154.0.20:9000"); err == nil {
		t.Errorf("client-connection-limit 1: a second connection went through")
	}
	out, _ = run(t, s, "show ltm lsn-pool small")
	if got := showField(out, "Translations", "Client Limit Rejects"); got != "1" {
		t.Errorf("client limit rejects %q, want 1:\n%s", got, out)
	}
}

// TestLSNPoolPBA: in mode pba a subscriber's connections take ports of
// its block of block-size ports on one address; with client-block-limit
// 1, a full block refuses the next connection; each subscriber gets a
// block of its own; the block ends block-idle-timeout after its last
// connection.
func TestLSNPoolPBA(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.154.0.130:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.130:9000 }",
		"create ltm lsn-pool pba mode pba members add { 127.154.23.0/31 } translation-port-range 32000:32063 port-block-allocation { block-size 4 client-block-limit 1 block-idle-timeout 1 }",
		"create ltm virtual v destination 127.154.0.30:9000 pool p source-address-translation { type lsn pool pba } profiles replace-all-with { tcp { } }",
	)
	var conns []*lsnConn
	for i := 0; i < 4; i++ {
		conns = append(conns, mustLSNDial(t, "127.154.1.50:0", "127.154.0.30:9000"))
	}
	first := conns[0].seen
	lo := 32000 + (first.Port()-32000)/4*4
	for _, c := range conns {
		inPrefix(t, c.seen, first.Addr().String()+"/32", lo, lo+3)
	}
	if _, err := lsnDial(t, "127.154.1.50:0", "127.154.0.30:9000"); err == nil {
		t.Errorf("a fifth connection in a block of 4 with client-block-limit 1 went through")
	}
	other := mustLSNDial(t, "127.154.1.51:0", "127.154.0.30:9000")
	if other.seen.Addr() == first.Addr() && (other.seen.Port()-32000)/4 == (first.Port()-32000)/4 {
		t.Errorf("two subscribers in one block: %s and %s", first, other.seen)
	}
	out, _ := run(t, s, "show ltm lsn-pool pba")
	if showField(out, "Port Blocks", "Active") != "2" || showField(out, "Port Blocks", "Failures") != "1" {
		t.Errorf("port blocks:\n%s", out)
	}
	for _, c := range conns {
		c.c.Close()
	}
	other.c.Close()
	lsnShowEventually(t, s, "blocks end when idle", "pba", "Port Blocks", "Active", "0")
}

// TestLSNPoolInbound: with inbound-connections automatic, a connection
// to the translation address and port of a subscriber's connection goes
// to that subscriber's address and port.
func TestLSNPoolInbound(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.154.0.140:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.140:9000 }",
		"create ltm lsn-pool in members add { 127.154.24.0/30 } inbound-connections automatic persistence { mode address-port timeout 60 }",
		"create ltm virtual v destination 127.154.0.40:9000 pool p source-address-translation { type lsn pool in } profiles replace-all-with { tcp { } }",
	)
	// The subscriber listens on the address and port its connection
	// comes from.
	lc := net.ListenConfig{Control: reuse}
	ln, err := lc.Listen(context.Background(), "tcp", "127.154.1.60:42001")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "subscriber here\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	out := mustLSNDial(t, "127.154.1.60:42001", "127.154.0.40:9000")
	inPrefix(t, out.seen, "127.154.24.0/30", 1025, 65535)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.154.0.200")}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", out.seen.String())
	if err != nil {
		t.Fatalf("inbound to %s: %v", out.seen, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "subscriber here\n" {
		t.Fatalf("inbound: %q %v", line, err)
	}
	io.WriteString(c, "hello from outside\n")
	select {
	case l := <-got:
		if l != "hello from outside" {
			t.Errorf("subscriber got %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber got nothing")
	}
	sh, _ := run(t, s, "show ltm lsn-pool in")
	if showField(sh, "Inbound Connections", "Total") != "1" {
		t.Errorf("inbound:\n%s", sh)
	}
	// disabled: nothing listens on the translation.
	runAll(t, s, "create ltm lsn-pool closed members add { 127.154.25.0/30 }",
		"modify ltm virtual v source-address-translation { type lsn pool closed }")
	out2 := mustLSNDial(t, "127.154.1.61:0", "127.154.0.40:9000")
	if c, err := net.DialTimeout("tcp", out2.seen.String(), 5*time.Second); err == nil {
		c.Close()
		t.Errorf("inbound-connections disabled: %s answered", out2.seen)
	}
}

// TestLSNPoolLog: a pool with a log-publisher logs each translation's
// start and end (and a pba pool its blocks); a log profile's
// start-outbound-session action disabled leaves the starts out.
func TestLSNPoolLog(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.154.0.150:9000", fromHostPort, true)
	uc, err := net.ListenPacket("udp", "127.154.0.250:5514")
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	runAll(t, s,
		"create ltm pool log_pool members add { 127.154.0.250:5514 }",
		"create sys log-config destination remote-high-speed-log hsl pool-name log_pool protocol udp",
		"create sys log-config publisher pub destinations replace-all-with { hsl }",
		"create ltm pool p members add { 127.154.0.150:9000 }",
		"create ltm lsn-pool lp mode pba members add { 127.154.26.1/32 } log-publisher pub",
		"create ltm virtual v destination 127.154.0.50:9000 pool p source-address-translation { type lsn pool lp } profiles replace-all-with { tcp { } }",
	)
	read := func(want ...string) {
		t.Helper()
		buf := make([]byte, 2048)
		var lines []string
		for end := time.Now().Add(10 * time.Second); len(want) > 0 && time.Now().Before(end); {
			uc.SetReadDeadline(end)
			n, _, err := uc.ReadFrom(buf)
			if err != nil {
				break
			}
			l := string(buf[:n])
			lines = append(lines, l)
			if strings.Contains(l, want[0]) {
				want = want[1:]
			}
		}
		if len(want) > 0 {
			t.Fatalf("want %q; got %q", want, lines)
		}
	}
	c := mustLSNDial(t, "127.154.1.70:43001", "127.154.0.50:9000")
	nat := c.seen.Addr().String() + "%0:" + fmt.Sprint(c.seen.Port())
	read(`lsn_event="LSN_PB_ALLOCATED",cli="127.154.1.70%0",pba="127.154.26.1%0:`,
		`lsn_event="LSN_ADD",cli="127.154.1.70%0:43001",nat="`+nat+`",dst="127.154.0.150%0:9000",proto="tcp",pool="/Common/lp",mode="pba"`)
	c.c.Close()
	read(`lsn_event="LSN_DELETE",cli="127.154.1.70%0:43001",nat="` + nat + `"`)
	runAll(t, s,
		"create ltm lsn-log-profile quiet start-outbound-session { action disabled }",
		"modify ltm lsn-pool lp log-profile quiet mode napt",
	)
	c = mustLSNDial(t, "127.154.1.71:43002", "127.154.0.50:9000")
	c.c.Close()
	read(`lsn_event="LSN_DELETE",cli="127.154.1.71%0:43002"`)
}

// TestLSNPoolRefused: what BIG-IP refuses in an lsn pool or its use is
// refused with its reason, and nothing changes.
func TestLSNPoolRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.160:9000 }",
		"create ltm snatpool sp members add { 127.154.0.161 }",
		"create ltm lsn-pool ok members add { 127.154.27.0/24 }",
	)
	for _, tc := range []struct{ cmd, want string }{
		{"create ltm lsn-pool a members add { 127.154.28.1 }", "is not a network"},
		{"create ltm lsn-pool a members add { 127.154.28.1/24 }", "has host bits set (use 127.154.28.0/24)"},
		{"create ltm lsn-pool a members add { 127.154.28.0/24 127.154.28.128/25 }", "overlap"},
		{"create ltm lsn-pool a translation-port-range 2000:1000", "invalid translation-port-range (2000:1000)"},
		{"create ltm lsn-pool a translation-port-range 0:10", "invalid translation-port-range"},
		{"create ltm lsn-pool a mode nat", `"nat" is not a valid value for "mode"`},
		{"create ltm lsn-pool a mode pba translation-port-range 1000:1010 port-block-allocation { block-size 64 }", "block-size 64 is larger than translation-port-range 1000:1010"},
		{"create ltm lsn-pool a persistence { mode sticky }", `"sticky" is not a valid value`},
		{"create ltm lsn-pool a inbound-connections always", `"always" is not a valid value`},
		{"create ltm virtual v destination 127.154.0.60:9000 pool p source-address-translation { type lsn }", "without an LSN pool"},
		{"create ltm virtual v destination 127.154.0.60:9000 pool p source-address-translation { type lsn pool sp }", "with a SNAT pool (/Common/sp)"},
		{"create ltm virtual v destination 127.154.0.60:9000 pool p source-address-translation { type snat pool ok }", "with an LSN pool (/Common/ok)"},
		{"create ltm virtual v destination 127.154.0.60:9000 pool p source-address-translation { type lsn pool nosuch }", "nosuch"},
	} {
		if _, err := run(t, s, tc.cmd); !strings.Contains(err, tc.want) {
			t.Errorf("%s: %q, want %q", tc.cmd, err, tc.want)
		}
	}
	if out, _ := run(t, s, "list ltm lsn-pool"); strings.Contains(out, "lsn-pool a") {
		t.Errorf("a refused pool was kept:\n%s", out)
	}
	runAll(t, s, "create ltm virtual v destination 127.154.0.60:9000 pool p source-address-translation { type lsn pool ok }")
	if _, err := run(t, s, "delete ltm lsn-pool ok"); !strings.Contains(err, "in use") && !strings.Contains(err, "01070265") {
		t.Errorf("deleting a pool in use: %q", err)
	}
	// kept with a warning: what openltm does not act on.
	out, err := run(t, s, "modify ltm lsn-pool ok hairpin-mode enabled icmp-echo enabled")
	if err != "" || !strings.Contains(out, "icmp-echo") || strings.Contains(out, "hairpin-mode") {
		t.Errorf("icmp-echo kept, hairpin-mode acted on: %q %q", out, err)
	}
	out, err = run(t, s, "create ltm virtual h destination 127.154.0.61:80 pool p source-address-translation { type lsn pool ok } profiles replace-all-with { tcp { } http { } }")
	if err != "" || strings.Contains(out, "keep the client's address") {
		t.Errorf("an http virtual with an lsn pool: %q %q", out, err)
	}
}

// TestLSNPoolRules: LSN::pool translates a connection through another
// pool, LSN::address asks for a translation address, LSN::disable
// leaves the client's address, LSN::address without an argument reads
// the translation in SERVER_CONNECTED; a rule using DSLITE::remote_addr
// loads with a warning.
func TestLSNPoolRules(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.154.0.170:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.170:9000 }",
		"create ltm lsn-pool a members add { 127.154.40.0/30 }",
		"create ltm lsn-pool b members add { 127.154.41.0/30 }",
		`create ltm rule r { when CLIENT_ACCEPTED {
    switch [IP::client_addr] {
        127.154.1.80 { LSN::pool b }
        127.154.1.81 { LSN::address 127.154.40.3 ; LSN::port 33333 }
        127.154.1.82 { LSN::disable }
    }
}
when SERVER_CONNECTED {
    log local0. "lsn [LSN::address]:[LSN::port]"
} }`,
		"create ltm virtual v destination 127.154.0.70:9000 pool p rules { r } source-address-translation { type lsn pool a } profiles replace-all-with { tcp { } }",
	)
	inPrefix(t, mustLSNDial(t, "127.154.1.79:0", "127.154.0.70:9000").seen, "127.154.40.0/30", 1025, 65535)
	inPrefix(t, mustLSNDial(t, "127.154.1.80:0", "127.154.0.70:9000").seen, "127.154.41.0/30", 1025, 65535)
	if got := mustLSNDial(t, "127.154.1.81:0", "127.154.0.70:9000").seen; got != netip.MustParseAddrPort("127.154.40.3:33333") {
		t.Errorf("LSN::address and LSN::port: %s", got)
	}
	if got := mustLSNDial(t, "127.154.1.82:0", "127.154.0.70:9000").seen.Addr(); got != netip.MustParseAddr("127.154.1.82") {
		t.Errorf("LSN::disable: %s", got)
	}
	out, err := run(t, s, `create ltm rule entries { when CLIENT_ACCEPTED { log local0. [DSLITE::remote_addr] } }`)
	if err != "" || !strings.Contains(out, "DSLITE::remote_addr") {
		t.Errorf("DSLITE::remote_addr: %q %q", out, err)
	}
}

// TestLSNPoolUDP: a UDP virtual's flows are translated too: the member
// sees the pool's address and port, and the pool counts the flow until
// it ends.
func TestLSNPoolUDP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	lsnUDPPeer(t, "127.154.0.180:9053")
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.180:9053 }",
		"create ltm lsn-pool u members add { 127.154.42.0/31 } translation-port-range 34000:34999",
		"create ltm virtual v destination 127.154.0.80:9053 ip-protocol udp pool p source-address-translation { type lsn pool u } profiles replace-all-with { udp { } }",
	)
	c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.154.1.90")}, &net.UDPAddr{IP: net.ParseIP("127.154.0.80"), Port: 9053})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seen netip.AddrPort
	lsnEventually(t, "an answer through the udp virtual", func() string {
		c.Write([]byte("hello"))
		c.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if err != nil {
			return err.Error()
		}
		seen, err = netip.ParseAddrPort(string(buf[:n]))
		if err != nil {
			return err.Error()
		}
		return ""
	})
	inPrefix(t, seen, "127.154.42.0/31", 34000, 34999)
	out, _ := run(t, s, "show ltm lsn-pool u")
	if showField(out, "Translations", "Active") != "1" {
		t.Errorf("udp translation:\n%s", out)
	}
}

// TestLSNPoolInboundExplicit: with inbound-connections explicit, only
// the translations a rule opened with LSN::inbound enable listen.
func TestLSNPoolInboundExplicit(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.154.0.190:9000", fromHostPort, true)
	runAll(t, s,
		"create ltm pool p members add { 127.154.0.190:9000 }",
		"create ltm lsn-pool x members add { 127.154.43.0/30 } inbound-connections explicit",
		`create ltm rule open { when CLIENT_ACCEPTED { if { [IP::client_addr] eq "127.154.1.95" } { LSN::inbound enable } } }`,
		"create ltm virtual v destination 127.154.0.90:9000 pool p rules { open } source-address-translation { type lsn pool x } profiles replace-all-with { tcp { } }",
	)
	opened := mustLSNDial(t, "127.154.1.95:0", "127.154.0.90:9000")
	closed := mustLSNDial(t, "127.154.1.96:0", "127.154.0.90:9000")
	// The subscribers listen nowhere, so an inbound connection that is
	// accepted is then reset; where nothing listens it is refused.
	if c, err := net.DialTimeout("tcp", opened.seen.String(), 5*time.Second); err == nil {
		c.Close()
	} else if strings.Contains(err.Error(), "refused") {
		t.Errorf("LSN::inbound enable: %s does not listen: %v", opened.seen, err)
	}
	if c, err := net.DialTimeout("tcp", closed.seen.String(), 5*time.Second); err == nil || !strings.Contains(err.Error(), "refused") {
		if c != nil {
			c.Close()
		}
		t.Errorf("explicit without LSN::inbound enable: %s listens (%v)", closed.seen, err)
	}
	sh, _ := run(t, s, "show ltm lsn-pool x")
	if showField(sh, "Inbound Connections", "Refused") == "0" {
		// the accepted one found no subscriber listening
		lsnShowEventually(t, s, "the refused inbound connection counted", "x", "Inbound Connections", "Refused", "1")
	}
}
