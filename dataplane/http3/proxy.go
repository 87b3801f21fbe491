package http3

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// client is an admitted connection's lanes: engine connections, each
// carrying one request at a time, kept for the connection's next
// requests while idle.
type client struct {
	engine Client
	cfg    *Config
	hs     <-chan struct{} // a 0-RTT connection's handshake (nil otherwise: done before any request)
	mu     sync.Mutex
	idle   []*lane
	all    []*lane
	closed bool
}

// lane is one engine connection and its reader.
type lane struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// get takes an idle lane (reused) or dials one.
func (cl *client) get() (ln *lane, reused bool, err error) {
	cl.mu.Lock()
	if n := len(cl.idle); n > 0 {
		ln := cl.idle[n-1]
		cl.idle = cl.idle[:n-1]
		cl.mu.Unlock()
		return ln, true, nil
	}
	cl.mu.Unlock()
	ln, err = cl.dial()
	return ln, false, err
}

// dial opens a new lane.
func (cl *client) dial() (*lane, error) {
	c, err := cl.engine.Dial()
	if err != nil {
		return nil, err
	}
	ln := &lane{c: c, br: bufio.NewReaderSize(c, 16<<10), bw: bufio.NewWriterSize(c, 4<<10)}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	cl.all = append(cl.all, ln)
	return ln, nil
}

// put gives a lane whose exchange ended cleanly back for the next
// request; drop closes one that cannot carry another.
func (cl *client) put(ln *lane) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.closed {
		ln.c.Close()
		return
	}
	cl.idle = append(cl.idle, ln)
}

func (cl *client) drop(ln *lane) { ln.c.Close() }

// closeLanes ends every lane (the engine sessions read EOF and end).
func (cl *client) closeLanes() {
	cl.mu.Lock()
	cl.closed = true
	all := cl.all
	cl.all, cl.idle = nil, nil
	cl.mu.Unlock()
	for _, ln := range all {
		ln.c.Close()
	}
}

// handler serves each HTTP/3 request through a lane.
type handler struct{ l *Listener }

// hopByHop are the fields that belong to one HTTP/1.1 hop: neither sent
// to an HTTP/3 client (RFC 9114 section 4.2 forbids them) nor passed on.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true,
	"Transfer-Encoding": true, "Upgrade": true, "Te": true,
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cl, _ := r.Context().Value(clientKey{}).(*client)
	if cl == nil {
		http.Error(w, "", http.StatusServiceUnavailable)
		return
	}
	st := cl.cfg.Stats
	if st != nil {
		st.Requests.Add(1)
	}
	fail := func() {
		if st != nil {
			st.Failed.Add(1)
		}
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusBadGateway)
	}
	if r.Method == http.MethodConnect {
		// Extended CONNECT (WebSocket over HTTP/3, RFC 9220) is not
		// served [M]: 405, as a member without CONNECT answers.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	early := false
	if cl.hs != nil {
		if early = cl.earlyRequest(r); early {
			if st != nil {
				st.EarlyForwarded.Add(1)
			}
		} else if r.Context().Err() != nil {
			return // the connection ended before its handshake did
		}
	}
	body, chunked, err := requestBody(r)
	if err != nil {
		fail()
		return
	}
	ln, reused, err := cl.get()
	if err != nil {
		fail()
		return
	}
	resp, err := exchange(ln, r, body, chunked, early)
	if err != nil && reused && body == nil {
		// A kept lane the engine ended while it was idle (its idle
		// timeout): the request goes again on a new one, as a client
		// retries a request on a kept connection that closed.
		cl.drop(ln)
		if ln, err = cl.dial(); err == nil {
			resp, err = exchange(ln, r, nil, false, early)
		}
	}
	if err != nil {
		if ln != nil {
			cl.drop(ln)
		}
		fail()
		return
	}
	hdr := w.Header()
	for k, vs := range resp.Header {
		if hopByHop[k] {
			continue
		}
		hdr[k] = vs
	}
	if resp.ContentLength >= 0 && r.Method != http.MethodHead && hdr.Get("Content-Length") == "" {
		hdr.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	w.WriteHeader(resp.StatusCode)
	_, err = io.Copy(flushWriter{w}, resp.Body)
	resp.Body.Close()
	if st != nil {
		st.Responses.Add(1)
	}
	if err != nil || resp.Close {
		cl.drop(ln)
		return
	}
	cl.put(ln)
}

// flushWriter sends each piece of the body as it comes (a member's
// streamed answer is not held whole).
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// exchange writes r on the lane as HTTP/1.1, with body (requestBody's)
// and reads its final response (interim ones are skipped); early marks
// a request passed on in 0-RTT.
func exchange(ln *lane, r *http.Request, body io.Reader, chunked, early bool) (*http.Response, error) {
	if err := writeHead(ln.bw, r, chunked, early); err != nil {
		return nil, err
	}
	if body != nil {
		var dst io.Writer = ln.bw
		var cw *chunkWriter
		if chunked {
			cw = &chunkWriter{w: ln.bw}
			dst = cw
		}
		if _, err := io.Copy(dst, body); err != nil {
			return nil, err
		}
		if cw != nil {
			if _, err := io.WriteString(ln.bw, "0\r\n\r\n"); err != nil {
				return nil, err
			}
		}
	}
	if err := ln.bw.Flush(); err != nil {
		return nil, err
	}
	for {
		resp, err := http.ReadResponse(ln.br, r)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		resp.Body.Close()
	}
}

// requestBody is what of r's body goes to the engine: nil when it has
// none; chunked when its length is not known (an HTTP/3 request need
// not say it) and it does carry bytes.
func requestBody(r *http.Request) (io.Reader, bool, error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil, false, nil
	}
	if r.ContentLength > 0 {
		return io.LimitReader(r.Body, r.ContentLength), false, nil
	}
	br := bufio.NewReader(r.Body)
	if _, err := br.Peek(1); err == io.EOF {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	return br, true, nil
}

// writeHead writes r's request line and fields as HTTP/1.1, Host first
// (from :authority); an early request (0-RTT) carries Early-Data: 1
// (RFC 8470 section 5.1: an intermediary adds it, and keeps a client's).
func writeHead(w *bufio.Writer, r *http.Request, chunked, early bool) error {
	uri := r.RequestURI
	if uri == "" {
		uri = r.URL.RequestURI()
	}
	w.WriteString(r.Method)
	w.WriteByte(' ')
	w.WriteString(uri)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(sanitize(r.Host))
	w.WriteString("\r\n")
	for k, vs := range r.Header {
		if hopByHop[k] || k == "Host" || k == "Content-Length" {
			continue
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(sanitize(v))
			w.WriteString("\r\n")
		}
	}
	if early && r.Header["Early-Data"] == nil {
		w.WriteString("Early-Data: 1\r\n")
	}
	switch {
	case chunked:
		w.WriteString("Transfer-Encoding: chunked\r\n")
	case r.ContentLength > 0:
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(r.ContentLength, 10))
		w.WriteString("\r\n")
	}
	_, err := w.WriteString("\r\n")
	return err
}

// sanitize keeps a field value on its line: HTTP/3 forbids CR and LF in
// values, and quic-go checks them; this is the last guard.
func sanitize(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		return strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
	}
	return v
}

// chunkWriter writes each piece as one HTTP/1.1 chunk.
type chunkWriter struct{ w *bufio.Writer }

func (c *chunkWriter) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.w.WriteString(strconv.FormatInt(int64(len(b)), 16))
	c.w.WriteString("\r\n")
	c.w.Write(b)
	_, err := c.w.WriteString("\r\n")
	if err != nil {
		return 0, err
	}
	return len(b), nil
}
