package mblbvs

import (
	"errors"
	"fmt"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// httpRules is the rule view of a client of an HTTP virtual (an http
// profile): the message-balanced client's view plus rules.HTTPState, so
// that HTTP:: commands read and edit the head the engine's framer parsed.
// Only these clients implement rules.HTTPConn: on any other virtual the
// HTTP:: commands stay errors.
//
// The events run in F5's order: HTTP_REQUEST, HTTP_REQUEST_DATA (after
// HTTP::collect), LB_SELECTED (from the engine's Pick), SERVER_CONNECTED
// (a new server connection), HTTP_REQUEST_SEND and HTTP_REQUEST_RELEASE
// (OnHTTPRequestSend, just before the request is queued on its
// connection); then HTTP_RESPONSE_CONTINUE for each interim 100,
// HTTP_RESPONSE, HTTP_RESPONSE_DATA (after HTTP::collect) and
// HTTP_RESPONSE_RELEASE. The engine buffers a whole message before its
// first event, so HTTP::collect never waits: its DATA event runs at once
// with the body (de-chunked) as HTTP::payload.
type httpRules struct {
	*mblbRules
	rules.HTTPState
	handlesReq, handlesResp bool
	handlesSend             bool
	// handlesFrames: the rules have websocket frame events
	// (websocket.go).
	handlesFrames bool
	// handlesFilter: the rules have HTTP_REJECT or HTTP_DISABLED
	// (filterevents.go).
	handlesFilter bool
	// handlesJSON: the rules' JSON_REQUEST events (1), JSON_RESPONSE
	// events (2), with a json profile (json.go); jsonBuf holds a
	// de-chunked body to parse.
	handlesJSON uint8
	jsonBuf     []byte
	// jsonWaiting: the engine is reading a streamed JSON body whole for
	// the json profile, and its DATA turn runs the JSON_ event only.
	jsonWaiting bool
	// xml: the rules have XML_CONTENT_BASED_ROUTING, with an xml
	// profile (xml.go); nil otherwise. xmlWaiting: the engine is
	// reading a streamed XML body whole for it, and the DATA turn runs
	// the profile only.
	xml        *xmlState
	xmlWaiting bool
	// cacheEvents: the rules' CACHE_ events (cache.go), and the cached
	// answer they read while one runs.
	cacheEvents mblb.CacheEvents
	cacheEntry  rules.CacheEntry
	// older is the request a response answers when the client has
	// pipelined others after it (parsed again: the rare path), used
	// while useOlder.
	older    rules.HTTPHead
	useOlder bool
	// sentGen is the request head's edit count last handed to the
	// engine: LB_SELECTED's and HTTP_REQUEST_SEND's edits are the ones
	// after it.
	sentGen uint32
	// payload is the body of a DATA event (HTTP::payload), de-chunked;
	// replaced when HTTP::payload replace changed it. inData: a DATA
	// event is running.
	payload        []byte
	replaced       bool
	inData         bool
	collectPending bool
	// collectLen is the last HTTP::collect's length (-1: none given),
	// what a streamed upload's HTTP_REQUEST_DATA gets at most (upload.go);
	// partialK is the length of a streamed body's payload as collected,
	// what a replacement takes the place of.
	collectLen int
	partialK   int
	// hsts is what HTTP::hsts made of the profile's hsts for the client
	// connection (http2rules.go); nil: the profile's.
	hsts *rules.HSTS
}

// HTTPRequest implements rules.HTTPConn: in HTTP_RESPONSE, the request
// that response answers.
func (h *httpRules) HTTPRequest() *rules.HTTPHead {
	if h.useOlder {
		return &h.older
	}
	return h.HTTPState.HTTPRequest()
}

// HTTPClientVersion implements rules.HTTPClientVersion: an HTTP/2
// client's requests are version 2.0 to the rules [M: BIG-IP's gateway
// answers 2.0 for them], though they reach the engine and the members
// as HTTP/1.1.
func (h *httpRules) HTTPClientVersion() string {
	if h.h2 {
		return "2.0"
	}
	if h.h3 {
		return "3.0" // [M] an HTTP/3 client's, as HTTP/2's say 2.0
	}
	return ""
}

// HTTPServerAgent implements rules.HTTPServerAgent (server-agent-name).
func (h *httpRules) HTTPServerAgent() string {
	return h.f.mv.cfg.Request.HTTP.ServerAgent
}

// HTTPBasicAuthRealm implements rules.HTTPBasicAuthRealm
// (basic-auth-realm).
func (h *httpRules) HTTPBasicAuthRealm() string {
	return h.f.mv.cfg.Request.HTTP.BasicAuthRealm
}

// newHTTPRules gives r its HTTP half when its program handles an event
// that reads the request, and returns the engine's handler for the HTTP
// events (nil otherwise).
func newHTTPRules(r *mblbRules) *httpRules {
	prog := irules.Program(r.rules)
	if prog == nil {
		return nil
	}
	h := &httpRules{mblbRules: r,
		handlesReq:  prog.Handles(rules.HTTPRequest) || prog.Handles(rules.HTTPRequestData) || prog.Handles(rules.WSRequest),
		handlesResp: prog.Handles(rules.HTTPResponse) || prog.Handles(rules.HTTPResponseData) || prog.Handles(rules.HTTPResponseContinue) || prog.Handles(rules.HTTPResponseRelease) || prog.Handles(rules.WSResponse),
		handlesSend: prog.Handles(rules.LBSelected) || prog.Handles(rules.HTTPRequestSend) || prog.Handles(rules.HTTPRequestRelease)}
	_, h.handlesFrames = handlesWS(prog) // websocket.go
	if r.f.mv.cfg.Request.HTTP.JSON != nil {
		h.handlesJSON = handlesJSON(prog) // json.go
		h.handlesReq = h.handlesReq || h.handlesJSON&1 != 0
		h.handlesResp = h.handlesResp || h.handlesJSON&2 != 0
	}
	if r.f.mv.cfg.Request.HTTP.XML != nil { // xml.go
		h.xml = handlesXML(prog)
		h.handlesReq = h.handlesReq || h.xml != nil
	}
	if r.f.mv.cfg.Request.HTTP.Cache != nil {
		h.cacheEvents = cacheEventsOf(prog) // cache.go
	}
	// LB_SELECTED, LB_FAILED and PERSIST_DOWN read the request too (and
	// LB_FAILED and PERSIST_DOWN may answer it).
	// With a stream profile, any event may switch the filter that
	// responses go through (stream.go); with an html profile, the
	// profile (html.go); with a rewrite profile, the REWRITE_ events and
	// switches (rewrite.go).
	h.handlesFilter = prog.Handles(rules.HTTPReject) || prog.Handles(rules.HTTPDisabled) // filterevents.go
	handlesSSE := r.f.mv.cfg.Request.HTTP.SSE != nil && prog.Handles(rules.SSEResponse)  // sse.go
	if !h.handlesReq && !h.handlesResp && !h.handlesSend && !h.handlesFrames && h.cacheEvents == 0 && !prog.Handles(rules.LBFailed) && !h.handlesFilter && !handlesSSE &&
		!prog.Handles(rules.PersistDown) && r.f.mv.cfg.Request.HTTP.Stream == nil && r.f.mv.cfg.Request.HTTP.HTML == nil &&
		r.f.mv.cfg.Request.HTTP.Rewrite == nil && !handlesAdapt(prog) { // adapt.go, html.go
		return nil
	}
	r.self = h
	r.http = h
	return h
}

var (
	_ mblb.HTTPRuleHandler         = (*httpRules)(nil)
	_ mblb.HTTPSendHandler         = (*httpRules)(nil)
	_ mblb.HTTPDataHandler         = (*httpRules)(nil)
	_ mblb.HTTPResponseDataHandler = (*httpRules)(nil)
	_ mblb.HTTPStreamHandler       = (*httpRules)(nil)
	_ mblb.WebSocketHandler        = (*httpRules)(nil)
	_ mblb.HTTPCacheEvents         = (*httpRules)(nil)
	_ mblb.HTTPAdaptEvents         = (*httpRules)(nil)
	_ mblb.HTTPAdaptContexts       = (*httpRules)(nil)
	_ rules.HTTPConn               = (*httpRules)(nil)
)

// OnHTTPRequest implements mblb.HTTPRuleHandler: HTTP_REQUEST over the
// framer's head (no second parse), HTTP_REQUEST_DATA when it collected,
// then the rule's results handed back to the engine.
func (h *httpRules) OnHTTPRequest(x *mblb.HTTPEvent) error {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.lanes.enter(r.f, x) // http2.go
	if r.f.lanes != nil {
		r.f.laneClone() // clone.go
	}
	h.StartRequest(x.Message(), x.Head())
	h.sentGen = h.Request.Gen()
	h.collectPending = false
	if !h.handlesReq {
		return nil
	}
	if err := h.event(x, rules.HTTPRequest, &h.Request); err != nil {
		return err
	}
	if h.isWebSocketRequest(x.Message(), x.Head()) {
		if err := h.wsHandshake(x, rules.WSRequest, &h.Request); err != nil { // websocket.go
			return err
		}
	}
	if x.Partial() && h.collectPending {
		// A streamed request: the engine reads what HTTP::collect
		// asked, then calls OnHTTPRequestData (upload.go).
		if !x.Decided() && h.CollectsRequests() {
			x.Await(h.collectLen)
			return nil
		}
		h.collectPending = false
	}
	if h.jsonAwait(x, &h.Request) { // json.go
		h.jsonWaiting = true
		return nil
	}
	if h.xmlAwait(x) { // xml.go
		h.xmlWaiting = true
		return nil
	}
	if err := h.collected(x, rules.HTTPRequestData, &h.Request); err != nil {
		return err
	}
	if err := h.jsonEvent(x, &h.Request); err != nil { // json.go
		return err
	}
	if err := h.xmlEvent(x); err != nil { // xml.go
		return err
	}
	h.sentGen = h.Request.Gen()
	return nil
}

// OnHTTPRequestData implements mblb.HTTPDataHandler: HTTP_REQUEST_DATA
// over the start of a streamed request, once the engine holds what
// HTTP::collect asked.
func (h *httpRules) OnHTTPRequestData(x *mblb.HTTPEvent) error {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.lanes.enter(r.f, x) // http2.go
	// What was asked, whatever ran in between (another message's
	// events share this state).
	if h.jsonWaiting {
		// The whole JSON body the json profile awaited (json.go).
		h.jsonWaiting = false
		if err := h.jsonEvent(x, &h.Request); err != nil {
			return err
		}
		h.sentGen = h.Request.Gen()
		return nil
	}
	if h.xmlWaiting {
		// The whole XML body the xml profile awaited (xml.go).
		h.xmlWaiting = false
		if err := h.xmlEvent(x); err != nil {
			return err
		}
		h.sentGen = h.Request.Gen()
		return nil
	}
	h.collectPending, h.collectLen = true, x.Asked()
	if err := h.collected(x, rules.HTTPRequestData, &h.Request); err != nil {
		return err
	}
	if !h.collectPending { // the rules' last DATA turn: the json and xml profiles'
		switch {
		case h.jsonAwait(x, &h.Request): // json.go
			h.jsonWaiting = true
		case h.xmlAwait(x): // xml.go
			h.xmlWaiting = true
		default:
			if err := h.jsonEvent(x, &h.Request); err != nil {
				return err
			}
			if err := h.xmlEvent(x); err != nil {
				return err
			}
		}
	}
	h.sentGen = h.Request.Gen()
	return nil
}

// HandlesResponses implements mblb.HTTPResponseFilter: OnHTTPResponse
// does nothing for rules without a response event.
func (h *httpRules) HandlesResponses() bool { return h.handlesResp }

// HandlesRequestSend implements mblb.HTTPSendHandler.
func (h *httpRules) HandlesRequestSend() bool { return h.handlesSend }

// OnHTTPRequestSend implements mblb.HTTPSendHandler: HTTP_REQUEST_SEND
// and HTTP_REQUEST_RELEASE, and the head as LB_SELECTED and they left it
// when they edited it. A retried request (HTTP::retry, a failed member)
// is sent as it is: the head the rules see is then a newer request's.
func (h *httpRules) OnHTTPRequestSend(x *mblb.HTTPEvent) error {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range [...]rules.Event{rules.HTTPRequestSend, rules.HTTPRequestRelease} {
		r.hx = x
		err := r.runEvent(ev)
		r.hx = nil
		h.ClearActions()
		if err != nil {
			return err
		}
		switch r.verdict {
		case irules.Reject:
			x.Reject()
			return nil
		case irules.Drop:
			x.Drop()
			return nil
		}
	}
	if int(x.RequestNum()) == h.RequestNum && h.Request.Gen() != h.sentGen {
		x.SetHead(h.Request.AppendTo(x.HeadBuffer()), h.Request.FramingKept())
		h.sentGen = h.Request.Gen()
	}
	return nil
}

// OnHTTPResponse implements mblb.HTTPRuleHandler: HTTP_RESPONSE_CONTINUE
// for the interim answers, HTTP_RESPONSE, HTTP_RESPONSE_DATA when it
// collected, HTTP_RESPONSE_RELEASE.
func (h *httpRules) OnHTTPResponse(x *mblb.HTTPEvent) error {
	if !h.handlesResp {
		return nil
	}
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	defer h.requestOf(x)()
	if err := h.continues(x); err != nil {
		return err
	}
	h.StartResponse(x.Message(), x.Head())
	h.collectPending = false
	if err := h.event(x, rules.HTTPResponse, &h.Response); err != nil {
		return err
	}
	if cs := r.cacheState(); cs != nil && cs.DropStored {
		cs.DropStored = false
		x.DropCached() // CACHE::disable in HTTP_RESPONSE
	}
	if x.Head().Status == 101 && h.f.mv.cfg.Request.HTTP.WebSocket != nil {
		if req := h.HTTPRequest(); req != nil && wantsWebSocket(req) {
			if err := h.wsHandshake(x, rules.WSResponse, &h.Response); err != nil { // websocket.go
				return err
			}
		}
	}
	if x.Partial() && h.collectPending {
		// A streamed response: the engine reads what HTTP::collect
		// asked, then calls OnHTTPResponseData.
		if !x.Decided() && h.CollectsResponses() {
			x.Await(h.collectLen)
			return nil
		}
		h.collectPending = false
	}
	return h.responseData(x)
}

// requestOf makes the rules read the request x answers while its
// response events run, when that is an older one than the connection's
// latest (a pipelining client); the returned function puts the latest
// back.
func (h *httpRules) requestOf(x *mblb.HTTPEvent) (restore func()) {
	// An HTTP/2 client's lanes number their requests each on its own
	// (http2.go): the request is the one x carries.
	if n := int(x.RequestNum()); (n != h.RequestNum || h.f.lanes != nil) && h.older.Reset(x.Request(), false) == nil {
		cur := h.RequestNum
		h.useOlder, h.RequestNum = true, n
		return func() { h.useOlder, h.RequestNum = false, cur }
	}
	return func() {}
}

// OnHTTPResponseData implements mblb.HTTPResponseDataHandler:
// HTTP_RESPONSE_DATA over the start of a streamed response, once the
// engine holds what HTTP::collect asked, then HTTP_RESPONSE_RELEASE.
func (h *httpRules) OnHTTPResponseData(x *mblb.HTTPEvent) error {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	defer h.requestOf(x)()
	if h.jsonWaiting {
		// The whole JSON body the json profile awaited (json.go).
		h.jsonWaiting = false
		if err := h.jsonEvent(x, &h.Response); err != nil {
			return err
		}
		return h.event(x, rules.HTTPResponseRelease, &h.Response)
	}
	h.collectPending, h.collectLen = true, x.Asked()
	return h.responseData(x)
}

// responseData runs HTTP_RESPONSE_DATA when the rules collected, then
// HTTP_RESPONSE_RELEASE.
func (h *httpRules) responseData(x *mblb.HTTPEvent) error {
	if err := h.collected(x, rules.HTTPResponseData, &h.Response); err == errCollectMore {
		return nil
	} else if err != nil {
		return err
	}
	if h.jsonAwait(x, &h.Response) { // json.go: a streamed body the rules collected the start of
		h.jsonWaiting = true
		return nil
	}
	if err := h.jsonEvent(x, &h.Response); err != nil { // json.go
		return err
	}
	return h.event(x, rules.HTTPResponseRelease, &h.Response)
}

// continues runs HTTP_RESPONSE_CONTINUE for each interim 100 Continue
// that came before the response, with that interim head as the response.
func (h *httpRules) continues(x *mblb.HTTPEvent) error {
	prog := irules.Program(h.rules)
	if prog == nil || !prog.Handles(rules.HTTPResponseContinue) {
		return nil
	}
	in := x.Interim()
	for len(in) > 0 {
		if err := h.Response.Reset(in, true); err != nil {
			return nil
		}
		head := h.Response.Head()
		h.HasResponse = true
		if head.Status == 100 {
			if err := h.event(nil, rules.HTTPResponseContinue, nil); err != nil {
				return err
			}
		}
		in = in[head.HeaderEnd:]
	}
	return nil
}

// collected runs the DATA event after an HTTP::collect in the event
// before it, with the body as HTTP::payload, and hands a replaced
// payload to the engine (which re-frames the message with its new
// Content-Length). A collect with no body to collect raises nothing.
func (h *httpRules) collected(x *mblb.HTTPEvent, ev rules.Event, head *rules.HTTPHead) error {
	// (A streamed body's DATA event runs once: nothing more is held.)
	for rounds := 0; h.collectPending && rounds < 4 && (rounds == 0 || !x.Partial()); rounds++ {
		h.collectPending = false
		if x.Decided() {
			return nil
		}
		if x.Partial() {
			if err := h.partialPayload(x); err != nil { // upload.go
				return err
			}
		} else if len(x.Body()) == 0 && !h.replaced {
			return nil
		}
		if !h.replaced && !x.Partial() {
			var err error
			if x.Head().Chunked {
				h.payload, err = httpx.Dechunk(h.payload[:0], x.Body())
				if err != nil {
					return err
				}
			} else {
				h.payload = append(h.payload[:0], x.Body()...)
			}
		}
		h.inData = true
		err := h.event(x, ev, head)
		h.inData = false
		if err != nil {
			return err
		}
	}
	switch {
	case h.replaced && x.Partial():
		// The collected start of a streamed body: it goes in its
		// place, the rest streams after it (upload.go).
		x.ReplaceStart(h.partialK, h.payload)
		h.replaced = false
	case h.replaced:
		x.SetBody(h.payload)
		h.replaced = false
	case x.Partial() && h.collectPending && !x.Decided() && x.CanAwait():
		// HTTP::collect in the DATA event of a streamed body: the
		// engine reads more of it and runs the event again.
		x.Await(h.collectLen)
		if x.IsResponse() {
			return errCollectMore // the release waits for the last round
		}
	case x.Partial():
		h.collectPending = false
	}
	return nil
}

// errCollectMore ends a response's DATA turn that collects more: the
// engine calls OnHTTPResponseData again, and HTTP_RESPONSE_RELEASE runs
// after the last round.
var errCollectMore = errors.New("collecting more")

// event runs ev with x as the event's message and applies what the rule
// did: its verdict, its HTTP actions, its edits of head. The caller holds
// the rule lock. x is nil for HTTP_RESPONSE_CONTINUE, whose actions are
// not applied.
func (h *httpRules) event(x *mblb.HTTPEvent, ev rules.Event, head *rules.HTTPHead) error {
	r := h.mblbRules
	if prog := irules.Program(r.rules); prog == nil || !prog.Handles(ev) {
		return nil
	}
	if x == nil {
		err := r.runEvent(ev)
		h.ClearActions()
		return err
	}
	r.hx = x
	err := r.runEvent(ev)
	r.hx = nil
	defer h.ClearActions()
	if err != nil {
		return err
	}
	switch r.verdict {
	case irules.Reject:
		x.Reject()
		return nil
	case irules.Drop:
		x.Drop()
		return nil
	case irules.Close:
		x.CloseAfter()
	}
	for i := range h.Actions {
		a := &h.Actions[i]
		switch a.Kind {
		case rules.HTTPRespond:
			x.Respond(a.Data, a.KeepAlive && !a.Reset)
			if a.Reset {
				x.ResetAfter()
			}
		case rules.HTTPClose:
			x.CloseAfter()
		case rules.HTTPCollect:
			h.collectPending, h.collectLen = true, a.Length
		case rules.HTTPRelease:
			h.collectPending = false
		case rules.HTTPDisable:
			x.Disable()
		case rules.HTTPEnable:
			x.Enable()
		case rules.HTTPRetry:
			x.Retry(a.Data)
		case rules.HTTPFallback:
			x.Fallback(a.Text)
		case rules.OneConnectDetach:
			x.Detach(a.Enable)
		case rules.OneConnectReuse:
			if !a.Enable {
				x.NoReuse()
			}
		case rules.OneConnectLabel:
			x.Label(a.Text)
		case rules.OneConnectSelect:
			x.SelectPersist(a.Enable)
		case rules.NTLMSwitch:
			x.NTLM(a.Enable)
		}
	}
	if head.Modified() {
		x.SetHead(head.AppendTo(x.HeadBuffer()), head.FramingKept())
	}
	return nil
}

// HTTPDo implements rules.HTTPConn: the actions this data path carries
// out are queued where they mean something; elsewhere they are refused,
// so that a rule relying on one fails visibly instead of being half
// obeyed.
func (h *httpRules) HTTPDo(a rules.HTTPAction) error {
	ev := h.httpEv
	inReq := h.hx != nil && !h.hx.IsResponse() && (ev == rules.HTTPRequest || ev == rules.HTTPRequestData || isJSONEvent(ev) || ev == rules.XMLContentBasedRouting || ev.IsXMLParser()) // json.go, xml.go
	inResp := h.hx != nil && h.hx.IsResponse() && (ev == rules.HTTPResponse || ev == rules.HTTPResponseData || isJSONEvent(ev))
	inCache := h.hx != nil && ev == rules.CacheResponse                                                                                                                  // the cached answer (cache.go)
	inAdapt := h.hx != nil && (ev == rules.AdaptRequestHeaders || ev == rules.AdaptRequestResult || ev == rules.AdaptResponseHeaders || ev == rules.AdaptResponseResult) // adapt.go
	switch a.Kind {
	case rules.HTTPRespond, rules.HTTPClose:
		if !inReq && !inResp && !inCache && !inAdapt && (!h.lbFailed || a.Kind != rules.HTTPRespond) {
			return fmt.Errorf("%s works in HTTP_REQUEST, HTTP_RESPONSE, their DATA events, CACHE_RESPONSE and the ADAPT_ events (HTTP::respond also in LB_FAILED) on this virtual server", a.Kind)
		}
	case rules.HTTPCollect, rules.HTTPRelease:
		if !inReq && !inResp {
			return fmt.Errorf("%s works in HTTP_REQUEST, HTTP_RESPONSE and their DATA events", a.Kind)
		}
	case rules.HTTPRetry:
		if !inResp {
			return errors.New("HTTP::retry works in HTTP_RESPONSE and HTTP_RESPONSE_DATA")
		}
	case rules.HTTPDisable:
		if !inReq {
			return errors.New("HTTP::disable works in HTTP_REQUEST on this virtual server: the connection becomes a tunnel after the request")
		}
	case rules.HTTPEnable:
		// A rule runs only while HTTP is on: HTTP::disable makes the
		// connection a tunnel once its request has left, and a tunnel
		// raises no event. So HTTP::enable can only cancel an
		// HTTP::disable of the request at hand (the later of the two
		// wins, as on BIG-IP); elsewhere HTTP is already on.
		if !inReq {
			return nil
		}
	case rules.HTTPFallback:
		if !inReq && !h.lbFailed {
			return errors.New("HTTP::fallback works in HTTP_REQUEST, HTTP_REQUEST_DATA and LB_FAILED on this virtual server")
		}
	case rules.OneConnectDetach, rules.OneConnectReuse, rules.OneConnectLabel, rules.NTLMSwitch, rules.OneConnectSelect:
		if !inReq {
			return fmt.Errorf("%s works in HTTP_REQUEST and HTTP_REQUEST_DATA on this virtual server", a.Kind)
		}
	default:
		return fmt.Errorf("%s is not supported on this virtual server", a.Kind)
	}
	return h.HTTPState.HTTPDo(a)
}

// Payload implements rules.Conn: in a DATA event, the collected body
// (HTTP::payload); elsewhere, as on any message-based virtual.
func (h *httpRules) Payload(s rules.Side) []byte {
	if h.inData {
		return h.payload
	}
	return h.mblbRules.Payload(s)
}

// ReplacePayload implements rules.Conn: HTTP::payload replace in a DATA
// event; the message is re-framed with the new length.
func (h *httpRules) ReplacePayload(s rules.Side, offset, length int, data []byte) error {
	if !h.inData {
		return h.mblbRules.ReplacePayload(s, offset, length, data)
	}
	if offset > len(h.payload) {
		return fmt.Errorf("HTTP::payload replace: offset %d is past the payload (%d bytes)", offset, len(h.payload))
	}
	end := min(offset+length, len(h.payload))
	out := make([]byte, 0, len(h.payload)-(end-offset)+len(data))
	out = append(out, h.payload[:offset]...)
	out = append(out, data...)
	out = append(out, h.payload[end:]...)
	h.payload, h.replaced = out, true
	return nil
}

// errHTTPResponseDecision refuses load-balancing decisions made while a
// response is handled.
var errHTTPResponseDecision = errors.New("a pool, member or node decision applies to requests: make it in HTTP_REQUEST")
