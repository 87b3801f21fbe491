package h2member

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// maxPipelined bounds the requests of one engine connection whose
// responses are not yet written back; the engine's own window
// (MaxInFlight) is lower.
const maxPipelined = 128

// bridge serves one engine connection: its reader turns each HTTP/1.1
// request into a stream (a goroutine per exchange, for x/net's
// RoundTrip), and its responder writes the responses back in the order
// of the requests.
type bridge struct {
	p      *Pool
	g      *group
	t      Target
	c      net.Conn // the bridge's end of the pipe
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan *exchange
}

func newBridge(p *Pool, g *group, t Target, c net.Conn) *bridge {
	ctx, cancel := context.WithCancel(p.ctx)
	return &bridge{p: p, g: g, t: t, c: c, ctx: ctx, cancel: cancel, queue: make(chan *exchange, maxPipelined)}
}

// exchange is one request and its response.
type exchange struct {
	in   *http.Request
	out  *http.Request
	body *reqBody // nil: no body
	done chan struct{}
	resp *http.Response
	err  error
}

// serve reads requests until the engine closes its end or asks to
// close after a response.
func (b *bridge) serve() {
	go b.respond()
	defer close(b.queue)
	br := bufio.NewReaderSize(b.c, 16<<10)
	for {
		in, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		x := &exchange{in: in, done: make(chan struct{})}
		x.out = b.outbound(x)
		go b.roundTrip(x)
		select {
		case b.queue <- x:
		case <-b.ctx.Done():
			return
		}
		if x.body != nil {
			// The next request starts where this body ends: wait until
			// x/net has read it, or drop what it left.
			select {
			case <-x.body.done:
			case <-b.ctx.Done():
				return
			}
			if !x.body.drain() {
				return
			}
		}
		if in.Close {
			return
		}
	}
}

// roundTrip sends x's request as a stream. A connection that turned
// unusable between the pick and the stream (GOAWAY, closed) costs one
// more pick for a request without a body (x/net has closed a body).
func (b *bridge) roundTrip(x *exchange) {
	defer close(x.done)
	for try := 0; ; try++ {
		m, err := b.g.get(b.ctx, b.p, b.t)
		if err != nil {
			x.err = err
			if x.body != nil {
				x.body.Close() // as RoundTrip does on its errors
			}
			return
		}
		if st := b.p.cfg.Stats; st != nil {
			st.Streams.Add(1)
			st.TotalStreams.Add(1)
		}
		x.resp, x.err = m.cc.RoundTrip(x.out)
		if x.err == nil {
			return
		}
		if st := b.p.cfg.Stats; st != nil {
			st.Streams.Add(-1)
		}
		if try > 0 || !unsent(x.err) || x.body != nil {
			return
		}
	}
}

// unsent reports whether RoundTrip failed before the stream was opened:
// the connection was already closed or could take no more streams.
// x/net does not export these errors; their text is stable.
func unsent(err error) bool {
	s := err.Error()
	return s == "http2: client conn not usable" || s == "http2: client conn is closed" ||
		s == "http2: client conn could not be established"
}

// outbound makes the HTTP/2 request for x.in: the same method, target,
// authority and fields, less those of the HTTP/1.1 connection (RFC 9113
// section 8.2.2: Connection and what it names, Keep-Alive,
// Proxy-Connection, Transfer-Encoding, Upgrade, TE but "trailers");
// a body of undeclared length goes as DATA frames as it comes, with
// its chunked trailers as the stream's trailers.
func (b *bridge) outbound(x *exchange) *http.Request {
	in := x.in
	u := *in.URL
	u.Scheme = "http"
	if b.t.TLS {
		u.Scheme = "https"
	}
	host := in.Host
	if host == "" && b.t.Remote != nil {
		host = b.t.Remote.String()
	}
	u.Host = host
	h := make(http.Header, len(in.Header))
	for k, vv := range in.Header {
		if hopByHop(k) || namedBy(in.Header, k) {
			continue
		}
		h[k] = vv
	}
	if te := in.Header["Te"]; len(te) > 0 && hasToken(te, "trailers") {
		h["Te"] = []string{"trailers"}
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // x/net would add its own
	}
	out := (&http.Request{Method: in.Method, URL: &u, Host: host, Header: h, ContentLength: in.ContentLength,
		Proto: "HTTP/2.0", ProtoMajor: 2}).WithContext(b.ctx)
	if in.Body != nil && in.Body != http.NoBody {
		x.body = &reqBody{in: in, done: make(chan struct{})}
		if in.ContentLength < 0 {
			// Filled when the body ends; the names the client declared
			// are declared to the member (some servers keep only those).
			out.Trailer = http.Header{}
			for k := range in.Trailer { // net/http moved them there
				if !hopByHop(k) {
					out.Trailer[k] = nil
				}
			}
			x.body.trailer = out.Trailer
		}
		out.Body = x.body
	}
	return out
}

// hopByHop are the fields of one HTTP/1.1 connection (TE is added back
// when it says trailers).
func hopByHop(k string) bool {
	switch k {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Te", "Trailer", "Expect", "Host", "Content-Length":
		return true
	}
	return false
}

// namedBy reports whether the Connection field names k.
func namedBy(h http.Header, k string) bool {
	for _, v := range h["Connection"] {
		for t := range strings.SplitSeq(v, ",") {
			if textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(t)) == k {
				return true
			}
		}
	}
	return false
}

func hasToken(vv []string, tok string) bool {
	for _, v := range vv {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), tok) {
				return true
			}
		}
	}
	return false
}

// reqBody is a request's body as x/net reads it. Close (x/net is done
// with it, read whole or not) hands the rest back to the bridge's
// reader, which drops it to reach the next request.
type reqBody struct {
	in      *http.Request
	trailer http.Header // the outbound request's, for the chunked trailers
	mu      sync.Mutex  // held during a read of in.Body
	closed  atomic.Bool
	once    sync.Once
	done    chan struct{}
	eof     bool
}

func (r *reqBody) Read(p []byte) (int, error) {
	if r.closed.Load() {
		return 0, net.ErrClosed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eof {
		return 0, io.EOF
	}
	n, err := r.in.Body.Read(p)
	if err == io.EOF {
		r.eof = true
		if r.trailer != nil {
			for k, vv := range r.in.Trailer {
				if !hopByHop(k) {
					r.trailer[k] = vv
				}
			}
		}
		r.once.Do(func() { close(r.done) })
	}
	return n, err
}

func (r *reqBody) Close() error {
	r.closed.Store(true)
	r.once.Do(func() { close(r.done) })
	return nil
}

// drain drops what x/net left of the body, once its last read returned,
// and reports whether the engine connection can go on.
func (r *reqBody) drain() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eof {
		return true
	}
	_, err := io.Copy(io.Discard, r.in.Body)
	r.eof = true
	return err == nil
}

// respond writes the responses back in the order of the requests. A
// failure before the response's head is answered 502 and the engine
// connection goes on; one within the body cannot be told in HTTP/1.1
// framing, and ends the engine connection, as a member that closes
// its connection mid-response does.
func (b *bridge) respond() {
	defer b.c.Close()
	defer b.cancel()
	bw := bufio.NewWriterSize(b.c, 16<<10)
	buf := make([]byte, 32<<10)
	for x := range b.queue {
		<-x.done
		if x.err != nil {
			if st := b.p.cfg.Stats; st != nil {
				st.Failed.Add(1)
			}
			bw.WriteString("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
			if bw.Flush() != nil {
				break
			}
			continue
		}
		err := writeResponse(bw, x, buf)
		x.resp.Body.Close()
		if st := b.p.cfg.Stats; st != nil {
			st.Streams.Add(-1)
		}
		if err != nil || x.in.Close {
			break
		}
	}
	// Whatever is still queued is abandoned with the connection; closing
	// it stops the reader, which then closes the queue.
	b.cancel()
	b.c.Close()
	for x := range b.queue {
		<-x.done
		if x.resp != nil {
			x.resp.Body.Close()
			if st := b.p.cfg.Stats; st != nil {
				st.Streams.Add(-1)
			}
		}
	}
}

var errBody = errors.New("h2member: the member's response body ended early")

// writeResponse writes x's response as HTTP/1.1: a body without a
// declared length (gRPC's, a stream of events), or one whose trailers
// may come, chunked and flushed as it arrives, with the stream's
// trailers after the last chunk.
func writeResponse(bw *bufio.Writer, x *exchange, buf []byte) error {
	resp := x.resp
	code := resp.StatusCode
	bw.WriteString("HTTP/1.1 ")
	bw.WriteString(strconv.Itoa(code))
	bw.WriteByte(' ')
	bw.WriteString(http.StatusText(code))
	bw.WriteString("\r\n")
	bodyless := x.in.Method == "HEAD" || code == 204 || code == 304
	chunked := !bodyless && (resp.ContentLength < 0 || len(resp.Trailer) > 0 || isGRPC(resp.Header))
	for k, vv := range resp.Header {
		if k == "Transfer-Encoding" || k == "Connection" || k == "Keep-Alive" || k == "Content-Length" && !bodyless {
			continue
		}
		for _, v := range vv {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	switch {
	case bodyless:
		bw.WriteString("\r\n")
		return bw.Flush()
	case chunked:
		bw.WriteString("Transfer-Encoding: chunked\r\n\r\n")
	default:
		bw.WriteString("Content-Length: ")
		bw.WriteString(strconv.FormatInt(resp.ContentLength, 10))
		bw.WriteString("\r\n\r\n")
	}
	left := resp.ContentLength
	for {
		// What is here goes before the next read may wait.
		if err := bw.Flush(); err != nil {
			return err
		}
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if chunked {
				bw.WriteString(strconv.FormatInt(int64(n), 16))
				bw.WriteString("\r\n")
				bw.Write(buf[:n])
				bw.WriteString("\r\n")
			} else {
				if int64(n) > left {
					return errBody
				}
				bw.Write(buf[:n])
				left -= int64(n)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			bw.Flush() // what came goes; the connection then ends
			return err
		}
	}
	if !chunked {
		if left != 0 {
			bw.Flush()
			return errBody
		}
		return bw.Flush()
	}
	bw.WriteString("0\r\n")
	for k, vv := range resp.Trailer {
		if hopByHop(k) {
			continue
		}
		for _, v := range vv {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	bw.WriteString("\r\n")
	return bw.Flush()
}

// isGRPC: gRPC's status comes in trailers, whatever the length.
func isGRPC(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "application/grpc")
}
