//go:build linux

package mblb

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/tlsloop"
)

// TLS clients on the event loops: a session given a handshaken TLS
// session (SetTLS) before Start reads and writes its client's plaintext
// through it (dataplane/tlsloop) instead of the raw socket. Everything
// above the socket is the same session. Its writes are taken whole (the
// records wait in the TLS session while the socket is full, and the next
// write waits for them), so a session that closes with records still
// waiting leaves them to a goroutine that sends them and closes
// (drainTLS).

// SetTLS makes a loop session's client speak TLS through c, whose
// handshake is done and which is detached onto the session's socket.
// Before Start, on the loop's thread.
func (s *ClientConn) SetTLS(c *tlsloop.Conn) { s.lp.tls = c }

// readTLS is readFD through the client's TLS session: plaintext into the
// stream's free tail; syscall.EAGAIN when the socket is drained, 0 and no
// error at close_notify or FIN.
func (st *stream) readTLS(c *tlsloop.Conn) (k int, full bool, err error) {
	if err := st.prepare(); err != nil {
		return 0, false, err
	}
	space := st.buf.b[st.end:]
	n, e := c.Read(space)
	if c.Buffered() > 0 {
		c.Flush() // the session's own answer (a key update's); an error shows at the next write
	}
	st.end += n
	switch {
	case n > 0:
		st.more = n == len(space) || c.More()
		return n, n == len(space), nil
	case e == tlsloop.ErrWouldBlock:
		return 0, false, syscall.EAGAIN
	case errors.Is(e, io.EOF):
		return 0, false, nil
	}
	return 0, false, e
}

// tlsScratch gathers a batch of messages into one buffer, so that they go
// as one record (up to its size) rather than a record each.
var tlsScratch = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// writeTLS is write for a TLS client: the batch is encrypted whole, once
// the records of the previous one went.
func (ls *sessLoop) writeTLS(s *ClientConn) {
	c := ls.tls
	if c.Buffered() > 0 {
		if err := c.Flush(); err != nil {
			s.nbErr = err
			return
		}
		if c.Buffered() > 0 {
			return // nothing taken: the writability edge goes on
		}
	}
	var n int
	if len(s.nbBufs) == 1 {
		n, _ = c.Write(s.nbBufs[0])
	} else {
		bp := tlsScratch.Get().(*[]byte)
		b := (*bp)[:0]
		for _, p := range s.nbBufs {
			for len(p) > 0 {
				k := min(len(p), cap(b)-len(b))
				b = append(b, p[:k]...)
				p = p[k:]
				if len(b) == cap(b) {
					w, _ := c.Write(b)
					n += w
					b = b[:0]
				}
			}
		}
		if len(b) > 0 {
			w, _ := c.Write(b)
			n += w
		}
		*bp = b[:0]
		tlsScratch.Put(bp)
	}
	s.nbN = int64(n)
	s.nbBufs = advance(s.nbBufs, n)
	if err := c.Flush(); err != nil {
		s.nbErr = err
	}
}

// closeTLS closes a TLS client's socket on an orderly end: close_notify,
// then FIN. Records the socket has not taken yet go from a goroutine,
// within drainTimeout, which then closes the socket.
func (ls *sessLoop) closeTLS() {
	c := ls.tls
	c.CloseWrite()
	c.Flush()
	if c.Buffered() == 0 {
		unix.Shutdown(ls.fd, unix.SHUT_WR)
		unix.Close(ls.fd)
		c.Release()
		return
	}
	nc, err := fdConn(ls.fd)
	if err != nil {
		c.Release()
		return
	}
	go drainTLS(c, nc)
}

// drainTimeout bounds how long a closed TLS client is given to take the
// last records.
const drainTimeout = 5 * time.Second

// drainTLS sends a closed session's last records and closes the socket.
func drainTLS(c *tlsloop.Conn, nc net.Conn) {
	nc.SetWriteDeadline(time.Now().Add(drainTimeout))
	if tc, ok := nc.(*net.TCPConn); ok {
		if _, err := c.Attach(tc); err == nil {
			tc.CloseWrite()
		}
	}
	nc.Close()
}
