package mblb

import (
	"errors"
	"net/netip"

	"github.com/openltm/openltm/dataplane/httpx"
)

// The http profile on the engine. Each HTTP/1.1 request is a message; its
// response is framed knowing which request it answers. Two BIG-IP
// behaviours follow from the server connection mode:
//
//   - without OneConnect, the connection is balanced, not the request:
//     every request of a client connection goes to the member its first
//     request went to (Session.sticky), and another member is chosen only
//     when that one fails or may no longer take traffic. A cookie naming
//     another member is then ignored, which is why an upstream proxy that
//     multiplexes many users over one connection defeats cookie
//     persistence (seed 003/004).
//   - with OneConnect, each request is balanced and persisted on its own
//     and its server connection goes back to the pool once answered, so
//     such multiplexing cannot unbalance the pool.

// HTTPOptions are the http profile's settings (and the cookie persistence
// profile's, which needs the http profile) as the engine applies them.
type HTTPOptions struct {
	// MaxHeaderSize bounds a request or response header block (0: 32 KiB);
	// a larger request gets 400 Bad Request and its connection is closed.
	MaxHeaderSize int
	// InsertXFF adds X-Forwarded-For with the client's address to every
	// request (insert-xforwarded-for enabled).
	InsertXFF bool
	// Transformations keeps OneConnect's server connections open when a
	// client asks to close (oneconnect-transformations); without
	// OneConnect it does nothing, as on BIG-IP.
	Transformations bool
	// Cookie is cookie persistence's name and insert attributes; an
	// empty Name means none. CookieMode is its method (cookie.go).
	Cookie     httpx.CookieSpec
	CookieMode CookieMode
}

// errCloseAfter ends a client connection in order once the response to a
// request that asked for the close (or was answered until the server
// closed) is written.
var errCloseAfter = errors.New("mblb: client connection closes after its response")

// resetOnEnd says how a client whose writing ended with err is closed:
// reset after a failure, or after a last response a rule asked to end
// with a reset; in order otherwise.
func (s *ClientConn) resetOnEnd(err error) bool {
	return !errors.Is(err, errCloseAfter) || s.resetLast.Load()
}

// badRequest is the answer to a request the framer cannot parse.
const badRequest = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"

// frameHTTP cuts the client's bytes into requests, applies the profile's
// edits while copying each one out of the read buffer (one copy, as for
// any message) and dispatches it.
func (s *ClientConn) frameHTTP(st *stream, rf *httpx.RequestFramer) error {
	opts := &s.e.cfg.Request.HTTP
	for !s.httpDone {
		b, err := st.next()
		if err != nil {
			if errors.Is(err, httpx.ErrBodyTooLarge) {
				return ErrTooLarge
			}
			s.e.logf("mblb: client %s: %v, 400 Bad Request", s.client, err)
			s.httpDone = true
			s.localReply([]byte(badRequest), true)
			break
		}
		if b == nil {
			return nil
		}
		h := rf.Last()
		closing := h.WantsClose()
		if obs := s.e.cfg.ObserveRequest; obs != nil {
			obs(s.client, b, h)
		}
		var x *HTTPEvent
		if s.hrule != nil {
			x = &s.hx
			x.reset(b, h, false, netip.AddrPort{})
			if err := s.hrule.OnHTTPRequest(x); err != nil {
				s.Close(true) // the rule failed: reset, as BIG-IP does
				return errClosed
			}
			switch {
			case x.reject:
				s.Close(true)
				return errClosed
			case x.drop:
				s.Close(false)
				return errClosed
			case x.responded:
				// Answered by the rule: no server sees the request.
				closing = closing || !x.keepAlive || x.closeAfter || x.resetAfter
				if x.resetAfter {
					s.resetLast.Store(true)
				}
				s.msgsIn.Add(1)
				s.localReply(x.respond, closing)
				s.httpDone = closing
				continue
			}
			closing = closing || x.closeAfter
		}
		ed := httpx.RequestEdits{Transform: opts.Transformations && s.e.pool != nil}
		if opts.InsertXFF {
			ed.XFF = s.client.Addr()
		}
		var m *msg
		if x != nil && x.edited != nil {
			// The rule edited the head: its framing facts are read again
			// from what the member will see; the body goes on as it came.
			eh, err := httpx.ParseRequest(x.edited)
			if err != nil {
				s.e.logf("mblb: client %s: the rule made an invalid request head (%v), reset", s.client, err)
				s.Close(true)
				return errClosed
			}
			body := b[h.HeaderEnd:]
			m = getMsg(len(x.edited) + len(body) + httpx.MaxRequestGrowth)
			m.b = httpx.AppendRequestHead(m.b[:0], x.edited, body, &eh, ed)
			m.httpHead = eh.IsHead()
		} else {
			m = getMsg(len(b) + httpx.MaxRequestGrowth)
			m.b = httpx.AppendRequest(m.b[:0], b, h, ed)
			m.httpHead = h.IsHead()
		}
		m.httpClose = closing
		s.cookieRequest(m, b, h) // cookie.go
		if x != nil {
			if x.targetSet {
				m.target, m.ruleTarget = x.target, true
			}
			if x.persistSet {
				m.persist = x.persist
			}
		}
		s.msgsIn.Add(1)
		if !s.dispatch(m) {
			return errClosed
		}
		// After a request that closes the connection, nothing the client
		// sends is read as a request.
		s.httpDone = closing
	}
	st.start = st.end
	return nil
}

// localReply answers the client from the proxy itself, in order after the
// responses it is still owed, and closes the connection after it when
// closeAfter is set.
func (s *ClientConn) localReply(text []byte, closeAfter bool) {
	r := getMsg(len(text))
	copy(r.b, text)
	r.closeAfter = closeAfter
	w := uint64(len(s.slots))
	s.flushDirty()
	s.mu.Lock()
	for !s.closed && s.nextSeq-s.nextOut >= w {
		s.cond.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		r.unref()
		return
	}
	seq := s.nextSeq
	s.nextSeq++
	s.mu.Unlock()
	s.deliver(seq, r, s.lp.loop())
}

// httpResponseFramer is a server connection's response framer: it asks
// the connection whether the request being answered is HEAD.
func (sc *serverConn) httpResponseFramer() *httpx.ResponseFramer {
	return &httpx.ResponseFramer{
		MaxHeader: sc.e.cfg.Request.HTTP.MaxHeaderSize,
		Max:       sc.e.cfg.MaxMessageSize,
		HeadRequest: func() bool {
			sc.qmu.Lock()
			h := sc.q.peek()
			sc.qmu.Unlock()
			return h != nil && h.httpHead
		},
	}
}

// completeHTTP hands one framed response to its client. A server that
// closes after it takes the connection out of service first, so no other
// request is queued on it.
func (sc *serverConn) completeHTTP(b []byte, rf *httpx.ResponseFramer) {
	h := rf.Last()
	if rf.Closing() {
		sc.qmu.Lock()
		sc.closing = true
		sc.dead = true
		sc.qmu.Unlock()
		sc.down.Store(true)
	}
	sc.completeWith(b, h)
}

// httpResponse copies a response for its client, after the client's
// HTTP_RESPONSE rule (which may edit its head, replace it or end the
// client), inserting the persistence cookie when the request did not
// already carry this member's (or always-send is on). A nil result means
// the rule ended the client: nothing is delivered.
func (sc *serverConn) httpResponse(req *msg, b []byte, h *httpx.Head) *msg {
	var x *HTTPEvent
	if hr := req.sess.hrule; hr != nil {
		x = &sc.hx
		x.reset(b, h, true, sc.leg.Remote)
		// Every request of a client with an HTTP rule goes through
		// HTTP_REQUEST and takes one sequence number, answered or not.
		x.request, x.requestNum = req.b, req.seq+1
		err := hr.OnHTTPResponse(x)
		switch {
		case err != nil || x.reject:
			req.sess.Close(true)
			return nil
		case x.drop:
			req.sess.Close(false)
			return nil
		case x.responded:
			r := getMsg(len(x.respond))
			copy(r.b, x.respond)
			r.closeAfter = req.httpClose || !x.keepAlive || x.closeAfter || x.resetAfter
			if x.resetAfter {
				req.sess.resetLast.Store(true)
			}
			return r
		}
	}
	var edited []byte
	if x != nil {
		edited = x.edited
	}
	edited, sc.hdr = sc.cookieResponse(req, b, h, edited, sc.hdr[:0]) // cookie.go
	var r *msg
	switch {
	case edited != nil:
		r = getMsg(len(b) + len(edited) + len(sc.hdr))
		r.b = httpx.AppendResponseHead(r.b[:0], b, h, edited, sc.hdr)
	case len(sc.hdr) > 0:
		r = getMsg(len(b) + len(sc.hdr))
		r.b = httpx.AppendResponse(r.b[:0], b, h, sc.hdr)
	default:
		r = getMsg(len(b))
		copy(r.b, b)
	}
	r.closeAfter = req.httpClose || h.UntilClose || (x != nil && x.closeAfter)
	return r
}
