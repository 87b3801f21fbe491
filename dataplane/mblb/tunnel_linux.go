//go:build linux

package mblb

import (
	"net"
	"os"
)

// post runs fn on the session's loop.
func (ls *sessLoop) post(fn func()) { ls.l.Post(fn) }

// fdConn makes a net.Conn of a connected socket, which it takes over (fd
// is closed; the Conn holds a duplicate).
func fdConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "tunnel")
	c, err := net.FileConn(f)
	f.Close()
	return c, err
}

// migrateTunnel moves the client's socket off its event loop to a
// goroutine that copies it to sc, with what was read after the request.
// Loop thread only.
func (s *ClientConn) migrateTunnel(sc *serverConn) {
	ls := s.lp
	if ls.released || ls.migrated || s.isClosed() {
		return
	}
	s.upgrading = false
	first := append([]byte(nil), ls.st.pending()...)
	ls.st.start = ls.st.end
	ls.l.Remove(ls.fd, ls.tok)
	ls.tok = 0
	c, err := fdConn(ls.fd)
	if err == nil && ls.tls != nil {
		// The TLS session goes with the socket (records still buffered
		// first).
		raw := c.(*net.TCPConn)
		if c, err = ls.tls.Attach(raw); err != nil {
			resetConn(raw)
			c = nil
		}
	}
	ls.migrated = true
	s.zwFD.Store(0) // a tunnel's bytes are the member's to pace
	s.mu.Lock()
	s.c = c
	s.cond.Broadcast()
	s.mu.Unlock()
	if err != nil {
		s.e.logf("mblb: client %s: the tunnel cannot take the socket: %v, reset", s.client, err)
		s.Close(true)
		return
	}
	go s.tunnelFrom(first, make([]byte, readSize), sc)
}

// resumeHTTP frames what the client sent after an upgrade the member
// refused, and reads on. Loop thread only.
func (s *ClientConn) resumeHTTP() {
	ls := s.lp
	if ls.released || ls.migrated || s.isClosed() || !s.upgrading {
		return
	}
	s.upgrading = false
	if s.take(&ls.st, 0) != nil {
		return
	}
	if !s.upgrading {
		s.turn()
	}
}
