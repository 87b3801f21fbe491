package mblb

import "github.com/openltm/openltm/dataplane/httpx"

// A response whose body passes MaxMessageSize is streamed, as BIG-IP's
// http profile does: its head goes out once HTTP_RESPONSE ran, then the
// body in the parts it arrives in, all under the request's sequence
// number (msg.more marks the parts before the last), so nothing after it
// reaches the client before its end. The request stays at the head of
// the connection's queue meanwhile: the connection is not reused, and a
// failure resets the client (a response had started). Only what a rule
// needs whole (HTTP::collect) keeps the limit.

// bodyStream is the response a server connection is streaming.
type bodyStream struct {
	// req is the request it answers (nil: none is streaming).
	req *msg
	// closeAfter: the client closes after the last part.
	closeAfter bool
	// discard: the client's answer was made otherwise (a rule replaced
	// or retried the response, or ended the client): the body is read
	// and dropped.
	discard bool
	// head: the head is being handed to the rules (HTTPEvent.Partial),
	// with held, what has arrived of the response (the start of its
	// body, which HTTP::collect reads).
	head bool
	held []byte
	// hf is the connection's framer while the head is handed over (a
	// rule's replacement of the body's start is spliced in with it).
	hf *httpx.ResponseFramer
	// paused: on an event loop, the client has enough of the body
	// unwritten; the socket is not read until resumeParts.
	paused bool
	// collecting: HTTP_RESPONSE ran and its rules collect want bytes of
	// the body (HTTPEvent.Await) before HTTP_RESPONSE_DATA; nothing has
	// gone to the client. resumed: they are in, the head is handed over
	// again for the DATA event.
	collecting, resumed bool
	want                int
	// filter is the stream filter the body passes through (nil: none;
	// httpfilter.go). Without chunkOut the body ends with the client's
	// connection (closeAfter, an HTTP/1.0 client).
	filter *bodyFilter
	// cache collects the body, as the member framed it, for the
	// virtual's cache (httpcache.go); nil when it is not cached.
	cache *cacheStream
	// icap: the ICAP server wants the rest of the body after the
	// preview; it goes there, not to the client, and the answer after
	// it is the response (adapt.go).
	icap *icapUpload
}

// HTTPResponseDataHandler is implemented by an HTTPRuleHandler whose
// rules collect a streamed response's body: after an OnHTTPResponse that
// called Await, the engine reads the asked length (no more) and calls
// OnHTTPResponseData, with Body holding it, to run HTTP_RESPONSE_DATA
// (and what follows it); its actions are read back as OnHTTPResponse's
// are. It may call Await again (HTTP::collect in HTTP_RESPONSE_DATA) to
// be called once more with more of the body (CanAwait).
type HTTPResponseDataHandler interface {
	OnHTTPResponseData(x *HTTPEvent) error
}

// streamsNow switches a response whose head is in and whose body has
// not all come to streaming (httpx.ResponseFramer.StreamNow), unless
// its client's rules collect responses without handling
// HTTP_RESPONSE_DATA themselves: those read the start of the body
// before HTTP_RESPONSE, so it is held (collectWait) as before.
func (sc *serverConn) streamsNow(hf *httpx.ResponseFramer) bool {
	if hf.Waiting() == nil || sc.e.cfg.Request.HTTP.ResponseAdapt != nil || sc.e.cfg.Request.HTTP.Rewrite != nil {
		// (With response-adapt, a response is held whole up to the
		// bound, as before it streamed; with a rewrite profile too, so
		// that its body is rewritten whole.)
		return false
	}
	sc.qmu.Lock()
	req := sc.q.peek()
	sc.qmu.Unlock()
	if req == nil {
		return false
	}
	if s := req.sess; s != nil && s.hrule != nil {
		if hc, ok := s.hrule.(HTTPResponseCollector); ok && hc.CollectsResponses() {
			if _, ok := s.hrule.(HTTPResponseDataHandler); !ok {
				return false
			}
		}
	}
	return hf.StreamNow()
}

// startStream sends the head of a response the framer has started to
// stream and leaves the body to streamBody.
func (sc *serverConn) startStream(st *stream, hf *httpx.ResponseFramer) error {
	h := hf.Streaming()
	sc.e.observeResponse(h)
	st.want = 0
	sc.qmu.Lock()
	req := sc.q.peek()
	if req != nil {
		req.started = true
	}
	sc.qmu.Unlock()
	if req == nil {
		return ErrTooLarge // nobody asked: nothing to stream it to
	}
	if h.UntilClose || h.WantsClose() {
		sc.qmu.Lock()
		sc.closing = true
		sc.dead = true
		sc.qmu.Unlock()
		sc.down.Store(true)
	}
	if req.hx.tunnel == tunnelOnSwitch && sc.lp == nil {
		// An upgrade refused with a large body (a 101 has none): the
		// client's reader, stopped for the answer, goes on.
		defer req.sess.switchRefused()
	}
	sc.strm = bodyStream{req: req}
	if sc.owner == nil && sc.e.cfg.Request.HTTP.NTLM {
		sc.e.pool.ntlmChallenged(sc, req.sess, st.pending(), h) // ntlm.go
	}
	return sc.streamHead(st, hf)
}

// collectResponse waits until the start of a streamed response's body
// that its rules collect has arrived (HTTPEvent.Await), then hands the
// head over again for HTTP_RESPONSE_DATA and sends it. more: wait for
// more bytes.
func (sc *serverConn) collectResponse(st *stream, hf *httpx.ResponseFramer) (more bool, err error) {
	h := hf.Streaming()
	body := st.pending()[h.HeaderEnd:]
	want, most := sc.strm.want, sc.e.cfg.MaxMessageSize-h.HeaderEnd
	if want < 0 || want > most {
		want = most
	}
	if left := hf.BodyLeft(); left >= 0 && int64(want) > left {
		want = int(left)
	}
	enough := len(body) >= most || len(body) >= want
	if h.Chunked && !enough {
		// A body that ends short of want is all there is to collect.
		n, ended := httpx.ChunkedData(body)
		enough = n >= want || ended
	}
	if !enough {
		return true, nil
	}
	sc.strm.collecting, sc.strm.resumed = false, true
	return false, sc.streamHead(st, hf)
}

// streamHead runs the rules over the head of a streamed response and
// sends it (and a replacement of the body's start), or leaves it for
// collectResponse.
func (sc *serverConn) streamHead(st *stream, hf *httpx.ResponseFramer) error {
	h := hf.Streaming()
	req := sc.strm.req
	b := st.buf.b[st.start : st.start+h.HeaderEnd]
	held := st.pending()
	held = held[:h.HeaderEnd+len(bodyOnly(held[h.HeaderEnd:], hf.BodyLeft()))]
	sc.strm = bodyStream{req: req, head: true, held: held, hf: hf, resumed: sc.strm.resumed}
	sc.spliceSkip = 0
	r, retry := sc.httpResponse(req, b, h)
	if sc.strm.collecting {
		return nil
	}
	sc.strm.head, sc.strm.held, sc.strm.hf, sc.strm.resumed = false, nil, nil, false
	st.start += h.HeaderEnd + sc.spliceSkip
	if r == nil {
		sc.strm.discard = true
		if retry != nil {
			req.sess.send(retry, true, sc.lp.loop())
		}
		return nil
	}
	if sc.strm.discard || req.sess.hresp && (sc.hx.responded || sc.hx.bodySet) {
		// The rule's answer, or the fallback redirect
		// (fallbackstatus.go), is the whole response.
		sc.strm.discard = true
	} else {
		sc.strm.closeAfter, r.closeAfter = r.closeAfter || sc.strm.filter != nil && !sc.strm.filter.chunkOut, false
		r.more = true
	}
	req.sess.deliverPart(req.seq, r, sc)
	return nil
}

// streamBody passes on the part of the streamed body that has arrived,
// and ends the response when its last byte is in.
func (sc *serverConn) streamBody(st *stream, hf *httpx.ResponseFramer) error {
	p := st.pending()
	if len(p) == 0 && hf.BodyLeft() != 0 {
		// (A replacement may have taken all of a Content-Length body:
		// Body then ends it with no bytes.)
		return nil
	}
	k, err := hf.Eat(p) // a chunk's line end a replacement took the place of
	if err != nil {
		return err
	}
	if st.start += k; k > 0 && k == len(p) {
		return nil
	}
	p = p[k:]
	n, done, err := hf.Body(p)
	if err != nil {
		return err
	}
	st.start += n
	if done {
		sc.endStream(p[:n])
		return nil
	}
	if ic := sc.strm.icap; ic != nil {
		ic.part(p[:n])
	}
	if n > 0 && !sc.strm.discard {
		req := sc.strm.req
		if cs := sc.strm.cache; cs != nil {
			sc.strm.cache = cs.add(p[:n], sc.e.cfg.MaxMessageSize)
		}
		var r *msg
		if sc.strm.filter != nil {
			sc.filterOut = sc.strm.filter.part(sc.filterOut[:0], p[:n], false)
			if len(sc.filterOut) == 0 {
				return nil // all held back, for a match that may go on
			}
			r = getMsg(len(sc.filterOut))
			copy(r.b, sc.filterOut)
		} else {
			r = getMsg(n)
			copy(r.b, p[:n])
		}
		r.more = true
		req.sess.deliverPart(req.seq, r, sc)
	}
	return nil
}

// endStream delivers the last part and frees the connection, as a
// complete response does.
func (sc *serverConn) endStream(last []byte) {
	e := sc.e
	bs := sc.strm
	sc.strm = bodyStream{}
	req := bs.req
	sc.qmu.Lock()
	sc.q.pop() // req: it stayed at the head
	sc.qmu.Unlock()
	sc.leg.pending.Add(-1)
	sc.leg.MsgsIn.Add(1)
	sc.ms.responses.Add(1)
	e.stats.responses.Add(1)
	if sc.owner == nil {
		if req.hx.noReuse {
			e.pool.retire(sc)
		}
		e.pool.released(sc)
	}
	if cs := bs.cache; cs != nil && !bs.discard {
		sc.cacheStream(req, cs, last) // httpcache.go
	}
	if bs.filter != nil && !bs.discard {
		sc.filterOut = bs.filter.part(sc.filterOut[:0], last, true)
		last = sc.filterOut
	}
	if !bs.discard {
		r := getMsg(len(last))
		copy(r.b, last)
		r.closeAfter = bs.closeAfter
		req.sess.deliverPart(req.seq, r, sc)
	}
	if bs.icap != nil {
		bs.icap.part(last)
		sc.icapResponseDone(bs.icap, req) // adapt.go
	}
	req.unref()
}

// deliverPart is deliver for a part of a streamed response from sc. A
// part that finds the previous one still waiting is appended to it. A
// server reader on its own goroutine returns only once the client has
// taken the part; one on an event loop cannot wait, so once the client
// holds MaxMessageSize of the response unwritten, sc stops reading
// (strm.paused) until the client writer takes it (resumeParts). Either
// way a slow client slows the member down instead of filling memory.
func (s *ClientConn) deliverPart(seq uint64, r *msg, sc *serverConn) {
	i := seq % uint64(len(s.slots))
	wait := sc.lp == nil
	more := r.more
	s.mu.Lock()
	if old := s.slots[i]; old != nil && !s.closed {
		n := len(old.b)
		g := old.grow(n, max(n+len(r.b), 2*n)) // doubling: linear copying
		g.b = g.b[:n+len(r.b)]
		copy(g.b[n:], r.b)
		g.more, g.closeAfter = r.more, r.closeAfter
		s.slots[i] = g
		r.unref()
	} else {
		s.mu.Unlock()
		s.deliver(seq, r, sc.lp.loop())
		s.mu.Lock()
	}
	if wait && !s.closed && s.slots[i] != nil {
		for !s.closed && s.slots[i] != nil {
			s.cond.Wait()
		}
		// The wait was the client's: the member's response timeout
		// counts from now.
		sc.lastRd.Store(s.e.now())
	}
	if !wait && more && !s.closed && s.slots[i] != nil && len(s.slots[i].b) >= s.e.cfg.MaxMessageSize {
		sc.strm.paused = true
		s.paused = append(s.paused, sc)
	}
	s.mu.Unlock()
}

// resumeParts lets the server connections that paused for this client
// read again: the client writer took what they had delivered, or the
// client is gone. The caller holds mu.
func (s *ClientConn) resumeParts() {
	for i, sc := range s.paused {
		sc.lp.postResume(sc)
		s.paused[i] = nil
	}
	s.paused = s.paused[:0]
}
