package mblb

import (
	"errors"
	"io"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// HTTP tunnels. A WebSocket handshake (Upgrade) answered 101, a CONNECT
// answered 2xx, or a request after which a rule ran HTTP::disable turns
// the client connection into a tunnel to the server connection that
// carried that request: from then on bytes pass through both ways,
// unparsed, until each side has closed (a reset on either resets both).
// HTTP engines run on goroutines (Engine.Loopable is false for them), so
// the two directions are the client's reader and the server connection's
// reader, each copying what it reads to the other socket.
//
// The hand-over keeps order: the client's reader stops framing after a
// request that may open a tunnel (what follows stays unread in its
// buffer) until the member answers; the server's reader, once it has
// framed that answer, waits until the client has been written every
// answer it is owed, then takes the client's writing token for good. A
// refused upgrade (any other answer) lets the client's reader frame
// again. A shared OneConnect connection leaves the pool before its answer
// is counted, so no other client can be given it.

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
	sc.ownWrites()
	if p := st.pending(); len(p) > 0 {
		st.start = st.end
		if err := sc.tunnelWrite(p); err != nil {
			s.tunnelEnd(true)
			return err
		}
	}
	buf := st.buf.b[:cap(st.buf.b)]
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
	s.tunSC = sc
	s.cond.Broadcast()
	s.mu.Unlock()
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
	*x = HTTPEvent{buf: buf, server: sc.leg.Remote, msg: m.b, full: m.b, requestNum: m.seq + 1}
	x.head.HeaderEnd = m.hx.hlen
	err := s.hsend.OnHTTPRequestSend(x)
	switch {
	case err != nil || x.reject:
		m.unref()
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
	opts := &s.e.cfg.Request.HTTP
	ed := httpx.RequestEdits{Transform: opts.Transformations && s.e.pool != nil}
	if opts.InsertXFF {
		ed.XFF = s.client.Addr()
	}
	n := getMsg(len(head) + len(body) + httpx.MaxRequestGrowth)
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
	b := make([]byte, 0, 128+len(url))
	b = append(b, "HTTP/1.0 302 Found\r\nLocation: "...)
	b = append(b, url...)
	b = append(b, "\r\n"...)
	if sa := e.cfg.Request.HTTP.ServerAgent; sa != "" {
		b = append(b, "Server: "...)
		b = append(b, sa...)
		b = append(b, "\r\n"...)
	}
	return append(b, "Connection: close\r\nContent-Length: 0\r\n\r\n"...)
}
