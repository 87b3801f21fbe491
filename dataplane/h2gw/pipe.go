package h2gw

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Pipe returns a connected pair of in-memory connections, the gateway's
// end and the engine's, for a Dialer. Unlike a socket pair it costs no
// system call per request and response, and unlike net.Pipe it buffers:
// a writer does not wait for the reader unless pipeLimit bytes are
// unread, so requests (and responses) written together are read
// together. Deadlines are not kept: neither side sets any.
func Pipe() (gateway, engine net.Conn) {
	up, down := newHalf(), newHalf()
	lane := new(Lane)
	return &pipeConn{r: down, w: up, lane: lane}, &pipeConn{r: up, w: down, lane: lane}
}

// pipeLimit bounds the unread bytes of one direction.
const pipeLimit = 256 << 10

// half is one direction of a Pipe.
type half struct {
	mu     sync.Mutex
	cond   sync.Cond
	buf    []byte
	off    int  // buf[off:] is unread
	eof    bool // the writer closed its side: EOF once drained
	broken bool // the reader closed its side: writes fail
	// unread, when set (count), is told whether this half holds
	// unread bytes: 1 while it does (counted), so that the gateway's
	// responders know an answer is on its way (upstream.fill); drained,
	// when set, runs (outside mu) once a read took the last of them.
	unread  *atomic.Int32
	counted bool
	drained func()
}

// count keeps n told of this half's unread bytes, and runs drained (if
// not nil) each time a read takes the last of them.
func (h *half) count(n *atomic.Int32, drained func()) {
	h.mu.Lock()
	h.unread, h.drained = n, drained
	h.recount()
	h.mu.Unlock()
}

// recount tells unread whether bytes wait, and reports whether it was
// told they no longer do. Under h.mu.
func (h *half) recount() bool {
	if h.unread == nil {
		return false
	}
	waiting := h.off < len(h.buf) && !h.broken
	if waiting == h.counted {
		return false
	}
	h.counted = waiting
	if waiting {
		h.unread.Add(1)
		return false
	}
	h.unread.Add(-1)
	return true
}

func newHalf() *half {
	h := &half{}
	h.cond.L = &h.mu
	return h
}

func (h *half) read(b []byte) (int, error) {
	h.mu.Lock()
	for h.off == len(h.buf) && !h.eof && !h.broken {
		h.cond.Wait()
	}
	if h.broken {
		h.mu.Unlock()
		return 0, net.ErrClosed
	}
	if h.off == len(h.buf) {
		h.mu.Unlock()
		return 0, io.EOF
	}
	n := copy(b, h.buf[h.off:])
	h.off += n
	drained := false
	if h.off == len(h.buf) {
		h.buf, h.off = h.buf[:0], 0
		drained = h.recount()
	}
	h.cond.Broadcast() // room for a waiting writer
	fn := h.drained
	h.mu.Unlock()
	if drained && fn != nil {
		fn()
	}
	return n, nil
}

func (h *half) write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.buf)-h.off >= pipeLimit && !h.eof && !h.broken {
		h.cond.Wait()
	}
	if h.eof || h.broken {
		return 0, net.ErrClosed
	}
	h.buf = append(h.buf, b...)
	h.recount()
	h.cond.Broadcast()
	return len(b), nil
}

// tryWrite is write without waiting: false when pipeLimit bytes are
// unread. The gateway's reader writes requests so, and never waits for
// the engine.
func (h *half) tryWrite(b []byte) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.eof || h.broken {
		return false, net.ErrClosed
	}
	if len(h.buf)-h.off >= pipeLimit {
		return false, nil
	}
	h.buf = append(h.buf, b...)
	h.recount()
	h.cond.Broadcast()
	return true, nil
}

func (h *half) close(broken bool) {
	h.mu.Lock()
	if broken {
		h.broken = true
	} else {
		h.eof = true
	}
	h.recount()
	h.cond.Broadcast()
	h.mu.Unlock()
}

// pipeConn is one end of a Pipe.
type pipeConn struct {
	r, w *half
	lane *Lane // the streams behind the requests (LaneOf)
}

func (c *pipeConn) Read(b []byte) (int, error)  { return c.r.read(b) }
func (c *pipeConn) Write(b []byte) (int, error) { return c.w.write(b) }

func (c *pipeConn) tryWrite(b []byte) (bool, error) { return c.w.tryWrite(b) }

// CloseWrite ends what this end sends: the other end reads EOF once it
// has read the rest.
func (c *pipeConn) CloseWrite() error {
	c.w.close(false)
	return nil
}

// Close ends both directions: the other end reads EOF after the rest of
// what was written, and its writes fail.
func (c *pipeConn) Close() error {
	c.w.close(false)
	c.r.close(true)
	return nil
}

func (c *pipeConn) LocalAddr() net.Addr                { return pipeAddr{} }
func (c *pipeConn) RemoteAddr() net.Addr               { return pipeAddr{} }
func (c *pipeConn) SetDeadline(t time.Time) error      { return nil }
func (c *pipeConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *pipeConn) SetWriteDeadline(t time.Time) error { return nil }

// pipeAddr is a Pipe end's address.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
