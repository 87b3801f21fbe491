package h2gw

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// engineFunc answers one request the engine stand-in read: the raw
// HTTP/1.1 response, or "" to close the connection without one.
type engineFunc func(r *http.Request, body []byte) string

// fakeEngine serves HTTP/1.1 on c as the engine would, pipelined: each
// request read whole, answered by h in order; the requests it saw go to
// seen as text (the request line and fields as written).
func fakeEngine(c net.Conn, h engineFunc, seen chan<- string) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if seen != nil {
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s host=%s", r.Method, r.RequestURI, r.Host)
			for _, k := range []string{"Cookie", "Content-Length", "Transfer-Encoding", "X-Custom", "X-H2"} {
				if v := r.Header.Values(k); len(v) > 0 {
					fmt.Fprintf(&b, " %s=%s", k, strings.Join(v, "|"))
				}
			}
			if len(r.TransferEncoding) > 0 {
				fmt.Fprintf(&b, " te=%s", strings.Join(r.TransferEncoding, ","))
			}
			fmt.Fprintf(&b, " body=%d", len(body))
			seen <- b.String()
		}
		resp := h(r, body)
		if resp == "" {
			return
		}
		resp, closing := strings.CutSuffix(resp, closeAfter)
		if _, err := io.WriteString(c, resp); err != nil || closing {
			return
		}
	}
}

// closeAfter ends an engineFunc's response that the engine follows
// by closing the connection.
const closeAfter = "\x00close"

// ok answers with body.
func ok(body string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// h2conn is a client connection to Serve, speaking frames.
type h2conn struct {
	t    *testing.T
	c    net.Conn
	fr   *http2.Framer
	bw   *bufio.Writer
	enc  *hpack.Encoder
	hbuf bytes.Buffer
	seen chan string
}

// startGateway serves one connection through Serve, each engine
// connection dialed going to a fakeEngine with h (or failing, with h
// nil), and returns the client's end, not yet past the preface.
func startGateway(t *testing.T, cfg *Config, h engineFunc) *h2conn {
	t.Helper()
	return startGatewayAt(t, "127.0.0.1:0", cfg, h, nil)
}

// startGatewayAt is startGateway listening on addr, the gateway's side
// of the connection wrapped by wrap when not nil.
func startGatewayAt(t *testing.T, addr string, cfg *Config, h engineFunc, wrap func(net.Conn) net.Conn) *h2conn {
	t.Helper()
	seen := make(chan string, 64)
	hc := dialGateway(t, addr, cfg, wrap, func() (net.Conn, error) {
		if h == nil {
			return nil, errors.New("no engine")
		}
		gw, eng := Pipe()
		go fakeEngine(eng, h, seen)
		return gw, nil
	})
	hc.seen = seen
	return hc
}

// dialGateway serves one client connection on addr through Serve with
// the lanes newEngine makes (the gateway's side wrapped by wrap when not
// nil), and returns the client's end, not yet past the preface.
func dialGateway(t *testing.T, addr string, cfg *Config, wrap func(net.Conn) net.Conn, newEngine func() (net.Conn, error)) *h2conn {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		if wrap != nil {
			c = wrap(c)
		}
		Serve(c, cfg, newEngine)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after the client closed")
		}
	})
	c.SetDeadline(time.Now().Add(15 * time.Second))
	hc := &h2conn{t: t, c: c, bw: bufio.NewWriter(c)}
	hc.fr = http2.NewFramer(hc.bw, c)
	hc.fr.AllowIllegalWrites = true
	hc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	hc.enc = hpack.NewEncoder(&hc.hbuf)
	return hc
}

// handshake sends the preface and settings, and reads the gateway's
// settings up to their ack.
func (h *h2conn) handshake(settings ...http2.Setting) {
	h.t.Helper()
	io.WriteString(h.bw, Preface)
	h.fr.WriteSettings(settings...)
	h.flush()
	for acked, got := false, false; !acked || !got; {
		switch f := h.read().(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				acked = true
			} else {
				got = true
				h.fr.WriteSettingsAck()
				h.flush()
			}
		case *http2.WindowUpdateFrame:
		default:
			h.t.Fatalf("during the handshake: %v", f)
		}
	}
}

func (h *h2conn) flush() {
	h.t.Helper()
	if err := h.bw.Flush(); err != nil {
		h.t.Fatal(err)
	}
}

func (h *h2conn) read() http2.Frame {
	h.t.Helper()
	f, err := h.fr.ReadFrame()
	if err != nil {
		h.t.Fatalf("reading a frame: %v", err)
	}
	return f
}

// block encodes fields (name, value, ...) as a header block.
func (h *h2conn) block(fields ...string) []byte {
	h.hbuf.Reset()
	for i := 0; i < len(fields); i += 2 {
		h.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), h.hbuf.Bytes()...)
}

// get is a GET's fields for path.
func get(path string, more ...string) []string {
	return append([]string{":method", "GET", ":scheme", "https", ":authority", "www.example", ":path", path}, more...)
}

func (h *h2conn) headers(id uint32, end bool, fields ...string) {
	h.t.Helper()
	h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.block(fields...), EndStream: end, EndHeaders: true})
	h.flush()
}

// response reads frames up to the end of stream id and returns its
// status and body (frames of other streams are skipped; window is given
// back as the body comes).
func (h *h2conn) response(id uint32) (string, string) {
	h.t.Helper()
	var status string
	var body []byte
	for {
		switch f := h.read().(type) {
		case *http2.MetaHeadersFrame:
			if f.StreamID == id {
				if status == "" { // not the trailers
					status = f.PseudoValue("status")
				}
				if f.StreamEnded() {
					return status, string(body)
				}
			}
		case *http2.DataFrame:
			if f.StreamID == id {
				body = append(body, f.Data()...)
				if len(f.Data()) > 0 {
					h.fr.WriteWindowUpdate(0, uint32(len(f.Data())))
					h.fr.WriteWindowUpdate(id, uint32(len(f.Data())))
					h.flush()
				}
				if f.StreamEnded() {
					return status, string(body)
				}
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				h.t.Fatalf("stream %d reset: %v", id, f.ErrCode)
			}
		case *http2.GoAwayFrame:
			h.t.Fatalf("GOAWAY %v waiting for stream %d", f.ErrCode, id)
		}
	}
}

// expectGoAway reads up to a GOAWAY and checks its code.
func (h *h2conn) expectGoAway(code http2.ErrCode) {
	h.t.Helper()
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("no GOAWAY %v: %v", code, err)
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			if g.ErrCode != code {
				h.t.Fatalf("GOAWAY %v, want %v", g.ErrCode, code)
			}
			return
		}
	}
}

// expectReset reads up to a RST_STREAM of id and checks its code.
func (h *h2conn) expectReset(id uint32, code http2.ErrCode) {
	h.t.Helper()
	for {
		switch f := h.read().(type) {
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				if f.ErrCode != code {
					h.t.Fatalf("stream %d reset %v, want %v", id, f.ErrCode, code)
				}
				return
			}
		case *http2.GoAwayFrame:
			h.t.Fatalf("GOAWAY %v, want RST_STREAM %v on %d", f.ErrCode, code, id)
		case *http2.MetaHeadersFrame:
			if f.StreamID == id {
				h.t.Fatalf("stream %d answered %s, want RST_STREAM %v", id, f.PseudoValue("status"), code)
			}
		}
	}
}

func (h *h2conn) expectSeen(want string) {
	h.t.Helper()
	select {
	case got := <-h.seen:
		if got != want {
			h.t.Fatalf("the engine saw\n%s\nwant\n%s", got, want)
		}
	case <-time.After(5 * time.Second):
		h.t.Fatalf("the engine saw nothing, want %s", want)
	}
}

func echo(r *http.Request, body []byte) string { return ok(r.URL.Path) }

// TestCodec: frames in, frames out.
func TestCodec(t *testing.T) {
	cases := []struct {
		name   string
		cfg    Config
		engine engineFunc
		run    func(h *h2conn)
	}{
		{name: "GET goes on as HTTP/1.1", cfg: Config{InsertHeader: "X-H2"}, engine: echo, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, true, get("/a?b=1", "cookie", "a=1", "x-custom", "v1", "cookie", "b=2", "te", "trailers")...)
			h.expectSeen("GET /a?b=1 host=www.example Cookie=a=1; b=2 X-Custom=v1 X-H2=true body=0")
			if status, body := h.response(1); status != "200" || body != "/a" {
				t.Fatalf("%s %q", status, body)
			}
		}},
		{name: "CONTINUATION", engine: echo, run: func(h *h2conn) {
			h.handshake()
			b := h.block(get("/cont", "x-custom", strings.Repeat("v", 100))...)
			h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:10], EndStream: true})
			h.fr.WriteContinuation(1, false, b[10:50])
			h.fr.WriteContinuation(1, true, b[50:])
			h.flush()
			if status, body := h.response(1); status != "200" || body != "/cont" {
				t.Fatalf("%s %q", status, body)
			}
		}},
		{name: "PING", engine: echo, run: func(h *h2conn) {
			h.handshake()
			h.fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
			h.flush()
			for {
				if p, ok := h.read().(*http2.PingFrame); ok {
					if !p.IsAck() || p.Data != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
						t.Fatalf("PING answered %v", p)
					}
					return
				}
			}
		}},
		{name: "bad preface", engine: echo, run: func(h *h2conn) {
			io.WriteString(h.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			h.expectGoAway(http2.ErrCodeProtocol)
		}},
		{name: "preface without SETTINGS", engine: echo, run: func(h *h2conn) {
			io.WriteString(h.bw, Preface)
			h.fr.WritePing(false, [8]byte{})
			h.flush()
			h.expectGoAway(http2.ErrCodeProtocol)
		}},
		{name: "POST with a length, and chunked without", engine: func(r *http.Request, body []byte) string {
			return ok(fmt.Sprint(len(body)))
		}, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "www.example", ":path", "/p", "content-length", "5")
			h.fr.WriteData(1, true, []byte("hello"))
			h.headers(3, false, ":method", "POST", ":scheme", "https", ":authority", "www.example", ":path", "/c")
			h.fr.WriteData(3, false, []byte("ab"))
			h.fr.WriteData(3, true, []byte("cd"))
			h.flush()
			// Each on a lane of its own: in either order.
			h.expectSeenAll("POST /p host=www.example Content-Length=5 body=5", "POST /c host=www.example te=chunked body=4")
			if got := h.responses(1, 3); got[1] != "5" || got[3] != "4" {
				t.Fatalf("%v", got)
			}
		}},
		{name: "a stream beside an upload does not wait for it", engine: func(r *http.Request, body []byte) string {
			return ok(fmt.Sprint(r.URL.Path, len(body)))
		}, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, false, ":method", "PUT", ":scheme", "https", ":authority", "w", ":path", "/up", "content-length", "6")
			h.fr.WriteData(1, false, []byte("abc"))
			h.headers(3, true, get("/next")...)
			h.flush()
			h.expectSeen("GET /next host=www.example body=0")
			if _, body := h.response(3); body != "/next0" {
				t.Fatalf("%q", body)
			}
			h.fr.WriteData(1, true, []byte("def")) // the upload ends only now
			h.flush()
			h.expectSeen("PUT /up host=w Content-Length=6 body=6")
			if _, body := h.response(1); body != "/up6" {
				t.Fatalf("%q", body)
			}
		}},
		{name: "DATA past the stream's window", cfg: Config{ReceiveWindow: 100}, engine: echo, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/")
			h.fr.WriteData(1, false, make([]byte, 200))
			h.flush()
			h.expectReset(1, http2.ErrCodeFlowControl)
			h.headers(3, true, get("/still")...) // the connection goes on
			if status, _ := h.response(3); status != "200" {
				t.Fatalf("after the stream error: %s", status)
			}
		}},
		{name: "DATA the client counted against the default window before reading the SETTINGS", cfg: Config{ReceiveWindow: 100}, engine: echo, run: func(h *h2conn) {
			// The client opens a stream and reserves 5000 bytes of
			// HTTP/2's default window, then reads the gateway's
			// SETTINGS (window 100), acknowledges them and only then
			// sends the bytes: the stream goes on (RFC 9113 6.9.3).
			io.WriteString(h.bw, Preface)
			h.fr.WriteSettings()
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/early")
			for {
				if st, ok := h.read().(*http2.SettingsFrame); ok && !st.IsAck() {
					break
				}
			}
			h.fr.WriteSettingsAck()
			h.fr.WriteData(1, true, make([]byte, 5000))
			h.flush()
			h.expectSeen("POST /early host=w te=chunked body=5000")
			if status, _ := h.response(1); status != "200" {
				t.Fatalf("status %s", status)
			}
			h.headers(3, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/late")
			h.fr.WriteData(3, false, make([]byte, 200)) // a stream opened after the ACK has the window advertised
			h.flush()
			h.expectReset(3, http2.ErrCodeFlowControl)
		}},
		{name: "response within the client's window", engine: func(r *http.Request, body []byte) string {
			return ok(strings.Repeat("x", 1000))
		}, run: func(h *h2conn) {
			h.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100})
			h.headers(1, true, get("/big")...)
			got := 0
			for got < 100 {
				if d, ok := h.read().(*http2.DataFrame); ok {
					got += len(d.Data())
					if d.StreamEnded() {
						t.Fatal("the whole body past a window of 100")
					}
				}
			}
			if got != 100 {
				t.Fatalf("%d bytes sent in a window of 100", got)
			}
			h.fr.WriteWindowUpdate(1, 900)
			h.flush()
			for {
				if d, ok := h.read().(*http2.DataFrame); ok {
					got += len(d.Data())
					if d.StreamEnded() {
						break
					}
				}
			}
			if got != 1000 {
				t.Fatalf("%d bytes, want 1000", got)
			}
		}},
		{name: "a stream without window does not hold the others", engine: func(r *http.Request, body []byte) string {
			if r.URL.Path == "/big" {
				return ok(strings.Repeat("x", 200000))
			}
			return ok(r.URL.Path)
		}, run: func(h *h2conn) {
			h.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100})
			h.headers(1, true, get("/big")...)
			h.headers(3, true, get("/small")...)
			for {
				switch f := h.read().(type) {
				case *http2.DataFrame:
					if f.StreamID == 3 && f.StreamEnded() {
						return // without a WINDOW_UPDATE for stream 1
					}
					if f.StreamID == 1 && f.StreamEnded() {
						t.Fatal("stream 1 ended past its window")
					}
				case *http2.RSTStreamFrame, *http2.GoAwayFrame:
					t.Fatalf("%v", f)
				}
			}
		}},
		{name: "chunked and read-to-close responses", engine: func(r *http.Request, body []byte) string {
			if r.URL.Path == "/chunked" {
				return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
			}
			if r.URL.Path == "/toclose" {
				return "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end" + closeAfter
			}
			return ok(r.URL.Path)
		}, run: func(h *h2conn) {
			h.handshake()
			for i, c := range []struct{ path, body string }{{"/chunked", "hello world"}, {"/toclose", "until the end"}, {"/next", "/next"}} {
				h.headers(uint32(2*i+1), true, get(c.path)...)
				if status, body := h.response(uint32(2*i + 1)); status != "200" || body != c.body {
					t.Fatalf("%s: %s %q", c.path, status, body)
				}
			}
		}},
		{name: "a body past the pending limit waits for window", engine: func(r *http.Request, body []byte) string {
			return ok(strings.Repeat("z", 3*pendingLimit))
		}, run: func(h *h2conn) {
			h.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
			h.headers(1, true, get("/huge")...)
			h.fr.WriteWindowUpdate(1, 3*pendingLimit)
			h.flush()
			if status, body := h.response(1); status != "200" || len(body) != 3*pendingLimit {
				t.Fatalf("%s %d bytes", status, len(body))
			}
		}},
		{name: "too many streams", cfg: Config{MaxConcurrentStreams: 2}, engine: func(r *http.Request, body []byte) string {
			if r.URL.Path == "/slow" {
				time.Sleep(50 * time.Millisecond) // the streams stay open meanwhile
			}
			return ok(r.URL.Path)
		}, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, true, get("/slow")...)
			h.headers(3, true, get("/slow")...)
			h.headers(5, true, get("/refused")...)
			h.expectReset(5, http2.ErrCodeRefusedStream)
			h.responses(1, 3)
		}},
		{name: "RST_STREAM of a stream whose request went", engine: func(r *http.Request, body []byte) string {
			if r.URL.Path == "/gone" {
				time.Sleep(20 * time.Millisecond)
			}
			return ok(r.URL.Path)
		}, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, true, get("/gone")...)
			h.expectSeen("GET /gone host=www.example body=0")
			h.fr.WriteRSTStream(1, http2.ErrCodeCancel)
			h.headers(3, true, get("/after")...)
			for {
				switch f := h.read().(type) {
				case *http2.MetaHeadersFrame:
					if f.StreamID == 1 {
						t.Fatal("a reset stream answered")
					}
				case *http2.DataFrame:
					if f.StreamID == 3 && f.StreamEnded() {
						if string(f.Data()) != "/after" {
							t.Fatalf("%q", f.Data())
						}
						return
					}
				}
			}
		}},
		{name: "RST_STREAM mid-upload", engine: echo, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/up", "content-length", "10")
			h.fr.WriteData(1, false, []byte("abc"))
			h.fr.WriteRSTStream(1, http2.ErrCodeCancel)
			h.headers(3, true, get("/after")...)
			if status, body := h.response(3); status != "200" || body != "/after" {
				t.Fatalf("%s %q", status, body)
			}
		}},
		{name: "CONNECT", engine: echo, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, false, ":method", "CONNECT", ":authority", "example.com:443")
			if status, _ := h.response(1); status != "501" {
				t.Fatalf("CONNECT answered %s", status)
			}
		}},
		{name: "no engine: 502", run: func(h *h2conn) {
			h.handshake()
			h.headers(1, true, get("/x")...)
			if status, _ := h.response(1); status != "502" {
				t.Fatalf("status %s", status)
			}
		}},
		{name: "the engine closes before an answer: 502", engine: func(r *http.Request, body []byte) string {
			if r.URL.Path == "/drop" {
				return ""
			}
			return ok(r.URL.Path)
		}, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, true, get("/drop")...)
			if status, _ := h.response(1); status != "502" {
				t.Fatalf("status %s", status)
			}
			h.headers(3, true, get("/later")...) // on a new engine connection
			if status, body := h.response(3); status != "200" || body != "/later" {
				t.Fatalf("%s %q", status, body)
			}
		}},
		{name: "idle timeout", cfg: Config{IdleTimeout: 50 * time.Millisecond}, engine: echo, run: func(h *h2conn) {
			h.handshake()
			h.headers(1, true, get("/x")...)
			h.response(1)
			h.expectGoAway(http2.ErrCodeNo)
		}},
	}
	for _, c := range protocolErrors() {
		cases = append(cases, struct {
			name   string
			cfg    Config
			engine engineFunc
			run    func(h *h2conn)
		}{name: c.name, engine: echo, run: func(h *h2conn) {
			h.handshake()
			c.send(h)
			h.flush()
			if c.stream != 0 {
				h.expectReset(c.stream, c.code)
				// The connection goes on.
				h.headers(101, true, get("/still")...)
				if status, _ := h.response(101); status != "200" {
					t.Fatalf("after the stream error: %s", status)
				}
				return
			}
			h.expectGoAway(c.code)
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Stats = new(Stats)
			h := startGateway(t, &cfg, c.engine)
			c.run(h)
			h.c.Close()
		})
	}
}

// protocolError is a misbehaving client's frames and the error they
// must get: a connection error (GOAWAY) or, with stream, a stream error.
type protocolError struct {
	name   string
	send   func(h *h2conn)
	code   http2.ErrCode
	stream uint32
}

// protocolErrors are checks in the manner of h2spec, those cheap to
// make.
func protocolErrors() []protocolError {
	return []protocolError{
		{"DATA on stream 0", func(h *h2conn) { h.fr.WriteData(0, true, []byte("x")) }, http2.ErrCodeProtocol, 0},
		{"HEADERS on an even stream", func(h *h2conn) { h.headers(2, true, get("/")...) }, http2.ErrCodeProtocol, 0},
		{"stream ids going down", func(h *h2conn) { h.headers(5, true, get("/")...); h.headers(3, true, get("/")...) }, http2.ErrCodeProtocol, 0},
		{"DATA on an idle stream", func(h *h2conn) { h.fr.WriteData(7, true, []byte("x")) }, http2.ErrCodeProtocol, 0},
		{"RST_STREAM on an idle stream", func(h *h2conn) { h.fr.WriteRSTStream(9, http2.ErrCodeCancel) }, http2.ErrCodeProtocol, 0},
		{"WINDOW_UPDATE of 0 on the connection", func(h *h2conn) { h.fr.WriteWindowUpdate(0, 0) }, http2.ErrCodeProtocol, 0},
		{"connection window past 2^31-1", func(h *h2conn) { h.fr.WriteWindowUpdate(0, 1<<31-1) }, http2.ErrCodeFlowControl, 0},
		{"initial window past 2^31-1", func(h *h2conn) {
			h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 31})
		}, http2.ErrCodeFlowControl, 0},
		{"bad ENABLE_PUSH", func(h *h2conn) { h.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 2}) }, http2.ErrCodeProtocol, 0},
		{"SETTINGS ack with a payload", func(h *h2conn) {
			h.fr.WriteRawFrame(http2.FrameSettings, http2.FlagSettingsAck, 0, make([]byte, 6))
		}, http2.ErrCodeFrameSize, 0},
		{"frame larger than SETTINGS_MAX_FRAME_SIZE", func(h *h2conn) {
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/")
			h.fr.WriteData(1, false, make([]byte, 16385))
		}, http2.ErrCodeFrameSize, 0},
		{"CONTINUATION without HEADERS", func(h *h2conn) { h.fr.WriteContinuation(1, true, h.block(get("/")...)) }, http2.ErrCodeProtocol, 0},
		{"another frame inside a header block", func(h *h2conn) {
			h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: h.block(get("/")...), EndStream: true})
			h.fr.WritePing(false, [8]byte{})
		}, http2.ErrCodeProtocol, 0},
		{"bad HPACK", func(h *h2conn) {
			h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0xff, 0xff, 0xff, 0xff}, EndStream: true, EndHeaders: true})
		}, http2.ErrCodeCompression, 0},
		{"PUSH_PROMISE from a client", func(h *h2conn) {
			h.fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: h.block(get("/")...), EndHeaders: true})
		}, http2.ErrCodeProtocol, 0},
		{"upper-case field name", func(h *h2conn) { h.headers(1, true, get("/", "X-Upper", "1")...) }, http2.ErrCodeProtocol, 1},
		{"no :path", func(h *h2conn) { h.headers(1, true, ":method", "GET", ":scheme", "https", ":authority", "w") }, http2.ErrCodeProtocol, 1},
		{"connection-specific field", func(h *h2conn) { h.headers(1, true, get("/", "connection", "close")...) }, http2.ErrCodeProtocol, 1},
		{"TE other than trailers", func(h *h2conn) { h.headers(1, true, get("/", "te", "gzip")...) }, http2.ErrCodeProtocol, 1},
		{"pseudo field after a regular one", func(h *h2conn) { h.headers(1, true, "x-a", "1", ":method", "GET", ":scheme", "https", ":path", "/") }, http2.ErrCodeProtocol, 1},
		{"a space in :path", func(h *h2conn) { h.headers(1, true, get("/a b")...) }, http2.ErrCodeProtocol, 1},
		{"body longer than content-length", func(h *h2conn) {
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/", "content-length", "2")
			h.fr.WriteData(1, true, []byte("abc"))
		}, http2.ErrCodeProtocol, 1},
		{"body shorter than content-length", func(h *h2conn) {
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/", "content-length", "4")
			h.fr.WriteData(1, true, []byte("abc"))
		}, http2.ErrCodeProtocol, 1},
		{"PRIORITY on itself", func(h *h2conn) { h.fr.WritePriority(1, http2.PriorityParam{StreamDep: 1, Weight: 1}) }, http2.ErrCodeProtocol, 1},
		{"WINDOW_UPDATE of 0 on a stream", func(h *h2conn) {
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/")
			h.fr.WriteWindowUpdate(1, 0)
		}, http2.ErrCodeProtocol, 1},
		{"DATA after END_STREAM", func(h *h2conn) {
			h.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "w", ":path", "/slow", "content-length", "1")
			h.fr.WriteData(1, true, []byte("a"))
			h.fr.WriteData(1, true, []byte("b"))
		}, http2.ErrCodeStreamClosed, 1},
	}
}
