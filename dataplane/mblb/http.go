package mblb

import (
	"errors"
	"io"
	"net"
	"net/netip"

	"github.com/openltm/openltm/dataplane/httpcache"
	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/rewrite"
	"github.com/openltm/openltm/dataplane/sflow"
	"github.com/openltm/openltm/dataplane/wsframe"
	"github.com/openltm/openltm/dataplane/xmlcbr"
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
	// MaxHeaderSize bounds a request or response header block (0: 32 KiB,
	// max-header-size); MaxHeaderCount bounds its fields (0: 64,
	// max-header-count; negative: no bound). A request over either resets
	// its client, as BIG-IP's oversize- and excess-client-headers reject
	// do; a response over either fails its server connection.
	MaxHeaderSize, MaxHeaderCount int
	// MaxRequests is how many requests one client connection may send
	// (max-requests; 0: no limit): the last one's response says
	// Connection: close and the connection closes after it.
	MaxRequests int
	// InsertXFF adds X-Forwarded-For with the client's address to every
	// request (insert-xforwarded-for enabled).
	InsertXFF bool
	// AcceptXFF trusts the first address of a request's X-Forwarded-For
	// (or the first of XFFNames it carries, in order) as the client's:
	// source-address persistence and Choice.Client use it (accept-xff).
	AcceptXFF bool
	XFFNames  []string
	// Transformations keeps OneConnect's server connections open when a
	// client asks to close (oneconnect-transformations); without
	// OneConnect it does nothing, as on BIG-IP.
	Transformations bool
	// Cookie is cookie persistence's name and insert attributes; an
	// empty Name means none. CookieMode is its method (cookie.go).
	Cookie     httpx.CookieSpec
	CookieMode CookieMode
	// RedirectRewrite rewrites the Location of members' redirects
	// (redirect-rewrite) to Scheme ("http" when empty) and, for nodes,
	// to the virtual's address.
	RedirectRewrite httpx.RedirectRewrite
	Scheme          string
	// Fallback is where a request no member can serve is redirected
	// (fallback-host); empty resets the client, as without it.
	Fallback string
	// FallbackStatus is fallback-status-codes: a member's response with
	// one of them is replaced by the redirect to the fallback host (its
	// body read and dropped); nil: none.
	FallbackStatus *StatusSet
	// ServerAgent is the Server header of the answers the proxy makes
	// itself (server-agent-name); empty sends none.
	ServerAgent string
	// BasicAuthRealm is the realm of the 401s rules answer with when
	// they name none (basic-auth-realm); empty by default.
	BasicAuthRealm string
	// HeaderInsert is header lines (each ending in CRLF) added to every
	// request a member gets (header-insert); HeaderErase names, in lower
	// case, a header removed from them (header-erase).
	HeaderInsert []byte
	HeaderErase  string
	// DropRequestVia removes the requests' Via fields (via-request
	// remove; via-request append is a line of HeaderInsert).
	// ResponseVia is added to every response (via-response append: Via:
	// 1.1 via-host-name, ending in CRLF).
	DropRequestVia bool
	ResponseVia    []byte
	// ResponseFields removes fields from the members' responses
	// (response-headers-permitted, via-response remove); nil: none
	// (httpfields.go).
	ResponseFields *ResponseFields
	// Cache is the virtual's web-acceleration cache (nil: none;
	// httpcache.go), shared by the virtuals of one profile.
	Cache *httpcache.Cache
	// CookieCrypt is encrypt-cookies (nil: none; cookiecrypt.go).
	CookieCrypt *CookieEncryption
	// HSTS is the Strict-Transport-Security line (ending in CRLF) added
	// to every response that has none (the hsts block); nil: none.
	HSTS []byte
	// HSTSLine is the line the hsts block's settings make whatever its
	// mode: where HTTP::hsts starts from (internal/mblbvs).
	HSTSLine []byte
	// Stream is the virtual's stream profile (nil: none), which filters
	// request and response bodies (httpfilter.go).
	Stream *StreamOptions
	// Rewrite is the virtual's rewrite profile in uri-translation mode
	// (nil: none), which maps URIs between the client's and the
	// server's spaces (rewrite.go).
	Rewrite *rewrite.Profile
	// Compress is the virtual's http-compression profile (nil: none),
	// which compresses responses for the clients that accept it
	// (httpcompress.go).
	Compress *httpcompress.Policy
	// RequestLog is the virtual's request-log profile (nil: none;
	// reqlog.go).
	RequestLog *RequestLog
	// SFlow is the virtual's sFlow HTTP sampler (nil: sFlow is off for
	// it, which costs a nil check per request; sflow.go).
	SFlow *sflow.Sampler
	// WebSocket is the virtual's websocket profile (nil: none): upgraded
	// connections are framed and their frames reach the rules
	// (websocket.go).
	WebSocket *wsframe.Options
	// HTML is the virtual's html profile (nil: none): response bodies of
	// its content types pass its html rules as they stream (httphtml.go).
	HTML *HTMLOptions
	// SSE is the virtual's sse profile (nil: none): text/event-stream
	// response bodies are read event by event as they stream, for the
	// rules' SSE_RESPONSE (httpsse.go).
	SSE *SSEOptions
	// JSON is the virtual's json profile (nil: none): bodies with a
	// JSON content type are parsed for the rules' JSON_ events
	// (internal/mblbvs/json.go).
	JSON *JSONOptions
	// XML is the virtual's xml profile (nil: none): request bodies with
	// an XML content type are parsed and its XPath queries evaluated
	// for the rules' XML_CONTENT_BASED_ROUTING
	// (internal/mblbvs/xml.go).
	XML *xmlcbr.Profile
	// RequestAdapt and ResponseAdapt are the virtual's request-adapt and
	// response-adapt profiles (nil: none; adapt.go). Either makes the
	// messages of that side whole before they go on (no streaming, up to
	// the engine's MaxMessageSize) and the engine's sessions goroutines.
	RequestAdapt, ResponseAdapt *Adapt
	// RequestChunking and ResponseChunking are request-chunking and
	// response-chunking: how bodies are framed on their way out
	// (httpchunking.go); the zero value keeps the sender's framing.
	RequestChunking, ResponseChunking httpx.Chunking
	// ForceHTTP10 says every response to the clients is HTTP/1.0 in its
	// status line (the fasthttp profile's force-http-10-response), so
	// that they neither pipeline nor expect HTTP/1.1 features.
	ForceHTTP10 bool
	// NTLM keeps a pooled member connection with the client whose NTLM
	// or Negotiate authentication it carries (the ntlm profile; ntlm.go):
	// such a member authenticates the connection, not each request.
	NTLM bool
}

func (o *HTTPOptions) maxHeaderCount() int {
	switch {
	case o.MaxHeaderCount == 0:
		return httpx.DefaultMaxHeaderCount
	case o.MaxHeaderCount < 0:
		return 0
	}
	return o.MaxHeaderCount
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

// Tunnel kinds of an HTTP request (httpMsg.tunnel).
const (
	tunnelOnSwitch = 1 + iota // Upgrade or CONNECT: a tunnel if the member agrees
	tunnelNow                 // HTTP::disable: a tunnel from this request on
)

// continue100 is the proxy's interim answer to Expect: 100-continue.
const continue100 = "HTTP/1.1 100 Continue\r\n\r\n"

// frameHTTP cuts the client's bytes into requests, applies the profile's
// edits while copying each one out of the read buffer (one copy, as for
// any message) and dispatches it. After a request that may turn the
// connection into a tunnel it stops, leaving what follows unread in st,
// and sets upgrading: Run then waits for the member's answer.
func (s *ClientConn) frameHTTP(st *stream, rf *httpx.RequestFramer) error {
	opts := &s.e.cfg.Request.HTTP
	for !s.httpDone || s.up.on {
		if s.up.on { // an upload's body (upload.go)
			if more, err := s.uploadBody(st, rf); more || err != nil {
				return err
			}
			continue
		}
		b, err := st.next()
		if err != nil {
			switch {
			case errors.Is(err, httpx.ErrStreamBody): // upload.go
				if more, err := s.startUpload(st, rf); more || err != nil {
					return err
				}
				continue
			case errors.Is(err, httpx.ErrBodyTooLarge):
				s.rejected.Store(RejectBodyTooLarge)
				s.onReject()
				return ErrTooLarge
			case errors.Is(err, httpx.ErrHeaderTooLarge), errors.Is(err, httpx.ErrTooManyHeaders):
				// BIG-IP resets the client (oversize-client-headers and
				// excess-client-headers reject); the caller logs it.
				s.e.stats.oversize.Add(1)
				if errors.Is(err, httpx.ErrTooManyHeaders) {
					s.rejected.Store(RejectExcessHeaders)
				} else {
					s.rejected.Store(RejectOversizeHeaders)
				}
				s.onReject()
				return err
			}
			s.rejected.Store(RejectBadRequest)
			if s.onReject() {
				s.e.logf("mblb: client %s: %v, reset by HTTP_REJECT's rule", s.client, err)
				s.rst(rstcause.RuleReject)
				return errClosed
			}
			s.e.logf("mblb: client %s: %v, 400 Bad Request", s.client, err)
			s.httpDone = true
			s.localReply([]byte(badRequest), true)
			break
		}
		if b == nil {
			if st.more && s.lp == nil && rf.Waiting() != nil && drainedConn(s.c) {
				st.more = false // the read filled the buffer exactly
			}
			if !st.more && opts.RequestAdapt == nil && rf.StreamNow(st.pending()) {
				// The head is in and the socket holds no more of the
				// body: HTTP_REQUEST runs and the request streams now
				// rather than wait for a body the client may send
				// slowly (upload.go). A request to adapt is held whole
				// within the bound, and streams only past it
				// (adaptUpload).
				if more, err := s.startUpload(st, rf); more || err != nil {
					return err
				}
				continue
			}
			if w := rf.Waiting(); w != nil && w.ExpectContinue && !s.continued {
				s.continued = true
				s.sendContinue()
			}
			return nil
		}
		continued := s.continued
		s.continued = false
		h := rf.Last()
		closing := h.WantsClose()
		if obs := s.e.cfg.ObserveRequest; obs != nil {
			obs(s.client, b, h)
		}
		s.notePipelined()
		s.nreq++
		forceClose := false
		if opts.MaxRequests > 0 && s.nreq >= opts.MaxRequests && !closing {
			closing, forceClose = true, true
		}
		var x *HTTPEvent
		if s.hrule != nil {
			x = &s.hx
			x.reset(b, h, false, netip.AddrPort{})
			x.requestNum, x.sess = uint64(s.nreq), s
			if err := s.hrule.OnHTTPRequest(x); err != nil {
				s.rst(rstcause.TCLError)
				s.Close(true) // the rule failed: reset, as BIG-IP does
				return errClosed
			}
			switch {
			case x.reject:
				s.rst(rstcause.RuleReject)
				s.Close(true)
				return errClosed
			case x.drop:
				s.Close(false)
				return errClosed
			case x.responded:
				// Answered by the rule: no server sees the request.
				s.ruleReply(x, closing)
				continue
			}
			closing = closing || x.closeAfter
			if x.detach != 0 {
				s.mu.Lock()
				s.perConn = x.detach < 0
				s.mu.Unlock()
			}
		}
		var respAdapt adaptSide
		if opts.adapts() && (x == nil || !x.disable) {
			var reqAdapt adaptSide
			reqAdapt, respAdapt = s.adaptChoice(x) // adapt.go
			if ra := opts.RequestAdapt; ra != nil {
				var answer []byte
				var ok bool
				if b, h, answer, ok = s.adaptRequestChain(ra, reqAdapt, b, h, x); !ok { // adapt_context.go
					return errClosed
				}
				if answer != nil {
					s.msgsIn.Add(1)
					s.localReply(answer, closing)
					s.httpDone = closing
					continue
				}
			}
		}
		var cm cacheMiss
		if opts.Cache != nil {
			head := b[:h.HeaderEnd]
			if x != nil && x.edited != nil {
				head = x.edited
			}
			hit, miss, err := s.cacheHit(head, h, x, closing) // httpcache.go
			if err != nil {
				return err
			}
			if hit {
				continue
			}
			cm = miss
		}
		if f := s.requestFilter(h); f != nil && (x == nil || !x.disable) { // httpfilter.go
			x = s.filterRequest(f, b, h, x)
		}
		m, ok := s.buildRequest(b, h, x)
		if !ok {
			return errClosed
		}
		if c := s.e.cfg.Clone; c != nil {
			c(s.client, b, m.b)
		}
		if s.clone != nil {
			s.clone(b, m.b)
		}
		m.httpClose = closing
		m.hx.cacheable, m.hx.cacheKey, m.hx.cachePrio, m.hx.cacheUpdate = cm.cacheable, cm.key, cm.priority, cm.update
		m.hx.continued = continued
		m.hx.respAdapt = respAdapt
		if forceClose {
			m.hx.forceClose = true
		}
		s.decide(m, b, h, x)
		disabledReset := false
		if x != nil && x.disable {
			m.hx.tunnel = tunnelNow
			s.passthrough.Store(PassthroughRule)
			disabledReset = s.onDisabled()
		}
		tunnel := m.hx.tunnel
		s.msgsIn.Add(1)
		if !s.dispatch(m) {
			return errClosed
		}
		if disabledReset {
			// HTTP_DISABLED's rule said reject or drop.
			s.rst(rstcause.RuleReject)
			return errClosed
		}
		if tunnel != 0 {
			// What follows is tunnel data, or the next request if the
			// member refuses: it waits unread until the answer comes.
			s.upgrading = true
			if tunnel == tunnelNow && s.lp != nil {
				s.mu.Lock()
				sc, seq := s.tunSC, s.nextSeq-1
				s.mu.Unlock()
				if sc != nil {
					go s.migrateWhenAnswered(sc, seq)
				}
			}
			return nil
		}
		// After a request that closes the connection, nothing the client
		// sends is read as a request.
		s.httpDone = closing
	}
	st.start = st.end
	return nil
}

// decide sets on m what the request's head (b, h) and its HTTP_REQUEST
// rules (x; nil without) chose: cookie persistence, the client address of
// X-Forwarded-For, the target, the persistence key, reuse, the OneConnect
// label and the fallback host. For whole requests and uploads alike.
func (s *ClientConn) decide(m *msg, b []byte, h *httpx.Head, x *HTTPEvent) {
	opts := &s.e.cfg.Request.HTTP
	s.cookieRequest(m, b, h) // cookie.go
	if opts.Rewrite != nil && (x == nil || !x.disable) {
		s.rewriteRequest(opts.Rewrite, m) // rewrite.go
	}
	if opts.AcceptXFF {
		m.hx.xff = httpx.ForwardedFor(b, h, opts.XFFNames)
	}
	if x != nil && x.targetSet {
		s.current, s.currentSet = x.target, true
	}
	if s.currentSet {
		m.target, m.ruleTarget = s.current, true
	}
	if x != nil {
		s.noteWebSocket(x) // websocket.go
		if x.persistSet {
			m.persist = x.persist
		}
		m.hx.noReuse = x.noReuse
		if x.labelSet {
			s.label = x.label
		}
		if x.selPers != 0 {
			s.selPersist = x.selPers > 0
		}
		m.hx.fallback = x.fallback
	}
	m.hx.label = s.ocLabel(m.persist)
	if opts.NTLM {
		s.ntlmRequest(m, b, h) // ntlm.go
	}
	if m.hx.fallback == "" {
		m.hx.fallback = opts.Fallback
	}
}

// SetTarget makes t the client's current target (a rule's pool, member
// or node choice in CLIENT_ACCEPTED on an HTTP virtual): its requests go
// there until a rule chooses another. Call before the session starts.
func (s *ClientConn) SetTarget(t Target) { s.current, s.currentSet = t, true }

// SetDecisionLog makes the engine log the member choice of each of the
// client's messages from now on (a rule's LB::enable_decisionlog).
func (s *ClientConn) SetDecisionLog() {
	s.mu.Lock()
	s.decisionLog = true
	s.mu.Unlock()
}

// Current is the client's current target (SetTarget, or the last one a
// request's rule chose), if a rule chose one. On the session's thread
// (its rules run there).
func (s *ClientConn) Current() (Target, bool) { return s.current, s.currentSet }

// requestEdits are the http profile's edits of every request the client
// sends: X-Forwarded-For, OneConnect's transformations, header-insert and
// header-erase.
func (s *ClientConn) requestEdits() httpx.RequestEdits {
	opts := &s.e.cfg.Request.HTTP
	ed := httpx.RequestEdits{Transform: opts.Transformations && s.e.pool != nil, Insert: opts.HeaderInsert, Erase: opts.HeaderErase}
	if opts.InsertXFF {
		ed.XFF = s.client.Addr()
	}
	ed.DropVia = opts.DropRequestVia
	return ed
}

// buildRequest copies a framed request out of the read buffer with the
// rule's and the profile's edits. False means the client was reset.
func (s *ClientConn) buildRequest(b []byte, h *httpx.Head, x *HTTPEvent) (*msg, bool) {
	opts := &s.e.cfg.Request.HTTP
	ed := s.requestEdits()
	if opts.CookieCrypt != nil {
		x = s.openCookies(b, h, x) // cookiecrypt.go
	}
	if opts.RequestChunking != httpx.Sustain && (x == nil || !x.bodySet) && len(b) > h.HeaderEnd {
		// (A streamed request's head comes alone: uploads are
		// re-framed part by part, upload.go.)
		x = s.rechunkRequest(b, h, x) // httpchunking.go
	}
	var z compressReq
	if opts.Compress != nil {
		head := b[:h.HeaderEnd]
		if x != nil && x.edited != nil {
			head = x.edited
		}
		z, ed.DropAcceptEncoding = s.compressRequest(head, h) // httpcompress.go
	}
	ed.DropAcceptEncoding = ed.DropAcceptEncoding || opts.HTML != nil // httphtml.go
	if ws := opts.WebSocket; ws != nil && h.Upgrade && (ws.NoCompression || s.wsFrameRules()) {
		// compression disabled, or rules that read and edit frames:
		// neither end may negotiate permessage-deflate, so payloads
		// cross as sent (websocket.go).
		ed.DropWSExtensions = IsWebSocketUpgrade(b, h)
	} else if ws != nil && h.Upgrade && ws.WindowBits > 0 && IsWebSocketUpgrade(b, h) {
		head := b[:h.HeaderEnd]
		if x != nil && x.edited != nil {
			head = x.edited
		}
		ed.WSExtensions = limitWSWindow(head, ws.WindowBits) // websocket.go
	}
	var m *msg
	if x == nil || (x.edited == nil && !x.bodySet) {
		m = getMsg(len(b) + ed.Growth())
		m.b = httpx.AppendRequest(m.b[:0], b, h, ed)
		m.hx.hlen = len(m.b) - (len(b) - h.HeaderEnd)
		m.hx.z = z
		m.httpHead = h.IsHead()
		s.markTunnel(m, b, h)
		return m, true
	}
	// The rule edited the head or the body: the framing facts are read
	// again from what the member will see (the rare path).
	head, body := b[:h.HeaderEnd], b[h.HeaderEnd:]
	if x.edited != nil {
		head = x.edited
	}
	if x.bodySet {
		head, body = s.requestBody(head, x.body, b, h) // httpchunking.go
	}
	var eh httpx.Head
	var err error
	if x.framingKept && !x.bodySet {
		// Only fields that frame nothing changed (SetHead): the facts
		// are the framer's, for a block of the new length.
		eh = *h
		eh.HeaderEnd = len(head)
		eh.Method = head[:len(h.Method)]
	} else {
		eh, err = httpx.ParseRequest(head)
	}
	if !x.bodySet && (err != nil || !sameFraming(&eh, h)) {
		// The rule changed Content-Length or Transfer-Encoding but not
		// the body: the body goes as it is, framed by its real length.
		if h.Chunked {
			body, _ = httpx.Dechunk(nil, body)
		}
		s.reframe = httpx.SetContentLength(s.reframe[:0], head, len(body))
		head = s.reframe
		if eh, err = httpx.ParseRequest(head); err != nil {
			s.e.logf("mblb: client %s: the rule made an invalid request head (%v), reset", s.client, err)
			s.Close(true)
			return nil, false
		}
		x.bodySet = true // what follows treats it as re-framed
	} else if err != nil {
		s.e.logf("mblb: client %s: the rule made an invalid request head (%v), reset", s.client, err)
		s.Close(true)
		return nil, false
	}
	m = getMsg(len(head) + len(body) + ed.Growth())
	m.b = httpx.AppendRequestHead(m.b[:0], head, body, &eh, ed)
	m.hx.hlen = len(m.b) - len(body)
	m.hx.z = z
	m.hx.reframed = x.bodySet && !eh.Chunked // (chunked: request-chunking framed it)
	m.httpHead = eh.IsHead()
	s.markTunnel(m, head, &eh)
	return m, true
}

// sameFraming reports whether an edited head frames its body as the
// original did.
func sameFraming(edited, orig *httpx.Head) bool {
	if edited.Chunked || orig.Chunked {
		return edited.Chunked == orig.Chunked
	}
	return max(edited.ContentLength, 0) == max(orig.ContentLength, 0)
}

// markTunnel notes a request (head b, h) that may turn the connection
// into a tunnel: a protocol upgrade (WebSocket) or CONNECT.
func (s *ClientConn) markTunnel(m *msg, b []byte, h *httpx.Head) {
	if h.Upgrade || h.IsConnect() {
		m.hx.tunnel = tunnelOnSwitch
		m.hx.connect = h.IsConnect()
		m.hx.ws = s.e.cfg.Request.HTTP.WebSocket != nil && IsWebSocketUpgrade(b, h)
	}
}

// sendContinue answers Expect: 100-continue for a request whose head is
// in and whose body is not: the body is buffered here before the request
// goes to a member, so the proxy, not the member, invites it. It is sent
// only when the client is owed no other answer (an interim response must
// not overtake them); otherwise the client sends its body after its own
// wait, as RFC 9110 lets it.
func (s *ClientConn) sendContinue() {
	s.mu.Lock()
	if s.closed || s.writing || s.nextOut != s.nextSeq {
		s.mu.Unlock()
		return
	}
	s.writing = true
	s.mu.Unlock()
	var n int
	var err error
	if s.lp != nil {
		// Nothing is owed, so the socket's buffer is empty: the 25 bytes
		// go at once or the connection is broken.
		k, rest, werr := s.tryWrite(net.Buffers{[]byte(continue100)})
		n, err = int(k), werr
		if err == nil && len(rest) > 0 {
			err = io.ErrShortWrite
		}
	} else {
		n, err = io.WriteString(s.c, continue100)
	}
	s.bytesOut.Add(uint64(n))
	if s.meter != nil && n > 0 {
		s.meter.Sent(n)
	}
	s.mu.Lock()
	fin := false
	if err == nil {
		err = s.flushLocked(s.lp != nil)
		if s.lp != nil {
			fin = s.loopFlushed()
		}
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

// ruleReply sends the answer a rule gave with HTTP::respond (or
// redirect) in the place of the request x stands for, closing the
// connection after it (httpDone) when the client, the rule or closing
// asks.
func (s *ClientConn) ruleReply(x *HTTPEvent, closing bool) {
	closing = closing || !x.keepAlive || x.closeAfter || x.resetAfter
	if x.resetAfter {
		s.resetLast.Store(true)
	}
	s.msgsIn.Add(1)
	s.localReply(x.respond, closing)
	s.httpDone = closing
}

// localReply answers the client from the proxy itself, in order after the
// responses it is still owed, and closes the connection after it when
// closeAfter is set.
func (s *ClientConn) localReply(text []byte, closeAfter bool) {
	r := getMsg(len(text))
	copy(r.b, text)
	r.closeAfter = closeAfter
	if s.lp != nil {
		// A loop does not wait for the window: the answer queues as a
		// request would and is delivered when numbered.
		r.hx.local = true
		s.dispatch(r)
		return
	}
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
// the connection whether the request being answered is HEAD or CONNECT.
func (sc *serverConn) httpResponseFramer() *httpx.ResponseFramer {
	o := &sc.e.cfg.Request.HTTP
	return &httpx.ResponseFramer{
		MaxHeader: o.MaxHeaderSize,
		MaxFields: o.maxHeaderCount(),
		Max:       sc.e.cfg.MaxMessageSize,
		Stream:    true,
		HeadRequest: func() (bool, bool) {
			sc.qmu.Lock()
			h := sc.q.peek()
			sc.qmu.Unlock()
			return h != nil && h.httpHead, h != nil && h.hx.connect
		},
	}
}

// completeHTTP hands one framed response to its client. A server that
// closes after it takes the connection out of service first, so no other
// request is queued on it. A 101 to an upgrade, or a 2xx to CONNECT,
// makes the connection the client's tunnel (sc.tun): it leaves the
// OneConnect pool before the response is counted, so no other client
// takes it.
func (sc *serverConn) completeHTTP(b []byte, rf *httpx.ResponseFramer) {
	h := rf.Last()
	sc.e.observeResponse(h)
	sc.qmu.Lock()
	req := sc.q.peek()
	var waiting *ClientConn
	switched := false
	if req != nil && req.hx.tunnel == tunnelOnSwitch && sc.lp == nil {
		waiting = req.sess
		switched = h.Status == 101 || (req.hx.connect && h.Status >= 200 && h.Status < 300)
	}
	sc.qmu.Unlock()
	if switched {
		if sc.owner == nil {
			sc.e.pool.remove(sc)
		}
		sc.tun = waiting
		sc.tunWS = req.hx.ws
		if req.hx.connect {
			waiting.passthrough.Store(PassthroughConnect)
		} else {
			waiting.passthrough.Store(PassthroughWebSockets)
		}
		if waiting.onDisabled() {
			waiting.rst(rstcause.RuleReject)
			go waiting.Close(true)
		}
	} else if rf.Closing() {
		sc.qmu.Lock()
		sc.closing = true
		sc.dead = true
		sc.qmu.Unlock()
		sc.down.Store(true)
	}
	sc.completeWith(b, h)
	if waiting != nil && !switched {
		waiting.switchRefused()
	}
}

// httpResponse copies a response for its client, after the client's
// HTTP_RESPONSE rule (which may edit its head or body, replace it, retry
// the request or end the client), inserting the persistence cookie when
// the request did not already carry this member's (or always-send is on)
// and rewriting a redirect's Location as redirect-rewrite says. A nil
// result means nothing is delivered: the rule ended the client, or retry
// is the request to send in the response's place.
func (sc *serverConn) httpResponse(req *msg, b []byte, h *httpx.Head) (r, retry *msg) {
	opts := &sc.e.cfg.Request.HTTP
	hend := h.HeaderEnd // in b and sc.strm.held, interim answers included
	if opts.RequestLog != nil && !sc.strm.resumed {
		sc.logResponse(opts.RequestLog, req, b, h) // reqlog.go
	}
	if req.hx.sflow && !sc.strm.resumed {
		sc.sflowSample(opts.SFlow, req, b, h) // sflow.go
	}
	if ra := opts.ResponseAdapt; ra != nil && !sc.strm.head && !sc.strm.resumed {
		var ok bool
		if b, h, ok = sc.adaptResponseChain(ra, req, b, h); !ok { // adapt_context.go
			return nil, nil
		}
		hend = h.HeaderEnd
	} else if ra != nil && sc.strm.head && !sc.strm.resumed {
		// A response streamed past the bound: RESPMOD over a preview
		// (adapt.go).
		nb, nh, ok := sc.adaptStreamedResponse(ra, req, b, h)
		if !ok || sc.strm.icap != nil {
			return nil, nil // (the ICAP server's answer comes after the body: endStream)
		}
		if nb != nil {
			// Replaced whole: the member's body is dropped, and the
			// replacement goes on as a whole response.
			b, h, hend = nb, nh, nh.HeaderEnd
			sc.strm.head, sc.strm.discard = false, true
			if req.sess.hrule != nil {
				if b, h, ok = sc.adaptResponseEvents(req, "modify", b, h); !ok {
					return nil, nil
				}
				hend = h.HeaderEnd
			}
		}
	}
	if req.hx.cacheable && opts.Cache != nil && !sc.fallsBack(req, h.Status) {
		store, ended := sc.cacheUpdate(req, b, h) // CACHE_UPDATE (httpcache_events.go)
		switch {
		case ended:
			return nil, nil
		case !store:
		case sc.strm.head:
			sc.strm.cache = &cacheStream{head: append([]byte(nil), b[h.Start:h.HeaderEnd]...), chunked: h.Chunked} // httpcache.go
		default:
			sc.cacheStore(req, b[h.Start:h.HeaderEnd], b[h.HeaderEnd:], h.Chunked) // httpcache.go
		}
	}
	var x *HTTPEvent
	if hr := req.sess.hrule; req.sess.hresp {
		x = &sc.hx
		var err error
		if dh, ok := hr.(HTTPResponseDataHandler); ok && sc.strm.resumed {
			// The start of the body the rules collect is in
			// (httpstream.go): HTTP_RESPONSE_DATA runs over it.
			x.msg, x.full = sc.strm.held[h.Start:], sc.strm.held
			x.resume()
			err = dh.OnHTTPResponseData(x)
			if err == nil && x.await != 0 && !x.Decided() && x.retry == nil && !x.spliced && x.rounds <= maxRounds {
				// HTTP::collect in HTTP_RESPONSE_DATA: more of the body.
				sc.strm.collecting, sc.strm.want = true, x.await
				return nil, nil
			}
		} else {
			x.reset(b, h, true, sc.leg.Remote)
			x.leg = &sc.leg
			if x.partial = sc.strm.head; x.partial {
				// The body's start too (upload.go).
				x.msg, x.full = sc.strm.held[h.Start:], sc.strm.held
			}
			// Every request of a client with an HTTP rule goes through
			// HTTP_REQUEST and takes one sequence number, answered or
			// not.
			x.request, x.requestNum, x.sess = req.b, req.seq+1, req.sess
			err = hr.OnHTTPResponse(x)
			req.sess.noteWebSocket(x) // WS_RESPONSE (websocket.go)
			if x.dropCached {
				sc.dropCached(req) // httpcache.go
			}
			if _, ok := hr.(HTTPResponseDataHandler); ok && err == nil && x.partial && x.await != 0 && !x.Decided() && x.retry == nil {
				// HTTP::collect of a streamed response: the engine
				// reads that much of its body first (collectResponse).
				sc.strm.collecting, sc.strm.want = true, x.await
				return nil, nil
			}
		}
		switch {
		case err != nil || x.reject:
			if err == nil {
				req.sess.rst(rstcause.RuleReject)
			} else {
				req.sess.rst(rstcause.TCLError)
			}
			req.sess.Close(true)
			return nil, nil
		case x.drop:
			req.sess.Close(false)
			return nil, nil
		case x.retry != nil:
			return nil, sc.retryRequest(req, x.retry)
		case x.responded:
			r := getMsg(len(x.respond))
			copy(r.b, x.respond)
			r.closeAfter = req.httpClose || !x.keepAlive || x.closeAfter || x.resetAfter
			if x.resetAfter {
				req.sess.resetLast.Store(true)
			}
			return r, nil
		}
	}
	if fr := sc.fallbackOnStatus(req, h.Status); fr != nil { // fallbackstatus.go
		return fr, nil
	}
	sc.hdr = sc.hdr[:0]
	if req.hx.forceClose {
		sc.hdr = append(sc.hdr, "Connection: close\r\n"...)
	}
	hsts := opts.HSTS
	if p := req.sess.hsts.Load(); p != nil {
		hsts = *p // HTTP::hsts
	}
	if hsts != nil && httpx.HeaderValue(b[h.Start:], sc.shifted(h), "strict-transport-security") == nil {
		sc.hdr = append(sc.hdr, hsts...)
	}
	sc.hdr = append(sc.hdr, opts.ResponseVia...)
	if req.hx.continued && h.Start > 0 {
		// The proxy invited the body itself: the member's interim
		// answers are not passed on a second time.
		b, h = b[h.Start:], sc.shifted(h)
	}
	head := []byte(nil)
	if x != nil && x.edited != nil {
		head = x.edited
	}
	head, sc.hdr = sc.cookieResponse(req, b, h, head, sc.hdr) // cookie.go
	if opts.RedirectRewrite != httpx.RewriteNone && isRedirect(h.Status) {
		if nh, ok := sc.rewriteRedirect(req, b, h, head); ok {
			head = nh
		}
	}
	body := b[h.HeaderEnd:]
	if x != nil && x.edited != nil && !x.framingKept && !x.bodySet && !h.UntilClose && !sc.strm.head {
		eh, err1 := httpx.ParseResponse(x.edited)
		oh, err2 := httpx.ParseResponse(b[h.Start:h.HeaderEnd])
		if err1 == nil && err2 == nil && !sameFraming(&eh, &oh) {
			// As for requests: the body keeps its real length.
			if h.Chunked {
				body, _ = httpx.Dechunk(nil, body)
			}
			x.SetBody(body)
		}
	}
	if x != nil && x.spliced && sc.strm.head && sc.strm.hf != nil {
		// HTTP::payload replace of the collected start of a streamed
		// response: the replacement goes with the head, the rest of
		// the body streams after it (httpstream.go).
		out, n, err := sc.strm.hf.Splice(sc.splice[:0], sc.strm.held[hend:], x.spliceK, x.body)
		if err != nil {
			sc.e.logf("mblb: replacing the start of a streamed response from %s: %v, client reset", sc.leg.Member.Name, err)
			req.sess.Close(true)
			return nil, nil
		}
		sc.splice, sc.spliceSkip = out, n
		if head == nil {
			head = b[h.Start:h.HeaderEnd]
		}
		if !h.Chunked && !h.UntilClose {
			sc.reframe = httpx.SetContentLength(sc.reframe[:0], head, int(h.ContentLength)-x.spliceK+len(x.body))
			head = sc.reframe
		}
		body = out
	}
	if opts.Rewrite != nil && (x == nil || !x.spliced) {
		head, x = sc.rewriteResponse(opts.Rewrite, req, b, h, head, x) // rewrite.go
	}
	if x != nil && x.bodySet {
		if head == nil {
			head = b[h.Start:h.HeaderEnd]
		}
		sc.reframe = httpx.SetContentLength(sc.reframe[:0], head, len(x.body))
		head, body = sc.reframe, x.body
	}
	if opts.ResponseFields != nil {
		head = editedHead(head, b[h.Start:h.HeaderEnd], sc.filterResponseFields) // httpfields.go
	}
	if opts.CookieCrypt != nil {
		head = editedHead(head, b[h.Start:h.HeaderEnd], sc.sealCookies) // cookiecrypt.go
	}
	if opts.ForceHTTP10 {
		head = editedHead(head, b[h.Start:h.HeaderEnd], sc.http10) // ntlm.go
	}
	modified := x != nil && x.bodySet
	var framed, zclose bool // (compressed beyond buffer-size: zipUnbuffered)
	if x == nil || !x.spliced {
		f := sc.responseFilter(req, h) // httpfilter.go
		var z *httpcompress.Encoder
		if opts.Compress != nil {
			zhead, length := head, h.ContentLength
			if zhead == nil {
				zhead = b[h.Start:h.HeaderEnd]
			}
			switch {
			case x != nil && x.bodySet:
				length = int64(len(x.body))
			case h.Chunked || h.UntilClose:
				length = -1
			}
			z = sc.responseEncoder(req, zhead, h, length) // httpcompress.go
		}
		sc.html = sc.htmlPass(req, head, b, h) // httphtml.go
		sc.sse = sc.ssePass(req, head, b, h)   // httpsse.go
		if f != nil || z != nil || sc.html != nil || sc.sse != nil {
			if head == nil {
				head = b[h.Start:h.HeaderEnd]
			}
			if sc.strm.head && (x == nil || !x.bodySet) {
				// The body streams: transformed part by part (streamBody).
				head = sc.startFilter(f, z, req, head, h)
			} else {
				body = sc.transformWhole(f, z, body, (x == nil || !x.bodySet) && h.Chunked)
				if z != nil && !opts.Compress.ByLength(len(body)) {
					// Beyond buffer-size: chunked, or ended by the close.
					head, body, zclose = sc.zipUnbuffered(z, req, b, h, head, body, x == nil || !x.bodySet)
					framed = true
				} else if z != nil {
					sc.filterHead = httpx.SetEncoded(sc.filterHead[:0], head, sc.encoding(z), len(body), false)
					head = sc.filterHead
				} else {
					sc.filterHead = httpx.SetContentLength(sc.filterHead[:0], head, len(body))
					head = sc.filterHead
				}
				modified = true
			}
		} else if opts.ResponseChunking != httpx.Sustain && sc.strm.head && (x == nil || !x.bodySet) && sc.restream(req, h) {
			// Re-framed part by part though not changed (httpchunking.go).
			if head == nil {
				head = b[h.Start:h.HeaderEnd]
			}
			head = sc.startFilter(nil, nil, req, head, h)
		}
	}
	if !sc.strm.head && !framed && (opts.ResponseChunking != httpx.Sustain || modified && h.Chunked) {
		head, body = sc.chunkWhole(req, b, h, head, body, modified) // httpchunking.go
	}
	switch {
	case head != nil:
		r = getMsg(h.Start + len(head) + len(sc.hdr) + len(body))
		r.b = httpx.AppendResponseHead(r.b[:0], b[:h.Start], head, sc.hdr, body)
	case len(sc.hdr) > 0:
		r = getMsg(len(b) + len(sc.hdr))
		r.b = httpx.AppendResponse(r.b[:0], b, h, sc.hdr)
	default:
		r = getMsg(len(b))
		copy(r.b, b)
	}
	r.closeAfter = req.httpClose || h.UntilClose || zclose || (x != nil && x.closeAfter)
	return r, nil
}

// editedHead is a response's head after edit, when edit changed it (ok):
// head is the head as the rules left it (nil: as the member sent it,
// member), and it is kept, nil included, when edit changes nothing, so
// that an unedited response is still copied as it came.
func editedHead(head, member []byte, edit func([]byte) ([]byte, bool)) []byte {
	base := head
	if base == nil {
		base = member
	}
	if out, ok := edit(base); ok {
		return out
	}
	return head
}

// shifted is h for the message without its interim responses.
func (sc *serverConn) shifted(h *httpx.Head) *httpx.Head {
	sc.hshift = *h
	sc.hshift.HeaderEnd -= h.Start
	sc.hshift.Start = 0
	return &sc.hshift
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 305, 307, 308:
		return true
	}
	return false
}

// rewriteRedirect applies redirect-rewrite to a redirect's head (head
// when a rule edited it, else the member's): the rare path, it may
// allocate.
func (sc *serverConn) rewriteRedirect(req *msg, b []byte, h *httpx.Head, head []byte) ([]byte, bool) {
	opts := &sc.e.cfg.Request.HTTP
	if head == nil {
		head = b[h.Start:h.HeaderEnd]
	}
	rq, err := httpx.ParseRequest(req.b)
	if err != nil {
		return nil, false
	}
	host := httpx.HeaderValue(req.b, &rq, "host")
	virtual := req.sess.local
	out, ok := httpx.RewriteRedirect(head, httpx.RedirectContext{
		Mode: opts.RedirectRewrite, Scheme: opts.Scheme, Host: string(host),
		Virtual: virtual, Node: sc.leg.Member.Addr.Addr(),
	})
	return out, ok
}

// retryRequest builds the request an HTTP::retry sends in place of req:
// same client and place in its order, balanced again. Nil (the client
// reset) when the rule's text is no complete request.
func (sc *serverConn) retryRequest(req *msg, text []byte) *msg {
	s := req.sess
	var fr httpx.RequestFramer
	n, ok, err := fr.Frame(text)
	if err != nil || !ok || n != len(text) {
		s.e.logf("mblb: client %s: HTTP::retry needs one complete request, reset", s.client)
		s.Close(true)
		return nil
	}
	h := fr.Last()
	m := getMsg(len(text))
	copy(m.b, text)
	m.hx.hlen = h.HeaderEnd
	m.httpHead = h.IsHead()
	m.httpClose = req.httpClose
	m.hx.forceClose = req.hx.forceClose
	m.hx.label = req.hx.label
	m.hx.fallback = req.hx.fallback
	m.hx.xff = req.hx.xff
	m.persist, m.target, m.ruleTarget, m.cookie = req.persist, req.target, req.ruleTarget, req.cookie
	m.sess, m.seq = s, req.seq
	return m
}
