package mblb

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// Adapt is a request-adapt or response-adapt profile on an HTTP virtual:
// each request (or each member's response) goes through the ICAP
// service of the internal virtual server it names.
type Adapt struct {
	// Profile and Internal name the adapt profile and its internal
	// virtual server, for logs.
	Profile, Internal string
	// Service is the internal virtual's icap profile, with the adapt
	// profile's preview-size and timeout applied.
	Service *icap.Service
	// Pool is the internal virtual's pool: the ICAP servers, balanced by
	// its method and its monitors (Config.PoolPick).
	Pool string
	// Down is service-down-action: what happens to a message when no
	// ICAP server is up or the exchange fails.
	Down AdaptDown
	// HTTP10: HTTP/1.0 messages are adapted too (allow-http-10); without
	// it they pass unadapted.
	HTTP10 bool
	// PreviewSize is the adapt profile's preview-size and PreviewLength
	// the icap profile's preview-length: Service.Preview is the smaller
	// when both are set. Kept apart so that ADAPT::preview_size can
	// change the first for one message.
	PreviewSize, PreviewLength int
	// Targets are the internal virtual servers ADAPT::select may choose,
	// by name; shared, never changed.
	Targets map[string]*AdaptTarget
	// Rules are the internal virtual server's ICAP_REQUEST and
	// ICAP_RESPONSE rules; nil when it has none (nothing is run).
	Rules ICAPRules
}

// ICAPRules runs an internal virtual server's rules over the ICAP
// messages of one exchange with the ICAP server at server: resp false
// for ICAP_REQUEST (h the request about to go), true for ICAP_RESPONSE
// (h the answer's head). An error fails the exchange, which then goes
// as when the ICAP server is down (service-down-action).
type ICAPRules interface {
	RunICAP(resp bool, h *icap.Head, server netip.AddrPort) error
}

// icapHooks are an exchange's icap.Hooks: the internal virtual's rules
// with the ICAP server the exchange goes to.
type icapHooks struct {
	r      ICAPRules
	server netip.AddrPort
}

func (k icapHooks) Request(h *icap.Head) error  { return k.r.RunICAP(false, h, k.server) }
func (k icapHooks) Response(h *icap.Head) error { return k.r.RunICAP(true, h, k.server) }

// hooks are the exchange's hooks with server, nil without rules.
func (a *Adapt) hooks(server netip.AddrPort) icap.Hooks {
	if a.Rules == nil {
		return nil
	}
	return icapHooks{a.Rules, server}
}

// AdaptTarget is an internal virtual server as adapt profiles reach it:
// its pool, and its icap profile's uri, header fields (in Service) and
// preview-length.
type AdaptTarget struct {
	Internal, Pool string
	Service        icap.Service
	PreviewLength  int
	// Rules are its ICAP_ events' rules (nil: none).
	Rules ICAPRules
}

// Select makes tg the internal virtual server a sends to, keeping a's
// own settings (timeout, preview-size). a.Service must be a's own.
func (a *Adapt) Select(tg *AdaptTarget) {
	a.Internal, a.Pool, a.PreviewLength, a.Rules = tg.Internal, tg.Pool, tg.PreviewLength, tg.Rules
	svc := a.Service
	svc.URI, svc.Host, svc.From, svc.Referer, svc.UserAgent = tg.Service.URI, tg.Service.Host, tg.Service.From, tg.Service.Referer, tg.Service.UserAgent
	svc.Preview, svc.ServerPreview = a.previews(a.PreviewSize)
}

// previews are Service.Preview and Service.ServerPreview for
// preview-size size: the smaller of it and preview-length, or, with
// preview-length 0, what the server's OPTIONS asks up to size [M].
func (a *Adapt) previews(size int) (preview, server int) {
	if size <= 0 {
		return 0, 0
	}
	if a.PreviewLength > 0 {
		return min(size, a.PreviewLength), 0
	}
	return 0, size
}

// AdaptDown is an adapt profile's service-down-action.
type AdaptDown uint8

// The service-down-action values.
const (
	// AdaptIgnore passes the message on unadapted.
	AdaptIgnore AdaptDown = iota
	// AdaptDrop closes the client connection without an answer.
	AdaptDrop
	// AdaptReset resets the client connection.
	AdaptReset
)

// AdaptChoice is what a client's rules asked of a request's adaptation
// in HTTP_REQUEST (ADAPT::enable, ADAPT::service_down_action,
// ADAPT::timeout, ADAPT::preview_size): each side on or off, its
// service-down-action, its exchange timeout (0 none) and its
// preview-size.
type AdaptChoice struct {
	Request, Response               bool
	RequestDown, ResponseDown       AdaptDown
	RequestTimeout, ResponseTimeout time.Duration
	RequestPreview, ResponsePreview int
	// RequestHTTP10 and ResponseHTTP10: HTTP/1.0 messages are adapted
	// (ADAPT::allow http_v1.0).
	RequestHTTP10, ResponseHTTP10 bool
	// RequestTarget and ResponseTarget are the internal virtual servers
	// ADAPT::select chose (nil: the profile's).
	RequestTarget, ResponseTarget *AdaptTarget
}

// HTTPAdaptHandler is implemented by an HTTPRuleHandler on a virtual
// with an adapt profile: the engine asks it after HTTP_REQUEST, and the
// choice applies to that request and its answer only.
type HTTPAdaptHandler interface {
	AdaptChoice() AdaptChoice
}

// adaptSide is one side's choice as a message carries it.
type adaptSide struct {
	set, off bool
	http10   bool
	down     AdaptDown
	timeout  time.Duration
	preview  int
	target   *AdaptTarget
	// dyn: the choice is the side's first dynamic context
	// (ADAPT::context_create), and the side's chain of them takes the
	// profile's place (adapt_context.go).
	dyn bool
}

// skips reports whether a message of HTTP minor version minor is not
// adapted: the side is off, or HTTP/1.0 is not allowed.
func (c adaptSide) skips(a *Adapt, minor int) bool {
	if c.set {
		return c.off || !c.http10 && minor == 0
	}
	return !a.HTTP10 && minor == 0
}

// HTTPAdaptEvents is implemented by an HTTPRuleHandler whose rules may
// have ADAPT_ events. OnAdaptRequest runs ADAPT_REQUEST_HEADERS (when
// modified) and ADAPT_REQUEST_RESULT over the request as adapted (x);
// OnAdaptResponse the response ones over the response. result is
// ADAPT::result's word. Their HTTP::header edits, HTTP::respond, reject
// and drop are recorded on x as in the HTTP events.
type HTTPAdaptEvents interface {
	OnAdaptRequest(x *HTTPEvent, result string, modified bool) error
	OnAdaptResponse(x *HTTPEvent, result string, modified bool) error
}

// adaptRequestEvents runs the ADAPT_REQUEST_ events after an exchange
// (result) over the request as it now stands: b and h, or, when the
// request went on unchanged, the head the HTTP_REQUEST rules left (x)
// with its body. It returns the request to go on (changed when the
// rules edited its head: x's edits are then spent) and the answer to
// give instead, if any; ok is false when the rules ended the client.
func (s *ClientConn) adaptRequestEvents(result string, b []byte, h *httpx.Head, x *HTTPEvent, answer []byte) (nb []byte, nh *httpx.Head, nanswer []byte, ok bool) {
	ae, has := s.hrule.(HTTPAdaptEvents)
	if !has || result == "" {
		return b, h, answer, true
	}
	cur, ch := b, h
	if result != "modify" && x != nil && (x.edited != nil || x.bodySet) {
		head, body := b[:h.HeaderEnd], b[h.HeaderEnd:]
		if x.edited != nil {
			head = x.edited
		}
		if x.bodySet {
			body = x.body
		} else if h.Chunked {
			body, _ = httpx.Dechunk(nil, body)
		}
		cur = icap.Frame(head, body)
		eh, err := httpx.ParseRequest(cur)
		if err != nil {
			return b, h, answer, true // (the member gets it as before)
		}
		ch = &eh
	}
	if s.ax == nil {
		s.ax = &HTTPEvent{}
	}
	ax := s.ax
	ax.reset(cur, ch, false, netip.AddrPort{})
	if err := ae.OnAdaptRequest(ax, result, result == "modify"); err != nil {
		s.rst(rstcause.TCLError)
		s.Close(true)
		return nil, nil, nil, false
	}
	switch {
	case ax.reject:
		s.rst(rstcause.RuleReject)
		s.Close(true)
		return nil, nil, nil, false
	case ax.drop:
		s.Close(false)
		return nil, nil, nil, false
	case ax.responded:
		return b, h, append([]byte(nil), ax.respond...), true
	}
	if ax.edited == nil || answer != nil {
		return b, h, answer, true
	}
	body := cur[ch.HeaderEnd:]
	if ch.Chunked {
		body, _ = httpx.Dechunk(nil, body)
	}
	nb = icap.Frame(ax.edited, body)
	eh, err := httpx.ParseRequest(nb)
	if err != nil {
		s.e.logf("mblb: client %s: the rule made an invalid request head (%v), reset", s.client, err)
		s.Close(true)
		return nil, nil, nil, false
	}
	if x != nil {
		x.edited, x.framingKept, x.bodySet, x.body = nil, false, false, nil
	}
	return nb, &eh, nil, true
}

// adaptResponseEvents is adaptRequestEvents for a response (b, its
// final head from h.Start) on the server connection: it returns the
// response to go on (the rules' edit or HTTP::respond, or b and h as
// they were), and ok false when the rules ended the client.
func (sc *serverConn) adaptResponseEvents(req *msg, result string, b []byte, h *httpx.Head) (nb []byte, nh *httpx.Head, ok bool) {
	ae, has := req.sess.hrule.(HTTPAdaptEvents)
	if !has || result == "" {
		return b, h, true
	}
	x := &sc.hx
	x.reset(b, h, true, sc.leg.Remote)
	x.request, x.requestNum = req.b, req.seq+1
	s := req.sess
	if err := ae.OnAdaptResponse(x, result, result == "modify"); err != nil {
		s.rst(rstcause.TCLError)
		s.Close(true)
		return nil, nil, false
	}
	switch {
	case x.reject:
		s.rst(rstcause.RuleReject)
		s.Close(true)
		return nil, nil, false
	case x.drop:
		s.Close(false)
		return nil, nil, false
	case x.responded:
		nb = append([]byte(nil), x.respond...)
	case x.edited != nil:
		body := b[h.HeaderEnd:]
		if h.Chunked {
			body, _ = httpx.Dechunk(nil, body)
		}
		nb = icap.Frame(x.edited, body)
	default:
		return b, h, true
	}
	eh, err := httpx.ParseResponse(nb)
	if err != nil {
		sc.e.logf("mblb: client %s: the rule made an invalid response (%v), reset", s.client, err)
		s.Close(true)
		return nil, nil, false
	}
	return nb, &eh, true
}

// adaptChoice is the rules' choice for the request in hand, if the
// client's rules can make one.
func (s *ClientConn) adaptChoice(x *HTTPEvent) (req, resp adaptSide) {
	if x == nil {
		return
	}
	ah, ok := s.hrule.(HTTPAdaptHandler)
	if !ok {
		return
	}
	c := ah.AdaptChoice()
	req = adaptSide{set: true, off: !c.Request, http10: c.RequestHTTP10, down: c.RequestDown, timeout: c.RequestTimeout, preview: c.RequestPreview, target: c.RequestTarget}
	resp = adaptSide{set: true, off: !c.Response, http10: c.ResponseHTTP10, down: c.ResponseDown, timeout: c.ResponseTimeout, preview: c.ResponsePreview, target: c.ResponseTarget}
	if ac, ok := s.hrule.(HTTPAdaptContexts); ok { // adapt_context.go
		if c, ok := ac.AdaptContext(false, 0); ok {
			req = c.side()
		}
		if c, ok := ac.AdaptContext(true, 0); ok {
			resp = c.side()
		}
	}
	return req, resp
}

// adaptServer is the ICAP server the pool's method chooses now.
func (e *Engine) adaptServer(a *Adapt) (netip.AddrPort, bool) {
	if e.cfg.PoolPick == nil {
		return netip.AddrPort{}, false
	}
	return e.cfg.PoolPick(a.Pool)
}

// adaptRequest sends a whole request (head b[:h.HeaderEnd] as the rules
// left it, and its body) through REQMOD. It returns the adapted request
// to go on in its place (nil: unchanged), or the ICAP server's answer to
// give the client instead, and ADAPT::result's word for what happened
// ("" when the request was not adapted); ok is false when the
// service-down-action ended the client.
func (s *ClientConn) adaptRequest(a *Adapt, side adaptSide, b []byte, h *httpx.Head, x *HTTPEvent) (nb []byte, nh *httpx.Head, answer []byte, result string, ok bool) {
	if side.skips(a, h.Minor) {
		return nil, nil, nil, "", true
	}
	a = side.apply(a)
	head, body := b[:h.HeaderEnd], b[h.HeaderEnd:]
	if x != nil && x.edited != nil {
		head = x.edited
	}
	if x != nil && x.bodySet {
		body = x.body
	} else if h.Chunked {
		var err error
		if body, err = httpx.Dechunk(nil, body); err != nil {
			return nil, nil, nil, "bypass", s.adaptDown(a, false, "the request's chunks do not decode: %v", err)
		}
	}
	addr, up := s.e.adaptServer(a)
	if !up {
		return nil, nil, nil, "bypass", s.adaptDown(a, false, "no ICAP server of pool %s is available", a.Pool)
	}
	r, err := a.Service.Exchange(context.Background(), addr, icap.ReqMod, &icap.Message{ReqHead: head, ReqBody: body, Hooks: a.hooks(addr)})
	if err != nil {
		return nil, nil, nil, "bypass", s.adaptDown(a, false, "REQMOD to %s: %v", addr, err)
	}
	switch r.Outcome {
	case icap.Answered:
		if _, err := httpx.ParseResponse(r.Msg); err != nil {
			return nil, nil, nil, "bypass", s.adaptDown(a, false, "REQMOD to %s answered with an invalid response: %v", addr, err)
		}
		s.e.adaptCounted(false, adaptAnswered)
		return nil, nil, r.Msg, "respond", true
	case icap.Modified:
		eh, err := httpx.ParseRequest(r.Msg)
		if err != nil {
			return nil, nil, nil, "bypass", s.adaptDown(a, false, "REQMOD to %s gave an invalid request: %v", addr, err)
		}
		s.e.adaptCounted(false, adaptModified)
		return r.Msg, &eh, nil, "modify", true
	}
	s.e.adaptCounted(false, adaptUnmodified)
	return nil, nil, nil, "bypass", true
}

// adaptDown applies service-down-action to the client after a failed
// exchange (why) and says whether the message goes on unadapted.
func (s *ClientConn) adaptDown(a *Adapt, resp bool, why string, args ...any) bool {
	s.e.adaptCounted(resp, adaptFailed)
	s.e.logf("mblb: client %s: profile %s: "+why+", service-down-action "+[...]string{"ignore", "drop", "reset"}[a.Down], append([]any{s.client, a.Profile}, args...)...)
	switch a.Down {
	case AdaptDrop:
		s.Close(false)
		return false
	case AdaptReset:
		s.rst(rstcause.ServiceDown)
		s.Close(true)
		return false
	}
	return true
}

// adaptResponse sends a whole member response (b from h.Start) and the
// head of the request it answers through RESPMOD, and returns the
// response to deliver in its place (nil: unchanged); ok is false when
// the service-down-action ended the client, and ADAPT::result's word
// ("" when not adapted). Answers without a body to scan (1xx, 204, 304,
// to HEAD or CONNECT) pass unadapted [M].
func (sc *serverConn) adaptResponse(a *Adapt, side adaptSide, req *msg, b []byte, h *httpx.Head) (nb []byte, nh *httpx.Head, result string, ok bool) {
	if h.Status < 200 || h.Status == 204 || h.Status == 304 || req.httpHead || req.hx.connect || req.hx.tunnel != 0 {
		return nil, nil, "", true
	}
	s := req.sess
	if side.skips(a, h.Minor) {
		return nil, nil, "", true
	}
	a = side.apply(a)
	body := b[h.HeaderEnd:]
	if h.Chunked {
		var err error
		if body, err = httpx.Dechunk(nil, body); err != nil {
			return nil, nil, "bypass", s.adaptDown(a, true, "the response's chunks do not decode: %v", err)
		}
	}
	addr, up := sc.e.adaptServer(a)
	if !up {
		return nil, nil, "bypass", s.adaptDown(a, true, "no ICAP server of pool %s is available", a.Pool)
	}
	m := &icap.Message{ReqHead: req.b[:req.hx.hlen], RespHead: b[h.Start:h.HeaderEnd], RespBody: body, Hooks: a.hooks(addr)}
	r, err := a.Service.Exchange(context.Background(), addr, icap.RespMod, m)
	if err != nil {
		return nil, nil, "bypass", s.adaptDown(a, true, "RESPMOD to %s: %v", addr, err)
	}
	if r.Outcome == icap.Unmodified {
		sc.e.adaptCounted(true, adaptUnmodified)
		return nil, nil, "bypass", true
	}
	eh, err := httpx.ParseResponse(r.Msg)
	if err != nil {
		return nil, nil, "bypass", s.adaptDown(a, true, "RESPMOD to %s gave an invalid response: %v", addr, err)
	}
	sc.e.adaptCounted(true, adaptModified)
	return r.Msg, &eh, "modify", true
}

// adapts reports whether a side is adapted: its exchanges wait on the
// ICAP server, which an event loop must not.
func (o *HTTPOptions) adapts() bool { return o.RequestAdapt != nil || o.ResponseAdapt != nil }

// apply is a with the rules' service-down-action, timeout and
// preview-size, when they chose other than the profile's (a copy then:
// the profile is shared).
func (c adaptSide) apply(a *Adapt) *Adapt {
	if !c.set || c.down == a.Down && c.timeout == a.Service.Timeout && c.preview == a.PreviewSize && c.http10 == a.HTTP10 && (c.target == nil || c.target.Internal == a.Internal) {
		return a
	}
	b := *a
	b.Down, b.HTTP10 = c.down, c.http10
	svc := *a.Service
	b.Service = &svc
	if c.timeout != a.Service.Timeout {
		svc.Timeout = c.timeout
		svc.ConnectTimeout = AdaptConnectTimeout
		if c.timeout > 0 {
			svc.ConnectTimeout = min(c.timeout, AdaptConnectTimeout)
		}
	}
	b.PreviewSize = c.preview
	if c.target != nil {
		b.Select(c.target)
	} else {
		svc.Preview, svc.ServerPreview = b.previews(c.preview)
	}
	return &b
}

// AdaptConnectTimeout bounds the connect to an ICAP server whatever the
// adapt profile's timeout says (a longer one, or none) [M].
const AdaptConnectTimeout = 5 * time.Second

// AdaptCounts are one adapt profile's exchanges on a virtual, for show
// ltm profile request-adapt|response-adapt: what ICAP left alone (204),
// modified, answered in the message's place (request-adapt only), and
// the exchanges that failed (service-down-action applied).
type AdaptCounts struct {
	Unmodified, Modified, Answered, Failed atomic.Uint64
}

// Reset zeroes the counts (reset-stats ltm profile request-adapt).
func (c *AdaptCounts) Reset() {
	c.Unmodified.Store(0)
	c.Modified.Store(0)
	c.Answered.Store(0)
	c.Failed.Store(0)
}

// adaptOutcome is how one exchange ended, for the counts.
type adaptOutcome uint8

const (
	adaptUnmodified adaptOutcome = iota
	adaptModified
	adaptAnswered
	adaptFailed
)

// adaptCounted counts one exchange of a side (resp: response-adapt) in
// the engine's stats and at the profile's counts when the virtual keeps
// them.
func (e *Engine) adaptCounted(resp bool, o adaptOutcome) {
	c := e.cfg.RequestAdaptCounts
	if resp {
		c = e.cfg.ResponseAdaptCounts
	}
	var a, pc *atomic.Uint64
	switch o {
	case adaptUnmodified:
		a = &e.stats.adaptUnmodified
		if c != nil {
			pc = &c.Unmodified
		}
	case adaptModified:
		a = &e.stats.adaptModified
		if c != nil {
			pc = &c.Modified
		}
	case adaptAnswered:
		a = &e.stats.adaptAnswered
		if c != nil {
			pc = &c.Answered
		}
	default:
		a = &e.stats.adaptFailed
		if c != nil {
			pc = &c.Failed
		}
	}
	a.Add(1)
	if pc != nil {
		pc.Add(1)
	}
}

// adaptUpload sends a request streamed past the bound (an upload) to
// REQMOD as a preview: its head as the rules left it (head, h as it
// arrived) and the start of its body (startUpload held the most a
// preview may take), without ieof unless the body ended within it. The
// engine never holds such a body whole, so only an answer decided on the
// preview can be taken: a 204 lets the request stream on unchanged
// (done false: sendUpload sends it); the ICAP server's page answers the
// client, and a modified request goes in the original's place, the
// client's body being read and dropped; a server that wants the rest
// (100 Continue), or a service without a preview, gets the rest of the
// body as it arrives (icapUpload), and its answer after the whole goes
// as a whole request's would. done: the request was dealt with here
// (more and err are then startUpload's).
func (s *ClientConn) adaptUpload(ra *Adapt, side, respSide adaptSide, st *stream, rf *httpx.RequestFramer, x *HTTPEvent, head []byte, h *httpx.Head, closing bool) (done, more bool, err error) {
	if side.skips(ra, h.Minor) {
		return false, false, nil
	}
	a := side.apply(ra)
	if x != nil {
		closing = closing || x.closeAfter
	}
	if x != nil && x.spliced {
		s.e.logf("mblb: client %s: profile %s: a rule replaced the start of a request streamed over %d bytes before its adaptation, reset", s.client, a.Profile, s.e.cfg.MaxMessageSize)
		s.Close(true)
		return true, false, errClosed
	}
	hd := head
	if x != nil && x.edited != nil {
		hd = x.edited
	}
	want := a.Service.MaxPreview()
	body := bodyOnly(st.pending()[h.HeaderEnd:], rf.BodyLeft())
	partial := true
	if h.Chunked {
		n, ended := httpx.ChunkedData(body)
		partial = !ended || n > want
		if s.upPreview, err = httpx.DechunkPrefix(s.upPreview[:0], body, max(want, 1)); err != nil {
			s.e.logf("mblb: client %s: %v in a streamed request body, reset", s.client, err)
			s.Close(true)
			return true, false, errClosed
		}
		body = s.upPreview
	}
	body = body[:min(len(body), want)]
	addr, up := s.e.adaptServer(a)
	if !up {
		return !s.adaptDown(a, false, "no ICAP server of pool %s is available", a.Pool), false, errClosed
	}
	r, rest, err := a.Service.ExchangeStream(context.Background(), addr, icap.ReqMod, &icap.Message{ReqHead: hd, ReqBody: body, Partial: partial, Hooks: a.hooks(addr)})
	switch {
	case rest != nil:
		// The server wants the rest: the body goes to it as it
		// arrives (uploadBody), past what the preview took, and its
		// answer after the whole decides (icapUploadDone).
		ic := &icapUpload{rest: rest, a: a, addr: addr, skip: len(body), x: x, closing: closing, respSide: respSide, head: append([]byte(nil), hd...)}
		if h.Chunked {
			ic.unchunk = &httpx.Unchunker{}
		}
		st.start += h.HeaderEnd
		s.up = upload{on: true, discard: true, icap: ic}
		return true, false, nil
	case err != nil:
		if !s.adaptDown(a, false, "REQMOD to %s: %v", addr, err) {
			return true, false, errClosed
		}
		done, err := s.adaptStreamEvents("bypass", st, hd, h, x, closing)
		return done, false, err
	case r.Outcome == icap.Unmodified:
		s.e.adaptCounted(false, adaptUnmodified)
		s.e.stats.adaptStreamed.Add(1)
		done, err := s.adaptStreamEvents("bypass", st, hd, h, x, closing)
		return done, false, err
	case r.Outcome == icap.Answered:
		if _, err := httpx.ParseResponse(r.Msg); err != nil {
			return !s.adaptDown(a, false, "REQMOD to %s answered with an invalid response: %v", addr, err), false, errClosed
		}
		s.e.adaptCounted(false, adaptAnswered)
		page, ok := s.adaptPageEvents(hd, r.Msg)
		if !ok {
			return true, false, errClosed
		}
		s.msgsIn.Add(1)
		s.localReply(page, closing)
		s.httpDone = closing
		st.start += h.HeaderEnd
		s.up = upload{on: true, discard: true}
		return true, false, nil
	}
	eh, err := httpx.ParseRequest(r.Msg)
	if err != nil {
		return !s.adaptDown(a, false, "REQMOD to %s gave an invalid request: %v", addr, err), false, errClosed
	}
	s.e.adaptCounted(false, adaptModified)
	if x != nil {
		x.edited, x.framingKept, x.bodySet, x.body = nil, false, false, nil
	}
	st.start += h.HeaderEnd
	s.up = upload{on: true, discard: true}
	return s.adaptedUpload(r.Msg, &eh, x, closing, respSide)
}

// adaptedUpload sends b, the request the ICAP server gave for a streamed
// one (the client's body is being read and dropped, or went to the ICAP
// server), after the ADAPT_REQUEST_ events ran over it; their
// HTTP::respond answers the client instead.
func (s *ClientConn) adaptedUpload(b []byte, h *httpx.Head, x *HTTPEvent, closing bool, respSide adaptSide) (done, more bool, err error) {
	nb, nh, answer, ok := s.adaptRequestEvents("modify", b, h, x, nil)
	if !ok {
		return true, false, errClosed
	}
	s.msgsIn.Add(1)
	if answer != nil {
		s.localReply(answer, closing)
		s.httpDone = closing
		return true, false, nil
	}
	m, ok := s.buildRequest(nb, nh, x)
	if !ok {
		return true, false, errClosed
	}
	m.httpClose = closing
	m.hx.respAdapt = respSide
	s.decide(m, nb, nh, x)
	if !s.dispatch(m) {
		return true, false, errClosed
	}
	s.httpDone = closing
	return true, false, nil
}

// adaptPageEvents runs the ADAPT_REQUEST_ events after the ICAP server
// answered a streamed request with its page (result respond): they see
// the request's head (hd) and may answer otherwise (HTTP::respond) or
// end the client (ok false). It returns the answer to give.
func (s *ClientConn) adaptPageEvents(hd, page []byte) ([]byte, bool) {
	if _, has := s.hrule.(HTTPAdaptEvents); !has {
		return page, true
	}
	eh, err := httpx.ParseRequest(hd)
	if err != nil {
		return page, true
	}
	_, _, answer, ok := s.adaptRequestEvents("respond", hd[:eh.HeaderEnd], &eh, nil, page)
	return answer, ok
}

// icapUpload is a streamed request (or response) whose ICAP server wants
// the rest of its body: uploadBody (streamBody) passes the body on to it
// instead of a member (the client), and icapUploadDone
// (icapResponseDone) acts on the answer once the body ended.
type icapUpload struct {
	rest *icap.Rest
	a    *Adapt
	addr netip.AddrPort
	// skip is how many body bytes (de-chunked) the preview took: they
	// are not sent again.
	skip int
	// unchunk decodes a chunked body (nil: a Content-Length one).
	unchunk *httpx.Unchunker
	plain   []byte
	// x, closing and respSide are the request's, for when its adapted
	// version goes.
	x        *HTTPEvent
	closing  bool
	respSide adaptSide
	failed   bool
	// head is the request's head as it went (for the ADAPT_ events
	// over the server's page).
	head []byte
}

// part passes on data, the next bytes of the body as the client framed
// them. A failed write is noted (the rest of the body is then read and
// dropped) and acted on at the end.
func (ic *icapUpload) part(data []byte) {
	if ic.failed || len(data) == 0 {
		return
	}
	if ic.unchunk != nil {
		ic.plain, _ = ic.unchunk.Append(ic.plain[:0], data) // (the framer checked the chunks)
		data = ic.plain
	}
	if ic.skip > 0 {
		k := min(ic.skip, len(data))
		ic.skip -= k
		data = data[k:]
	}
	if err := ic.rest.Write(data); err != nil {
		ic.failed = true
		ic.rest.Abort()
	}
}

// icapUploadDone reads the ICAP server's answer once the whole body went
// to it: its page answers the client, its request goes to a member in
// the original's place. No copy of the body was kept, so a failed
// exchange (or a 204, which only a held message could follow) cannot
// let the request go on unadapted: service-down-action ignore resets
// the client too [M]. A nil error: the session goes on.
func (s *ClientConn) icapUploadDone(ic *icapUpload) error {
	a := ic.a
	var r icap.Result
	err := errors.New("the connection failed while the body went")
	if !ic.failed {
		r, err = ic.rest.Finish()
	}
	if err == nil && r.Outcome == icap.Answered {
		if _, perr := httpx.ParseResponse(r.Msg); perr != nil {
			err = perr
		}
	}
	var eh httpx.Head
	if err == nil && r.Outcome != icap.Answered {
		eh, err = httpx.ParseRequest(r.Msg)
	}
	if err != nil {
		if s.adaptDown(a, false, "REQMOD to %s after the whole body: %v", ic.addr, err) {
			s.e.logf("mblb: client %s: profile %s: the streamed body is not held, reset", s.client, a.Profile)
			s.rst(rstcause.ServiceDown)
			s.Close(true)
		}
		return errClosed
	}
	s.e.stats.adaptStreamed.Add(1)
	x := ic.x
	if r.Outcome == icap.Answered {
		s.e.adaptCounted(false, adaptAnswered)
		page, ok := s.adaptPageEvents(ic.head, r.Msg)
		if !ok {
			return errClosed
		}
		s.msgsIn.Add(1)
		s.localReply(page, ic.closing)
		s.httpDone = ic.closing
		return nil
	}
	s.e.adaptCounted(false, adaptModified)
	if x != nil {
		x.edited, x.framingKept, x.bodySet, x.body = nil, false, false, nil
	}
	_, _, err = s.adaptedUpload(r.Msg, &eh, x, ic.closing, ic.respSide)
	return err
}

// adaptStreamEvents runs the ADAPT_REQUEST_ events over a streamed
// request that goes on with its body as it arrives (result bypass: a 204
// to its preview, or the service down and ignored): they see its head
// (hd, as the HTTP_REQUEST rules left it) and no body. Their head edit
// goes on in x as an HTTP_REQUEST one would (its framing may not
// change); HTTP::respond answers the client, the body being read and
// dropped. done: the request was dealt with (answered or the client
// ended; err then says which).
func (s *ClientConn) adaptStreamEvents(result string, st *stream, hd []byte, h *httpx.Head, x *HTTPEvent, closing bool) (done bool, err error) {
	ae, has := s.hrule.(HTTPAdaptEvents)
	if !has || x == nil {
		return false, nil
	}
	hh := h
	if x.edited != nil {
		eh, err := httpx.ParseRequest(x.edited)
		if err != nil {
			s.Close(true)
			return true, errClosed
		}
		hh = &eh
	}
	if s.ax == nil {
		s.ax = &HTTPEvent{}
	}
	ax := s.ax
	ax.reset(hd[:hh.HeaderEnd], hh, false, netip.AddrPort{})
	ax.partial = true
	if err := ae.OnAdaptRequest(ax, result, false); err != nil {
		s.rst(rstcause.TCLError)
		s.Close(true)
		return true, errClosed
	}
	switch {
	case ax.reject:
		s.rst(rstcause.RuleReject)
		s.Close(true)
		return true, errClosed
	case ax.drop:
		s.Close(false)
		return true, errClosed
	case ax.responded:
		s.msgsIn.Add(1)
		s.localReply(ax.respond, closing)
		s.httpDone = closing
		st.start += h.HeaderEnd
		s.up = upload{on: true, discard: true}
		return true, nil
	case ax.bodySet:
		s.e.logf("mblb: client %s: a rule replaced the body of a request streamed over %d bytes, reset", s.client, s.e.cfg.MaxMessageSize)
		s.Close(true)
		return true, errClosed
	case ax.edited != nil:
		// (sendUpload checks that the framing stayed.)
		x.edited, x.framingKept = append(x.edited[:0:0], ax.edited...), false
	}
	return false, nil
}

// adaptStreamedResponse sends a member's response streamed past the
// bound (b, its head; sc.strm.held, what has arrived of it) to RESPMOD
// as a preview: the head of the request it answers, its head and the
// start of its body (collectWait held the most a preview takes), without
// ieof unless the body ended within it. A 204 lets it stream on to the
// client unchanged (nb nil); a response the ICAP server sent on the
// preview replaces it whole (the member's body is read and dropped); a
// server that wants the rest gets it as it arrives (sc.strm.icap), and
// its answer after the whole is the response (icapResponseDone). ok is
// false when the service-down-action ended the client.
func (sc *serverConn) adaptStreamedResponse(a *Adapt, req *msg, b []byte, h *httpx.Head) (nb []byte, nh *httpx.Head, ok bool) {
	if h.Status < 200 || h.Status == 204 || h.Status == 304 || req.httpHead || req.hx.connect || req.hx.tunnel != 0 {
		return nil, nil, true
	}
	s := req.sess
	if req.hx.respAdapt.skips(a, h.Minor) {
		return nil, nil, true
	}
	a = req.hx.respAdapt.apply(a)
	want := a.Service.MaxPreview()
	body := bodyOnly(sc.strm.held[h.HeaderEnd:], sc.strm.hf.BodyLeft())
	partial := true
	if h.Chunked {
		n, ended := httpx.ChunkedData(body)
		var err error
		if body, err = httpx.DechunkPrefix(nil, body, max(want, 1)); err != nil {
			return nil, nil, s.adaptDown(a, true, "the response's chunks do not decode: %v", err)
		}
		partial = !ended || n > want
	}
	body = body[:min(len(body), want)]
	if !h.Chunked && !h.UntilClose {
		partial = int64(len(body)) < h.ContentLength
	}
	addr, up := sc.e.adaptServer(a)
	if !up {
		return nil, nil, s.adaptDown(a, true, "no ICAP server of pool %s is available", a.Pool)
	}
	m := &icap.Message{ReqHead: req.b[:req.hx.hlen], RespHead: b[h.Start:h.HeaderEnd], RespBody: body, Partial: partial, Hooks: a.hooks(addr)}
	r, rest, err := a.Service.ExchangeStream(context.Background(), addr, icap.RespMod, m)
	switch {
	case rest != nil:
		ic := &icapUpload{rest: rest, a: a, addr: addr, skip: len(body)}
		if h.Chunked {
			ic.unchunk = &httpx.Unchunker{}
		}
		sc.strm.icap = ic
		return nil, nil, true
	case err != nil:
		return nil, nil, s.adaptDown(a, true, "RESPMOD to %s: %v", addr, err)
	case r.Outcome == icap.Unmodified:
		sc.e.adaptCounted(true, adaptUnmodified)
		sc.e.stats.adaptStreamed.Add(1)
		return nil, nil, true
	}
	eh, err := httpx.ParseResponse(r.Msg)
	if err != nil {
		return nil, nil, s.adaptDown(a, true, "RESPMOD to %s gave an invalid response: %v", addr, err)
	}
	sc.e.adaptCounted(true, adaptModified)
	return r.Msg, &eh, true
}

// icapResponseDone reads the ICAP server's answer once the whole of a
// streamed response went to it, runs the ADAPT_RESPONSE_ events over it
// and gives it to the client. Nothing of the member's response was kept:
// a failed exchange (or a 204) resets the client whatever the
// service-down-action [M].
func (sc *serverConn) icapResponseDone(ic *icapUpload, req *msg) {
	s := req.sess
	var r icap.Result
	err := errors.New("the connection failed while the body went")
	if !ic.failed {
		r, err = ic.rest.Finish()
	}
	var eh httpx.Head
	if err == nil {
		eh, err = httpx.ParseResponse(r.Msg)
	}
	if err != nil {
		if s.adaptDown(ic.a, true, "RESPMOD to %s after the whole body: %v", ic.addr, err) {
			s.e.logf("mblb: client %s: profile %s: the streamed response is not held, reset", s.client, ic.a.Profile)
			s.rst(rstcause.ServiceDown)
			s.Close(true)
		}
		return
	}
	sc.e.adaptCounted(true, adaptModified)
	sc.e.stats.adaptStreamed.Add(1)
	b, h := r.Msg, &eh
	if s.hrule != nil {
		var ok bool
		if b, h, ok = sc.adaptResponseEvents(req, "modify", b, h); !ok {
			return
		}
	}
	m := getMsg(len(b) - h.Start)
	copy(m.b, b[h.Start:])
	m.closeAfter = req.httpClose
	s.deliverPart(req.seq, m, sc)
}
