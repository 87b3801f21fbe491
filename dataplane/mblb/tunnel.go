package mblb

import (
	"errors"
	"io"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/wsframe"
)

// HTTP tunnels. A WebSocket handshake (Upgrade) answered 101, a CONNECT
// answered 2xx, or a request after which a rule ran HTTP::disable turns
// the client connection into a tunnel to the server connection that
// carried that request: from then on bytes pass through both ways,
// unparsed, until each side has closed (a reset on either resets both).
// The two directions run on goroutines: the server connection's reader,
// and the client's reader (on an event loop, a goroutine the client's
// socket moves to), each copying what it reads to the other socket.
//
// Such a request goes on a connection of its own on goroutines
// (tunnelConn) when the session is on a loop or uses OneConnect, so a
// tunnel never holds a shared connection or a loop. The hand-over keeps
// order: the client's reader stops framing after the request (what
// follows stays unread in its buffer) until the member answers; the
// server's reader, once it has framed that answer, waits until the
// client has been written every answer it is owed, then takes the
// client's writing token for good (and, on a loop, has the client's
// socket moved: migrateTunnel). A refused upgrade (any other answer) lets
// the client's reader frame again (resumeHTTP on a loop).

// awaitSwitch waits, on the client's reader, for the answer to a request
// that may open a tunnel: the connection to tunnel to, or nil when the
// member refused (or the session closed).
func (s *ClientConn) awaitSwitch() *serverConn {
	s.mu.Lock()
	for !s.closed && s.tunSC == nil && !s.noSwitch {
		s.cond.Wait()
	}
	sc := s.tunSC
	if s.closed {
		sc = nil
	}
	s.noSwitch = false
	s.mu.Unlock()
	s.upgrading = false
	return sc
}

// switchRefused tells the waiting reader that the upgrade was answered
// without a tunnel.
func (s *ClientConn) switchRefused() {
	if s.lp != nil {
		s.lp.post(s.resumeHTTP)
		return
	}
	s.mu.Lock()
	s.noSwitch = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

// joinTunnel makes sc the client's tunnel at once (HTTP::disable): the
// request about to be queued on it is the last one framed. A shared
// connection leaves the pool first.
func (s *ClientConn) joinTunnel(sc *serverConn) {
	if sc.owner == nil {
		s.e.pool.remove(sc)
	}
	sc.tunneled.Store(true)
	s.mu.Lock()
	s.tunSC = sc
	s.cond.Broadcast()
	s.mu.Unlock()
}

// tunnelNext reports, on the server reader, that the oldest request
// pending is the one after which a rule disabled HTTP: everything the
// member sends from here on is the tunnel's.
func (sc *serverConn) tunnelNext() bool {
	sc.qmu.Lock()
	req := sc.q.peek()
	if req == nil || req.hx.tunnel != tunnelNow {
		sc.qmu.Unlock()
		return false
	}
	sc.q.pop()
	sc.qmu.Unlock()
	sc.leg.pending.Add(-1)
	sc.tun = req.sess
	sc.tunSkip, sc.tunFrom = true, req.seq
	req.unref()
	return true
}

// ownWrites makes the tunnel the only writer of sc once what was queued
// on it has left: no request is queued on it again.
func (sc *serverConn) ownWrites() {
	deadline := time.Now().Add(sc.e.cfg.ConnectTimeout)
	sc.qmu.Lock()
	for (sc.writing || len(sc.out) > 0) && !sc.dead && time.Now().Before(deadline) {
		sc.qmu.Unlock()
		time.Sleep(100 * time.Microsecond)
		sc.qmu.Lock()
	}
	sc.writing = true
	sc.dead = true
	sc.closing = true
	sc.qmu.Unlock()
}

// tunnelClient is the client-to-member direction, on the client's reader:
// what it read after the request is sent first.
func (s *ClientConn) tunnelClient(st *stream, sc *serverConn) error {
	p := st.pending()
	st.start = st.end
	return s.tunnelFrom(p, st.buf.b[:cap(st.buf.b)], sc)
}

// tunnelFrom copies the client's bytes to sc: first, then what it reads
// into buf.
func (s *ClientConn) tunnelFrom(first, buf []byte, sc *serverConn) error {
	sc.ownWrites()
	s.mu.Lock()
	ws := s.wsTun
	s.mu.Unlock()
	if ws != nil {
		// A framed WebSocket tunnel (websocket.go).
		err := ws.relay(wsframe.FromClient, clientIn{s}, first)
		switch eof, disc := wsEnd(err); {
		case disc:
			s.Close(false)
			return nil
		case eof:
			closeWrite(sc.conn)
			s.tunnelEnd(false)
			return nil
		}
		closed := s.isClosed()
		s.tunnelEnd(true)
		if closed {
			return nil
		}
		return err
	}
	if len(first) > 0 {
		if err := sc.tunnelWrite(first); err != nil {
			s.tunnelEnd(true)
			return err
		}
	}
	for {
		k, err := s.c.Read(buf)
		if k > 0 {
			s.active()
			s.bytesIn.Add(uint64(k))
			if s.meter != nil {
				s.meter.Received(k)
			}
			if werr := sc.tunnelWrite(buf[:k]); werr != nil {
				s.tunnelEnd(true)
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				closeWrite(sc.conn)
				s.tunnelEnd(false)
				return nil
			}
			closed := s.isClosed()
			s.tunnelEnd(true)
			if closed {
				return nil
			}
			return err
		}
	}
}

// tunnelWrite writes b to the member.
func (sc *serverConn) tunnelWrite(b []byte) error {
	n, err := sc.conn.Write(b)
	sc.leg.BytesOut.Add(uint64(n))
	if mt := sc.leg.Meter; mt != nil && n > 0 {
		mt.Sent(n)
	}
	sc.leg.lastActive.Store(sc.e.now())
	return err
}

// tunnelServer is the member-to-client direction, on the server reader,
// from the bytes after the answer that opened the tunnel (in st).
func (sc *serverConn) tunnelServer(st *stream) {
	s := sc.tun
	s.mu.Lock()
	if !sc.tunSkip {
		sc.tunFrom = s.nextSeq
	}
	for !s.closed && (s.writing || s.nextOut != sc.tunFrom) {
		s.cond.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		sc.endTunnel()
		return
	}
	if sc.tunSkip {
		s.nextOut++ // the disabled request's answer is the tunnel's
	}
	s.writing = true // for good: only the tunnel writes to the client now
	s.tunToken = true
	sc.tunneled.Store(true)
	s.tunSC = sc
	s.wsTun = s.webSocketTunnel(sc) // websocket.go
	ws := s.wsTun
	s.cond.Broadcast()
	if s.lp != nil {
		// The client's socket leaves its loop first (on that loop).
		if sc.tunSkip {
			// HTTP::disable: the reader moved it when it sent the request.
		} else {
			s.lp.post(func() { s.migrateTunnel(sc) })
		}
		for !s.closed && s.c == nil {
			s.cond.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			sc.endTunnel()
			return
		}
	}
	s.mu.Unlock()
	if ws != nil {
		if ws.nagle {
			// no-delay disabled: small frames wait to be coalesced, both
			// ways (websocket.go).
			setNagle(s.c)
			setNagle(sc.conn)
		}
		p := st.pending()
		st.start = st.end
		err := ws.relay(wsframe.FromServer, serverIn{sc}, p)
		switch eof, disc := wsEnd(err); {
		case disc:
			s.Close(false)
		case eof:
			closeWrite(s.c)
			s.tunnelEnd(false)
		default:
			s.tunnelEnd(!s.isClosed())
		}
		sc.endTunnel()
		return
	}
	reset := false
	if p := st.pending(); len(p) > 0 {
		st.start = st.end
		reset = s.tunnelWrite(p) != nil
	}
	buf := st.buf.b[:cap(st.buf.b)]
	for !reset {
		k, err := sc.conn.Read(buf)
		if k > 0 {
			now := sc.e.now()
			sc.leg.lastActive.Store(now)
			sc.leg.BytesIn.Add(uint64(k))
			if mt := sc.leg.Meter; mt != nil {
				mt.Received(k)
			}
			if s.tunnelWrite(buf[:k]) != nil {
				reset = true
				break
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				closeWrite(s.c)
			} else {
				reset = !s.isClosed()
			}
			break
		}
	}
	s.tunnelEnd(reset)
	sc.endTunnel()
}

// tunnelWrite writes b to the client.
func (s *ClientConn) tunnelWrite(b []byte) error {
	n, err := s.c.Write(b)
	s.bytesOut.Add(uint64(n))
	if s.meter != nil && n > 0 {
		s.meter.Sent(n)
	}
	s.active()
	return err
}

// tunnelEnd counts one direction's end: the session closes when both have
// ended in order, or at once (reset) after a failure.
func (s *ClientConn) tunnelEnd(reset bool) {
	if reset || s.tunEnds.Add(1) == 2 {
		s.Close(reset)
	}
}

// endTunnel takes a tunnel's server connection out of the engine once
// its reader is done.
func (sc *serverConn) endTunnel() {
	sc.qmu.Lock()
	sc.dead, sc.closing = true, true
	sc.qmu.Unlock()
	sc.down.Store(true)
	sc.leg.pending.Store(0)
	sc.detach()
}

func closeWrite(c interface{ Close() error }) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// requestSend runs the rules that act once the request's connection is
// chosen (LB_SELECTED's edits, HTTP_REQUEST_SEND, HTTP_REQUEST_RELEASE)
// and rebuilds the request when they edited its head. False means the
// rule ended the client; m is then released.
func (s *ClientConn) requestSend(m *msg, sc *serverConn) (*msg, bool) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	x := &s.hxs
	buf := x.buf
	*x = HTTPEvent{buf: buf, server: sc.leg.Remote, msg: m.b, full: m.b, requestNum: m.seq + 1, sess: s}
	x.head.HeaderEnd = m.hx.hlen
	err := s.hsend.OnHTTPRequestSend(x)
	switch {
	case err != nil || x.reject:
		m.unref()
		s.rstRule(err)
		s.Close(true)
		return nil, false
	case x.drop:
		m.unref()
		s.Close(false)
		return nil, false
	case x.edited == nil:
		return m, true
	}
	head := x.edited
	body := m.b[m.hx.hlen:]
	if m.hx.reframed {
		head = httpx.SetContentLength(nil, head, len(body))
	}
	eh, err := httpx.ParseRequest(head)
	if err != nil {
		s.e.logf("mblb: client %s: the rule made an invalid request head (%v), reset", s.client, err)
		m.unref()
		s.Close(true)
		return nil, false
	}
	ed := s.requestEdits()
	n := getMsg(len(head) + len(body) + ed.Growth())
	n.b = httpx.AppendRequestHead(n.b[:0], head, body, &eh, ed)
	n.sess, n.seq, n.tries = m.sess, m.seq, m.tries
	n.exclude = append(n.exclude[:0], m.exclude...)
	n.target, n.persist, n.ruleTarget, n.cookie = m.target, m.persist, m.ruleTarget, m.cookie
	n.httpClose = m.httpClose
	n.hx = m.hx
	n.hx.hlen = len(n.b) - len(body)
	n.httpHead = eh.IsHead()
	m.unref()
	return n, true
}

// fallbackResponse is the redirect to the fallback host (HTTP::fallback,
// fallback-host) for a request no member can serve.
func (e *Engine) fallbackResponse(url string) []byte {
	return FallbackRedirect(url, e.cfg.Request.HTTP.ServerAgent)
}

// FallbackRedirect is the answer BIG-IP gives a request no member can
// serve when a fallback host is set: a 302 to url, naming the server sa
// (none when empty), closing the connection.
func FallbackRedirect(url, sa string) []byte {
	b := make([]byte, 0, 128+len(url))
	b = append(b, "HTTP/1.0 302 Found\r\nLocation: "...)
	b = append(b, url...)
	b = append(b, "\r\n"...)
	if sa != "" {
		b = append(b, "Server: "...)
		b = append(b, sa...)
		b = append(b, "\r\n"...)
	}
	return append(b, "Connection: close\r\nContent-Length: 0\r\n\r\n"...)
}

// tunnelConn opens the connection a request that may become a tunnel
// goes on: the client's own, on goroutines, whatever the session's mode,
// so that the tunnel never holds a shared connection or a loop.
func (s *ClientConn) tunnelConn(m Member) (*serverConn, error) {
	return s.dialOwn(m, nil)
}

// migrateWhenAnswered moves a loop session's socket to its tunnel once
// the answers it is owed before the request seq (after which a rule
// disabled HTTP) are written.
func (s *ClientConn) migrateWhenAnswered(sc *serverConn, seq uint64) {
	s.mu.Lock()
	for !s.closed && s.c == nil && ((s.writing && !s.tunToken) || s.nextOut < seq) {
		s.cond.Wait()
	}
	s.mu.Unlock()
	s.lp.post(func() { s.migrateTunnel(sc) })
}

// sendHooks runs HTTP_REQUEST_SEND for the requests queued on a
// connection while its connect was in progress, now that
// SERVER_CONNECTED has run, and puts a request they edited in place of
// the original. Nothing is written before the connect completes, so the
// queue is still whole.
func (sc *serverConn) sendHooks() {
	sc.qmu.Lock()
	var todo []*msg
	for _, m := range sc.out {
		if m.hx.sendPending {
			m.hx.sendPending = false
			todo = append(todo, m)
		}
	}
	sc.qmu.Unlock()
	for _, m := range todo {
		s := m.sess
		m.refs.Add(1) // ours, while the hook runs
		n, ok := s.requestSend(m, sc)
		if !ok || n == m {
			if ok {
				m.unref()
			}
			continue
		}
		// requestSend let go of our reference to m; the queue's two
		// (pending entry, writer) move to n.
		n.refs.Store(2)
		n.sentAt = m.sentAt
		sc.qmu.Lock()
		if fc := sc.e.fc; fc != nil {
			sc.flowWritten(fc, []*msg{m}) // counted again as n
			sc.flowQueued(fc, n)
		}
		for i, x := range sc.out {
			if x == m {
				sc.out[i] = n
			}
		}
		for i := 0; i < sc.q.size; i++ {
			j := (sc.q.head + i) % len(sc.q.ring)
			if sc.q.ring[j] == m {
				sc.q.ring[j] = n
			}
		}
		sc.qmu.Unlock()
		m.unref()
		m.unref()
	}
}
