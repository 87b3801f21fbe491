//go:build linux

package mblb

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sendbatch"
	"github.com/openltm/openltm/dataplane/tlsloop"
)

// Sessions on event loops.
//
// A session started with NewLoopClientConn lives on one loop of the proxy
// (dataplane/evloop): its client socket and the server connections it
// opens are raw non-blocking sockets registered there, edge-triggered, and
// every read, framing step, member choice and write runs on the loop's
// thread as the socket becomes ready, with no goroutine of its own. A
// message then costs the system calls that move it and no goroutine
// switch, which is what dominates the goroutine engine's profile.
//
// The engine's locks stay: a OneConnect connection is shared by sessions
// of every loop. What the loops add is one rule: a socket is only read,
// written and closed by the loop it lives on. A response for a session of
// another loop is filed under the session's lock and its write posted to
// the session's loop; a request for a connection of another loop is
// queued and its write posted the same way; closing from outside (idle
// timeouts, `delete sys connection`, Close) posts the close.
//
// What does not block: a client over MaxInFlight is simply not read until
// the window moves (its requests already read wait, in order, in
// stalled); a connect is non-blocking and requests queue on it until it
// completes; a socket that takes only part of a write keeps the rest until
// its writability edge. HTTP's local answers (400, a rule's HTTP::respond)
// take their place in the window like requests (localReply); its shared
// connections are never waited for on a loop (acquire). An HTTP tunnel
// (tunnel.go) leaves the loop: its request gets a connection of its own
// on goroutines, and the client's socket moves to a goroutine once the
// member agrees. Exclusive OneConnect pools of rule framing wait, so
// those engines keep goroutines (Loopable).

type evl = evloop.Loop

// loopReads bounds the reads of one socket in one turn of its loop, so
// that a busy client shares the loop with the others.
const loopReads = 8

// Loopable reports whether sessions of this engine may run on an event
// loop: the proxy gave DialFD, no adapt profile waits on ICAP, and OneConnect, if any, is not exclusive
// (or is HTTP's, whose acquire does not wait on a loop: see acquire).
func (e *Engine) Loopable() bool {
	return e.cfg.DialFD != nil && e.cfg.Request.Mode != SIP && e.cfg.Request.Mode != IIOP && !e.cfg.Waits && !e.cfg.Request.HTTP.adapts() && (e.pool == nil || !e.pool.exclusive || e.cfg.Request.Mode == HTTP)
}

// NewLoopClientConn takes charge of an accepted client socket (non-blocking)
// that will be served by l; Start, on l's thread, begins. done runs on l
// once the socket is closed, whichever way the session ended. The engine
// must be Loopable.
func (e *Engine) NewLoopClientConn(l *evloop.Loop, fd int, client netip.AddrPort, opt ClientOptions, done func()) *ClientConn {
	s := e.newSession(nil, client, opt)
	s.async = false
	if e.pool != nil && e.pool.cfg.MinConn > 0 {
		e.noteLoop(l) // mincon.go
	}
	ls := &sessLoop{l: l, fd: fd, done: done, s: s}
	ls.flushFn, ls.releaseFn, ls.resumeFn = s.postedFlush, s.release, s.resumeUpload
	s.lp = ls
	if s.isClosed() {
		// The engine closed meanwhile.
		ls.reset = true
		l.Post(ls.releaseFn)
	}
	return s
}

// sessLoop is a session's part on its event loop.
type sessLoop struct {
	l        *evloop.Loop
	fd       int
	tok      evloop.Token
	st       stream
	rdhup    bool // the client's FIN has been reported
	again    bool // another turn is asked for
	reset    bool // close with a reset (set before the close is posted)
	released bool
	// migrated: the socket became a tunnel's and left the loop: fd is
	// closed, and the session's c is the socket now.
	migrated bool
	done     func()
	iov      []unix.Iovec
	tls      *tlsloop.Conn // a client-ssl client's session (tlsloop_linux.go)
	// s is the session; deferred: its responses are left for the end of
	// the loop's batch (deferWrite); last: the staged write's last
	// response closes the connection (Stage). Loop thread only.
	s        *ClientConn
	deferred bool
	last     bool

	flushFn, releaseFn, resumeFn func()
}

func (ls *sessLoop) loop() *evl {
	if ls == nil {
		return nil
	}
	return ls.l
}

// Start registers the client socket: reading begins. Loop thread only.
func (s *ClientConn) Start() {
	ls := s.lp
	if s.isClosed() {
		return // the close is posted
	}
	fr, err := s.requestFramer()
	if err != nil {
		return
	}
	ls.st = newStream(fr, s.e.cfg.MaxMessageSize)
	tok, err := ls.l.Add(ls.fd, rawsock.Events, s, 0)
	if err != nil {
		s.e.logf("mblb: client %s: %v, reset", s.client, err)
		s.Close(true)
		return
	}
	ls.tok = tok
	if s.e.cfg.Close.ZeroWindow > 0 {
		s.watchFD(ls.fd) // tcpclose.go
		if s.isClosed() {
			s.zwFD.Store(0)
		}
	}
	if ls.tls != nil {
		// The handshake may have read the client's first records: no
		// edge will tell of them.
		s.readable()
	}
}

// Ready handles the client socket's events.
func (s *ClientConn) Ready(_ uint8, ev uint32) {
	ls := s.lp
	ls.again = false
	if ls.released || s.isClosed() {
		return
	}
	if ev&evloop.Out != 0 {
		if ls.tls != nil && ls.tls.Buffered() > 0 && ls.tls.Flush() != nil {
			s.Close(true)
			return
		}
		s.writable()
		if s.isClosed() {
			return
		}
	}
	if ev&(evloop.RdHup|evloop.Hup) != 0 {
		ls.rdhup = true
	}
	if ev&(evloop.In|evloop.RdHup|evloop.Hup|evloop.Err) != 0 {
		if ls.tls != nil {
			ls.tls.Readable(ls.rdhup)
		}
		s.readable()
	}
}

// readable sends what was held over the window, then reads and dispatches
// until the socket is drained, the window is full or the turn is over.
func (s *ClientConn) readable() {
	ls := s.lp
	if s.upgrading || ls.migrated || !s.unstall() || s.eof || s.up.paused {
		return // an upgrade's answer is awaited, or the socket moved
	}
	if fc := s.e.fc; fc != nil && s.flowPause(fc) {
		return // a write that drains it posts flowResume
	}
	if s.up.on && len(ls.st.pending()) > 0 {
		// An upload's body held while its head waited for the window.
		if s.take(&ls.st, 0) != nil || s.up.paused {
			return
		}
	}
	for i := 0; i < loopReads; i++ {
		var k int
		var full bool
		var err error
		if ls.tls != nil {
			k, full, err = ls.st.readTLS(ls.tls)
		} else {
			k, full, err = ls.st.readFD(ls.fd)
		}
		if err == syscall.EAGAIN {
			if ls.st.more {
				// The last read filled the buffer and nothing
				// followed: a request whose body has not all come
				// streams now (http.go).
				ls.st.more = false
				if !s.up.on && !s.upgrading && !ls.migrated && s.stalled.size == 0 && len(ls.st.pending()) > 0 {
					s.take(&ls.st, 0)
				}
			}
			return
		}
		if k > 0 {
			if s.take(&ls.st, k) != nil || s.stalled.size > 0 || s.up.paused {
				return // closed, or over the window or an upload's room: its move resumes us
			}
			if full || (ls.tls != nil && ls.tls.More()) {
				if fc := s.e.fc; fc != nil && s.pendingOver(fc) && s.flowPause(fc) {
					return // the httprouter bounds hold within a turn: a drain posts flowResume
				}
				continue // TLS: a record at a time, until it has no more
			}
			if ls.rdhup {
				// A short read after the FIN was reported: the FIN is
				// next, no read(2) needed to see it.
				s.clientEOF()
			}
			return
		}
		switch {
		case err == nil:
			s.clientEOF()
		case errors.Is(err, ErrTooLarge):
			s.tooLarge()
		default:
			s.clientReset(err) // isolate.go
		}
		return
	}
	s.turn()
}

// turn asks the loop for another turn of the client socket.
func (s *ClientConn) turn() {
	if ls := s.lp; !ls.again {
		ls.again = true
		ls.l.Again(ls.tok)
	}
}

// unstall dispatches the requests held over the window while it allows;
// false means some are still held (or the session closed).
func (s *ClientConn) unstall() bool {
	if s.stalled.size == 0 {
		return true
	}
	w := uint64(len(s.slots))
	defer s.flushDirty()
	for s.stalled.size > 0 {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return false
		}
		if s.nextSeq-s.nextOut >= w {
			s.mu.Unlock()
			return false
		}
		if !s.number(s.stalled.pop()) {
			return false
		}
	}
	return true
}

// clientEOF notes the client's half-close: it is closed once every answer
// it is owed has been written.
func (s *ClientConn) clientEOF() {
	if s.uploadCut() { // upload.go
		return
	}
	s.eof = true
	s.noteEOF() // tcpclose.go
	s.noteFIN() // isolate.go
	s.mu.Lock()
	fin := s.loopFlushed()
	s.mu.Unlock()
	if fin {
		s.Close(false)
	}
}

// loopFlushed runs after responses were written on the session's loop,
// with mu held: the window may have moved for held requests, and a client
// that half-closed may be done. It reports whether to close it.
func (s *ClientConn) loopFlushed() bool {
	if s.closed {
		return false
	}
	if s.stalled.size > 0 && s.nextSeq-s.nextOut < uint64(len(s.slots)) {
		s.turn()
	}
	return s.eof && s.stalled.size == 0 && s.nextOut == s.nextSeq && !s.writing
}

// resumeUpload runs on the session's loop once the upload's connection
// has room again: the body held in the read buffer goes on, and the
// client is read again.
func (s *ClientConn) resumeUpload() {
	s.upResume.Store(false)
	if s.isClosed() || !s.up.paused {
		return
	}
	s.up.paused = false
	if s.take(&s.lp.st, 0) != nil || s.up.paused {
		return
	}
	s.turn()
}

// postResumeUpload posts resumeUpload to the session's loop.
func (ls *sessLoop) postResumeUpload(*ClientConn) { ls.l.Post(ls.resumeFn) }

// postFlush asks the session's loop to write the responses filed by
// another loop. The caller holds mu.
func (ls *sessLoop) postFlush() { ls.l.Post(ls.flushFn) }

// socket is the client's descriptor on its loop (ok false on
// goroutines).
func (ls *sessLoop) socket() (int, bool) {
	if ls == nil {
		return 0, false
	}
	return ls.fd, true
}

// postedFlush writes the responses ready in order, on the session's loop.
func (s *ClientConn) postedFlush() { s.flushReady(true) }

// flushReady writes the responses ready in order, on the session's loop;
// posted: another loop asked for it (flushPosted).
func (s *ClientConn) flushReady(posted bool) {
	w := uint64(len(s.slots))
	s.mu.Lock()
	if posted {
		s.flushPosted = false
	}
	if s.closed || s.writing || s.slots[s.nextOut%w] == nil {
		s.mu.Unlock()
		return
	}
	s.writing = true
	s.flushedOnLoop(s.flushLocked(true))
}

// flushedOnLoop ends a flush on the session's loop with its error: it
// releases mu, which the caller holds, and closes the session if the
// flush failed or a client that half-closed has all its answers.
func (s *ClientConn) flushedOnLoop(err error) {
	fin := s.loopFlushed()
	s.mu.Unlock()
	if err != nil {
		s.Close(s.resetOnEnd(err))
	} else if fin {
		s.Close(false)
	}
}

// deferWrite leaves the write of the responses ready for the end of the
// loop's batch, where it leaves with the batch's other writes in one
// system call (evloop.Sender), and reports false where the loop writes
// each socket at once. Why: a response written at once wakes its client,
// which can take the loop's CPU before the loop's other writes.
// The caller holds mu. Loop thread only.
func (ls *sessLoop) deferWrite() bool {
	if ls.tls != nil || ls.migrated || !ls.l.SendsTogether() {
		return false
	}
	if !ls.deferred {
		ls.deferred = true
		ls.l.Defer(ls)
	}
	return true
}

// Flush writes the responses ready at the end of the loop's batch, where
// Stage did not take them (evloop.Sender).
func (ls *sessLoop) Flush() {
	ls.deferred = false
	ls.s.flushReady(false)
}

// Stage takes the writing token and the responses ready in order for the
// end of the loop's batch (evloop.Sender).
func (ls *sessLoop) Stage() (int, []unix.Iovec, bool) {
	s := ls.s
	ls.deferred = false
	if ls.released || ls.migrated || ls.tls != nil {
		return 0, nil, false
	}
	s.mu.Lock()
	if s.closed || s.writing || s.slots[s.nextOut%uint64(len(s.slots))] == nil {
		s.mu.Unlock()
		return 0, nil, false
	}
	s.writing = true
	last, ok := s.gather()
	s.mu.Unlock()
	if !ok {
		return 0, nil, false
	}
	ls.last = last
	ls.iov = iovecs(s.wb, ls.iov)
	return ls.fd, ls.iov, true
}

// Sent takes the outcome of the staged write and writes on as a flush
// does (evloop.Sender).
func (ls *sessLoop) Sent(n int, errno syscall.Errno) {
	capped := len(ls.iov) == maxIov
	clear(ls.iov) // hold no buffer past the call
	ls.iov = ls.iov[:0]
	s := ls.s
	var err error
	if errno != 0 && errno != syscall.EAGAIN {
		err = &net.OpError{Op: "write", Net: "tcp", Err: errno}
	}
	rest := advance(s.wb, n)
	if capped && errno == 0 && len(rest) > 0 {
		// The staged write took IOV_MAX buffers: the rest goes now
		// (see write), not at an edge that will not come.
		var k int64
		k, rest, err = s.tryWrite(rest)
		n += int(k)
	}
	done, err := s.wrote(int64(n), rest, err, ls.last)
	if !done {
		err = s.flushLocked(true)
	}
	s.flushedOnLoop(err)
}

// writable finishes a write the client's socket did not take at once, then
// writes whatever became ready meanwhile.
func (s *ClientConn) writable() {
	s.mu.Lock()
	if !s.handoff || s.closed {
		s.mu.Unlock()
		return
	}
	last := s.bclose
	s.mu.Unlock()
	n, rest, err := s.tryWrite(s.backlog)
	s.bytesOut.Add(uint64(n))
	if s.meter != nil && n > 0 {
		s.meter.Sent(int(n))
	}
	if err == nil && len(rest) > 0 {
		s.backlog = rest
		return // the next edge goes on
	}
	s.mu.Lock()
	s.handoff = false
	s.msgsOut.Add(uint64(len(s.bheld)))
	s.dropHeld()
	s.active()
	if err == nil && last {
		err = errCloseAfter
	}
	fin := false
	if err == nil {
		err = s.flushLocked(true) // the writing token is still ours
		fin = s.loopFlushed()
	} else {
		s.writing = false
	}
	s.mu.Unlock()
	if err != nil {
		s.Close(s.resetOnEnd(err))
	} else if fin {
		s.Close(false)
	}
}

// write is tryWrite on the loop: one writev(2) of what the socket takes.
func (ls *sessLoop) write(s *ClientConn) {
	if ls.migrated {
		// The socket is a tunnel's now (its answers are written first,
		// so this is not reached in order; kept safe all the same).
		n, err := s.nbBufs.WriteTo(s.c)
		s.nbN, s.nbBufs = n, nil
		if err != nil {
			s.nbErr = err
		}
		return
	}
	if ls.tls != nil {
		ls.writeTLS(s)
		return
	}
	for {
		// One writev(2) takes IOV_MAX buffers at most: what is left
		// after it took them all is written now, as no writability
		// edge will tell of room the socket still has. Only a write
		// the socket cut short (it is full) waits for the edge.
		capped := len(s.nbBufs) > maxIov
		n, errno := writev(ls.fd, s.nbBufs, &ls.iov)
		s.nbN += int64(n)
		s.nbBufs = advance(s.nbBufs, n)
		if errno != 0 {
			if errno != syscall.EAGAIN {
				s.nbErr = &net.OpError{Op: "write", Net: "tcp", Err: errno}
			}
			return
		}
		if !capped || n == 0 || len(s.nbBufs) == 0 {
			return
		}
	}
}

// close posts the socket's close to the session's loop.
func (ls *sessLoop) close(s *ClientConn, reset bool) {
	ls.reset = reset
	ls.l.Post(ls.releaseFn)
}

// release closes the client socket and frees what the session held, on
// its loop, once.
func (s *ClientConn) release() {
	ls := s.lp
	if ls.released {
		return
	}
	ls.released = true
	if ls.tok != 0 {
		ls.l.Forget(ls.tok)
	}
	switch {
	case ls.migrated:
		if s.c != nil {
			if ls.reset {
				resetConn(s.c)
			} else {
				closeWrite(s.c)
				s.c.Close()
			}
		}
	case ls.reset:
		rawsock.Reset(ls.fd)
		if ls.tls != nil {
			ls.tls.Release()
		}
	case ls.tls != nil:
		ls.closeTLS()
	default:
		rawsock.ShutWrite(uintptr(ls.fd))
		rawsock.Close(ls.fd)
	}
	ls.st.release()
	s.abortUpload() // upload.go
	for m := s.stalled.pop(); m != nil; m = s.stalled.pop() {
		m.unref()
	}
	s.mu.Lock()
	if s.handoff {
		s.handoff = false
		s.dropHeld()
	}
	s.writing = false
	s.mu.Unlock()
	if ls.done != nil {
		ls.done()
	}
}

// connLoop is a server connection's part on its event loop.
type connLoop struct {
	l     *evloop.Loop
	fd    int
	tok   evloop.Token
	st    stream
	hf    *httpx.ResponseFramer
	rdhup bool
	ended bool // failed has closed the socket
	again bool
	// The batch being written (writing token held): its messages, and the
	// part of their bytes the socket has not taken yet.
	held []*msg
	bl   net.Buffers
	barr net.Buffers
	iov  []unix.Iovec
	// deferred: a write at the end of the loop's batch is asked for
	// (loop thread only).
	deferred bool
	// flushPosted (under qmu) and endPosted keep one posted call of each.
	flushPosted bool
	endPosted   bool

	flushFn, endFn func()
}

func (cl *connLoop) loop() *evl {
	if cl == nil {
		return nil
	}
	return cl.l
}

// dialLoop is dial on an event loop: the connect is started, the socket
// registered on cur, and the connection returned at once.
func (e *Engine) dialLoop(s *ClientConn, m Member, owner *ClientConn, cur *evl) (*serverConn, error) {
	ms := e.memberStats(m.ID)
	fd, done, local, err := e.cfg.DialFD(s.clientAddr(), m)
	if err != nil {
		e.logf("mblb: connect to %s %s failed: %v", m.Name, m.Addr, err)
		e.memberFailed(m, ms, err)
		return nil, err
	}
	return e.attachFD(s, m, owner, ms, cur, fd, done, local)
}

// attachFD makes fd, a socket connected or connecting (done false) to m,
// a server connection from s owned by owner on the loop cur: dialLoop's,
// and min-conn's for one opened ahead (spare.go).
func (e *Engine) attachFD(s *ClientConn, m Member, owner *ClientConn, ms *memberStats, cur *evl, fd int, done bool, local netip.AddrPort) (*serverConn, error) {
	if !local.IsValid() {
		local = rawsock.Sockname(fd)
	}
	sc := e.newServerConn(s, m, owner, ms, local, m.Addr, time.Now())
	cl := &connLoop{l: cur, fd: fd}
	cl.flushFn, cl.endFn = sc.postedFlush, sc.postedEnd
	sc.lp = cl
	fr, hf := sc.responseFramer()
	cl.st, cl.hf = newStream(fr, e.cfg.MaxMessageSize), hf
	sc.connecting.Store(!done)
	if !e.register(sc) {
		rawsock.Close(fd)
		cl.st.release()
		e.legGone(sc) // srcidle.go: what the proxy holds for it is given back
		return nil, errClosed
	}
	tok, err := cur.Add(fd, rawsock.Events, sc, 0)
	if err != nil {
		sc.connecting.Store(false)
		sc.dead = true
		sc.down.Store(true)
		cl.closeFD(sc, true)
		sc.detach()
		e.memberFailed(m, ms, err)
		return nil, err
	}
	cl.tok = tok
	if done {
		sc.connected()
	}
	return sc, nil
}

// connected reports the new connection and writes what queued on it.
func (sc *serverConn) connected() {
	sc.connecting.Store(false)
	if ev := sc.e.cfg.Events.LegOpened; ev != nil {
		ev(&sc.leg)
	}
	sc.sendHooks()
	sc.qmu.Lock()
	if !sc.writing && !sc.dead && len(sc.out) > 0 {
		sc.writing = true
		sc.flushLocked()
	}
	sc.qmu.Unlock()
}

// Ready handles a server socket's events.
func (sc *serverConn) Ready(_ uint8, ev uint32) {
	cl := sc.lp
	cl.again = false
	if cl.ended {
		return
	}
	if sc.connecting.Load() {
		if ev&(evloop.Err|evloop.Hup) != 0 {
			sc.failed(connectError(cl.fd))
			return
		}
		sc.connected()
		if cl.ended {
			return
		}
	}
	if ev&evloop.Out != 0 {
		sc.qmu.Lock()
		if sc.writing && len(cl.bl) > 0 {
			cl.flushLocked(sc)
		}
		sc.qmu.Unlock()
	}
	if ev&(evloop.RdHup|evloop.Hup) != 0 {
		cl.rdhup = true
	}
	if ev&(evloop.In|evloop.RdHup|evloop.Hup|evloop.Err) != 0 {
		sc.readable()
	}
}

// connectError is why a connect failed.
func connectError(fd int) error {
	if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && v != 0 {
		return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.Errno(v)}
	}
	return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}

// readable reads and frames responses until the socket is drained or the
// turn is over.
func (sc *serverConn) readable() {
	cl := sc.lp
	if sc.strm.paused {
		return // resumed by postResume
	}
	for i := 0; i < loopReads; i++ {
		k, full, err := cl.st.readFD(cl.fd)
		if err == syscall.EAGAIN {
			if cl.st.more {
				// The last read filled the buffer and nothing
				// followed: a response whose body has not all come
				// streams now (server.go).
				cl.st.more = false
				if sc.strm.req == nil && len(cl.st.pending()) > 0 {
					sc.took(&cl.st, cl.hf, 0, nil)
				}
			}
			return
		}
		if k == 0 && err == nil {
			err = io.EOF
		} else if k > 0 && !full && cl.rdhup {
			err = io.EOF // the FIN is next
		}
		if sc.took(&cl.st, cl.hf, k, err) || !full || sc.strm.paused {
			return
		}
	}
	if !cl.again {
		cl.again = true
		cl.l.Again(cl.tok)
	}
}

// postResume asks the connection's loop to read again a streamed
// response it paused (httpstream.go): the socket's readiness edge may
// have passed meanwhile, so it is read without waiting for another.
func (cl *connLoop) postResume(sc *serverConn) {
	cl.l.Post(func() {
		sc.strm.paused = false
		sc.lastRd.Store(sc.e.now()) // the pause was the client's
		if !cl.ended {
			sc.readable()
		}
	})
}

// postFlush asks the connection's loop to write what another loop
// queued. The caller holds qmu.
func (cl *connLoop) postFlush(sc *serverConn) {
	if !cl.flushPosted {
		cl.flushPosted = true
		cl.l.Post(cl.flushFn)
	}
}

// postedFlush writes the queued requests on the connection's loop.
func (sc *serverConn) postedFlush() {
	sc.qmu.Lock()
	sc.lp.flushPosted = false
	if !sc.writing && !sc.dead && !sc.connecting.Load() && len(sc.out) > 0 {
		sc.writing = true
		sc.flushLocked()
	}
	sc.qmu.Unlock()
}

// deferFlush leaves the write of what was queued on a server connection
// to the end of its loop's batch (ClientConn.flushDirty). Loop thread
// only.
func (cl *connLoop) deferFlush(sc *serverConn) {
	if !cl.deferred {
		cl.deferred = true
		if sc.owner == nil {
			cl.l.DeferShared(sc)
		} else {
			cl.l.Defer(sc)
		}
	}
}

// Flush writes, at the end of its loop's batch, the requests the batch's
// sessions queued (evloop.Defer).
func (sc *serverConn) Flush() {
	sc.lp.deferred = false
	sc.flush(sc.lp.l)
}

// postEnd asks the connection's loop to end it (fail, shutdown, expire:
// the reason is already recorded).
func (cl *connLoop) postEnd(sc *serverConn) {
	sc.qmu.Lock()
	posted := cl.endPosted
	cl.endPosted = true
	sc.qmu.Unlock()
	if !posted {
		cl.l.Post(cl.endFn)
	}
}

// postedEnd ends the connection on its loop.
func (sc *serverConn) postedEnd() {
	if !sc.lp.ended {
		sc.failed(ErrAborted)
	}
}

// flushLocked writes queued requests, each batch in one writev(2), until
// none is left or the socket is full (the writing token is then kept until
// its writability edge). The caller holds qmu and the writing token.
func (cl *connLoop) flushLocked(sc *serverConn) {
	for !sc.dead && cl.take(sc) {
		n, errno := writev(cl.fd, cl.bl, &cl.iov)
		if !cl.wrote(sc, n, errno) {
			return // the writability edge goes on
		}
	}
	if sc.dead {
		cl.dropWrites(sc)
	}
	sc.writing = false
}

// take makes what is queued the batch being written, unless one is, and
// reports whether there is anything to write. The caller holds qmu and the
// writing token.
func (cl *connLoop) take(sc *serverConn) bool {
	if len(cl.bl) > 0 {
		return true
	}
	if len(sc.out) == 0 {
		return false
	}
	cl.held = sc.out
	sc.out = sc.spare[:0]
	cl.bl = cl.barr[:0]
	for _, m := range cl.held {
		cl.bl = append(cl.bl, m.b)
	}
	cl.barr = cl.bl[:0]
	return true
}

// wrote takes the outcome of a write of the batch being written, and
// reports whether to go on writing (false: the socket is full, and the
// writing token is kept until its writability edge). The caller holds
// qmu and the writing token.
func (cl *connLoop) wrote(sc *serverConn, n int, errno syscall.Errno) bool {
	if n > 0 {
		sc.leg.BytesOut.Add(uint64(n))
		if mt := sc.leg.Meter; mt != nil {
			mt.Sent(n)
		}
		sc.leg.lastActive.Store(sc.e.now())
		cl.bl = advance(cl.bl, n)
	}
	if errno == syscall.EAGAIN {
		return false
	}
	if errno != 0 {
		if sc.failErr == nil {
			sc.failErr = &net.OpError{Op: "write", Net: "tcp", Err: errno}
		}
		sc.dead = true
		sc.down.Store(true)
		if !cl.endPosted {
			cl.endPosted = true
			cl.l.Post(cl.endFn)
		}
		return true
	}
	if len(cl.bl) > 0 {
		return true
	}
	parts := sc.uploadWritten(cl.held) // upload.go
	if fc := sc.e.fc; fc != nil {
		sc.flowWritten(fc, cl.held)
	}
	sc.ms.requests.Add(uint64(len(cl.held) - parts))
	sc.leg.MsgsOut.Add(uint64(len(cl.held) - parts))
	for i, m := range cl.held {
		m.unref()
		cl.held[i] = nil
	}
	sc.spare = cl.held[:0]
	cl.held = nil
	return true
}

// Stage takes the writing token and the queued requests for the end of
// the loop's batch, when the connection is the loop's to write now
// (evloop.Sender).
func (sc *serverConn) Stage() (int, []unix.Iovec, bool) {
	cl := sc.lp
	cl.deferred = false
	sc.qmu.Lock()
	defer sc.qmu.Unlock()
	if sc.writing || sc.dead || len(sc.out) == 0 || sc.connecting.Load() {
		return 0, nil, false
	}
	sc.writing = true
	cl.take(sc)
	cl.iov = iovecs(cl.bl, cl.iov)
	return cl.fd, cl.iov, true
}

// Sent takes the outcome of the staged write and writes on as a flush
// does (evloop.Sender).
func (sc *serverConn) Sent(n int, errno syscall.Errno) {
	cl := sc.lp
	clear(cl.iov) // hold no buffer past the call
	cl.iov = cl.iov[:0]
	sc.qmu.Lock()
	if cl.wrote(sc, n, errno) {
		cl.flushLocked(sc)
	}
	sc.qmu.Unlock()
}

// dropWrites lets go of requests that will never be written (the reader
// re-sends what was pending). The caller holds qmu.
func (cl *connLoop) dropWrites(sc *serverConn) {
	if fc := sc.e.fc; fc != nil {
		sc.flowWritten(fc, cl.held)
		sc.flowWritten(fc, sc.out)
	}
	for i, m := range cl.held {
		m.unref()
		cl.held[i] = nil
	}
	cl.held, cl.bl = nil, nil
	for i, m := range sc.out {
		m.unref()
		sc.out[i] = nil
	}
	sc.out = sc.out[:0]
}

// closeFD closes the connection's socket, on its loop, once.
func (cl *connLoop) closeFD(sc *serverConn, reset bool) {
	if cl.ended {
		return
	}
	cl.ended = true
	sc.qmu.Lock()
	cl.dropWrites(sc)
	sc.writing = false
	sc.qmu.Unlock()
	if cl.tok != 0 {
		cl.l.Forget(cl.tok)
	}
	if reset {
		rawsock.Reset(cl.fd)
	} else {
		rawsock.Close(cl.fd)
	}
	cl.st.release()
}

// readFD reads once into the free tail of a non-blocking socket's stream;
// full reports that the read filled it (more may be waiting). A read of 0
// bytes with no error is the peer's FIN.
func (st *stream) readFD(fd int) (k int, full bool, err error) {
	if err := st.prepare(); err != nil {
		return 0, false, err
	}
	space := st.buf.b[st.end:]
	for {
		n, e := rawsock.Read(fd, space)
		if e == syscall.EINTR {
			continue
		}
		if e != nil {
			return 0, false, e
		}
		st.end += n
		st.more = n == len(space)
		return n, st.more, nil
	}
}

// drainedConn reports whether c, a connection read on a goroutine, has
// no byte waiting, by a non-blocking peek: after a read that filled the
// buffer, an HTTP message whose body has not all come then streams
// instead of waiting for bytes a slow sender has not sent. False when
// it cannot tell (TLS, a wrapped connection) or bytes or the close
// wait. It costs one system call, made only after such a read.
func drainedConn(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	empty := false
	var b [1]byte
	raw.Read(func(fd uintptr) bool {
		_, _, e := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		empty = e == unix.EAGAIN
		return true
	})
	return empty
}

// maxIov bounds the buffers of one writev(2) (IOV_MAX).
const maxIov = 1024

// writev writes bufs with one system call and returns the bytes written.
// iov is the caller's scratch space, so that a write allocates nothing.
func writev(fd int, bufs [][]byte, iov *[]unix.Iovec) (int, syscall.Errno) {
	v := iovecs(bufs, *iov)
	r := sendbatch.SendNow(fd, v)
	clear(v) // hold no buffer past the call
	*iov = v[:0]
	return r.N, r.Err
}

// iovecs points v's vectors, reused, at the non-empty buffers of bufs
// (IOV_MAX of them at most).
func iovecs(bufs [][]byte, v []unix.Iovec) []unix.Iovec {
	v = v[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		if len(v) == maxIov {
			break
		}
		var e unix.Iovec
		e.Base = &b[0]
		e.SetLen(len(b))
		v = append(v, e)
	}
	return v
}

// advance drops the first n bytes of bufs.
func advance(bufs [][]byte, n int) [][]byte {
	for n > 0 && len(bufs) > 0 {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			return bufs
		}
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	return bufs
}
