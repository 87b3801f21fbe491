package http3

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// selfSigned is a certificate for 127.169.0.1 and the pool its client
// trusts.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "h3.test"},
		DNSNames: []string{"h3.test"}, IPAddresses: []net.IP{net.ParseIP("127.169.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// dialer is a test Client: each lane is a TCP connection to an HTTP/1.1
// server, standing for the engine.
type dialer struct {
	addr   string
	dials  atomic.Int32
	closed atomic.Int32
}

func (d *dialer) Dial() (net.Conn, error) { d.dials.Add(1); return net.Dial("tcp", d.addr) }
func (d *dialer) Close()                  { d.closed.Add(1) }

// start serves HTTP/3 on 127.169.0.1 in front of an HTTP/1.1 server
// running h; refuse makes Accept refuse every connection.
func start(t *testing.T, h http.HandlerFunc, refuse bool, maxVersion uint16) (*Listener, *dialer, *http.Client, *Config) {
	t.Helper()
	backend, err := net.Listen("tcp", "127.169.0.1:0")
	if err != nil {
		t.Skipf("loopback 127.169.0.1: %v", err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(backend)
	t.Cleanup(func() { hs.Close() })
	cert, pool := selfSigned(t)
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.169.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	d := &dialer{addr: backend.Addr().String()}
	cfg := &Config{Profile: "/Common/http3", QUICProfile: "/Common/quic", Stats: new(Stats), QUICStats: new(QUICStats)}
	// The client-ssl profile's configuration, TLS 1.2 at most when the
	// profile says no-tlsv1.3: QUIC still gets 1.3.
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MaxVersion: maxVersion, NextProtos: []string{"http/1.1"}}
	l, err := Listen(pc, func() *tls.Config { return tc }, cfg, func(c *Conn) (Client, bool) {
		if !c.Remote.IsValid() || c.Local.Addr().String() != "127.169.0.1" {
			t.Errorf("addresses: remote %v local %v", c.Remote, c.Local)
		}
		return d, !refuse
	})
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve()
	t.Cleanup(l.Close)
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "h3.test"}}
	t.Cleanup(func() { tr.Close() })
	return l, d, &http.Client{Transport: tr, Timeout: 5 * time.Second}, cfg
}

func TestRequestsGoThroughLanes(t *testing.T) {
	l, d, c, cfg := start(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen-Host", r.Host)
		w.Header().Set("X-Seen-Proto", r.Proto)
		w.Header().Set("X-Seen-Len", r.Header.Get("Content-Length")+"/"+strings.Join(r.TransferEncoding, ","))
		w.Header().Set("Connection", "keep-alive") // hop-by-hop: not passed on
		io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+string(body))
	}, false, 0)
	url := "https://" + l.Addr().String() + "/a?b=c"
	tests := []struct {
		name, method, body, want, wantLen string
	}{
		{"get", "GET", "", "GET /a?b=c ", "/"},
		{"post with length", "POST", "hello", "POST /a?b=c hello", "5/"},
		{"post without length", "POST", "streamed", "POST /a?b=c streamed", "/chunked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
				if tc.wantLen == "/chunked" {
					body = io.MultiReader(strings.NewReader(tc.body)) // length unknown
				}
			}
			req, _ := http.NewRequest(tc.method, url, body)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(got) != tc.want {
				t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, got, tc.want)
			}
			if resp.Proto != "HTTP/3.0" || resp.Header.Get("X-Seen-Proto") != "HTTP/1.1" {
				t.Errorf("client saw %s, member saw %s", resp.Proto, resp.Header.Get("X-Seen-Proto"))
			}
			if h := resp.Header.Get("X-Seen-Host"); !strings.HasPrefix(h, "127.169.0.1:") {
				t.Errorf("member's Host %q", h)
			}
			if g := resp.Header.Get("X-Seen-Len"); g != tc.wantLen {
				t.Errorf("member's length fields %q, want %q", g, tc.wantLen)
			}
			if resp.Header.Get("Connection") != "" {
				t.Errorf("Connection reached the HTTP/3 client")
			}
		})
	}
	if n := d.dials.Load(); n != 1 {
		t.Errorf("%d lanes dialled for three requests in turn, want 1 (kept for the next)", n)
	}
	if cfg.Stats.Requests.Load() != 3 || cfg.Stats.Responses.Load() != 3 || cfg.QUICStats.TotalConnections.Load() != 1 {
		t.Errorf("stats: requests %d responses %d connections %d", cfg.Stats.Requests.Load(), cfg.Stats.Responses.Load(), cfg.QUICStats.TotalConnections.Load())
	}
}

func TestEngineGoneIs502(t *testing.T) {
	l, d, c, cfg := start(t, func(w http.ResponseWriter, r *http.Request) {
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close() // the engine ends the lane before answering
	}, false, tls.VersionTLS12)
	resp, err := c.Get("https://" + l.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || cfg.Stats.Failed.Load() != 1 {
		t.Fatalf("status %d, failed %d; want 502 and 1", resp.StatusCode, cfg.Stats.Failed.Load())
	}
	_ = d
}

func TestRefusedConnection(t *testing.T) {
	l, d, c, cfg := start(t, func(w http.ResponseWriter, r *http.Request) {}, true, 0)
	if _, err := c.Get("https://" + l.Addr().String() + "/"); err == nil {
		t.Fatal("a refused connection answered")
	}
	if cfg.QUICStats.Refused.Load() < 1 || d.dials.Load() != 0 { // the client may try again
		t.Fatalf("refused %d, dials %d", cfg.QUICStats.Refused.Load(), d.dials.Load())
	}
}

func TestCloseEndsClients(t *testing.T) {
	l, d, c, _ := start(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, false, 0)
	resp, err := c.Get("https://" + l.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	l.Close()
	if d.closed.Load() != 1 {
		t.Fatalf("Client.Close ran %d times after the listener closed, want 1", d.closed.Load())
	}
}

// TestConcurrentRequestsDialLanes: requests open at once each take a
// lane of their own; none waits for another's answer.
func TestConcurrentRequestsDialLanes(t *testing.T) {
	l, d, c, _ := start(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Millisecond)
		io.WriteString(w, r.URL.Path)
	}, false, 0)
	const n = 4
	errs := make(chan error, n)
	for i := range n {
		go func() {
			resp, err := c.Get("https://" + l.Addr().String() + "/r" + string(rune('0'+i)))
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "/r"+string(rune('0'+i)) {
					err = io.ErrUnexpectedEOF
				}
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := d.dials.Load(); got < 2 {
		t.Errorf("%d lanes for %d requests at once, want more than one", got, n)
	}
}

// TestIdleLaneEndedIsRetried: a kept lane the engine ended while it
// was idle is not the client's failure: the request goes on a new lane.
func TestIdleLaneEndedIsRetried(t *testing.T) {
	l, d, c, cfg := start(t, func(w http.ResponseWriter, r *http.Request) {
		// A keep-alive answer, then the engine's end of the lane soon
		// after, as an idle timeout ends it.
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		bw.Flush()
		time.AfterFunc(20*time.Millisecond, func() { conn.Close() })
	}, false, 0)
	for i := range 2 {
		if i > 0 {
			time.Sleep(100 * time.Millisecond) // the lane has ended meanwhile
		}
		resp, err := c.Get("https://" + l.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	if cfg.Stats.Failed.Load() != 0 || d.dials.Load() != 2 {
		t.Fatalf("failed %d, dials %d; want 0 and 2", cfg.Stats.Failed.Load(), d.dials.Load())
	}
}

// shaker is a test Client told of the handshake; ok is its answer.
type shaker struct {
	*dialer
	ok   bool
	seen chan *tls.ConnectionState
}

func (s *shaker) Handshake(cs *tls.ConnectionState) bool { s.seen <- cs; return s.ok }

// TestAcceptAtHello: Accept is asked at the client's hello (its server
// name read, no handshake yet); a refusal fails the handshake, and a
// Client that is a Handshaker is told of the finished one, whose false
// ends the connection before any request; every admitted client is
// closed once.
func TestAcceptAtHello(t *testing.T) {
	backend, err := net.Listen("tcp", "127.187.6.21:0")
	if err != nil {
		t.Skipf("loopback 127.187.6.21: %v", err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go hs.Serve(backend)
	t.Cleanup(func() { hs.Close() })
	cert, pool := selfSigned(t)
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.187.6.20")})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Stats: new(Stats), QUICStats: new(QUICStats)}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	var admitted []*shaker
	var mu sync.Mutex
	l, err := Listen(pc, func() *tls.Config { return tc }, cfg, func(c *Conn) (Client, bool) {
		if c.Hello == nil || c.TLS() != nil {
			t.Errorf("Accept: hello %v, handshake %v; want the hello only", c.Hello, c.TLS())
			return nil, false
		}
		name := c.Hello.ServerName
		if name == "refused.test" {
			return nil, false
		}
		s := &shaker{dialer: &dialer{addr: backend.Addr().String()}, ok: name != "late.test", seen: make(chan *tls.ConnectionState, 1)}
		mu.Lock()
		admitted = append(admitted, s)
		mu.Unlock()
		return s, true
	})
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve()
	t.Cleanup(l.Close)
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"h3.test", true}, {"refused.test", false}, {"late.test", false}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: tc.name, InsecureSkipVerify: tc.name != "h3.test"}}
			defer tr.Close()
			resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + l.Addr().String() + "/")
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("answered %v, want %v (%v)", err == nil, tc.ok, err)
			}
		})
	}
	l.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(admitted) < 2 {
		t.Fatalf("%d clients admitted, want h3.test's and late.test's", len(admitted))
	}
	for i, s := range admitted {
		select {
		case cs := <-s.seen:
			if cs == nil || cs.Version != tls.VersionTLS13 {
				t.Errorf("client %d: handshake %v", i, cs)
			}
		default:
			t.Errorf("client %d: not told of its handshake", i)
		}
		if n := s.closed.Load(); n != 1 {
			t.Errorf("client %d closed %d times, want once", i, n)
		}
	}
	if n := cfg.QUICStats.Refused.Load(); n < 2 {
		t.Errorf("refused %d, want refused.test's and late.test's", n)
	}
}
