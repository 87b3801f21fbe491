//go:build linux

// Package tlsloop lets an event loop carry a crypto/tls connection once
// its handshake is done. crypto/tls wants a blocking net.Conn; an event
// loop has a non-blocking socket and no goroutine to park. The handshake
// (certificates, timeouts, rules' events) therefore stays on a goroutine,
// over the blocking connection the net package gives, and the session
// then moves to the raw socket: its Read reports a temporary net.Error
// when the socket has nothing more (crypto/tls keeps partial records and
// handshake messages and does not make temporary read errors sticky), and
// its Write keeps what the socket does not take for the loop to send on
// its writability edge. The loop is the only caller once Detach ran.
package tlsloop

import (
	"crypto/tls"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
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
	tls *tls.Conn
	t   transport
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
	return c.tls.Read(p)
}

// Write encrypts p; the records the socket does not take at once are kept
// (Buffered) and sent by Flush. An error is the socket's.
func (c *Conn) Write(p []byte) (int, error) { return c.tls.Write(p) }

// Buffered is the ciphertext waiting for the socket to take it.
func (c *Conn) Buffered() int { return len(c.t.out) - c.t.off }

// Flush writes the buffered ciphertext the socket takes; with Buffered
// still above 0 the loop waits for the socket's writability edge.
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
}

// maxKeep bounds the output buffer kept for the next write once emptied:
// a larger one (a burst the socket did not take) is dropped.
const maxKeep = 32 << 10

func (t *transport) Read(p []byte) (int, error) {
	if t.fd < 0 {
		return t.Conn.Read(p)
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
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
		case n == 0:
			return 0, io.EOF
		}
		if n < len(p) && !t.fin {
			// The socket is empty now: an edge will report what comes
			// next, no read(2) needed to learn it.
			t.drained = true
		}
		return n, nil
	}
}

func (t *transport) Write(p []byte) (int, error) {
	if t.fd < 0 {
		return t.Conn.Write(p)
	}
	if t.err != nil {
		return 0, t.err
	}
	if t.off < len(t.out) {
		t.out = append(t.out, p...)
		return len(p), nil
	}
	w, err := rawsock.WriteAll(t.fd, p)
	if err != nil {
		t.err = &net.OpError{Op: "write", Net: "tcp", Err: err}
		return w, t.err
	}
	if w < len(p) {
		t.out = append(t.out[:0], p[w:]...)
		t.off = 0
	}
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
