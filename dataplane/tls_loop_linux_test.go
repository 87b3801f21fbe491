//go:build linux

package dataplane

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// loopsBusy reports whether the event loops serve any client: a TLS flow
// of a client-ssl standard virtual is theirs once handshaken.
func loopsBusy(p *Plane) bool {
	for _, n := range p.l4.LoopLoads() {
		if n > 0 {
			return true
		}
	}
	return false
}

// TestTLSLoopBulk pushes several MiB each way through a client-ssl
// standard virtual (its flows run on the event loops) while each reader
// stalls, so that records wait for the client's socket and plaintext for
// the member's; close_notify then ends the client's direction and the
// member's FIN comes back as close_notify and FIN. TLS 1.2 and 1.3.
func TestTLSLoopBulk(t *testing.T) {
	const size = 3<<20 + 77
	payload, want := bulkPayload(size)
	cert, key, roots := testCert(t, "app.example")
	for i, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(vers), func(t *testing.T) {
			member := []string{"127.41.1.2:9000", "127.41.2.2:9000"}[i]
			vsAddr := []string{"127.41.1.1:443", "127.41.2.1:443"}[i]
			got := bulkMember(t, member, payload)
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vsAddr,
				&tls.Config{ServerName: "app.example", RootCAs: roots, MinVersion: vers, MaxVersion: vers})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			eventually(t, "the flow on a loop", func() bool { return loopsBusy(p) })
			go func() { c.Write(payload); c.CloseWrite() }()
			time.Sleep(200 * time.Millisecond) // let the download back up
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			down, err := io.ReadAll(c) // ends at close_notify
			if err != nil || !bytes.Equal(down, payload) {
				t.Fatalf("download: %d bytes (want %d), equal %v, %v", len(down), size, bytes.Equal(down, payload), err)
			}
			select {
			case sum := <-got:
				if sum != want {
					t.Fatal("upload corrupted")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("upload did not finish")
			}
			eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
			eventually(t, "loops idle", func() bool { return !loopsBusy(p) })
			eventually(t, "plaintext counted", func() bool {
				v, _ := p.Virtual("/Common/vs")
				return v.ClientSide.BitsOut == size*8 && v.ClientSide.BitsIn == size*8
			})
		})
	}
}

// TestTLSLoopDelete: delete sys connection ends a client-ssl flow during
// its handshake (a client that never sends its hello) and once it runs
// on its loop.
func TestTLSLoopDelete(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.41.3.2:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.41.3.1:443", "127.41.3.2:9000")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)

	raw := dialVS(t, "127.41.3.1:443") // no handshake
	eventually(t, "the handshaking flow listed", func() bool { return p.ConnectionCount() == 1 })
	if n := p.DeleteConnections(ConnFilter{}); n != 1 {
		t.Fatalf("deleted %d flows, want 1", n)
	}
	raw.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := raw.c.Read(make([]byte, 64)); err == nil || isTimeout(err) {
		t.Fatalf("a deleted handshaking flow: read %v, want its end", err)
	}
	eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })

	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.41.3.1:443", &tls.Config{ServerName: "app.example", RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	io.WriteString(c, "hello\n")
	if line, err := r.ReadString('\n'); err != nil || line != "S1 Response\n" {
		t.Fatalf("answer: %q %v", line, err)
	}
	eventually(t, "one flow", func() bool { return p.ConnectionCount() == 1 })
	if n := p.DeleteConnections(ConnFilter{}); n != 1 {
		t.Fatalf("deleted %d flows, want 1", n)
	}
	if _, err := r.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("a deleted flow: read %v, want its end", err)
	}
	eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
	eventually(t, "loops idle", func() bool { return !loopsBusy(p) })
}

// TestTLSLoopOpenSSL: openssl s_client through a client-ssl standard
// virtual, with a TLS 1.3 key update (s_client's K command asks for one
// back) between two lines, each answered by the member.
func TestTLSLoopOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	cert, key, _ := testCert(t, "app.example")
	startServer(t, "127.41.4.2:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.41.4.1:443", "127.41.4.2:9000")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)

	cmd := exec.Command("openssl", "s_client", "-connect", "127.41.4.1:443", "-servername", "app.example", "-tls1_3")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, pw := io.Pipe() // s_client says KEYUPDATE on stderr
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); pw.Close() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// await reads s_client's output until a line containing s.
	await := func(s string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("s_client ended before %q", s)
				}
				if strings.Contains(l, s) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q from s_client", s)
			}
		}
	}
	io.WriteString(stdin, "first\n")
	await("S1 Response")
	io.WriteString(stdin, "K\n") // a command is one read of stdin by itself
	await("KEYUPDATE")
	io.WriteString(stdin, "second\n")
	await("S1 Response")
}

// dialTLSHTTP is a TLS client connection to an HTTP virtual.
func dialTLSHTTP(t *testing.T, vs string, roots *x509.CertPool) *httpRuleClient {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs, &tls.Config{ServerName: "www.example", RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &httpRuleClient{c: c, br: bufio.NewReader(c)}
}

// startBigMember answers /big/N with N bytes of a pattern, and anything
// else with a line naming the path.
func startBigMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/big/")); err == nil {
			w.Header().Set("Content-Length", strconv.Itoa(n))
			w.Write(bigBody(n))
			return
		}
		fmt.Fprintf(w, "BIG %s", r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

func bigBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// TestTLSLoopHTTP: an HTTP virtual with client-ssl (and no rules) serves
// its TLS clients on the event loops, with and without OneConnect:
// keep-alive requests, large responses the client reads late (records
// waiting for its socket, also when the response ends with the
// connection), pipelined requests, and Upgrade and CONNECT tunnels that
// take the TLS session off the loop.
func TestTLSLoopHTTP(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startBigMember(t, "127.41.5.2:80")
	startL7Member(t, "127.41.5.3:80", "M1")
	upgrade := "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
	for i, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			vsBig, vsL7 := fmt.Sprintf("127.41.5.%d:443", 10+i), fmt.Sprintf("127.41.5.%d:443", 20+i)
			p, lg := newPlane(t)
			cfg := l7Config(t, vsBig, oc, mblb.HTTPOptions{}, "", "127.41.5.2:80")
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)

			c := dialTLSHTTP(t, vsBig, roots)
			for _, n := range []int{10, 3 << 20, 100} { // keep-alive, one TLS connection
				r, body, err := c.do(httpReq("www.example", fmt.Sprintf("/big/%d", n)))
				if err != nil || r.StatusCode != 200 || body != string(bigBody(n)) {
					t.Fatalf("/big/%d: %v, %d bytes, %v (log %s)", n, r, len(body), err, lg)
				}
			}
			if !loopsBusy(p) {
				t.Fatal("the TLS client is not on an event loop")
			}
			// Pipelined: three requests in one write, answered in order.
			io.WriteString(c.c, httpReq("www.example", "/1")+httpReq("www.example", "/2")+httpReq("www.example", "/3"))
			for _, want := range []string{"BIG /1", "BIG /2", "BIG /3"} {
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(r.Body)
				if string(b) != want {
					t.Fatalf("pipelined: %q, want %q", b, want)
				}
			}
			// A large answer that ends the connection, read late: its last
			// records go after the session closed.
			io.WriteString(c.c, httpReq("www.example", "/big/4194304", "Connection: close\r\n"))
			time.Sleep(200 * time.Millisecond)
			c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			r, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r.Body)
			if err != nil || !bytes.Equal(b, bigBody(4<<20)) {
				t.Fatalf("closing answer: %d bytes, %v", len(b), err)
			}
			if rest, err := io.ReadAll(c.br); err != nil || len(rest) != 0 {
				t.Fatalf("after the closing answer: %q %v (want close_notify)", rest, err)
			}
			eventually(t, "no client flow", func() bool { c, _ := countFlows(p); return c == 0 })
			eventually(t, "loops idle", func() bool { return !loopsBusy(p) })

			// Tunnels leave the loop with the TLS session.
			cfg = l7Config(t, vsL7, oc, mblb.HTTPOptions{}, "", "127.41.5.3:80")
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)
			for _, open := range []struct{ name, req, first string }{
				{"upgrade", upgrade, "HTTP/1.1 101 Switching Protocols"},
				{"connect", "CONNECT db.example:5432 HTTP/1.1\r\nHost: db.example:5432\r\n\r\n", "HTTP/1.1 200 Connection Established"},
			} {
				c := dialTLSHTTP(t, vsL7, roots)
				io.WriteString(c.c, httpReq("h", "/before")+open.req+"ping 1\n")
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatalf("%s: %v (log %s)", open.name, err, lg)
				}
				io.Copy(io.Discard, r.Body)
				if l := readLine(t, c); !strings.HasPrefix(l, open.first) {
					t.Fatalf("%s: first line %q", open.name, l)
				}
				for l := readLine(t, c); l != "\r\n"; l = readLine(t, c) {
				}
				if l := readLine(t, c); l != "ping 1\n" {
					t.Fatalf("%s: echo %q", open.name, l)
				}
				big := strings.Repeat("x", 200<<10) + "\n"
				io.WriteString(c.c, big)
				if l := readLine(t, c); l != big {
					t.Fatalf("%s: %d bytes echoed, want %d", open.name, len(l), len(big))
				}
				c.c.(*tls.Conn).CloseWrite()
				c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if rest, err := io.ReadAll(c.br); err != nil || len(rest) != 0 {
					t.Fatalf("%s: after the client's close: %q %v", open.name, rest, err)
				}
			}
			eventually(t, "no client flow", func() bool { c, _ := countFlows(p); return c == 0 })
		})
	}
}

// TestTLSLoopHTTPCurl: curl's keep-alive requests over one TLS connection
// to an HTTP virtual whose TLS clients run on the event loops.
func TestTLSLoopHTTPCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	cert, key, _ := testCert(t, "www.example")
	startBigMember(t, "127.41.6.2:80")
	p, _ := newPlane(t)
	cfg := l7Config(t, "127.41.6.1:443", false, mblb.HTTPOptions{}, "", "127.41.6.2:80")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)
	out, err := exec.Command("curl", "-sk", "--max-time", "10", "--resolve", "www.example:443:127.41.6.1",
		"https://www.example/a", "https://www.example/big/100000", "https://www.example/b",
		"-w", " %{num_connects}\n").CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v %s", err, out)
	}
	want := "BIG /a 1\n" + string(bigBody(100000)) + " 0\nBIG /b 0\n"
	if string(out) != want {
		t.Fatalf("curl said %.200q, want %.200q", out, want)
	}
}
