package mblb

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// Uploads. A request whose body passes MaxMessageSize, or has not all
// come when its head is in and the client's socket is drained (http.go),
// is streamed to its member, as BIG-IP's http profile does (it has no
// body limit, and runs HTTP_REQUEST once the head is in): HTTP_REQUEST
// runs and the head goes out on the connection chosen for it; then the
// body is passed on in the parts it arrives in,
// straight behind it on that connection, which carries nothing else
// until the body ends (a shared one is not given to another request
// meanwhile). The member's answer is framed as usual, even when it comes
// before the body has all left (the rest of the body still goes).
//
// Memory stays bounded: the client is not read while its connection
// holds uploadHigh bytes it has not written yet. On goroutines the
// write itself waits for the member; on an event loop the client's
// socket is left unread until the member has taken enough
// (uploadDrained). A rule that collects the body (HTTP::collect in
// HTTP_REQUEST, HTTPEvent.Await) gets HTTP_REQUEST_DATA once that much
// of it is in, or the body ended short of it, within MaxMessageSize
// with the head (HTTPEvent.Partial); nothing is sent before.
//
// An upload is never sent twice: once its head has gone, a failure of
// its connection resets the client.

// uploadHigh is how many body bytes a connection may hold unwritten
// before the client is no longer read; reading resumes below half.
const uploadHigh = 256 << 10

// upload is the client's request being streamed (reader only, but for
// resume, which the server connection's writer may post).
type upload struct {
	on bool
	// sc carries it; nil until the head has been sent (on an event loop
	// the head may wait for the window).
	sc *serverConn
	// discard: the request was answered otherwise (a rule's
	// HTTP::respond): its body is read and dropped.
	discard bool
	// paused: on an event loop, the client is not read until sc has
	// written enough (resumeUpload).
	paused bool
	// prefix: what replaces the part of the body the rules collected,
	// sent before the rest (HTTPEvent.ReplaceStart).
	prefix *msg
	// filter is the stream filter the body passes through (nil: none;
	// httpfilter.go); it goes to the member chunked.
	filter *bodyFilter
	// collecting: the head is in, HTTP_REQUEST ran and its rules wait
	// for the start of the body (HTTPEvent.Await); nothing has been
	// sent. closing, forceClose and continued are the request's, kept
	// for when it goes.
	collecting                     bool
	closing, forceClose, continued bool
	// previewWait: the head is in and the request is to be adapted;
	// nothing ran yet, the start of the body a preview takes is awaited
	// (startUpload).
	previewWait bool
	// icap: the body goes to the ICAP server that asked for the rest
	// after the preview, not to a member (adapt.go); discard is set.
	icap *icapUpload
}

// HTTPCollector is implemented by an HTTPRuleHandler whose rules may
// collect a request's body (they handle HTTP_REQUEST_DATA): the engine
// then keeps a copy of a streamed request's head for them while it
// reads what they collect.
type HTTPCollector interface {
	CollectsRequests() bool
}

// startUpload handles a request whose head is in and whose body is
// streamed (the framer said ErrStreamBody). more: wait for more bytes
// (the part of the body a rule collects is not in yet).
func (s *ClientConn) startUpload(st *stream, rf *httpx.RequestFramer) (more bool, err error) {
	if s.up.collecting {
		return s.collectUpload(st, rf)
	}
	h := rf.Streaming()
	st.want = 0
	if h.ExpectContinue && !s.continued {
		s.continued = true
		s.sendContinue()
	}
	pend := st.pending()
	opts := &s.e.cfg.Request.HTTP
	if ra := opts.RequestAdapt; ra != nil {
		// The ICAP server sees the preview: that much of the body is
		// held first (adaptUpload).
		if want := ra.Service.MaxPreview(); want > 0 && !s.collectedEnough(pend[h.HeaderEnd:], h, rf.BodyLeft(), want) {
			s.up.previewWait = true
			return true, nil
		}
		if s.up.previewWait {
			// The buffer may have moved while the preview came: the
			// head's views are taken again where it is now.
			s.up.previewWait = false
			hh, err := httpx.ParseRequest(pend)
			if err != nil {
				s.Close(true)
				return false, errClosed
			}
			s.upHH = hh
			h = &s.upHH
		}
	}
	continued := s.continued
	s.continued = false
	if obs := s.e.cfg.ObserveRequest; obs != nil {
		obs(s.client, pend[:h.HeaderEnd], h)
	}
	s.notePipelined()
	s.nreq++
	closing := h.WantsClose()
	forceClose := false
	if opts.MaxRequests > 0 && s.nreq >= opts.MaxRequests && !closing {
		closing, forceClose = true, true
	}
	head := pend[:h.HeaderEnd]
	var x *HTTPEvent
	if s.hrule != nil {
		x = &s.hx
		hc, ok := s.hrule.(HTTPCollector)
		collects := ok && hc.CollectsRequests()
		if collects {
			// The rules may wait for the body (HTTP::collect): they
			// read a copy of the head, which stays put while the read
			// buffer grows or moves.
			s.upHead = append(s.upHead[:0], head...)
			hh, err := httpx.ParseRequest(s.upHead)
			if err != nil {
				s.Close(true)
				return false, errClosed
			}
			s.upHH = hh
			h, head = &s.upHH, s.upHead
			x.reset(s.upHead, h, false, netip.AddrPort{})
			x.held = bodyOnly(pend[h.HeaderEnd:], rf.BodyLeft())
		} else {
			x.reset(pend, h, false, netip.AddrPort{})
		}
		x.partial = true
		x.requestNum, x.sess = uint64(s.nreq), s
		if err := s.hrule.OnHTTPRequest(x); err != nil {
			s.rst(rstcause.TCLError)
			s.Close(true)
			return false, errClosed
		}
		if x.await != 0 && !x.Decided() && collects {
			s.up = upload{collecting: true, closing: closing, forceClose: forceClose, continued: continued}
			return s.collectUpload(st, rf)
		}
	}
	return s.sendUpload(st, rf, x, head, h, closing, forceClose, continued)
}

// collectUpload waits until the part of a streamed request's body its
// rules collect has arrived (HTTPEvent.Await: that much is held, no
// more), runs HTTP_REQUEST_DATA over it (again, for a rule that collects
// more there, up to four times), then sends the request.
func (s *ClientConn) collectUpload(st *stream, rf *httpx.RequestFramer) (more bool, err error) {
	x, h := &s.hx, &s.upHH
	for {
		body := st.pending()[h.HeaderEnd:]
		if !s.collectedEnough(body, h, rf.BodyLeft(), x.await) {
			return true, nil
		}
		x.held = bodyOnly(body, rf.BodyLeft())
		x.resume()
		dh, ok := s.hrule.(HTTPDataHandler)
		if !ok {
			break
		}
		if err := dh.OnHTTPRequestData(x); err != nil {
			s.rst(rstcause.TCLError)
			s.Close(true)
			return false, errClosed
		}
		if x.await == 0 || x.Decided() || x.spliced || !x.CanAwait() {
			break
		}
	}
	up := s.up
	s.up = upload{}
	return s.sendUpload(st, rf, x, s.upHead, h, up.closing, up.forceClose, up.continued)
}

// bodyOnly is b, what has arrived after a streamed head, without what
// follows the body when its length is known (left >= 0: a pipelined
// request or response may follow it).
func bodyOnly(b []byte, left int64) []byte {
	if left >= 0 && int64(len(b)) > left {
		return b[:left]
	}
	return b
}

// collectedEnough reports whether body, what has arrived of a streamed
// request's body, holds the want bytes (de-chunked) its rules collect,
// or as much as the engine holds (MaxMessageSize with the head).
func (s *ClientConn) collectedEnough(body []byte, h *httpx.Head, left int64, want int) bool {
	most := s.e.cfg.MaxMessageSize - h.HeaderEnd
	if want < 0 || want > most {
		want = most
	}
	if left >= 0 && int64(want) > left {
		want = int(left)
	}
	if len(body) >= most {
		return true
	}
	if h.Chunked {
		// A body that ends short of want is all there is to collect.
		n, ended := httpx.ChunkedData(body)
		return n >= want || ended
	}
	return len(body) >= want
}

// sendUpload sends the head of a streamed request once its rules ran
// (head and h: the head as it arrived), and leaves its body to
// uploadBody; a collected part the rules replaced goes first.
func (s *ClientConn) sendUpload(st *stream, rf *httpx.RequestFramer, x *HTTPEvent, head []byte, h *httpx.Head, closing, forceClose, continued bool) (more bool, err error) {
	hlen := h.HeaderEnd
	skip := 0
	var prefix *msg
	sendHead, sendH := head, h
	var respAdapt adaptSide
	if opts := &s.e.cfg.Request.HTTP; opts.adapts() && (x == nil || !x.disable) {
		var reqAdapt adaptSide
		reqAdapt, respAdapt = s.adaptChoice(x) // adapt.go
		if ra := opts.RequestAdapt; ra != nil && (x == nil || !x.reject && !x.drop && !x.responded && !x.bodySet) {
			if done, more, err := s.adaptUpload(ra, reqAdapt, respAdapt, st, rf, x, head, h, closing); done {
				return more, err
			}
		}
	}
	if x != nil {
		switch {
		case x.reject:
			s.rst(rstcause.RuleReject)
			s.Close(true)
			return false, errClosed
		case x.drop:
			s.Close(false)
			return false, errClosed
		case x.responded:
			// Answered by the rule: the body is read and dropped.
			s.ruleReply(x, closing)
			st.start += hlen
			s.up = upload{on: true, discard: true}
			return false, nil
		case x.bodySet || x.disable:
			s.e.logf("mblb: client %s: a rule replaced the body of, or disabled HTTP for, a request streamed over %d bytes, reset", s.client, s.e.cfg.MaxMessageSize)
			s.Close(true)
			return false, errClosed
		}
		closing = closing || x.closeAfter
		if x.detach != 0 {
			s.mu.Lock()
			s.perConn = x.detach < 0
			s.mu.Unlock()
		}
		if x.edited != nil && !x.framingKept {
			if eh, err := httpx.ParseRequest(x.edited); err != nil || !sameFraming(&eh, h) {
				s.e.logf("mblb: client %s: a rule changed the framing of a request streamed over %d bytes, reset", s.client, s.e.cfg.MaxMessageSize)
				s.Close(true)
				return false, errClosed
			}
		}
		if x.spliced {
			// HTTP::payload replace of the collected part: the
			// replacement, framed, then the rest of the body as it
			// comes (httpx.Splice).
			out, n, err := rf.Splice(s.upSplice[:0], st.pending()[hlen:], x.spliceK, x.body)
			if err != nil {
				s.e.logf("mblb: client %s: replacing the start of a streamed request body: %v, reset", s.client, err)
				s.Close(true)
				return false, errClosed
			}
			s.upSplice, skip = out, n
			prefix = getMsg(len(out))
			copy(prefix.b, out)
			prefix.hx.part = true
			if !h.Chunked {
				base := head
				if x.edited != nil {
					base = x.edited
				}
				s.reframe = httpx.SetContentLength(s.reframe[:0], base, int(h.ContentLength)-x.spliceK+len(x.body))
				eh, err := httpx.ParseRequest(s.reframe)
				if err != nil {
					prefix.unref()
					s.Close(true)
					return false, errClosed
				}
				x.edited = s.reframe
				s.upHH2 = eh
				sendHead, sendH = s.reframe, &s.upHH2
			}
		}
	}
	var bf *bodyFilter
	if f := s.requestFilter(h); (f != nil || s.rechunkUpload(h)) && prefix == nil && requestMinor(head) >= 1 {
		// The filtered body's length is known only at its end: it goes
		// chunked (httpfilter.go).
		base := sendHead
		if x != nil && x.edited != nil {
			base = x.edited
		}
		s.reframe = httpx.SetChunked(s.reframe[:0], base, true)
		eh, err := httpx.ParseRequest(s.reframe)
		if err != nil {
			s.Close(true)
			return false, errClosed
		}
		if x != nil {
			x.edited, x.framingKept = s.reframe, false
		}
		s.upHH2 = eh
		sendHead, sendH = s.reframe, &s.upHH2
		bf = newBodyFilter(f, nil, h.Chunked, true)
	}
	m, ok := s.buildRequest(sendHead, sendH, x)
	if !ok {
		if prefix != nil {
			prefix.unref()
		}
		return false, errClosed
	}
	m.hx.upload = true
	m.hx.respAdapt = respAdapt
	m.httpClose = closing
	m.hx.continued = continued
	m.hx.forceClose = forceClose
	s.decide(m, head, h, x)
	// What follows the head is body, from now on passed on as it comes.
	st.start += hlen + skip
	s.up = upload{on: true, prefix: prefix, filter: bf}
	if s.lp == nil && s.upWake == nil {
		s.upWake = make(chan struct{}, 1)
	}
	s.msgsIn.Add(1)
	if !s.dispatch(m) {
		return false, errClosed
	}
	s.httpDone = closing
	return false, nil
}

// uploadConn notes the connection an upload's head was queued on: the
// body follows it there, and nothing else goes on it meanwhile. It runs
// in send, on the client's reader.
func (s *ClientConn) uploadConn(sc *serverConn) {
	s.up.sc = sc
	sc.uploading.Store(true)
	sc.upSess.Store(s)
}

// uploadBody passes on the part of the body that has arrived. more: the
// body goes on (the caller waits for bytes, or the connection to drain);
// otherwise it has ended and framing resumes.
func (s *ClientConn) uploadBody(st *stream, rf *httpx.RequestFramer) (more bool, err error) {
	for {
		up := &s.up
		if !up.discard && up.sc == nil {
			return true, nil // the head waits for the window
		}
		sc := up.sc
		if sc != nil && sc.upQueued.Load() >= uploadHigh {
			if s.lp != nil {
				up.paused = true
				// The writer may have drained it meanwhile.
				if sc.upQueued.Load() >= uploadHigh {
					return true, nil
				}
				up.paused = false
			} else if err := s.awaitUpload(sc); err != nil {
				return false, err
			}
		}
		if up.prefix != nil && up.discard {
			up.prefix.unref()
			up.prefix = nil
		}
		if up.prefix != nil && sc != nil {
			part := up.prefix
			up.prefix = nil
			if !sc.submitPart(part) {
				s.e.logf("mblb: client %s: the connection to %s carrying its upload ended, reset", s.client, sc.leg.Member.Name)
				s.rstMember(sc)
				s.Close(true)
				return false, errClosed
			}
			s.markDirty(sc)
		}
		p := st.pending()
		if len(p) == 0 && rf.BodyLeft() != 0 {
			// (A replacement may have taken all of a Content-Length
			// body: Body then ends it with no bytes.)
			return true, nil
		}
		k, err := rf.Eat(p) // a chunk's line end a replacement took the place of
		if err != nil {
			s.e.logf("mblb: client %s: %v in a streamed request body, reset", s.client, err)
			s.Close(true)
			return false, errClosed
		}
		if st.start += k; k > 0 && k == len(p) {
			return true, nil
		}
		p = p[k:]
		n, done, err := rf.Body(p)
		if err != nil {
			// Half a body has gone: no answer can follow in order.
			s.e.logf("mblb: client %s: %v in a streamed request body, reset", s.client, err)
			s.Close(true)
			return false, errClosed
		}
		data := p[:n]
		if up.icap != nil {
			up.icap.part(data)
		}
		if up.filter != nil && !up.discard {
			s.upFiltered = up.filter.part(s.upFiltered[:0], data, done)
			data = s.upFiltered
		}
		if len(data) > 0 && !up.discard {
			part := getMsg(len(data))
			copy(part.b, data)
			part.hx.part = true
			if !sc.submitPart(part) {
				s.e.logf("mblb: client %s: the connection to %s carrying its upload ended, reset", s.client, sc.leg.Member.Name)
				s.rstMember(sc)
				s.Close(true)
				return false, errClosed
			}
			s.markDirty(sc)
		}
		st.start += n
		if done {
			if sc != nil {
				sc.upSess.Store(nil)
				sc.uploading.Store(false)
			}
			ic := up.icap
			s.up = upload{}
			if ic != nil {
				return false, s.icapUploadDone(ic)
			}
			return false, nil
		}
	}
}

// awaitUpload waits, on the client's goroutine, until sc holds less than
// half of uploadHigh unwritten: its writer writes on another thread (an
// event loop, or another goroutine holding its writing token).
func (s *ClientConn) awaitUpload(sc *serverConn) error {
	s.flushDirty()
	for sc.upQueued.Load() >= uploadHigh/2 {
		if s.isClosed() {
			return errClosed
		}
		if sc.down.Load() {
			s.e.logf("mblb: client %s: the connection to %s carrying its upload ended, reset", s.client, sc.leg.Member.Name)
			s.rstMember(sc)
			s.Close(true)
			return errClosed
		}
		select {
		case <-s.upWake:
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// submitPart queues a part of an upload's body behind its head: written
// like a request, but no response is expected for it. False when the
// connection is dead.
func (sc *serverConn) submitPart(m *msg) bool {
	sc.qmu.Lock()
	if sc.dead {
		sc.qmu.Unlock()
		m.unref()
		return false
	}
	sc.upQueued.Add(int64(len(m.b)))
	sc.out = append(sc.out, m)
	sc.qmu.Unlock()
	return true
}

// uploadWritten accounts for the upload parts of a batch sc wrote, and
// lets a client waiting for room read again; it returns how many parts
// the batch held (they are not requests). The caller calls it before
// dropping the batch's references.
func (sc *serverConn) uploadWritten(batch []*msg) (parts int) {
	var n int64
	for _, m := range batch {
		if m.hx.part {
			n += int64(len(m.b))
			parts++
		}
	}
	if n == 0 {
		return 0
	}
	if sc.upQueued.Add(-n) < uploadHigh/2 {
		if s := sc.upSess.Load(); s != nil {
			s.uploadDrained()
		}
	}
	return parts
}

// uploadDied wakes the client of an upload whose connection failed, so
// that it stops waiting for room.
func (sc *serverConn) uploadDied() {
	if s := sc.upSess.Load(); s != nil {
		s.uploadDrained()
	}
}

// uploadDrained tells the client that its upload's connection has room
// again (or is gone): a goroutine reader is woken; a session on an event
// loop is posted a turn.
func (s *ClientConn) uploadDrained() {
	if s.lp != nil {
		if s.upResume.CompareAndSwap(false, true) {
			s.lp.postResumeUpload(s)
		}
		return
	}
	select {
	case s.upWake <- struct{}{}:
	default:
	}
}

// HTTPResponseCollector is implemented by an HTTPRuleHandler whose rules
// may collect a response's body (they handle HTTP_RESPONSE_DATA): the
// engine then holds the start of a streamed response's body, up to
// MaxMessageSize with its head, before HTTP_RESPONSE, and
// HTTP_RESPONSE_DATA reads it (HTTPEvent.Partial), as for uploads.
type HTTPResponseCollector interface {
	CollectsResponses() bool
}

// collectWait reports whether a response that starts streaming must
// wait for more of its body first, because its client's rules may
// collect it without an HTTP_RESPONSE_DATA turn of their own. Only a
// response streamed by its Content-Length can start before
// MaxMessageSize of it is in for those (streamsNow leaves the others
// to the limit).
func (sc *serverConn) collectWait(st *stream, hf *httpx.ResponseFramer) bool {
	left := hf.BodyLeft()
	if left <= 0 {
		return false
	}
	sc.qmu.Lock()
	req := sc.q.peek()
	sc.qmu.Unlock()
	if req == nil || req.sess == nil {
		return false
	}
	if ra := sc.e.cfg.Request.HTTP.ResponseAdapt; ra != nil && !req.hx.respAdapt.skips(ra, hf.Streaming().Minor) {
		// RESPMOD's preview takes the start of the body (adaptStreamedResponse).
		h := hf.Streaming()
		want := int64(req.hx.respAdapt.apply(ra).Service.MaxPreview())
		st.want = 0
		if int64(len(st.pending())-h.HeaderEnd) < min(want, left) {
			return true
		}
	}
	hc, ok := req.sess.hrule.(HTTPResponseCollector)
	if !ok || !hc.CollectsResponses() {
		return false
	}
	if _, ok := req.sess.hrule.(HTTPResponseDataHandler); ok {
		// HTTP_RESPONSE runs first; the engine then reads what its
		// HTTP::collect asks (collectResponse).
		return false
	}
	h := hf.Streaming()
	want := int64(sc.e.cfg.MaxMessageSize - h.HeaderEnd)
	if want > left {
		want = left
	}
	st.want = 0
	return int64(len(st.pending())-h.HeaderEnd) < want
}

// abortUpload ends the connection of an upload its client left before
// the body's end (the reader's last act): the member holds half a
// request, so the connection can serve no one else.
func (s *ClientConn) abortUpload() {
	up := &s.up
	if up.icap != nil {
		up.icap.rest.Abort() // (half a body went: the exchange is void)
		up.icap = nil
	}
	if !up.on || up.sc == nil {
		return
	}
	sc := up.sc
	*up = upload{}
	sc.upSess.Store(nil)
	sc.fail(ErrAborted)
}

// uploadCut handles a client that ended its side in the middle of an
// upload's body (or of the part its rules collect): the request can
// never be complete, so no answer is awaited; the upload's connection
// goes down and the client is reset.
func (s *ClientConn) uploadCut() bool {
	if !s.up.on && !s.up.collecting {
		return false
	}
	s.e.logf("mblb: client %s closed in the middle of an upload, reset", s.client)
	s.abortUpload()
	s.Close(true)
	return true
}
