package mblb

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/httpx"
)

// HTTPRuleHandler is the seam to the rules engine on an engine with HTTP
// framing: it runs HTTP_REQUEST for each request a client sends and
// HTTP_RESPONSE for each response a member sends back, over the head the
// framer already parsed. The engine knows nothing of Tcl; the handler
// reads the message through the HTTPEvent and records there what the rule
// decided. A returned error is a rule failure: the client is reset.
type HTTPRuleHandler interface {
	// OnHTTPRequest runs before the request is balanced; it is called
	// from the client's reader, one request at a time, in order.
	OnHTTPRequest(x *HTTPEvent) error
	// OnHTTPResponse runs when a response is complete, before it is
	// queued for the client; it is called from the reader of the server
	// connection that carried it, so two responses of one client may be
	// handled at once by two server connections: the handler orders them.
	OnHTTPResponse(x *HTTPEvent) error
}

// HTTPResponseFilter is implemented by an HTTPRuleHandler that can tell
// that its rules have no response event: the engine then hands responses
// on as it does without a rule, without preparing an event for each
// (OnHTTPResponse is not called). A handler without it gets every
// response.
type HTTPResponseFilter interface {
	HandlesResponses() bool
}

// HTTPFilterEvents is implemented by an HTTPRuleHandler whose rules
// have HTTP_REJECT or HTTP_DISABLED (it is asked for the first time a
// client's filter rejects or stops; a handler without the events returns
// at once).
type HTTPFilterEvents interface {
	// OnHTTPReject runs HTTP_REJECT once the client's request was
	// rejected (ClientConn.Rejected says why), from the client's reader,
	// before the client is answered 400 or reset; reset: the rule said
	// reject or drop, and a client that would be answered is reset
	// instead.
	OnHTTPReject() (reset bool)
	// OnHTTPDisabled runs HTTP_DISABLED once the client's HTTP filter
	// went into passthrough (ClientConn.Passthrough says why): from the
	// client's reader after HTTP::disable, from the server connection's
	// reader after a CONNECT or an Upgrade the member accepted; reset:
	// the rule said reject or drop, and the client is reset.
	OnHTTPDisabled() (reset bool)
}

// onReject runs HTTP_REJECT where the rules have it; true: reset the
// client rather than answer it.
func (s *ClientConn) onReject() bool {
	if fe, ok := s.hrule.(HTTPFilterEvents); ok {
		return fe.OnHTTPReject()
	}
	return false
}

// onDisabled runs HTTP_DISABLED where the rules have it; true: reset
// the client.
func (s *ClientConn) onDisabled() bool {
	if fe, ok := s.hrule.(HTTPFilterEvents); ok {
		return fe.OnHTTPDisabled()
	}
	return false
}

// handlesResponses reports whether the engine calls h's OnHTTPResponse.
func handlesResponses(h HTTPRuleHandler) bool {
	if h == nil {
		return false
	}
	if f, ok := h.(HTTPResponseFilter); ok {
		return f.HandlesResponses()
	}
	return true
}

// HTTPSendHandler is implemented by an HTTPRuleHandler whose rules act
// once the request's member is known: LB_SELECTED's header edits,
// HTTP_REQUEST_SEND and HTTP_REQUEST_RELEASE. The engine calls
// OnHTTPRequestSend after the server connection is chosen (and
// SERVER_CONNECTED has run for a new one), just before the request is
// queued on it; an edited head (SetHead) replaces the request's. It is
// called only when HandlesRequestSend reports true, so a rule without
// those events costs nothing here.
type HTTPSendHandler interface {
	HandlesRequestSend() bool
	OnHTTPRequestSend(x *HTTPEvent) error
}

// HTTPDataHandler is implemented by an HTTPRuleHandler whose rules
// collect a streamed request's body: after an OnHTTPRequest that called
// Await, the engine reads the asked length and calls OnHTTPRequestData,
// with Body holding it, to run HTTP_REQUEST_DATA; its actions are read
// back as OnHTTPRequest's are. It may call Await again (HTTP::collect in
// HTTP_REQUEST_DATA) to be called once more with more of the body.
type HTTPDataHandler interface {
	OnHTTPRequestData(x *HTTPEvent) error
}

// HTTPEvent is the view of one HTTP_REQUEST or HTTP_RESPONSE. It is valid
// only during the handler call: the engine reuses it (one per client
// reader, one per server connection), so an event costs no allocation.
type HTTPEvent struct {
	msg      []byte
	head     httpx.Head
	response bool
	server   netip.AddrPort
	leg      *Leg // a response's server connection (ServerLeg)
	// request and requestNum: for a response, the request it answers;
	// requestNum and sess: the request's number on its client session,
	// and the session (HTTP_REQUEST, HTTP_REQUEST_SEND, HTTP_RESPONSE).
	request    []byte
	requestNum uint64
	sess       *ClientConn

	target     Target
	targetSet  bool
	persist    string
	persistSet bool
	edited     []byte
	// framingKept: the edited head frames the message as the head that
	// arrived did (SetHead), so it is not parsed again.
	framingKept bool
	buf         []byte
	respond     []byte
	responded   bool
	keepAlive   bool
	closeAfter  bool
	resetAfter  bool
	reject      bool
	drop        bool

	// full is the whole message, interim 1xx responses included.
	full []byte
	// The actions beyond the head: a replaced body, a tunnel from this
	// request on, a retried request, a fallback redirect, OneConnect's
	// per-request settings.
	body     []byte
	bodySet  bool
	disable  bool
	retry    []byte
	fallback string
	noReuse  bool
	label    string
	labelSet bool
	detach   int8 // 1 enable, -1 disable, 0 unchanged
	selPers  int8 // ONECONNECT::select: 1 persist, -1 none, 0 unchanged
	// partial: the body is streamed, not here (a message over the
	// maximum message size). held, when set, is what has arrived of a
	// streamed request's body (Body); await is the length of it the
	// rules wait for (Await, 0: none), spliced and spliceK what they
	// replaced of it (ReplaceStart).
	partial bool
	held    []byte
	await   int
	spliced bool
	spliceK int
	// asked is the length the DATA turn at hand collects, rounds how
	// many DATA turns the streamed body has had (at most maxRounds).
	asked  int
	rounds int
	// dropCached: DropCached.
	dropCached bool
	// ws is WS_REQUEST's or WS_RESPONSE's decision, when wsSet
	// (SetWebSocket).
	ws    wsChoice
	wsSet bool
}

// maxRounds bounds the DATA events of one streamed body (HTTP::collect
// in HTTP_REQUEST_DATA or HTTP_RESPONSE_DATA collects more and runs the
// event again).
const maxRounds = 4

// reset prepares x for the message b whose final head h describes. A
// response's interim 1xx heads are left out: the event sees the final
// head only, as BIG-IP's HTTP_RESPONSE does.
func (x *HTTPEvent) reset(b []byte, h *httpx.Head, response bool, server netip.AddrPort) {
	buf := x.buf
	*x = HTTPEvent{buf: buf, response: response, server: server, head: *h, full: b}
	x.msg = b[h.Start:]
	x.head.HeaderEnd -= h.Start
	x.head.Start = 0
}

// Message is the message as it arrived, starting with its (final) head;
// the body follows it.
func (x *HTTPEvent) Message() []byte { return x.msg }

// Head is the framer's parse of the head at the start of Message.
func (x *HTTPEvent) Head() *httpx.Head { return &x.head }

// IsResponse reports whether the event is HTTP_RESPONSE.
func (x *HTTPEvent) IsResponse() bool { return x.response }

// Server is the member that sent a response (IP::server_addr in
// HTTP_RESPONSE); invalid in HTTP_REQUEST.
func (x *HTTPEvent) Server() netip.AddrPort { return x.server }

// ServerLeg is, in HTTP_RESPONSE, the server connection the response came
// on (its byte counts are TCP::offset's); nil elsewhere.
func (x *HTTPEvent) ServerLeg() *Leg { return x.leg }

// Request is, in HTTP_RESPONSE, the request this response answers as it
// was sent to the member; nil in HTTP_REQUEST.
func (x *HTTPEvent) Request() []byte { return x.request }

// RequestNum is, in HTTP_RESPONSE, the number of the request this
// response answers on its client connection, from 1: with pipelined
// requests it may be older than the last HTTP_REQUEST's. In HTTP_REQUEST
// it is the request's own.
func (x *HTTPEvent) RequestNum() uint64 { return x.requestNum }

// Session is the client connection whose request (HTTP_REQUEST,
// HTTP_REQUEST_SEND) or whose request's response (HTTP_RESPONSE) the
// event is, nil in the others: an
// HTTP/2 client's lanes are sessions of their own (internal/mblbvs), and
// its rules tell which stream a request came on by its session and its
// number there.
func (x *HTTPEvent) Session() *ClientConn { return x.sess }

// Select directs the request (`pool p`, `pool p member a`, `node a`). On a
// virtual without OneConnect, naming another pool or a member moves the
// client's connection there, as BIG-IP detaches the server side when a
// rule's pool changes. It has no effect on a response.
func (x *HTTPEvent) Select(t Target) { x.target, x.targetSet = t, true }

// Selected is the target a rule chose for the request so far, if any.
func (x *HTTPEvent) Selected() (Target, bool) { return x.target, x.targetSet }

// Persist sets the request's persistence key (`persist uie <key>`); ""
// removes any.
func (x *HTTPEvent) Persist(key string) { x.persist, x.persistSet = key, true }

// HeadBuffer is storage the handler may append an edited head to before
// handing it to SetHead, so that edits cost no allocation once it has
// grown.
func (x *HTTPEvent) HeadBuffer() []byte { return x.buf[:0] }

// SetHead replaces the message's head with head, a complete header block
// ending in its blank line; the body goes on unchanged. The engine copies
// it before the next event. framingKept promises that head has the facts
// of the head that arrived (rules.HTTPHead.FramingKept: same start line,
// no framing or connection field edited, no stray line break), so that
// the engine takes them instead of parsing head again; false is always
// safe.
func (x *HTTPEvent) SetHead(head []byte, framingKept bool) {
	x.edited = head
	x.framingKept = framingKept
	x.buf = head[:0]
}

// Respond answers the client with resp, a complete response, instead of
// the member (HTTP::respond, HTTP::redirect): a request is then sent to no
// server; a response is replaced. keepAlive says whether the client
// connection stays open after it.
func (x *HTTPEvent) Respond(resp []byte, keepAlive bool) {
	x.respond, x.responded, x.keepAlive = resp, true, keepAlive
}

// ResetAfter resets the client connection once the rule's answer is
// written (HTTP::respond -reset).
func (x *HTTPEvent) ResetAfter() { x.resetAfter = true }

// CloseAfter closes the client connection once the current response is
// written (HTTP::close, TCP::close).
func (x *HTTPEvent) CloseAfter() { x.closeAfter = true }

// DropCached keeps a response out of the web-acceleration cache, or
// drops it if it was stored as it arrived (CACHE::disable in
// HTTP_RESPONSE).
func (x *HTTPEvent) DropCached() { x.dropCached = true }

// Reject resets the client connection (`reject`).
func (x *HTTPEvent) Reject() { x.reject = true }

// Drop closes the client connection without an answer (`drop`,
// `discard`).
func (x *HTTPEvent) Drop() { x.drop = true }

// Interim is, in HTTP_RESPONSE, the interim (1xx) responses that came
// before the final one, as they arrived; empty when there were none.
func (x *HTTPEvent) Interim() []byte {
	if !x.response {
		return nil
	}
	return x.full[:len(x.full)-len(x.msg)]
}

// Body is the message's body as it arrived (chunked when the head says
// so); for a streamed one (Partial), what has arrived of it.
func (x *HTTPEvent) Body() []byte {
	if x.held != nil {
		return x.held
	}
	return x.msg[x.head.HeaderEnd:]
}

// Await asks, in HTTP_REQUEST of a streamed request (Partial), for the
// first n bytes of its body (de-chunked; n <= 0: as much as the engine
// holds, MaxMessageSize with the head, which also bounds n): the engine
// reads them, then calls the handler's OnHTTPRequestData
// (HTTPDataHandler) to run HTTP_REQUEST_DATA over them, before the
// request is balanced. What HTTP::collect N asks of an upload; nothing
// more than that is held.
func (x *HTTPEvent) Await(n int) {
	if n <= 0 {
		n = -1
	}
	x.await = n
}

// Asked is, in OnHTTPRequestData and OnHTTPResponseData, the length
// the Await that led there asked (-1: as much as the engine holds).
func (x *HTTPEvent) Asked() int { return x.asked }

// CanAwait reports whether another Await of the body (from a DATA turn)
// is honoured: a streamed body has at most four DATA turns.
func (x *HTTPEvent) CanAwait() bool { return x.rounds < maxRounds }

// resume readies x for a DATA turn over what the engine now holds of a
// streamed body.
func (x *HTTPEvent) resume() {
	x.asked, x.await = x.await, 0
	x.rounds++
}

// ReplaceStart replaces the first k bytes (de-chunked) of a streamed
// body (Partial), which the rules collected, with body: HTTP::payload
// replace in a DATA event. The rest of the body streams on unchanged
// after it; a Content-Length grows or shrinks by the difference, a
// chunked body gets body as a chunk of its own. The engine copies it
// before the next event.
func (x *HTTPEvent) ReplaceStart(k int, body []byte) {
	x.body, x.spliced, x.spliceK = body, true, k
}

// Partial reports that the message's body is streamed after the event
// instead of held (a message over the engine's maximum message size):
// Body has only its start, and a rule that collects it gets that start
// (Await, ReplaceStart).
func (x *HTTPEvent) Partial() bool { return x.partial }

// SetBody replaces the message's body with body, sent with a
// Content-Length (a Transfer-Encoding of the original is dropped): what
// HTTP::payload replace leaves. The engine copies it before the next
// event.
func (x *HTTPEvent) SetBody(body []byte) { x.body, x.bodySet = body, true }

// NewBody is the whole body SetBody gave in an earlier event of the
// message, or the one ReplaceStart gave for all k bytes of a streamed
// body's Content-Length (ok false: none), which later events read
// instead of Body.
func (x *HTTPEvent) NewBody() (body []byte, k int, ok bool) {
	if x.spliced {
		return x.body, x.spliceK, int64(x.spliceK) == x.head.ContentLength
	}
	return x.body, 0, x.bodySet
}

// JSONOptions is a json profile: maximum-bytes and maximum-entries bound
// the parse of a JSON body, beyond them the rules' JSON_*_ERROR runs.
type JSONOptions struct {
	Profile              string
	MaxBytes, MaxEntries int
}

// Disable turns the client connection into a tunnel from this request on
// (HTTP::disable): the request goes to its member, and every byte after
// it, both ways, passes through unparsed.
func (x *HTTPEvent) Disable() { x.disable = true }

// Enable cancels a Disable of the same request (HTTP::enable after
// HTTP::disable before the request has left): it stays HTTP.
func (x *HTTPEvent) Enable() { x.disable = false }

// Retry discards a response and sends req, a complete request, in place
// of the one it answered (HTTP::retry); it is balanced again.
func (x *HTTPEvent) Retry(req []byte) { x.retry = req }

// Fallback answers the request with a redirect to url when no member can
// serve it (HTTP::fallback).
func (x *HTTPEvent) Fallback(url string) { x.fallback = url }

// NoReuse closes the shared server connection after this request's
// response instead of pooling it (ONECONNECT::reuse disable).
func (x *HTTPEvent) NoReuse() { x.noReuse = true }

// Label makes the request use only server connections opened with the
// same label (ONECONNECT::label).
func (x *HTTPEvent) Label(l string) { x.label, x.labelSet = l, true }

// SelectPersist makes the client's requests from this one on key their
// server connections by their persistence key instead of a label
// (ONECONNECT::select persist), or stop (none).
func (x *HTTPEvent) SelectPersist(on bool) {
	x.selPers = -1
	if on {
		x.selPers = 1
	}
}

// Detach says whether the client's requests from now on are balanced one
// by one (ONECONNECT::detach enable) or stay on the member of the current
// one (disable).
func (x *HTTPEvent) Detach(on bool) {
	if on {
		x.detach = 1
	} else {
		x.detach = -1
	}
}

// Decided reports whether the rule already settled the message's fate
// (an answer of its own, a reject or a drop): a DATA event then does not
// run.
func (x *HTTPEvent) Decided() bool { return x.responded || x.reject || x.drop }
