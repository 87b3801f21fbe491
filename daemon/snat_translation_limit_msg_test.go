package daemon

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// slowHTTPMember serves HTTP on addr, answering each request with the
// source address it came from; a request for /slow is answered once
// the channel release gives at its arrival is closed (or after 10
// seconds).
func slowHTTPMember(t *testing.T, addr string, release func() <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release():
			case <-time.After(10 * time.Second):
			}
		}
		from, _ := netip.ParseAddrPort(r.RemoteAddr)
		fmt.Fprint(w, from.Addr().Unmap().String())
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// httpFrom sends one GET for path to vip from the address from on a new
// connection and returns the body ("" when the connection was reset or
// refused, or the answer was not a 200) and the connection, left open
// (nil on failure).
func httpFrom(t *testing.T, from, vip, path string) (string, net.Conn) {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), 0))}
	c, err := d.Dial("tcp", vip)
	if err != nil {
		return "", nil
	}
	c.SetDeadline(time.Now().Add(15 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: limit.test\r\n\r\n", path)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return "", nil
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil || resp.StatusCode != 200 {
		c.Close()
		return "", nil
	}
	c.SetDeadline(time.Time{})
	return b.String(), c
}

// waitCur waits (bounded) for the translation address a to be held by
// want connections and reports what it last saw.
func waitCur(p *dataplane.Plane, a string, want int64) int64 {
	var cur int64 = -1
	for i := 0; i < 300; i++ {
		l, _ := p.SNATTranslationLimit(netip.MustParseAddr(a))
		if cur = l.Cur; cur == want {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cur
}

// TestSNATTranslationLimitHTTP: on an HTTP virtual, a server connection
// holds its ltm snat-translation address (connection-limit 1) while a
// request is on it, so a second client's request that needs a new one
// is refused (reset); with OneConnect the connection holds the address
// while it rests in the pool (a standard virtual's connection from the
// same SNAT is refused meanwhile), and gives it back once the pool's
// idle-timeout-override closes it. Without OneConnect the second client
// is served once the first has closed. The virtuals' clients run on the
// event loops (dialFD); one whose rule suspends runs on goroutines
// (dial).
func TestSNATTranslationLimitHTTP(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	var mu sync.Mutex
	release := make(chan struct{})
	slowHTTPMember(t, "127.238.0.11:30101", func() <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		return release
	})
	fromMember(t, "127.238.0.12:30103", fromHost, true)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool ph members add { 127.238.0.11:30101 }",
		"create ltm pool pt members add { 127.238.0.12:30103 }",
		"create ltm profile one-connect oc1 idle-timeout-override 3",
		"create ltm virtual v_oc destination 127.238.0.1:30100 pool ph profiles replace-all-with { tcp { } http { } oc1 { } }",
		"create ltm virtual v_plain destination 127.238.0.1:30102 pool ph profiles replace-all-with { tcp { } http { } }",
		"create ltm virtual v_l4 destination 127.238.0.1:30104 pool pt profiles replace-all-with { tcp { } }",
		// A rule that suspends (after) keeps the virtual's clients on
		// goroutines, off the event loops: the other dial.
		"create ltm rule r_wait { when HTTP_REQUEST { after 1 } }",
		"create ltm virtual v_gor destination 127.238.0.1:30105 pool ph rules { r_wait } profiles replace-all-with { tcp { } http { } }",
		"create ltm snat-translation 127.238.0.100 address 127.238.0.100 connection-limit 1",
		"create ltm snat s_http origins add { 127.238.1.0/24 } translation 127.238.0.100",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		} else if strings.Contains(c, "connection-limit") && !strings.Contains(out, "enforced on the server connections of standard (TCP), UDP, HTTP and message-based virtuals") {
			t.Errorf("%s: the warning does not say HTTP virtuals count the limit: %q", c, out)
		}
	}

	for _, tc := range []struct {
		name, vip  string
		oneConnect bool
	}{
		{"one-connect", "127.238.0.1:30100", true},
		{"no one-connect", "127.238.0.1:30102", false},
		{"goroutine engine", "127.238.0.1:30105", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			release = make(chan struct{})
			rel := sync.OnceFunc(func() { mu.Lock(); close(release); mu.Unlock() })
			mu.Unlock()
			type answer struct {
				got string
				c   net.Conn
			}
			slowDone := make(chan answer, 1)
			go func() {
				got, c := httpFrom(t, "127.238.1.5", tc.vip, "/slow")
				slowDone <- answer{got, c}
			}()
			var first *answer
			defer func() { // a failed test does not leave the first client behind
				rel()
				if first == nil {
					a := <-slowDone
					first = &a
				}
				if first.c != nil {
					first.c.Close()
				}
			}()
			if cur := waitCur(p, "127.238.0.100", 1); cur != 1 {
				t.Fatalf("the first request's server connection: %d holding the address, want 1", cur)
			}
			if got, c := httpFrom(t, "127.238.1.6", tc.vip, "/"); got != "" {
				c.Close()
				t.Errorf("second client while the first's request holds the address: the member saw %q, want it refused", got)
			}
			rel()
			a := <-slowDone
			first = &a
			if a.got != "127.238.0.100" {
				t.Errorf("first client: the member saw %q, want 127.238.0.100", a.got)
			}
			if tc.oneConnect {
				// The first's server connection rests in the pool,
				// holding the address: another path is refused.
				if got, c := dialFrom(t, "127.238.1.7", 0, "127.238.0.1:30104"); got != "" {
					c.Close()
					t.Errorf("standard virtual while the pooled connection holds the address: the member saw %q, want a reset", got)
				}
			}
			if a.c != nil {
				a.c.Close()
			}
			// The pool's idle timeout (one-connect) or the client's close
			// ends the server connection and gives the address back.
			if cur := waitCur(p, "127.238.0.100", 0); cur != 0 {
				t.Fatalf("after the server connection closed: %d holding the address, want 0", cur)
			}
			got, c := httpFrom(t, "127.238.1.6", tc.vip, "/")
			if got != "127.238.0.100" {
				t.Errorf("second client after the address came back: the member saw %q, want 127.238.0.100", got)
			}
			if c != nil {
				c.Close()
			}
			waitCur(p, "127.238.0.100", 0)
		})
	}
}

// lineMember answers each line it reads on a connection with the
// source address the connection came from.
func lineMember(t *testing.T, addr string) {
	t.Helper()
	serveEach(t, addr, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(30 * time.Second))
		from := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap().String()
		r := bufio.NewScanner(c)
		for r.Scan() {
			fmt.Fprintf(c, "%s\n", from)
		}
	})
}

// lineFrom sends one line to vip from the address from and returns the
// answer ("" when none came) and the connection, left open (nil on
// failure).
func lineFrom(t *testing.T, from, vip string) (string, net.Conn) {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(from), 0))}
	c, err := d.Dial("tcp", vip)
	if err != nil {
		return "", nil
	}
	c.SetDeadline(time.Now().Add(3 * time.Second))
	fmt.Fprint(c, "hello\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		c.Close()
		return "", nil
	}
	c.SetDeadline(time.Time{})
	return strings.TrimSpace(line), c
}

// TestSNATTranslationLimitMBLB: on an mblb virtual (delimiter framing),
// a client's member connection holds its ltm snat-translation address
// (connection-limit 1): a second client's message finds no server
// connection and is reset, and is carried once the first client has
// closed (its member connection with it).
func TestSNATTranslationLimitMBLB(t *testing.T) {
	e, p := openWithPlane(t, t.TempDir())
	lineMember(t, "127.238.0.21:30111")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool pm members add { 127.238.0.21:30111 }",
		`create ltm profile mblb mb_lines framing delimiter delimiter "\n"`,
		"create ltm virtual v_mblb destination 127.238.0.2:30110 pool pm profiles replace-all-with { tcp { } mb_lines { } }",
		"create ltm snat-translation 127.238.0.101 address 127.238.0.101 connection-limit 1",
		"create ltm snat s_mblb origins add { 127.238.2.0/24 } translation 127.238.0.101",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	const vip = "127.238.0.2:30110"
	got, first := lineFrom(t, "127.238.2.5", vip)
	if got != "127.238.0.101" {
		t.Fatalf("first client: the member saw %q, want 127.238.0.101", got)
	}
	if got, c := lineFrom(t, "127.238.2.6", vip); got != "" {
		c.Close()
		t.Errorf("second client at the limit: the member saw %q, want it refused", got)
	}
	l, _ := p.SNATTranslationLimit(netip.MustParseAddr("127.238.0.101"))
	if l.Cur != 1 || l.Refused == 0 {
		t.Errorf("at the limit: %+v, want 1 current and a refusal", l)
	}
	first.Close()
	if cur := waitCur(p, "127.238.0.101", 0); cur != 0 {
		t.Fatalf("after the first client closed: %d holding the address, want 0", cur)
	}
	got, c := lineFrom(t, "127.238.2.6", vip)
	if got != "127.238.0.101" {
		t.Errorf("second client after the first closed: the member saw %q, want 127.238.0.101", got)
	}
	if c != nil {
		c.Close()
	}
}

// TestSNATTranslationLimitHTTP2Members: on an HTTP virtual whose member
// connections are HTTP/2 (an http2 profile on the server side, one
// stream per connection), a member connection holds its ltm
// snat-translation address (connection-limit 1) for as long as it
// lasts, not per request: while a first request holds the only stream,
// a second needs another connection, which a full address cannot give
// (the client is reset); once the connection's idle timeout closes it,
// the address is back and the second client is served.
func TestSNATTranslationLimitHTTP2Members(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	release := make(chan struct{})
	rel := sync.OnceFunc(func() { close(release) })
	defer rel()
	ln, err := net.Listen("tcp", "127.238.0.31:30121")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true) // an HTTP/2 member in cleartext (prior knowledge)
	srv := &http.Server{Protocols: &protos, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		from, _ := netip.ParseAddrPort(r.RemoteAddr)
		fmt.Fprint(w, from.Addr().Unmap().String())
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p2 members add { 127.238.0.31:30121 }",
		"create ltm profile http2 h2m concurrent-streams-per-connection 1 connection-idle-timeout 1",
		"create ltm virtual v_h2m destination 127.238.0.3:30120 pool p2 profiles replace-all-with { tcp { } http { } httprouter { } h2m { context serverside } }",
		"create ltm snat-translation 127.238.0.102 address 127.238.0.102 connection-limit 1",
		"create ltm snat s_h2 origins add { 127.238.3.0/24 } translation 127.238.0.102",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	const vip = "127.238.0.3:30120"
	type answer struct {
		got string
		c   net.Conn
	}
	slow := make(chan answer, 1)
	go func() {
		got, c := httpFrom(t, "127.238.3.5", vip, "/slow")
		slow <- answer{got, c}
	}()
	if cur := waitCur(p, "127.238.0.102", 1); cur != 1 {
		rel()
		<-slow
		t.Fatalf("the first request's member connection: %d holding the address, want 1", cur)
	}
	if got, c := httpFrom(t, "127.238.3.6", vip, "/"); got != "" {
		c.Close()
		t.Errorf("second client while the only stream is taken: the member saw %q, want it refused", got)
	}
	rel()
	a := <-slow
	if a.c != nil {
		a.c.Close()
	}
	if a.got != "127.238.0.102" {
		t.Errorf("first client: the member saw %q, want 127.238.0.102", a.got)
	}
	if cur := waitCur(p, "127.238.0.102", 0); cur != 0 {
		t.Fatalf("after the member connection's idle timeout: %d holding the address, want 0", cur)
	}
	got, c := httpFrom(t, "127.238.3.6", vip, "/")
	if got != "127.238.0.102" {
		t.Errorf("second client after the address came back: the member saw %q, want 127.238.0.102", got)
	}
	if c != nil {
		c.Close()
	}
}
