package monitor

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// h2Member is an HTTP/2 server on the loopback that answers every stream
// with what it saw, and records the requests.
type h2Member struct {
	addr netip.AddrPort
	mu   sync.Mutex
	seen []string // "PROTO METHOD authority path auth body"
	snis []string
}

func (m *h2Member) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.seen) == 0 {
		return "<none>"
	}
	return m.seen[len(m.seen)-1]
}

func (m *h2Member) lastSNI() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.snis) == 0 {
		return "<none>"
	}
	return m.snis[len(m.snis)-1]
}

func (m *h2Member) handler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.seen = append(m.seen, fmt.Sprintf("%s %s %s %s %s %s", r.Proto, r.Method, r.Host, r.RequestURI, r.Header.Get("Authorization"), b))
	m.mu.Unlock()
	switch r.URL.Path {
	case "/maint":
		w.Header().Set("X-State", "maintenance")
		fmt.Fprint(w, "draining")
	case "/error":
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "sick")
	default:
		w.Header().Set("X-State", "ok")
		fmt.Fprintf(w, "healthy %s", r.Proto)
	}
}

// startH2 serves HTTP/2 on addr: over TLS offering alpn (h2, or
// http/1.1 alone for a member that does not speak HTTP/2; none, a member
// that does not do ALPN), or, with a nil certificate, cleartext with
// prior knowledge (h2c).
func startH2(t *testing.T, addr string, cert *tls.Certificate, alpn ...string) *h2Member {
	t.Helper()
	m := &h2Member{}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m.addr = netip.MustParseAddrPort(ln.Addr().String())
	srv := &http.Server{Handler: http.HandlerFunc(m.handler), ErrorLog: log.New(io.Discard, "", 0),
		ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	var p http.Protocols
	p.SetHTTP1(true)
	if cert == nil {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(slices.Contains(alpn, "h2"))
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: alpn,
			GetConfigForClient: func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
				m.mu.Lock()
				m.snis = append(m.snis, hi.ServerName)
				m.mu.Unlock()
				return nil, nil
			}})
	}
	srv.Protocols = &p
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

func TestProbeHTTP2(t *testing.T) {
	t.Parallel()
	cert := selfSigned(t, "app.example", false)
	tlsM := startH2(t, "127.17.3.1:0", &cert, "h2", "http/1.1")
	h2c := startH2(t, "127.17.3.2:0", nil)
	noALPN := startH2(t, "127.17.3.3:0", &cert)
	h1only := startH2(t, "127.17.3.3:0", &cert, "http/1.1")
	withTLS := &TLS{}
	re := regexp.MustCompile
	send := `GET /health HTTP/1.1\r\nHost: app.example:8443\r\nConnection: close\r\nX-Probe: 1\r\n\r\n`
	send = strings.NewReplacer(`\r`, "\r", `\n`, "\n").Replace(send)
	for _, tc := range []struct {
		name     string
		spec     Spec
		m        *h2Member
		up       bool
		disabled bool
		errSub   string
		seen     string // the member's record of the request, when set
		sni      string
	}{
		{"tls h2, recv matches the body", Spec{Type: HTTP2, Send: send, Recv: re("healthy HTTP/2.0"), TLS: withTLS}, tlsM, true, false, "",
			"HTTP/2.0 GET app.example:8443 /health  ", "app.example"},
		{"tls h2, recv matches the status line", Spec{Type: HTTP2, Send: send, Recv: re(`^HTTP/2\.0 200 OK`), TLS: withTLS}, tlsM, true, false, "", "", ""},
		{"tls h2, recv matches a header", Spec{Type: HTTP2, Send: send, Recv: re("X-State: ok"), TLS: withTLS}, tlsM, true, false, "", "", ""},
		{"recv mismatch", Spec{Type: HTTP2, Send: send, Recv: re("nope"), TLS: withTLS}, tlsM, false, false, "did not match", "", ""},
		{"status 503 against recv 200", Spec{Type: HTTP2, Send: "GET /error\r\n", Recv: re("200 OK"), TLS: withTLS}, tlsM, false, false, "did not match", "", ""},
		{"no recv: any answer is up", Spec{Type: HTTP2, Send: "GET /error\r\n", TLS: withTLS}, tlsM, true, false, "", "", ""},
		{"recv-disable", Spec{Type: HTTP2, Send: "GET /maint HTTP/1.1\r\n\r\n", Recv: re("healthy"), RecvDisable: re("maintenance"), TLS: withTLS}, tlsM, true, true, "", "", ""},
		{"reverse", Spec{Type: HTTP2, Send: send, Recv: re("healthy"), Reverse: true, TLS: withTLS}, tlsM, false, false, "reverse", "", ""},
		{"no host: the member's address is the authority", Spec{Type: HTTP2, Send: "GET /\r\n", TLS: withTLS}, tlsM, true, false, "",
			"HTTP/2.0 GET " + tlsM.addr.String() + " /  ", ""},
		{"post with a body, basic auth", Spec{Type: HTTP2, Send: "POST /check HTTP/1.1\r\nHost: app.example\r\nContent-Length: 4\r\n\r\nping",
			Username: "mon", Password: "pw", Recv: re("healthy"), TLS: withTLS}, tlsM, true, false, "",
			"HTTP/2.0 POST app.example /check Basic bW9uOnB3 ping", ""},
		{"h2c prior knowledge", Spec{Type: HTTP2, Send: send, Recv: re("healthy HTTP/2.0")}, h2c, true, false, "",
			"HTTP/2.0 GET app.example:8443 /health  ", ""},
		{"member without ALPN", Spec{Type: HTTP2, Send: send, Recv: re("healthy"), TLS: withTLS}, noALPN, false, false, "did not choose HTTP/2", "", ""},
		{"member offering only http/1.1", Spec{Type: HTTP2, Send: send, Recv: re("healthy"), TLS: withTLS}, h1only, false, false, "no application protocol", "", ""},
		{"tls toward an h2c member", Spec{Type: HTTP2, Send: send, TLS: withTLS}, h2c, false, false, "SSL handshake failed", "", ""},
		{"h2c toward a tls member", Spec{Type: HTTP2, Send: send}, tlsM, false, false, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.spec.Check(); err != nil {
				t.Fatalf("Check: %v", err)
			}
			out, err := probe(t, &tc.spec, tc.m.addr, 3*time.Second)
			wantVerdict(t, out, err, tc.up, tc.errSub, nil)
			if out.Disabled != tc.disabled {
				t.Fatalf("Disabled = %v, want %v", out.Disabled, tc.disabled)
			}
			if tc.seen != "" {
				if got := tc.m.last(); got != tc.seen {
					t.Fatalf("the member saw %q, want %q", got, tc.seen)
				}
			}
			if tc.sni != "" {
				if got := tc.m.lastSNI(); got != tc.sni {
					t.Fatalf("SNI %q, want %q", got, tc.sni)
				}
			}
		})
	}
}

func TestProbeHTTP2NoAnswer(t *testing.T) {
	t.Parallel()
	// A member that accepts and says nothing: down at the deadline.
	ln, err := net.Listen("tcp", "127.17.3.4:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	out, err := probe(t, &Spec{Type: HTTP2, Send: "GET /\r\n"}, netip.MustParseAddrPort(ln.Addr().String()), 300*time.Millisecond)
	wantVerdict(t, out, err, false, "", ErrNoResponse)
}

func TestHTTP2SendRefused(t *testing.T) {
	for _, tc := range []struct{ send, errSub string }{
		{"", ""},
		{"GET /\r\n", ""},
		{"HEAD /status HTTP/2\r\nUser-Agent: f5\r\n\r\n", ""},
		{"GET http://app.example:8080/x?y=1 HTTP/1.1\r\n\r\n", ""},
		{"OPTIONS * HTTP/1.1\r\n\r\n", ""},
		{"GET index.html\r\n", "must be a path"},
		{"GET / SPDY/3\r\n", "not an HTTP version"},
		{"GET / HTTP/1.1 extra\r\n", "not a request line"},
		{"G(T /\r\n", "not an HTTP method"},
		{"index.html", "not an HTTP method"},
		{"PROPFIND /dav HTTP/1.1\r\n\r\n", ""},
		{"GET /\r\nno colon here\r\n\r\n", "not a header line"},
	} {
		err := (&Spec{Type: HTTP2, Send: tc.send}).Check()
		switch {
		case tc.errSub == "" && err != nil:
			t.Errorf("send %q refused: %v", tc.send, err)
		case tc.errSub != "" && (err == nil || !strings.Contains(err.Error(), tc.errSub)):
			t.Errorf("send %q: error %v, want one saying %q", tc.send, err, tc.errSub)
		}
	}
}
