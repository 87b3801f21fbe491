package daemon

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// closeWatchMember serves HTTP/1.1 keep-alive on addr, answering each
// request with the address and port it came from; closed reports each
// connection's end as the member sees it (its peer's address and port).
func closeWatchMember(t *testing.T, addr string) (closed <-chan netip.AddrPort) {
	t.Helper()
	ch := make(chan netip.AddrPort, 64)
	serveEach(t, addr, func(c net.Conn) {
		from, _ := netip.ParseAddrPort(c.RemoteAddr().String())
		defer func() {
			select {
			case ch <- from:
			default:
			}
		}()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		rd := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(rd)
			if err != nil {
				return
			}
			req.Body.Close()
			body := from.String()
			if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
				return
			}
		}
	})
	return ch
}

// keepAliveGet sends a GET on c (kept open) and returns the body.
func keepAliveGet(t *testing.T, c net.Conn, rd *bufio.Reader) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: idle.test\r\n\r\n")
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	return b.String()
}

// TestSNATTranslationIdleHTTP: an ltm snat-translation's
// tcp-idle-timeout (2) closes an HTTP virtual's server connection from
// that address once it has been idle that long, seen by the member: a
// OneConnect connection resting in the pool (whose
// idle-timeout-override is far longer) and a client's own connection
// while the client stays connected (its own idle timeout is the tcp
// profile's 300), on the event loops and on goroutines. The client is
// served again afterwards, on a new server connection.
func TestSNATTranslationIdleHTTP(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	closed := closeWatchMember(t, "127.247.1.11:30701")
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool ph members add { 127.247.1.11:30701 }",
		"create ltm profile one-connect oc_long idle-timeout-override 3600",
		"create ltm virtual v_oc destination 127.247.1.1:30700 pool ph profiles replace-all-with { tcp { } http { } oc_long { } }",
		"create ltm virtual v_plain destination 127.247.1.1:30702 pool ph profiles replace-all-with { tcp { } http { } }",
		"create ltm rule r_wait { when HTTP_REQUEST { after 1 } }",
		"create ltm virtual v_gor destination 127.247.1.1:30703 pool ph rules { r_wait } profiles replace-all-with { tcp { } http { } }",
		"create ltm snat-translation 127.247.1.100 address 127.247.1.100 tcp-idle-timeout 2",
		"create ltm snat s_idle origins add { 127.247.2.0/24 } translation 127.247.1.100",
	)
	for i, tc := range []struct{ name, vip string }{
		{"one-connect, pooled", "127.247.1.1:30700"},
		{"client's own, event loops", "127.247.1.1:30702"},
		{"client's own, goroutines", "127.247.1.1:30703"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 247, 2, byte(5 + i)}), 0))}
			c, err := d.Dial("tcp", tc.vip)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rd := bufio.NewReader(c)
			first := keepAliveGet(t, c, rd)
			from, err := netip.ParseAddrPort(first)
			if err != nil || from.Addr() != netip.MustParseAddr("127.247.1.100") {
				t.Fatalf("the member saw %q, want 127.247.1.100", first)
			}
			start := time.Now()
			deadline := time.After(30 * time.Second)
			for seen := false; !seen; { // another subtest's connection may end meanwhile
				select {
				case got := <-closed:
					seen = got == from
				case <-deadline:
					t.Fatal("the idle server connection was not closed")
				}
			}
			if waited := time.Since(start); waited < 1500*time.Millisecond {
				t.Fatalf("closed after %v, before the 2s idle timeout", waited)
			}
			second := keepAliveGet(t, c, rd)
			if again, err := netip.ParseAddrPort(second); err != nil || again.Addr() != from.Addr() || again == from {
				t.Errorf("after the idle close the member saw %q, want a new connection from 127.247.1.100", second)
			}
		})
	}
}

// TestSNATTranslationMRFSnatpool: a message routing transport-config's
// snatpool holds the ltm snat-translation of its address: at
// connection-limit 1 a first client's per-client peer connection leaves
// from it, a second client's is refused (its message gets no answer,
// counted as Refused), and once the first client leaves its peer
// connection gives the address back and the second is served. show ltm
// snat-translation counts the connections; the commit no longer warns
// that these snatpools are not counted. With tcp-idle-timeout 2 the
// peer connection is closed idle while its client stays.
func TestSNATTranslationMRFSnatpool(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	lsnLinePeer(t, "127.247.3.11:30801")
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool p members add { 127.247.3.11:30801 }",
		"create ltm snatpool sp_tc members add { 127.247.3.100 }",
		"create ltm message-routing generic protocol lines { defaults-from genericmsg message-terminator \\n }",
		"create ltm message-routing generic transport-config t_sp { profiles replace-all-with { tcp lines } source-address-translation { type snat pool sp_tc } }",
		"create ltm message-routing generic peer pe { pool p connection-mode per-client transport-config t_sp }",
		"create ltm message-routing generic route r { peers { pe } }",
		"create ltm message-routing generic router rt { routes { r } }",
		"create ltm virtual v destination 127.247.3.1:30800 pool p profiles replace-all-with { tcp { } lines { } rt { } }",
	)
	out, errs := run(t, s, "modify ltm snat-translation 127.247.3.100 connection-limit 1")
	if errs != "" {
		t.Fatal(errs)
	}
	if strings.Contains(out, "without counting") || !strings.Contains(out, "message routing peer connections (a transport-config's snatpool or automap, a rule's MR::message snat") {
		t.Errorf("the commit note does not say the transport-configs' snatpools are counted: %q", out)
	}
	c1, a, ok := mrfAsk(t, "127.247.4.1:0", "127.247.3.1:30800")
	if !ok || a.Addr() != netip.MustParseAddr("127.247.3.100") {
		t.Fatalf("first client: the member saw %s (%t), want 127.247.3.100", a, ok)
	}
	if l, _ := p.SNATTranslationLimit(netip.MustParseAddr("127.247.3.100")); l.Cur != 1 {
		t.Errorf("the first peer connection: %d holding the address, want 1", l.Cur)
	}
	if _, b, ok := mrfAsk(t, "127.247.4.2:0", "127.247.3.1:30800"); ok {
		t.Errorf("second client at the limit: its peer connection came from %s, want it refused", b)
	}
	out, _ = run(t, s, "show ltm snat-translation 127.247.3.100")
	if !regexpMatch(`Total Connections\s+1\b`, out) || !regexpMatch(`Refused \(limit\)\s+[1-9]`, out) {
		t.Errorf("show ltm snat-translation does not count the connection and the refusal:\n%s", out)
	}
	c1.Close()
	if cur := waitCur(p, "127.247.3.100", 0); cur != 0 {
		t.Fatalf("the first client gone: %d holding the address, want 0", cur)
	}
	c2, b, ok := mrfAsk(t, "127.247.4.2:0", "127.247.3.1:30800")
	if !ok || b.Addr() != netip.MustParseAddr("127.247.3.100") {
		t.Errorf("second client once the address came back: %s (%t), want 127.247.3.100", b, ok)
	}
	c2.Close()
	if cur := waitCur(p, "127.247.3.100", 0); cur != 0 {
		t.Fatalf("the second client gone: %d holding the address, want 0", cur)
	}

	// The translation's tcp-idle-timeout ends an idle peer connection
	// while its client stays connected, giving the address back.
	runAll(t, s, "modify ltm snat-translation 127.247.3.100 tcp-idle-timeout 2")
	c3, b, ok := mrfAsk(t, "127.247.4.3:0", "127.247.3.1:30800")
	if !ok || b.Addr() != netip.MustParseAddr("127.247.3.100") {
		t.Fatalf("third client: %s (%t), want 127.247.3.100", b, ok)
	}
	defer c3.Close()
	if l, _ := p.SNATTranslationLimit(netip.MustParseAddr("127.247.3.100")); l.Cur != 1 {
		t.Errorf("the third client's peer connection: %d holding the address, want 1", l.Cur)
	}
	if cur := waitCur(p, "127.247.3.100", 0); cur != 0 {
		t.Fatalf("idle past tcp-idle-timeout with its client connected: %d holding the address, want 0", cur)
	}
}

// TestSNATLimitResetCauseHTTP: an HTTP virtual's client whose server
// connection cannot be made because the SNAT's translation address is
// at its connection-limit is reset with the cause SNATLimit, as a
// standard virtual's is, not "No server selected": the ltm log's
// tm.rstcause line says so.
func TestSNATLimitResetCauseHTTP(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	closeWatchMember(t, "127.247.7.11:30901")
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool ph members add { 127.247.7.11:30901 }",
		"create ltm virtual v_plain destination 127.247.7.1:30900 pool ph profiles replace-all-with { tcp { } http { } }",
		"create ltm snat-translation 127.247.7.100 address 127.247.7.100 connection-limit 1",
		"create ltm snat s_lim origins add { 127.247.8.0/24 } translation 127.247.7.100",
		"modify sys db tm.rstcause.log value enable",
	)
	// The first client keeps its server connection, and the address.
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 247, 8, 5)}}
	c1, err := d.Dial("tcp", "127.247.7.1:30900")
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	if got := keepAliveGet(t, c1, bufio.NewReader(c1)); !strings.HasPrefix(got, "127.247.7.100:") {
		t.Fatalf("first client: the member saw %q", got)
	}
	got, c2 := httpFrom(t, "127.247.8.6", "127.247.7.1:30900", "/")
	if c2 != nil {
		c2.Close()
		t.Fatalf("second client at the limit: the member saw %q, want a reset", got)
	}
	re := regexp.MustCompile(`01230140:6: RST sent from 127\.247\.7\.1:30900 to 127\.247\.8\.6:\d+, \[mblb:snat\] SNAT translation connection limit reached\n`)
	var log string
	for i := 0; i < 250 && !re.MatchString(log); i++ {
		time.Sleep(20 * time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(dir, LogFile))
		log = string(b)
	}
	if !re.MatchString(log) {
		t.Fatalf("no SNATLimit reset line for the second client in the ltm log:\n%s", log)
	}
	if regexp.MustCompile(`to 127\.247\.8\.6:\d+, \[mblb:lb\]`).MatchString(log) {
		t.Errorf("the second client's reset also logged as No server selected:\n%s", log)
	}
}
