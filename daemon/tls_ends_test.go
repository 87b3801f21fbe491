package daemon

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// endsDialer dials from this test's own loopback address.
var endsDialer = &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 13, 24, 100)}}

// askEnding is one TLS client of addr with cache: it sends a line (or an HTTP
// request), reads the answer, and ends with close_notify (clean) or a
// bare FIN. It returns whether the session was resumed.
func askEnding(t *testing.T, addr string, cache tls.ClientSessionCache, httpReq, clean bool) bool {
	t.Helper()
	rc, err := endsDialer.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rc.SetDeadline(time.Now().Add(3 * time.Second))
	c := tls.Client(rc, &tls.Config{InsecureSkipVerify: true, ServerName: "app.example", ClientSessionCache: cache})
	if httpReq {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	} else {
		io.WriteString(c, "hello\n")
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	resumed := c.ConnectionState().DidResume
	if clean {
		c.CloseWrite()
	}
	rc.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, rc) // until the virtual closes too
	return resumed
}

// TestClientSSLUncleanShutdown: with unclean-shutdown disabled, a client
// that ends with close_notify resumes its session, one that sends a bare
// FIN is counted under Premature Disconnects and its session is not
// resumed, on standard virtuals on the event loops and on goroutines (a
// TLS rule) and on HTTP virtuals; strict-resume does the same; the
// defaults resume whatever the end.
// tlsMembersFixture is an engine with a plane whose store holds app.crt
// and app.key (app.example), a line server S1 on PREFIX.11:9000 and an
// HTTP member answering W1 on PREFIX.12:8080, for the client-ssl tests.
func tlsMembersFixture(t *testing.T, prefix string) *Session {
	t.Helper()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "app", "app.example", false)
	labelServer(t, prefix+".11:9000", "S1")
	ln, err := net.Listen("tcp", prefix+".12:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "W1\n") })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"install sys crypto cert app.crt from-local-file "+crt,
		"install sys crypto key app.key from-local-file "+key,
	)
	return s
}

func TestClientSSLUncleanShutdown(t *testing.T) {
	s := tlsMembersFixture(t, "127.13.24")
	ckc := "cert-key-chain replace-all-with { app { cert app.crt key app.key } } session-ticket enabled"
	mustRun(t, s,
		"create ltm profile client-ssl clean "+ckc+" unclean-shutdown disabled",
		"create ltm profile client-ssl strict "+ckc+" strict-resume enabled",
		"create ltm profile client-ssl lax "+ckc,
		"create ltm pool p members add { 127.13.24.11:9000 }",
		"create ltm pool web members add { 127.13.24.12:8080 }",
		"create ltm rule tlsrule { when CLIENTSSL_HANDSHAKE { set x 1 } }",
		"create ltm virtual loop_vs destination 127.13.24.1:443 pool p profiles replace-all-with { tcp clean }",
		"create ltm virtual rule_vs destination 127.13.24.2:443 pool p rules { tlsrule } profiles replace-all-with { tcp clean }",
		"create ltm virtual http_vs destination 127.13.24.3:443 pool web profiles replace-all-with { tcp http clean }",
		"create ltm virtual strict_vs destination 127.13.24.4:443 pool p profiles replace-all-with { tcp strict }",
		"create ltm virtual lax_vs destination 127.13.24.5:443 pool p profiles replace-all-with { tcp lax }",
	)
	if out, _ := run(t, s, "list ltm profile client-ssl clean unclean-shutdown"); !strings.Contains(out, "unclean-shutdown disabled") {
		t.Fatalf("list:\n%s", out)
	}
	premature := 0
	for _, tc := range []struct {
		name, addr, profile string
		http, watched       bool
	}{
		{"standard, event loops", "127.13.24.1:443", "clean", false, true},
		{"standard, TLS rule", "127.13.24.2:443", "clean", false, true},
		{"http", "127.13.24.3:443", "clean", true, true},
		{"strict-resume", "127.13.24.4:443", "strict", false, true},
		{"defaults", "127.13.24.5:443", "lax", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := tls.NewLRUClientSessionCache(4)
			if askEnding(t, tc.addr, cache, tc.http, true) {
				t.Fatal("the first connection resumed")
			}
			if !askEnding(t, tc.addr, cache, tc.http, false) {
				t.Fatal("a session ended with close_notify was not resumed")
			}
			if tc.watched {
				premature++
				if tc.profile != "clean" {
					waitStats(t, s, "show ltm profile client-ssl "+tc.profile, map[string]string{"Premature Disconnects": "1"})
				} else {
					waitStats(t, s, "show ltm profile client-ssl clean", map[string]string{"Premature Disconnects": fmt.Sprint(premature)})
				}
			}
			// The virtual read the bare FIN before the counter moved; the
			// session it ended is not resumed now (the defaults resume).
			if got := askEnding(t, tc.addr, cache, tc.http, true); got == tc.watched {
				t.Fatalf("after a bare FIN: resumed %v", got)
			}
			if !askEnding(t, tc.addr, cache, tc.http, true) {
				t.Fatal("the new session was not resumed")
			}
		})
	}
	waitStats(t, s, "show ltm profile client-ssl lax", map[string]string{"Premature Disconnects": "0"})
}

// TestServerSSLUncleanShutdown: a member that ends without close_notify
// loses its session with a server-ssl profile that has unclean-shutdown
// disabled (counted under Premature Disconnects), and keeps it with the
// defaults.
func TestServerSSLUncleanShutdown(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "member", "member.example", false)
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	mln, err := tls.Listen("tcp", "127.13.24.21:9443", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mln.Close() })
	resumed := make(chan bool, 16)
	go func() {
		for {
			c, err := mln.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := c.(*tls.Conn)
				defer tc.NetConn().Close()
				tc.SetDeadline(time.Now().Add(3 * time.Second))
				line, err := bufio.NewReader(tc).ReadString('\n')
				if err != nil {
					return
				}
				resumed <- tc.ConnectionState().DidResume
				io.WriteString(tc, "M1 "+line)
				tc.NetConn().(*net.TCPConn).CloseWrite() // no close_notify
				io.Copy(io.Discard, tc.NetConn())
			}()
		}
	}()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm profile server-ssl mclean session-ticket enabled unclean-shutdown disabled",
		"create ltm profile server-ssl mlax session-ticket enabled",
		"create ltm pool m members add { 127.13.24.21:9443 }",
		"create ltm virtual clean_vs destination 127.13.24.6:80 pool m profiles replace-all-with { tcp mclean }",
		"create ltm virtual lax_vs destination 127.13.24.7:80 pool m profiles replace-all-with { tcp mlax }",
	)
	for _, tc := range []struct {
		name, addr, profile string
		watched             bool
	}{
		{"unclean-shutdown disabled", "127.13.24.6:80", "mclean", true},
		{"defaults", "127.13.24.7:80", "mlax", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []bool
			for i := range 3 {
				c, err := endsDialer.Dial("tcp", tc.addr)
				if err != nil {
					t.Fatal(err)
				}
				c.SetDeadline(time.Now().Add(3 * time.Second))
				io.WriteString(c, "hello\n")
				r := bufio.NewReader(c)
				line, err := r.ReadString('\n')
				io.Copy(io.Discard, r) // the member's end comes through first
				c.Close()
				if err != nil || line != "M1 hello\n" {
					t.Fatalf("connection %d: %q %v", i, line, err)
				}
				got = append(got, <-resumed)
				if tc.watched {
					waitStats(t, s, "show ltm profile server-ssl "+tc.profile, map[string]string{"Premature Disconnects": fmt.Sprint(i + 1)})
				}
			}
			want := []bool{false, !tc.watched, !tc.watched}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("member handshakes resumed %v, want %v", got, want)
			}
		})
	}
}
