package daemon

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clientDialer dials from the tests' own loopback addresses.
var clientDialer = &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 13, 20, 100)}}

// slowHandshakes opens n connections to addr that send the first bytes
// of a TLS record and never the rest: handshakes in progress until the
// profile's handshake-timeout. Those past a bound are reset once the
// proxy accepted them, which may be before the dial returned; any other
// dial error is the test's failure, not a place taken.
func slowHandshakes(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := clientDialer.Dial("tcp", addr)
		if errors.Is(err, syscall.ECONNRESET) {
			continue // past the bound, reset at once
		}
		if err != nil {
			for _, c := range cs {
				c.Close()
			}
			t.Fatalf("slow handshake %d of %d: %v", len(cs)+1, n, err)
		}
		c.Write([]byte{0x16, 0x03, 0x01}) // a handshake record's header, cut
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	return cs
}

// tlsAnswer is what a TLS client gets from addr: the first line (or
// HTTP status line) of the answer, or the error.
func tlsAnswer(addr string, httpReq bool) (string, error) {
	c, err := tls.DialWithDialer(clientDialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return "", err
	}
	return firstAnswer(c, httpReq)
}

// firstAnswer sends a line (or an HTTP request) on c and returns the
// answer's first line, closing c.
func firstAnswer(c net.Conn, httpReq bool) (string, error) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	msg := "hello\n"
	if httpReq {
		msg = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	}
	if _, err := io.WriteString(c, msg); err != nil {
		return "", err
	}
	b := make([]byte, 64)
	n, err := io.ReadAtLeast(c, b, 2)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	return strings.TrimSpace(line), err
}

// TestClientSSLMaxActiveHandshakes: with max-active-handshakes 2, two
// clients that never finish their handshakes leave no place: a third
// client is reset, on every kind of virtual (standard on the event
// loops, standard with a TLS rule on goroutines, HTTP); once they went,
// clients are served again. Indefinite (the default) lets every client
// in.
func TestClientSSLMaxActiveHandshakes(t *testing.T) {
	s := tlsMembersFixture(t, "127.13.20")
	mustRun(t, s,
		"create ltm profile client-ssl few cert-key-chain replace-all-with { app { cert app.crt key app.key } } max-active-handshakes 2",
		"create ltm profile client-ssl many cert-key-chain replace-all-with { app { cert app.crt key app.key } }",
		"create ltm pool p members add { 127.13.20.11:9000 }",
		"create ltm pool web members add { 127.13.20.12:8080 }",
		"create ltm rule tlsrule { when CLIENTSSL_HANDSHAKE { set x 1 } }",
		"create ltm virtual loop_vs destination 127.13.20.1:443 pool p profiles replace-all-with { tcp few }",
		"create ltm virtual rule_vs destination 127.13.20.2:443 pool p rules { tlsrule } profiles replace-all-with { tcp few }",
		"create ltm virtual http_vs destination 127.13.20.3:443 pool web profiles replace-all-with { tcp http few }",
		"create ltm virtual many_vs destination 127.13.20.4:443 pool p profiles replace-all-with { tcp many }",
	)
	if out, _ := run(t, s, "list ltm profile client-ssl few max-active-handshakes"); !strings.Contains(out, "max-active-handshakes 2") {
		t.Fatalf("list:\n%s", out)
	}
	for _, tc := range []struct {
		name, addr, want string
		http, limited    bool
	}{
		{name: "standard, event loops", addr: "127.13.20.1:443", want: "S1", limited: true},
		{name: "standard, TLS rule", addr: "127.13.20.2:443", want: "S1", limited: true},
		{name: "http", addr: "127.13.20.3:443", want: "HTTP/1.1 200 OK", http: true, limited: true},
		{name: "indefinite", addr: "127.13.20.4:443", want: "S1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := tlsAnswer(tc.addr, tc.http); err != nil || got != tc.want {
				t.Fatalf("before: %q %v", got, err)
			}
			slow := slowHandshakes(t, tc.addr, 4)
			// The slow handshakes take their places as they are
			// accepted: a client is reset once they all did (or is
			// served, without a bound). Under load the proxy may
			// take a while to accept them; the wait stays well under
			// the profile's handshake-timeout (10s), which frees them.
			var err error
			var got string
			deadline := time.Now().Add(5 * time.Second)
			for i := 0; i < 250 && time.Now().Before(deadline); i++ {
				if got, err = tlsAnswer(tc.addr, tc.http); err != nil {
					break
				}
				if !tc.limited && i == 4 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if !tc.limited {
				if err != nil || got != tc.want {
					t.Fatalf("without a bound, with 4 slow handshakes: %q %v", got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("a client was served with 4 slow handshakes in progress and max-active-handshakes 2")
			}
			var ne net.Error
			if !errors.As(err, &ne) && !strings.Contains(err.Error(), "reset") && !errors.Is(err, io.EOF) {
				t.Fatalf("refused client: %v, want a reset", err)
			}
			for _, c := range slow {
				c.Close()
			}
			for i := 0; i < 100; i++ {
				if got, err = tlsAnswer(tc.addr, tc.http); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil || got != tc.want {
				t.Fatalf("after the slow handshakes went: %q %v", got, err)
			}
		})
	}
}

// stallingMember is a TLS member whose listener hands the first
// connection it accepts to hold once its hello began (never answering
// it) and serves
// the others as tlsLabelMember does, for HTTP too.
func stallingMember(t *testing.T, addr, crt, key, label string, held chan<- net.Conn) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		first := true
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if first {
				// Held once its hello came: the proxy's handshake (and
				// the place it takes) is then in progress.
				first = false
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				c.Read(make([]byte, 1))
				c.SetReadDeadline(time.Time{})
				held <- c
				continue
			}
			go func() {
				tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{pair}})
				defer tc.Close()
				tc.SetDeadline(time.Now().Add(5 * time.Second))
				b := make([]byte, 512)
				n, err := tc.Read(b)
				if err != nil {
					return
				}
				if strings.HasPrefix(string(b[:n]), "GET ") {
					io.WriteString(tc, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"+label[:2]+"\n")
					return
				}
				io.WriteString(tc, label+"\n")
			}()
		}
	}()
}

// plainAnswer is tlsAnswer without TLS on the client's side.
func plainAnswer(addr string, httpReq bool) (string, error) {
	c, err := clientDialer.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	return firstAnswer(c, httpReq)
}

// TestServerSSLMaxActiveHandshakes: with max-active-handshakes 1 on the
// server-ssl profile, a member handshake that does not finish leaves no
// place: the next client's member handshake is not tried and the client
// is reset; once the stalled one failed, clients are served again.
func TestServerSSLMaxActiveHandshakes(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "member", "member.example", false)
	heldStd, heldHTTP := make(chan net.Conn, 1), make(chan net.Conn, 1)
	stallingMember(t, "127.13.21.11:4433", crt, key, "M1", heldStd)
	stallingMember(t, "127.13.21.12:4433", crt, key, "M1", heldHTTP)
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm profile server-ssl one max-active-handshakes 1 handshake-timeout 20",
		"create ltm pool p members add { 127.13.21.11:4433 }",
		"create ltm pool web members add { 127.13.21.12:4433 }",
		"create ltm virtual std_vs destination 127.13.21.1:80 pool p profiles replace-all-with { tcp one }",
		"create ltm virtual http_vs destination 127.13.21.2:80 pool web profiles replace-all-with { tcp http one }",
	)
	for _, tc := range []struct {
		name, addr, want string
		http             bool
		held             chan net.Conn
	}{
		{name: "standard", addr: "127.13.21.1:80", want: "M1", held: heldStd},
		{name: "http", addr: "127.13.21.2:80", want: "HTTP/1.1 200 OK", http: true, held: heldHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stalled := make(chan error, 1)
			go func() { _, err := plainAnswer(tc.addr, tc.http); stalled <- err }()
			var member net.Conn
			select {
			case member = <-tc.held:
			case <-time.After(5 * time.Second):
				t.Fatal("the first client's member connection did not come within 5s")
			}
			if got, err := plainAnswer(tc.addr, tc.http); err == nil {
				t.Fatalf("served (%q) while the one member handshake allowed was in progress", got)
			}
			member.Close() // the stalled handshake fails; its place is free
			<-stalled
			if got, err := plainAnswer(tc.addr, tc.http); err != nil || got != tc.want {
				t.Fatalf("after the stalled handshake ended: %q %v", got, err)
			}
		})
	}
}
