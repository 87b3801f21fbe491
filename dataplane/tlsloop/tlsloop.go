//go:build linux

// Package tlsloop lets an event loop carry a crypto/tls connection once
// its handshake is done. crypto/tls wants a blocking net.Conn; an event
// loop has a non-blocking socket and no goroutine to park. The handshake
// (certificates, timeouts, rules' events) therefore stays on a goroutine,
// over the blocking connection the net package gives, and the session
// then moves to the raw socket: its Read reports a temporary net.Error
// when the socket has nothing more (crypto/tls keeps partial records and
// handshake messages and does not make temporary read errors sticky), and
// its records are kept until Flush writes them (one write(2) for a batch
// of records), what the socket does not take waiting for the loop's next
// writability edge. The loop is the only caller once Detach ran; Attach
// gives the session back to a blocking connection (a tunnel leaving the
// loop).
package tlsloop

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// ErrWouldBlock is what Read returns when the socket has no more
// ciphertext for now: the loop waits for its next readiness edge.
var ErrWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "tlsloop: socket drained" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

// Conn is a TLS session whose transport is handed from a blocking
// connection (during the handshake) to a non-blocking socket.
type Conn struct {
	tls  *tls.Conn
	t    transport
	more bool
	max  int // maximum-record-size; 0: records as crypto/tls makes them
}

// DupConn is a net.Conn on a duplicate of fd, a connected socket: the
// handshake's connection, whose Close leaves fd open.
func DupConn(fd int) (*net.TCPConn, error) {
	nfd, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(nfd), "")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return nil, errors.New("tlsloop: not a TCP connection")
	}
	return tc, nil
}

// Server is a server-side TLS connection over c; the handshake runs on
// c (blocking, with c's deadlines) until Detach.
func Server(c net.Conn, cfg *tls.Config) *Conn {
	lc := &Conn{}
	lc.t.Conn, lc.t.fd = c, -1
	lc.tls = tls.Server(&lc.t, cfg)
	return lc
}

// TLS is the session, for its handshake and its ConnectionState.
func (c *Conn) TLS() *tls.Conn { return c.tls }

// Detach moves the session to fd, a non-blocking socket for the same
// connection; the blocking connection is not used again (the caller
// closes it). Bytes crypto/tls already read past the handshake stay in
// the session: the loop calls Read once without waiting for an edge.
func (c *Conn) Detach(fd int) {
	c.t.fd = fd
	c.t.drained = false
}

// Readable tells the session that the socket reported data, or its FIN
// (fin): from then on every read goes to the socket, until it returns 0.
func (c *Conn) Readable(fin bool) {
	c.t.drained = false
	c.t.fin = c.t.fin || fin
}

// Read returns plaintext, ErrWouldBlock when the socket is drained, or
// io.EOF at the peer's close_notify or FIN.
func (c *Conn) Read(p []byte) (int, error) {
	t := &c.t
	t.recs = 0
	n, err := c.tls.Read(p)
	// Nothing more is to be had before the next edge when this Read took
	// the one record the socket delivered, all of its plaintext, and the
	// socket is drained: crypto/tls then holds no bytes, and asking again
	// would only cost a call (and crypto/tls's allocation per read).
	c.more = !(err == nil && n > 0 && n < len(p) && t.drained && t.recs == 1 && t.hdrN == 0 && t.left == 0)
	return n, err
}

// More reports whether Read may return more before the socket's next
// readiness edge (false only when it surely would not).
func (c *Conn) More() bool { return c.more }

// Write encrypts p into records kept for Flush (Buffered). An error is
// the socket's, from an earlier Flush.
func (c *Conn) Write(p []byte) (int, error) {
	if c.max > 0 {
		return tlsprof.WriteRecords(c.tls, p, c.max)
	}
	return c.tls.Write(p)
}

// LimitRecords makes Write seal no record with more than n bytes of
// plaintext (client-ssl's maximum-record-size); 0 lifts the limit.
func (c *Conn) LimitRecords(n int) { c.max = n }

// Buffered is the ciphertext waiting for the socket to take it.
func (c *Conn) Buffered() int { return len(c.t.out) - c.t.off }

// Flush writes the buffered records the socket takes; with Buffered still
// above 0 the loop waits for the socket's writability edge.
func (c *Conn) Flush() error { return c.t.flush() }

// CloseWrite sends close_notify (buffered like any record).
func (c *Conn) CloseWrite() error { return c.tls.CloseWrite() }

// Release lets go of the buffered ciphertext (the connection is over).
func (c *Conn) Release() { c.t.out, c.t.off = nil, 0 }

// transport is the net.Conn under the session: the handshake's connection
// until Detach, the raw socket after.
type transport struct {
	net.Conn
	fd      int
	drained bool // the last read returned less than asked: wait for an edge
	fin     bool // the peer's FIN was reported: no edge will follow it
	err     error
	out     []byte // ciphertext not yet taken by the socket, from off
	off     int
	// The records read from the socket, followed for More: the header
	// being read (hdr, hdrN), the body bytes left of the current record,
	// and the records completed during the current Read.
	hdr  [5]byte
	hdrN int
	left int
	recs int
}

// Unwrap is the handshake's connection, kept after Detach for what it
// recorded while the handshake ran (tlsprof.HelloConn's hellos, which
// SSL::sessionid reads); it is closed by then.
func (t *transport) Unwrap() net.Conn { return t.Conn }

// follow advances the record boundaries over b, bytes read from the
// socket.
func (t *transport) follow(b []byte) {
	for len(b) > 0 {
		if t.left == 0 {
			k := copy(t.hdr[t.hdrN:], b)
			t.hdrN += k
			b = b[k:]
			if t.hdrN == len(t.hdr) {
				t.hdrN = 0
				if t.left = int(t.hdr[3])<<8 | int(t.hdr[4]); t.left == 0 {
					t.recs++
				}
			}
			continue
		}
		k := min(t.left, len(b))
		t.left -= k
		b = b[k:]
		if t.left == 0 {
			t.recs++
		}
	}
}

// maxKeep bounds the output buffer kept for the next write once emptied:
// a larger one (a burst the socket did not take) is dropped.
const maxKeep = 32 << 10

func (t *transport) Read(p []byte) (int, error) {
	if t.fd < 0 {
		// The handshake's bytes are followed too: the record boundaries
		// are known from the connection's first byte.
		n, err := t.Conn.Read(p)
		t.follow(p[:n])
		return n, err
	}
	if t.drained {
		return 0, ErrWouldBlock
	}
	for {
		n, err := rawsock.Read(t.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			t.drained = true
			return 0, ErrWouldBlock
		case err != nil:
			t.peerEnded()
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
		case n == 0:
			t.peerEnded()
			return 0, io.EOF
		}
		if n < len(p) && !t.fin {
			// The socket is empty now: an edge will report what comes
			// next, no read(2) needed to learn it.
			t.drained = true
		}
		t.follow(p[:n])
		return n, nil
	}
}

// peerEnded tells the handshake's connection, when it watches how the
// session ends (tlsprof.WatchConn), that the socket ended where crypto/tls
// waited for a record: without close_notify, which crypto/tls reads
// without asking the socket again.
func (t *transport) peerEnded() {
	if w, ok := t.Conn.(interface{ PeerEnded() }); ok {
		w.PeerEnded()
	}
}

func (t *transport) Write(p []byte) (int, error) {
	if t.fd < 0 {
		return t.Conn.Write(p)
	}
	if t.err != nil {
		return 0, t.err
	}
	t.out = append(t.out, p...)
	return len(p), nil
}

func (t *transport) flush() error {
	if t.err != nil {
		return t.err
	}
	if t.off == len(t.out) {
		return nil
	}
	w, err := rawsock.WriteAll(t.fd, t.out[t.off:])
	t.off += w
	if err != nil {
		t.err = &net.OpError{Op: "write", Net: "tcp", Err: err}
		return t.err
	}
	if t.off == len(t.out) {
		if cap(t.out) > maxKeep {
			t.out = nil
		} else {
			t.out = t.out[:0]
		}
		t.off = 0
	}
	return nil
}

// Deadlines belong to the handshake's connection; on the loop the loop's
// timers rule (crypto/tls sets one around close_notify).
func (t *transport) SetDeadline(d time.Time) error {
	if t.fd < 0 {
		return t.Conn.SetDeadline(d)
	}
	return nil
}

func (t *transport) SetReadDeadline(d time.Time) error {
	if t.fd < 0 {
		return t.Conn.SetReadDeadline(d)
	}
	return nil
}

func (t *transport) SetWriteDeadline(d time.Time) error {
	if t.fd < 0 {
		return t.Conn.SetWriteDeadline(d)
	}
	return nil
}

// Close is the handshake connection's; the loop closes its socket itself.
func (t *transport) Close() error {
	if t.fd < 0 {
		return t.Conn.Close()
	}
	return nil
}

// Attach gives the session back to a blocking connection for the same
// socket (nc, which the loop's descriptor is no longer used beside): the
// records still buffered are written to nc first. The result reads and
// writes plaintext; its CloseWrite sends close_notify, then a FIN.
func (c *Conn) Attach(nc *net.TCPConn) (net.Conn, error) {
	t := &c.t
	if t.err != nil {
		return nil, t.err
	}
	if t.off < len(t.out) {
		if _, err := nc.Write(t.out[t.off:]); err != nil {
			return nil, err
		}
	}
	t.out, t.off = nil, 0
	t.Conn, t.fd = nc, -1
	return &Blocking{Conn: c.tls, raw: nc}, nil
}

// Blocking is a session given back to a blocking connection (Attach).
type Blocking struct {
	*tls.Conn
	raw *net.TCPConn
}

// CloseWrite ends the direction in order: close_notify, then FIN.
func (b *Blocking) CloseWrite() error {
	b.Conn.CloseWrite()
	return b.raw.CloseWrite()
}

// SetLinger is the socket's, so that a reset can end the connection.
func (b *Blocking) SetLinger(sec int) error { return b.raw.SetLinger(sec) }

// SetNoDelay is the socket's, so that a tunnel's settings (the websocket
// profile's no-delay) reach a TLS client's socket too.
func (b *Blocking) SetNoDelay(on bool) error { return b.raw.SetNoDelay(on) }
