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

// statOf is the value of the first line of a statistics block starting
// with label (a name and a right-aligned value); "" when none.
func statOf(out, label string) string {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, label); ok && strings.HasPrefix(rest, " ") {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return f[len(f)-1]
			}
		}
	}
	return ""
}

// waitStats runs show until every label has its value (counting is done
// by the flows, after the client saw its answer), at most 3 s.
func waitStats(t *testing.T, s *Session, cmd string, want map[string]string) string {
	t.Helper()
	var out string
	for i := 0; i < 60; i++ {
		out, _ = run(t, s, cmd)
		ok := true
		for k, v := range want {
			if statOf(out, k) != v {
				ok = false
			}
		}
		if ok {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
	for k, v := range want {
		if got := statOf(out, k); got != v {
			t.Errorf("%s: %s = %q, want %q", cmd, k, got, v)
		}
	}
	t.Logf("%s:\n%s", cmd, out)
	return out
}

// statusBackend answers /ok with 200, /missing with 404 and anything else
// with 503.
func statusBackend(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, "ok")
		case "/missing":
			http.NotFound(w, r)
		default:
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// rawHTTP sends one request on its own connection and returns the
// status line.
func rawHTTP(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, req)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestProfileStatsFromTraffic drives HTTP requests, TLS 1.2 and 1.3
// clients, a failed handshake and UDP datagrams through virtuals and
// checks show ltm profile http|tcp|client-ssl|server-ssl|udp and their
// reset-stats.
func TestProfileStatsFromTraffic(t *testing.T) {
	labelServer(t, "127.45.0.11:9000", "S1 Response")
	statusBackend(t, "127.45.0.12:8080")
	tlsMember(t, "127.45.0.13:8443")
	udpEcho(t, "127.45.0.14:5353")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm profile tcp mytcp defaults-from tcp",
		"create ltm profile http myhttp defaults-from http",
		"create ltm profile client-ssl mycssl defaults-from clientssl",
		"create ltm profile server-ssl myssl defaults-from serverssl",
		"create ltm profile udp myudp defaults-from udp",
		"create ltm pool p members add { 127.45.0.11:9000 }",
		"create ltm pool hp members add { 127.45.0.12:8080 }",
		"create ltm pool tp members add { 127.45.0.13:8443 }",
		"create ltm pool up members add { 127.45.0.14:5353 }",
		"create ltm virtual vt destination 127.45.0.1:9000 pool p profiles replace-all-with { mytcp }",
		"create ltm virtual vh destination 127.45.0.2:80 pool hp profiles replace-all-with { tcp myhttp } persist replace-all-with { cookie }",
		"create ltm virtual vs destination 127.45.0.3:443 pool tp profiles replace-all-with { tcp mycssl myssl }",
		"create ltm virtual vu destination 127.45.0.4:53 ip-protocol udp pool up profiles replace-all-with { myudp }",
	)

	// tcp: three connections, all closed.
	for i := 0; i < 3; i++ {
		if got := askVS(t, "127.45.0.1:9000", "hello"); got != "S1 Response" {
			t.Fatalf("through vt: %q", got)
		}
	}
	waitStats(t, s, "show ltm profile tcp mytcp", map[string]string{"Accepts": "3", "Current Open": "0", "Closed": "3"})

	// http: GET 200, GET 404, POST 503, HEAD 200 over HTTP/1.1, one GET
	// over HTTP/1.0.
	for _, tc := range []struct{ req, status string }{
		{"GET /ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 OK"},
		{"GET /missing HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", "HTTP/1.1 404 Not Found"},
		{"POST /fail HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi", "HTTP/1.1 503 Service Unavailable"},
		{"HEAD /ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 OK"},
		{"GET /ok HTTP/1.0\r\nHost: a\r\n\r\n", "HTTP/1.0 200 OK"},
	} {
		if got := rawHTTP(t, "127.45.0.2:80", tc.req); got != tc.status {
			t.Fatalf("%q: %q, want %q", tc.req, got, tc.status)
		}
	}
	// Three requests on one keep-alive connection.
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr, Timeout: 3 * time.Second}
	for i := 0; i < 3; i++ {
		r, err := hc.Get("http://127.45.0.2/ok")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	tr.CloseIdleConnections()
	// Three pipelined requests in one write: the second and the third
	// come while the first is unanswered (the third may find the first
	// answered on a very slow machine, hence 1 or 2 below).
	pc, err := net.DialTimeout("tcp", "127.45.0.2:80", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pc.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(pc, strings.Repeat("GET /ok HTTP/1.1\r\nHost: a\r\n\r\n", 2)+"GET /ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	all, _ := io.ReadAll(pc)
	pc.Close()
	if n := strings.Count(string(all), "HTTP/1.1 200 OK"); n != 3 {
		t.Fatalf("pipelined: %d answers:\n%s", n, all)
	}
	// Every response got the persistence cookie: no request carried one.
	out := waitStats(t, s, "show ltm profile http myhttp", map[string]string{"Total": "11", "GET": "9", "POST": "1", "HEAD": "1",
		"Version 1.0 Requests": "1", "Version 1.1 Requests": "10", "Connection: close": "5", "2xx": "9", "4xx": "1", "5xx": "1",
		"Max Requests per Connection": "3", "Cookie Persistence Inserts": "11"})
	if !strings.Contains(out, "Pipelined Requests            2") && !strings.Contains(out, "Pipelined Requests            1") {
		t.Errorf("pipelined requests:\n%s", out)
	}

	// client-ssl: a TLS 1.2 and a TLS 1.3 client, and plaintext on the
	// TLS port (a failed handshake); server-ssl: the two re-encrypted.
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		got, cs, err := tlsLine("127.45.0.3:443", &tls.Config{InsecureSkipVerify: true, MinVersion: v, MaxVersion: v})
		if err != nil || got != "TLS member" || cs.Version != v {
			t.Fatalf("TLS %x through vs: %q %v", v, got, err)
		}
	}
	rawHTTP(t, "127.45.0.3:443", "GET / HTTP/1.0\r\n\r\n")
	if _, _, err := tlsLine("127.45.0.3:443", &tls.Config{ServerName: "app.example"}); err == nil {
		t.Fatal("a client that does not trust default.crt got through")
	}
	out = waitStats(t, s, "show ltm profile client-ssl mycssl", map[string]string{"TLS Protocol Version 1.2": "1", "TLS Protocol Version 1.3": "1",
		"Total Native Connections": "2", "Full Handshakes": "2", "Handshake Failures": "2", "Fatal Alerts Received": "1", "TLS Protocol Version 1.0": "0"})
	if !strings.Contains(out, "Ltm::ClientSSL Profile: mycssl") || !strings.Contains(out, "TLS_AES_128_GCM_SHA256") {
		t.Errorf("client-ssl block:\n%s", out)
	}
	waitStats(t, s, "show ltm profile server-ssl myssl", map[string]string{"Total Native Connections": "2", "Handshake Failures": "0"})

	// udp: one flow of three datagrams each way.
	c, err := net.Dial("udp", "127.45.0.4:53")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 64)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(c, "q%d", i)
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != fmt.Sprintf("q%d", i) {
			t.Fatalf("udp echo %d: %q %v", i, buf[:n], err)
		}
	}
	waitStats(t, s, "show ltm profile udp myudp", map[string]string{"Accepts": "1", "Current Open": "1", "Received": "3", "Transmitted": "3", "Dropped": "0"})

	// All of a kind without a name: the built-in profiles too, each its
	// own block; unused ones show zeros.
	out, _ = run(t, s, "show ltm profile http")
	if !strings.Contains(out, "Ltm::HTTP Profile: http\n") || !strings.Contains(out, "Ltm::HTTP Profile: myhttp\n") {
		t.Errorf("show ltm profile http (all):\n%s", out)
	}
	if _, err := run(t, s, "show ltm profile http nosuch"); !strings.Contains(err, "was not found") {
		t.Errorf("a profile that does not exist: %q", err)
	}

	// reset-stats of one profile zeroes it and nothing else.
	mustRun(t, s, "reset-stats ltm profile http myhttp", "reset-stats ltm profile client-ssl", "reset-stats ltm profile udp myudp")
	waitStats(t, s, "show ltm profile http myhttp", map[string]string{"Total": "0", "2xx": "0", "5xx": "0", "Max Requests per Connection": "0", "Pipelined Requests": "0", "Cookie Persistence Inserts": "0"})
	waitStats(t, s, "show ltm profile client-ssl mycssl", map[string]string{"Full Handshakes": "0", "Handshake Failures": "0", "TLS Protocol Version 1.2": "0"})
	waitStats(t, s, "show ltm profile udp myudp", map[string]string{"Accepts": "0", "Current Open": "1", "Maximum Open": "1", "Received": "0"})
	waitStats(t, s, "show ltm profile server-ssl myssl", map[string]string{"Total Native Connections": "2"})
	waitStats(t, s, "show ltm profile tcp mytcp", map[string]string{"Accepts": "3"})
	// The names and the kinds complete as for any show.
	for _, tc := range []struct{ line, want string }{
		{"show ltm profile client-ssl my", "mycssl"},
		{"reset-stats ltm profile ud", "udp"},
	} {
		found := false
		for _, sg := range s.Complete(tc.line) {
			found = found || sg.Text == tc.want
		}
		if !found {
			t.Errorf("Complete(%q) does not offer %q", tc.line, tc.want)
		}
	}
	if out, _ := run(t, s, "show ltm virtual vh"); !strings.Contains(out, "Total Connections") || statOf(out, "  Total Connections") == "0" {
		t.Errorf("the virtual's counters survive the profile's reset:\n%s", out)
	}
}

// tlsMember answers every line with "TLS member" over TLS (the engine's
// own certificate is not needed: the server-ssl profile ignores it).
func tlsMember(t *testing.T, addr string) {
	t.Helper()
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "member", "member.example", false)
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	serveLabel(ln, "TLS member")
}

// udpEcho sends every datagram back.
func udpEcho(t *testing.T, addr string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:n], from)
		}
	}()
}

// TestClientSSLStatsFollowSNI: a virtual with two client-ssl profiles
// counts each handshake at the profile the client's server name chose,
// and a profile's reset leaves the other's counts.
func TestClientSSLStatsFollowSNI(t *testing.T) {
	tlsMember(t, "127.45.1.11:8443")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm profile client-ssl sni_def defaults-from clientssl sni-default true",
		"create ltm profile client-ssl sni_b defaults-from clientssl server-name b.example",
		"create ltm pool tp members add { 127.45.1.11:8443 }",
		"create ltm virtual v2 destination 127.45.1.1:443 pool tp profiles replace-all-with { tcp sni_def sni_b serverssl }",
	)
	for _, sni := range []string{"b.example", "b.example", "other.example", ""} {
		if got, _, err := tlsLine("127.45.1.1:443", &tls.Config{InsecureSkipVerify: true, ServerName: sni}); err != nil || got != "TLS member" {
			t.Fatalf("SNI %q: %q %v", sni, got, err)
		}
	}
	waitStats(t, s, "show ltm profile client-ssl sni_b", map[string]string{"Full Handshakes": "2"})
	waitStats(t, s, "show ltm profile client-ssl sni_def", map[string]string{"Full Handshakes": "2"})
	mustRun(t, s, "reset-stats ltm profile client-ssl sni_b")
	waitStats(t, s, "show ltm profile client-ssl sni_b", map[string]string{"Full Handshakes": "0"})
	waitStats(t, s, "show ltm profile client-ssl sni_def", map[string]string{"Full Handshakes": "2"})
	// A commit keeps the counts (the virtual's runtime is kept).
	mustRun(t, s, "modify ltm virtual v2 description kept")
	waitStats(t, s, "show ltm profile client-ssl sni_def", map[string]string{"Full Handshakes": "2"})
}
