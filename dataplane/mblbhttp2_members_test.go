package dataplane

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/h2member"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// grpcFrame is one gRPC message: a flag byte, a 4-byte length, the bytes.
func grpcFrame(msg string) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// readGRPC reads one gRPC message from r.
func readGRPC(r io.Reader) (string, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", err
	}
	b := make([]byte, binary.BigEndian.Uint32(h[1:]))
	_, err := io.ReadFull(r, b)
	return string(b), err
}

// h2MemberServer is an HTTP/2 member: /echo answers with its label, the
// protocol it was asked in, the method, path, body length and SHA-256
// prefix, the X-Rule field and the request's trailers (as trailers);
// /big answers 1 MiB; /svc/Unary and /svc/Stream are gRPC-shaped (the
// stream's second message waits for next); /reset resets the stream;
// /hold waits for hold to close.
type h2MemberServer struct {
	label string
	next  chan struct{}
	hold  chan struct{}
	srv   *http.Server
	ln    *trackListener
	held  atomic.Int32 // streams in /hold
}

// trackListener keeps its connections, for kill.
type trackListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *trackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

// kill ends the member at once: its listener and every connection,
// streams open or not.
func (m *h2MemberServer) kill() {
	m.ln.Close()
	m.ln.mu.Lock()
	defer m.ln.mu.Unlock()
	for _, c := range m.ln.conns {
		c.Close()
	}
}

func (m *h2MemberServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/svc/Unary":
		msg, err := readGRPC(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		w.Write(grpcFrame(m.label + " hello " + msg + " te=" + r.Header.Get("Te")))
		w.Header().Set("Grpc-Status", "0")
		w.Header().Set("Grpc-Message", "ok from "+m.label)
	case "/svc/Stream":
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.Write(grpcFrame("first"))
		w.(http.Flusher).Flush()
		select {
		case <-m.next: // the client has the first: nothing holds it back
		case <-time.After(5 * time.Second):
			return
		}
		w.Write(grpcFrame("second"))
		w.Header().Set("Grpc-Status", "0")
	case "/svc/Fail":
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "5") // trailers-only: in the head
		w.Header().Set("Grpc-Message", "not found")
		w.WriteHeader(200)
	case "/big":
		w.Write(bytes.Repeat([]byte("b"), 1<<20))
	case "/reset":
		panic(http.ErrAbortHandler)
	case "/hold":
		m.held.Add(1)
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-m.hold:
		case <-time.After(5 * time.Second):
		}
	default:
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		for k := range r.Trailer {
			w.Header().Add("Trailer", "Echo-"+k)
		}
		fmt.Fprintf(w, "%s %s %s %s body=%d sum=%x rule=%s", m.label, r.Proto, r.Method, r.URL.Path, len(body), sum[:4], r.Header.Get("X-Rule"))
		for k, vv := range r.Trailer {
			w.Header().Set("Echo-"+k, strings.Join(vv, ","))
		}
	}
}

// startH2Member serves an HTTP/2 member on addr: h2c with prior
// knowledge, or TLS offering only h2 in ALPN with cert.
func startH2Member(t *testing.T, addr, label string, cert *tls.Certificate, next chan struct{}) *h2MemberServer {
	t.Helper()
	m := &h2MemberServer{label: label, next: next, hold: make(chan struct{})}
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m.ln = &trackListener{Listener: raw}
	var ln net.Listener = m.ln
	var protos http.Protocols
	m.srv = &http.Server{Handler: m, Protocols: &protos}
	if cert == nil {
		protos.SetUnencryptedHTTP2(true)
		go m.srv.Serve(ln)
	} else {
		protos.SetHTTP2(true)
		m.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{"h2"}}
		go m.srv.ServeTLS(ln, "", "")
	}
	t.Cleanup(func() { m.srv.Close(); m.kill(); close(m.hold) })
	return m
}

// memberH2Config is an HTTP virtual whose clients may speak HTTP/2 with
// prior knowledge and whose members are asked in HTTP/2; its rule marks
// requests and responses.
func memberH2Config(t *testing.T, vs string, members ...string) (*Config, *h2member.Stats) {
	rule := `when HTTP_REQUEST { HTTP::header insert X-Rule "[HTTP::path]" }
	when HTTP_RESPONSE { HTTP::header insert X-Resp-Rule "[HTTP::status]" }`
	cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, rule, members...)
	st := new(h2member.Stats)
	v := cfg.Virtuals["/Common/vs"]
	v.HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{MaxConcurrentStreams: 100}}
	v.MBLB.MemberHTTP2 = &h2member.Config{Stats: st}
	return cfg, st
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHTTP2ToMembers: HTTP/2 (and HTTP/1.1) clients' requests reach h2c
// members as HTTP/2 streams, balanced per request, with the rules'
// edits both ways; many streams at once, bodies past the flow-control
// windows both ways, request and response trailers, gRPC-shaped unary,
// server-streaming (not buffered) and trailers-only calls, and a stream
// the member resets.
func TestHTTP2ToMembers(t *testing.T) {
	const vs = "127.0.250.1:80"
	next := make(chan struct{})
	startH2Member(t, "127.0.250.11:80", "M1", nil, next)
	startH2Member(t, "127.0.250.12:80", "M2", nil, next)
	cfg, st := memberH2Config(t, vs, "127.0.250.11:80", "127.0.250.12:80")
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	// Without OneConnect a client's requests stay with the member its
	// first went to (BIG-IP's server side without OneConnect): two
	// clients, one per member by round robin.
	clients := []*http.Client{h2Client(t), h2Client(t)}
	client := clients[0]

	// Many streams at once; one in eight uploads 1 MiB, one in eight
	// downloads 1 MiB.
	upload := bytes.Repeat([]byte("u"), 1<<20)
	upSum := sha256.Sum256(upload)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	var mu sync.Mutex
	seen := map[string]int{}
	for i := 0; i < 48; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("/c%02d", i)
			client := clients[i%2]
			var resp *http.Response
			var err error
			switch i % 8 {
			case 0:
				resp, err = client.Post("http://"+vs+path, "application/octet-stream", bytes.NewReader(upload))
			case 1:
				path = "/big"
				resp, err = client.Get("http://" + vs + path)
			default:
				resp, err = client.Get("http://" + vs + path)
			}
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				errs <- fmt.Errorf("%s: %v", path, err)
				return
			}
			if resp.Header.Get("X-Resp-Rule") != "200" {
				errs <- fmt.Errorf("%s: HTTP_RESPONSE did not run: %v", path, resp.Header)
			}
			body := string(b)
			switch i % 8 {
			case 0:
				if !strings.HasSuffix(body, fmt.Sprintf(" HTTP/2.0 POST %s body=%d sum=%x rule=%s", path, len(upload), upSum[:4], path)) {
					errs <- fmt.Errorf("%s answered %q", path, body)
				}
			case 1:
				if len(b) != 1<<20 {
					errs <- fmt.Errorf("/big: %d bytes", len(b))
				}
				return
			default:
				if !strings.HasSuffix(body, fmt.Sprintf(" HTTP/2.0 GET %s body=0 sum=e3b0c442 rule=%s", path, path)) {
					errs <- fmt.Errorf("%s answered %q", path, body)
				}
			}
			mu.Lock()
			seen[body[:2]]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if seen["M1"] == 0 || seen["M2"] == 0 {
		t.Errorf("the streams went to %v, want both members", seen)
	}

	// Request trailers reach the member, its trailers come back.
	req, _ := http.NewRequest("POST", "http://"+vs+"/t", io.NopCloser(strings.NewReader("abc")))
	req.ContentLength = -1
	req.Trailer = http.Header{"X-Sum": nil}
	req.Body = &trailerBody{r: strings.NewReader("abc"), set: func() { req.Trailer.Set("X-Sum", "3") }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); !strings.Contains(body, " HTTP/2.0 POST /t body=3 ") || resp.Trailer.Get("Echo-X-Sum") != "3" {
		t.Errorf("trailers: %q %v", body, resp.Trailer)
	}

	// gRPC-shaped calls: unary, server-streaming, trailers-only.
	grpc := func(path, msg string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+vs+path, bytes.NewReader(grpcFrame(msg)))
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		req.ContentLength = -1 // as gRPC clients send
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp = grpc("/svc/Unary", "world")
	msg, err := readGRPC(resp.Body)
	if err != nil || !strings.HasSuffix(msg, " hello world te=trailers") {
		t.Errorf("unary: %q %v", msg, err)
	}
	readBody(t, resp)
	if resp.Trailer.Get("Grpc-Status") != "0" || !strings.HasPrefix(resp.Trailer.Get("Grpc-Message"), "ok from M") {
		t.Errorf("unary trailers: %v", resp.Trailer)
	}
	for range 2 { // one call on each member
		resp = grpc("/svc/Stream", "")
		first, err := readGRPC(resp.Body)
		if err != nil || first != "first" {
			t.Fatalf("stream: %q %v", first, err)
		}
		// The member sends the second message only now: a stream held
		// back whole would never have given the first.
		select {
		case next <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatal("the member did not wait for the client")
		}
		second, err := readGRPC(resp.Body)
		readBody(t, resp)
		if second != "second" || err != nil || resp.Trailer.Get("Grpc-Status") != "0" {
			t.Errorf("stream: %q %v %v", second, err, resp.Trailer)
		}
	}
	resp = grpc("/svc/Fail", "x")
	readBody(t, resp)
	if resp.Header.Get("Grpc-Status") != "5" || resp.Header.Get("Grpc-Message") != "not found" {
		t.Errorf("trailers-only: %v %v", resp.Header, resp.Trailer)
	}

	// A stream the member resets is an error for that stream only.
	resp, err = client.Get("http://" + vs + "/reset")
	if err == nil {
		readBody(t, resp)
		if resp.StatusCode != 502 {
			t.Errorf("reset stream: %d", resp.StatusCode)
		}
	}
	resp, err = client.Get("http://" + vs + "/after")
	if err != nil || !strings.Contains(readBody(t, resp), " GET /after ") {
		t.Errorf("after a reset: %v", err)
	}

	// An HTTP/1.1 client's requests go to the members in HTTP/2 too.
	resp, err = (&http.Client{Timeout: 10 * time.Second}).Get("http://" + vs + "/one")
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.ProtoMajor != 1 || !strings.Contains(body, " HTTP/2.0 GET /one ") {
		t.Errorf("HTTP/1.1 client: %s %q", resp.Proto, body)
	}
	if n := st.TotalConnections.Load(); n < 2 || n > 4 {
		t.Errorf("member connections: %d, want one or two per member", n)
	}
	if st.Failed.Load() != 1 {
		t.Errorf("failed streams: %d, want 1 (the reset one)", st.Failed.Load())
	}
}

// trailerBody sets its request's trailers when it ends, as a client
// whose trailers are known only then.
type trailerBody struct {
	r   io.Reader
	set func()
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.set()
	}
	return n, err
}

func (b *trailerBody) Close() error { return nil }

// TestHTTP2ToMembersTLS: over the server-ssl profile the member is
// asked for h2 in ALPN, and its streams carry trailers as in cleartext;
// a member that does not offer h2 is a 502, not HTTP/1.1.
func TestHTTP2ToMembersTLS(t *testing.T) {
	const vs = "127.0.250.2:80"
	cert, key, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	startH2Member(t, "127.0.250.21:443", "T1", &pair, nil)
	cfg, st := memberH2Config(t, vs, "127.0.250.21:443")
	cfg.Virtuals["/Common/vs"].TLS = &TLS{Server: serverSSL(t)}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	client := h2Client(t)
	req, _ := http.NewRequest("POST", "http://"+vs+"/svc/Unary", bytes.NewReader(grpcFrame("tls")))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := readGRPC(resp.Body)
	readBody(t, resp)
	if err != nil || msg != "T1 hello tls te=trailers" || resp.Trailer.Get("Grpc-Status") != "0" {
		t.Errorf("unary over TLS: %q %v %v", msg, err, resp.Trailer)
	}
	resp, err = client.Get("http://" + vs + "/big")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readBody(t, resp)); n != 1<<20 {
		t.Errorf("/big over TLS: %d bytes", n)
	}
	if st.TotalConnections.Load() != 1 {
		t.Errorf("member connections: %d, want 1", st.TotalConnections.Load())
	}

	// An HTTP/1.1-only TLS member: ALPN gives no h2.
	const vs2 = "127.0.250.3:80"
	ln, err := tls.Listen("tcp", "127.0.250.22:443", &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	old := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "HTTP/1.1 only") })}
	go old.Serve(ln)
	t.Cleanup(func() { old.Close() })
	cfg2, _ := memberH2Config(t, vs2, "127.0.250.22:443")
	cfg2.Virtuals["/Common/vs"].TLS = &TLS{Server: serverSSL(t)}
	p2, _ := newPlane(t)
	mustApply(t, p2, cfg2)
	resp, err = client.Get("http://" + vs2 + "/x")
	if err == nil {
		body := readBody(t, resp)
		if resp.StatusCode < 500 || strings.Contains(body, "only") {
			t.Errorf("an HTTP/1.1-only member answered: %d %q", resp.StatusCode, body)
		}
	}
}

// TestHTTP2MemberGoesAway: a member that goes away with streams open
// fails them (an error or a 502 for each, not a hang), and the next
// request is answered once the member is back.
func TestHTTP2MemberGoesAway(t *testing.T) {
	const vs = "127.0.250.4:80"
	m := startH2Member(t, "127.0.250.31:80", "G1", nil, nil)
	cfg, _ := memberH2Config(t, vs, "127.0.250.31:80")
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	client := h2Client(t)
	type result struct {
		status int
		err    error
	}
	results := make(chan result, 8)
	for range 8 {
		go func() {
			resp, err := client.Get("http://" + vs + "/hold")
			if err != nil {
				results <- result{err: err}
				return
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- result{resp.StatusCode, err}
		}()
	}
	// Wait until the member has the streams, then close it abruptly.
	for i := 0; i < 500 && m.held.Load() < 8; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if m.held.Load() < 8 {
		t.Fatalf("the member has %d streams of 8", m.held.Load())
	}
	m.kill()
	for range 8 {
		select {
		case r := <-results:
			if r.err == nil && r.status == 200 {
				// A response begun whose body the member cut: the
				// client must see the cut, not a complete body.
				t.Errorf("a stream of a member gone ended as if complete")
			}
		case <-time.After(8 * time.Second):
			t.Fatal("a stream of a member gone hangs")
		}
	}
	// Back: the next request dials again.
	m2 := startH2Member(t, "127.0.250.31:80", "G2", nil, nil)
	_ = m2
	var body string
	for i := 0; i < 20 && !strings.HasPrefix(body, "G2 "); i++ {
		resp, err := client.Get("http://" + vs + "/again")
		if err == nil {
			body = readBody(t, resp)
		}
		if !strings.HasPrefix(body, "G2 ") {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !strings.HasPrefix(body, "G2 HTTP/2.0 GET /again") {
		t.Errorf("after the member came back: %q", body)
	}
}
