package mblb

import (
	"context"
	"net/netip"

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
// in HTTP_REQUEST (ADAPT::enable, ADAPT::service_down_action): each
// side on or off, and its service-down-action.
type AdaptChoice struct {
	Request, Response         bool
	RequestDown, ResponseDown AdaptDown
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
	down     AdaptDown
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
	return adaptSide{set: true, off: !c.Request, down: c.RequestDown}, adaptSide{set: true, off: !c.Response, down: c.ResponseDown}
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
// to go on in its place (nil: unchanged), or answered when the ICAP
// server's response went to the client instead; ok is false when the
// service-down-action ended the client.
func (s *ClientConn) adaptRequest(a *Adapt, side adaptSide, b []byte, h *httpx.Head, x *HTTPEvent, closing bool) (nb []byte, nh *httpx.Head, answered, ok bool) {
	if side.off || !a.HTTP10 && h.Minor == 0 {
		return nil, nil, false, true
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
			return nil, nil, false, s.adaptDown(a, "the request's chunks do not decode: %v", err)
		}
	}
	addr, up := s.e.adaptServer(a)
	if !up {
		return nil, nil, false, s.adaptDown(a, "no ICAP server of pool %s is available", a.Pool)
	}
	r, err := a.Service.Exchange(context.Background(), addr, icap.ReqMod, &icap.Message{ReqHead: head, ReqBody: body})
	if err != nil {
		return nil, nil, false, s.adaptDown(a, "REQMOD to %s: %v", addr, err)
	}
	switch r.Outcome {
	case icap.Answered:
		if _, err := httpx.ParseResponse(r.Msg); err != nil {
			return nil, nil, false, s.adaptDown(a, "REQMOD to %s answered with an invalid response: %v", addr, err)
		}
		s.e.stats.adaptAnswered.Add(1)
		s.msgsIn.Add(1)
		s.localReply(r.Msg, closing)
		s.httpDone = closing
		return nil, nil, true, true
	case icap.Modified:
		eh, err := httpx.ParseRequest(r.Msg)
		if err != nil {
			return nil, nil, false, s.adaptDown(a, "REQMOD to %s gave an invalid request: %v", addr, err)
		}
		s.e.stats.adaptModified.Add(1)
		return r.Msg, &eh, false, true
	}
	s.e.stats.adaptUnmodified.Add(1)
	return nil, nil, false, true
}

// adaptDown applies service-down-action to the client after a failed
// exchange (why) and says whether the message goes on unadapted.
func (s *ClientConn) adaptDown(a *Adapt, why string, args ...any) bool {
	s.e.stats.adaptFailed.Add(1)
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
// the service-down-action ended the client. Answers without a body to
// scan (1xx, 204, 304, to HEAD or CONNECT) pass unadapted [M].
func (sc *serverConn) adaptResponse(a *Adapt, req *msg, b []byte, h *httpx.Head) (nb []byte, nh *httpx.Head, ok bool) {
	if h.Status < 200 || h.Status == 204 || h.Status == 304 || req.httpHead || req.hx.connect || req.hx.tunnel != 0 {
		return nil, nil, true
	}
	s := req.sess
	if req.hx.respAdapt.off || !a.HTTP10 && h.Minor == 0 {
		return nil, nil, true
	}
	a = req.hx.respAdapt.apply(a)
	body := b[h.HeaderEnd:]
	if h.Chunked {
		var err error
		if body, err = httpx.Dechunk(nil, body); err != nil {
			return nil, nil, s.adaptDown(a, "the response's chunks do not decode: %v", err)
		}
	}
	addr, up := sc.e.adaptServer(a)
	if !up {
		return nil, nil, s.adaptDown(a, "no ICAP server of pool %s is available", a.Pool)
	}
	m := &icap.Message{ReqHead: req.b[:req.hx.hlen], RespHead: b[h.Start:h.HeaderEnd], RespBody: body}
	r, err := a.Service.Exchange(context.Background(), addr, icap.RespMod, m)
	if err != nil {
		return nil, nil, s.adaptDown(a, "RESPMOD to %s: %v", addr, err)
	}
	if r.Outcome == icap.Unmodified {
		sc.e.stats.adaptUnmodified.Add(1)
		return nil, nil, true
	}
	eh, err := httpx.ParseResponse(r.Msg)
	if err != nil {
		return nil, nil, s.adaptDown(a, "RESPMOD to %s gave an invalid response: %v", addr, err)
	}
	sc.e.stats.adaptModified.Add(1)
	return r.Msg, &eh, true
}

// adapts reports whether a side is adapted: its exchanges wait on the
// ICAP server, which an event loop must not.
func (o *HTTPOptions) adapts() bool { return o.RequestAdapt != nil || o.ResponseAdapt != nil }

// apply is a with the rules' service-down-action, when they chose one
// other than the profile's (a copy then: the profile is shared).
func (c adaptSide) apply(a *Adapt) *Adapt {
	if !c.set || c.down == a.Down {
		return a
	}
	b := *a
	b.Down = c.down
	return &b
}
