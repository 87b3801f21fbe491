// Package h2gw is BIG-IP's http2 profile on the client side: an HTTP/2
// connection (ALPN h2 over client-ssl, or cleartext with prior
// knowledge) is served by net/http's HTTP/2 server, and each of its streams
// goes on as an HTTP/1.1 request over one connection into the HTTP engine
// (dataplane/mblb), pipelined in the order the streams came. So every
// request of an HTTP/2 client runs the same path as an HTTP/1.1 client's
// (the http profile's edits, iRules, persistence, per-request balancing
// with OneConnect, compression, the cache), and the engine's one session
// per client connection keeps the connection's iRule state, as BIG-IP's
// HTTP/2 gateway keeps it per client connection, while members speak
// HTTP/1.1.
//
// Why pipelining rather than a connection per stream: the engine sends a
// client's pipelined requests to members as soon as they are framed
// (several at once with OneConnect) and answers them in order, so the
// streams are balanced on their own; one session keeps one connection
// record, one CLIENT_ACCEPTED and one set of rule variables per client.
// The cost is that a response waits for the ones before it (a slow member
// delays the streams behind it, as on a pipelined HTTP/1.1 connection),
// and a request's body is sent whole before the next stream's request.
package h2gw

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is an http2 profile as the gateway applies it.
type Config struct {
	// Profile is the profile's full path, for its statistics.
	Profile string
	// MaxConcurrentStreams is concurrent-streams-per-connection.
	MaxConcurrentStreams uint32
	// IdleTimeout is connection-idle-timeout: a connection without an
	// open stream for this long is closed (GOAWAY); 0 never.
	IdleTimeout time.Duration
	// HeaderTableSize is header-table-size, the HPACK table the gateway
	// keeps for decoding the client's headers and encoding its own.
	HeaderTableSize uint32
	// ReceiveWindow is receive-window in bytes: the flow-control window
	// each stream's request body gets.
	ReceiveWindow int32
	// InsertHeader, when not "", names the field added to every request
	// the engine gets (insert-header enabled, insert-header-name), so
	// that members can tell the client spoke HTTP/2.
	InsertHeader string
	// PermitProhibitedCiphers turns off RFC 7540's TLS requirements
	// (enforce-tls-requirements disabled): the caller then serves HTTP/2
	// whatever TLSAdequate says.
	PermitProhibitedCiphers bool
	// Stats, when set, counts the profile's connections and streams.
	Stats *Stats
}

// Stats are an http2 profile's counters for `show ltm profile http2`.
type Stats struct {
	Connections, TotalConnections atomic.Int64
	Streams, TotalStreams         atomic.Int64
	MaxStreams                    atomic.Int64 // the most concurrent streams of one connection
	// Failed counts streams answered 502 because the engine connection
	// ended before their response.
	Failed atomic.Int64
}

// Reset zeroes the totals, keeping what is current.
func (s *Stats) Reset() {
	s.TotalConnections.Store(s.Connections.Load())
	s.TotalStreams.Store(s.Streams.Load())
	s.MaxStreams.Store(0)
	s.Failed.Store(0)
}

// Preface is what an HTTP/2 client sends first (RFC 9113 section 3.4):
// a cleartext connection that starts with it speaks HTTP/2 with prior
// knowledge.
const Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// Dialer opens a connection into the HTTP engine for the client being
// served; the gateway writes HTTP/1.1 requests on it and reads the
// responses. A second one is opened only after the first ended (the
// engine closed it, after a response that closes the connection).
type Dialer func() (net.Conn, error)

// Serve speaks HTTP/2 with c until the client or the idle timeout ends
// the connection, then closes what it dialed and returns once every
// stream is done. c is the client's TLS connection (its handshake done,
// ALPN h2, the TLS requirements checked by the caller: TLSAdequate) or a
// cleartext one whose first bytes are the Preface; either way what it
// carries is HTTP/2 with prior knowledge, which net/http's server reads.
func Serve(c net.Conn, cfg *Config, dial Dialer) {
	g := &gateway{cfg: cfg, dial: dial}
	st := cfg.Stats
	if st != nil {
		st.Connections.Add(1)
		st.TotalConnections.Add(1)
		defer st.Connections.Add(-1)
	}
	h2 := &http.HTTP2Config{
		MaxConcurrentStreams:      int(cfg.MaxConcurrentStreams),
		MaxDecoderHeaderTableSize: int(cfg.HeaderTableSize),
		MaxEncoderHeaderTableSize: int(cfg.HeaderTableSize),
		MaxReceiveBufferPerStream: int(cfg.ReceiveWindow),
	}
	if cfg.ReceiveWindow > 0 {
		// The connection's window holds every stream's.
		h2.MaxReceiveBufferPerConnection = int(cfg.ReceiveWindow) * int(max(1, min(cfg.MaxConcurrentStreams, 1<<10)))
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	done := make(chan struct{})
	var once sync.Once
	srv := &http.Server{
		Handler:     g,
		IdleTimeout: cfg.IdleTimeout,
		HTTP2:       h2,
		Protocols:   &protos,
		ErrorLog:    discardLog,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed || s == http.StateHijacked {
				once.Do(func() { close(done) })
			}
		},
	}
	// c is wrapped so that the server does not take a TLS connection for
	// one it must handshake: the handshake is done, and what is left is
	// HTTP/2 with prior knowledge.
	go srv.Serve(&oneConn{c: plainConn{newCoalesced(c)}, done: done})
	<-done
	c.Close()
	g.mu.Lock()
	g.closed = true
	u := g.cur
	g.mu.Unlock()
	if u != nil {
		u.fail(errClosed)
	}
	g.wg.Wait()
}

// plainConn hides the type of the connection it holds.
type plainConn struct{ net.Conn }

// oneConn is a listener of one connection, for net/http's server: the
// second Accept waits until that connection is done.
type oneConn struct {
	c    net.Conn
	done chan struct{}
	once sync.Once
}

func (l *oneConn) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.c })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// TLSAdequate reports whether a TLS connection meets RFC 7540's
// requirements for HTTP/2 (section 9.2): TLS 1.2 or later, and with
// TLS 1.2 an ephemeral key exchange and an AEAD cipher. The http2
// profile's enforce-tls-requirements refuses HTTP/2 to the others.
func TLSAdequate(st tls.ConnectionState) bool {
	if st.Version >= tls.VersionTLS13 {
		return true
	}
	if st.Version < tls.VersionTLS12 {
		return false
	}
	name := tls.CipherSuiteName(st.CipherSuite)
	return (strings.HasPrefix(name, "TLS_ECDHE_") || strings.HasPrefix(name, "TLS_DHE_")) &&
		(strings.Contains(name, "_GCM_") || strings.Contains(name, "CHACHA20_POLY1305"))
}

// discardLog silences net/http's log of clients that misbehave: a
// protocol error is the client's, answered with GOAWAY, not ltmd's.
var discardLog = log.New(io.Discard, "", 0)

var errClosed = errors.New("h2gw: client connection closed")

// gateway is one client connection's streams and its engine connection.
type gateway struct {
	cfg    *Config
	dial   Dialer
	mu     sync.Mutex
	cur    *upstream
	closed bool
	active int64 // streams being served, for Stats.MaxStreams
	wg     sync.WaitGroup
}

// upstream is one connection into the engine: requests are written in
// the order of queue, and its reader takes the responses in that order.
type upstream struct {
	c   net.Conn
	br  *bufio.Reader
	bw  *bufio.Writer
	wmu sync.Mutex // held while a request (head and body) is written
	// closing: a response that closes the connection was read; no
	// request is written on it any more (set under wmu).
	closing atomic.Bool
	// writers counts the streams holding or waiting for wmu to write a
	// request without a body; the last flushes.
	writers atomic.Int32
	queue   chan *exchange
	dead    chan struct{}
	once    sync.Once
}

// exchange is one stream's request on an upstream.
type exchange struct {
	method string
	respc  chan *http.Response // the response, once its head is read
	errc   chan error          // or why there will be none
	done   chan struct{}       // closed when the stream is done with the response
	// read is set by the stream once the response body was read to its
	// end; otherwise the reader drains or gives up the connection.
	read atomic.Bool
	// whole: the reader read the body before handing the response over
	// (or there is none), and does not wait for the stream.
	whole bool
}

// maxQueue is the least room for requests written and not yet answered
// on one engine connection (the engine's own bound, MaxInFlight, is 64);
// a connection allowing more concurrent streams gets room for them all.
const maxQueue = 64

// drainLimit is how much of a response body no stream wants (its client
// reset the stream) the reader skips to reach the next response; a longer
// one ends the engine connection instead.
const drainLimit = 256 << 10

func (g *gateway) upstream() (*upstream, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errClosed
	}
	if u := g.cur; u != nil && !u.isDead() && !u.closing.Load() {
		return u, nil
	}
	c, err := g.dial()
	if err != nil {
		return nil, err
	}
	u := &upstream{c: c, br: bufio.NewReaderSize(c, 16<<10), bw: bufio.NewWriterSize(c, 16<<10),
		queue: make(chan *exchange, max(maxQueue, int(g.cfg.MaxConcurrentStreams)+1)), dead: make(chan struct{})}
	g.cur = u
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		u.readLoop()
	}()
	return u, nil
}

func (u *upstream) isDead() bool {
	select {
	case <-u.dead:
		return true
	default:
		return false
	}
}

// fail ends the engine connection: the exchanges waiting on it get err.
func (u *upstream) fail(err error) {
	u.once.Do(func() {
		close(u.dead)
		u.c.Close() // unblocks a writer holding wmu
		u.wmu.Lock()
		defer u.wmu.Unlock()
		for {
			select {
			case ex := <-u.queue:
				ex.errc <- err
			default:
				return
			}
		}
	})
}

// enqueue takes ex as the next request written on u; the caller holds
// wmu. False: u is dead.
func (u *upstream) enqueue(ex *exchange) bool {
	if u.isDead() || u.closing.Load() {
		return false
	}
	u.queue <- ex // never blocks: the queue has room for every stream
	return true
}

// readLoop reads the responses in the order their requests were written
// and hands each to its stream.
func (u *upstream) readLoop() {
	for {
		var ex *exchange
		select {
		case ex = <-u.queue:
		case <-u.dead:
			return
		}
		resp, err := readResponse(u.br, ex.method)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				err = errEngineClosed
			}
			ex.errc <- err
			u.fail(err)
			return
		}
		if resp.Close {
			// Before the stream has its answer and its client can ask
			// again: the next request goes on a new connection.
			u.wmu.Lock()
			u.closing.Store(true)
			u.wmu.Unlock()
		}
		switch {
		case resp.Body == http.NoBody:
			ex.whole = true
			ex.respc <- resp // (HEAD, 204, 304): nothing to wait for
		case whole(resp, u.br):
			// A body already here in full is read now: the stream
			// copies it while the next response is read.
			body := make([]byte, resp.ContentLength)
			if _, err := io.ReadFull(resp.Body, body); err != nil {
				ex.errc <- err
				u.fail(err)
				return
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			ex.whole = true
			ex.respc <- resp
		default:
			ex.respc <- resp
			<-ex.done
			if !ex.read.Load() {
				n, err := io.CopyN(io.Discard, resp.Body, drainLimit+1)
				if err == nil || n > drainLimit || !errors.Is(err, io.EOF) {
					u.fail(errors.New("h2gw: an abandoned response body was not drained"))
					return
				}
			}
		}
		if resp.Close {
			u.fail(errEngineClosed)
			return
		}
	}
}

var errEngineClosed = errors.New("h2gw: the engine closed the connection")

// wholeLimit bounds a body the reader takes whole (whole).
const wholeLimit = 64 << 10

// whole reports whether resp's body is declared, small, and already in
// br: reading it costs no wait, and the stream need not hold the reader.
func whole(resp *http.Response, br *bufio.Reader) bool {
	n := resp.ContentLength
	return n >= 0 && n <= wholeLimit && int64(br.Buffered()) >= n
}

// readResponse reads the next final response, skipping interim ones
// (100 Continue, 103 Early Hints).
func readResponse(br *bufio.Reader, method string) (*http.Response, error) {
	req := &http.Request{Method: method}
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// ServeHTTP forwards one stream.
func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.wg.Add(1)
	defer g.wg.Done()
	if st := g.cfg.Stats; st != nil {
		st.Streams.Add(1)
		st.TotalStreams.Add(1)
		defer st.Streams.Add(-1)
		n := atomic.AddInt64(&g.active, 1)
		defer atomic.AddInt64(&g.active, -1)
		raise(&st.MaxStreams, n)
	}
	if r.Method == http.MethodConnect {
		// No tunnels: the engine's requests are HTTP/1.1 requests.
		http.Error(w, "CONNECT is not supported", http.StatusNotImplemented)
		return
	}
	ex := &exchange{method: r.Method, respc: make(chan *http.Response, 1), errc: make(chan error, 1), done: make(chan struct{})}
	defer close(ex.done)
	u, err := g.send(ex, r)
	if err != nil {
		g.failed(w)
		return
	}
	var resp *http.Response
	select {
	case resp = <-ex.respc:
	case <-ex.errc:
		g.failed(w)
		return
	case <-r.Context().Done():
		return
	}
	copyHead(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	br := u.br // what the body comes from, unless the reader took it whole
	if ex.whole {
		br = nil
	}
	if err := copyBody(w, resp, br); err == nil {
		ex.read.Store(true)
	}
}

// raise makes m at least n.
func raise(m *atomic.Int64, n int64) {
	for {
		old := m.Load()
		if n <= old || m.CompareAndSwap(old, n) {
			return
		}
	}
}

func (g *gateway) failed(w http.ResponseWriter) {
	if st := g.cfg.Stats; st != nil {
		st.Failed.Add(1)
	}
	w.WriteHeader(http.StatusBadGateway)
}

// send writes r on the engine connection as ex, and its body after it
// without waiting: a member may answer before the body is all sent. A
// connection found dead before anything was written is replaced once.
func (g *gateway) send(ex *exchange, r *http.Request) (*upstream, error) {
	for try := 0; ; try++ {
		u, err := g.upstream()
		if err != nil {
			return nil, err
		}
		u.writers.Add(1)
		u.wmu.Lock()
		if !u.enqueue(ex) {
			u.writers.Add(-1)
			u.wmu.Unlock()
			if try == 0 {
				continue
			}
			return nil, errEngineClosed
		}
		chunked := writeHead(u.bw, r, g.cfg.InsertHeader)
		if !hasBody(r) {
			// Requests that came together go in one write: the last
			// writer flushes what the ones before it left.
			var err error
			if u.writers.Add(-1) == 0 {
				err = u.bw.Flush()
			}
			u.wmu.Unlock()
			if err != nil {
				u.fail(err)
			}
			return u, nil
		}
		u.writers.Add(-1)
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			err := writeBody(u.bw, r.Body, chunked)
			if err == nil {
				err = u.bw.Flush()
			}
			u.wmu.Unlock()
			if err != nil {
				// The request cannot be completed on this connection:
				// whatever follows it would be misread.
				u.fail(err)
			}
		}()
		return u, nil
	}
}

// hasBody reports whether a request carries a body to forward.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// hopByHop are the fields that describe one connection, not the message:
// never forwarded either way.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true,
	"Transfer-Encoding": true, "Upgrade": true, "Te": true, "Trailer": true,
}

// writeHead writes r's request line and fields as HTTP/1.1 and reports
// whether its body goes chunked (an HTTP/2 request whose length is not
// declared).
func writeHead(bw *bufio.Writer, r *http.Request, insert string) (chunked bool) {
	target := r.RequestURI
	if target == "" {
		target = r.URL.RequestURI()
	}
	bw.WriteString(r.Method)
	bw.WriteByte(' ')
	bw.WriteString(target)
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(r.Host)
	bw.WriteString("\r\n")
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		if !hopByHop[k] && k != "Host" && k != "Content-Length" && k != "Expect" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // HTTP/2 gives no order across names; a stable one
	for _, k := range keys {
		for _, v := range r.Header[k] {
			writeField(bw, k, v)
		}
	}
	if insert != "" {
		writeField(bw, insert, "true")
	}
	switch {
	case r.ContentLength > 0 || r.ContentLength == 0 && methodWantsLength(r.Method):
		writeField(bw, "Content-Length", strconv.FormatInt(r.ContentLength, 10))
	case r.ContentLength < 0 && hasBody(r):
		writeField(bw, "Transfer-Encoding", "chunked")
		chunked = true
	}
	bw.WriteString("\r\n")
	return chunked
}

func writeField(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

// methodWantsLength: an empty body of these is declared, as clients do.
func methodWantsLength(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch
}

// writeBody copies a request body, chunked or as declared.
func writeBody(bw *bufio.Writer, body io.Reader, chunked bool) error {
	if !chunked {
		_, err := io.Copy(bw, body)
		return err
	}
	buf := make([]byte, 16<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			fmt.Fprintf(bw, "%x\r\n", n)
			bw.Write(buf[:n])
			bw.WriteString("\r\n")
			if err == nil {
				// The client sends the body as it comes: so does the
				// gateway.
				if ferr := bw.Flush(); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			_, err := bw.WriteString("0\r\n\r\n")
			return err
		}
		if err != nil {
			return err
		}
	}
}

// copyHead copies a response's fields but the connection's own, and
// those its Connection field names.
func copyHead(dst, src http.Header) {
	named := map[string]bool{}
	for _, v := range src["Connection"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				named[http.CanonicalHeaderKey(f)] = true
			}
		}
	}
	for k, vs := range src {
		if hopByHop[k] || named[k] {
			continue
		}
		dst[k] = vs
	}
}

// bodyBufs are copyBody's buffers.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// copyBody sends a response body to the client as it comes: what has
// arrived is flushed when the engine connection has nothing more
// buffered and more of the body is to come, so a streamed response is
// not held back, while a body read whole goes out with the end of the
// stream (one write for the whole response, not one per frame). br is
// nil when the reader took the body whole.
func copyBody(w http.ResponseWriter, resp *http.Response, br *bufio.Reader) error {
	f, _ := w.(http.Flusher)
	bp := bodyBufs.Get().(*[]byte)
	defer bodyBufs.Put(bp)
	buf := *bp
	left := resp.ContentLength // -1: not declared
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if left >= 0 {
				left -= int64(n)
			}
			if left != 0 && err == nil && f != nil && br != nil && br.Buffered() == 0 {
				f.Flush()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
