package mblbvs

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// poolPick is the member of pool that its load-balancing method and its
// monitors choose now, for the ICAP exchanges of adapt profiles: the
// internal virtual server's pool is balanced as any other.
func (s *Set) poolPick(pool string) (netip.AddrPort, bool) {
	ps := s.env.Pools()
	if ps == nil {
		return netip.AddrPort{}, false
	}
	q := ps.Named("", pool)
	if q == nil {
		return netip.AddrPort{}, false
	}
	m := q.Pick(nil, nil)
	if m == nil {
		return netip.AddrPort{}, false
	}
	return m.Cfg.Load().Addr, true
}

// adaptDowns are service-down-action's words by mblb.AdaptDown.
var adaptDowns = [...]string{mblb.AdaptIgnore: "ignore", mblb.AdaptDrop: "drop", mblb.AdaptReset: "reset"}

// setAdapt gives a client's rules the ADAPT:: commands, starting each
// request from the virtual's adapt profiles.
func setAdapt(s *rules.ConnState, h *mblb.HTTPOptions) {
	c := rules.AdaptChoice{Request: h.RequestAdapt != nil, Response: h.ResponseAdapt != nil, RequestDown: "ignore", ResponseDown: "ignore"}
	var targets map[string]*mblb.AdaptTarget
	if a := h.RequestAdapt; a != nil {
		c.RequestDown, c.RequestTimeout, c.RequestPreview = adaptDowns[a.Down], int(a.Service.Timeout/time.Millisecond), a.PreviewSize
		c.RequestHTTP10, c.RequestVirtual, c.RequestProfile, targets = a.HTTP10, a.Internal, a.Profile, a.Targets
	}
	if a := h.ResponseAdapt; a != nil {
		c.ResponseDown, c.ResponseTimeout, c.ResponsePreview = adaptDowns[a.Down], int(a.Service.Timeout/time.Millisecond), a.PreviewSize
		c.ResponseHTTP10, c.ResponseVirtual, c.ResponseProfile, targets = a.HTTP10, a.Internal, a.Profile, a.Targets
	}
	s.SetAdapt(c)
	s.Adapt().SetInternal(func(name string) (string, bool) {
		if tg := targets[name]; tg != nil {
			return tg.Internal, true
		}
		return "", false
	})
}

// adaptTarget is the internal virtual server ADAPT::select chose for a
// side whose profile is a: nil when it is the profile's own.
func adaptTarget(a *mblb.Adapt, name string) *mblb.AdaptTarget {
	if a == nil || name == a.Internal {
		return nil
	}
	return a.Targets[name]
}

// AdaptChoice implements mblb.HTTPAdaptHandler: what the rules' ADAPT::
// commands asked of the request whose HTTP_REQUEST ran last, taken so
// that it does not carry over to the next one. Before any event ran,
// the profiles decide.
func (h *httpRules) AdaptChoice() mblb.AdaptChoice {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg := &r.f.mv.cfg.Request.HTTP
	if r.sess == nil || r.sess.Adapt() == nil {
		c := mblb.AdaptChoice{Request: cfg.RequestAdapt != nil, Response: cfg.ResponseAdapt != nil}
		if a := cfg.RequestAdapt; a != nil {
			c.RequestDown, c.RequestTimeout, c.RequestPreview, c.RequestHTTP10 = a.Down, a.Service.Timeout, a.PreviewSize, a.HTTP10
		}
		if a := cfg.ResponseAdapt; a != nil {
			c.ResponseDown, c.ResponseTimeout, c.ResponsePreview, c.ResponseHTTP10 = a.Down, a.Service.Timeout, a.PreviewSize, a.HTTP10
		}
		return c
	}
	c := r.sess.Adapt().Take()
	return mblb.AdaptChoice{Request: c.Request, Response: c.Response, RequestDown: adaptDown(c.RequestDown), ResponseDown: adaptDown(c.ResponseDown),
		RequestTimeout: time.Duration(c.RequestTimeout) * time.Millisecond, ResponseTimeout: time.Duration(c.ResponseTimeout) * time.Millisecond,
		RequestPreview: c.RequestPreview, ResponsePreview: c.ResponsePreview,
		RequestHTTP10: c.RequestHTTP10, ResponseHTTP10: c.ResponseHTTP10,
		RequestTarget: adaptTarget(cfg.RequestAdapt, c.RequestVirtual), ResponseTarget: adaptTarget(cfg.ResponseAdapt, c.ResponseVirtual)}
}

// AdaptContext implements mblb.HTTPAdaptContexts: the side's i-th
// dynamic context the rules created (ADAPT::context_create), read under
// the lock the events run under.
func (h *httpRules) AdaptContext(resp bool, i int) (mblb.AdaptContextChoice, bool) {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil || r.sess.Adapt() == nil {
		return mblb.AdaptContextChoice{}, false
	}
	c, ok := r.sess.Adapt().Context(resp, i)
	if !ok {
		return mblb.AdaptContextChoice{}, false
	}
	a := r.f.mv.cfg.Request.HTTP.RequestAdapt
	if resp {
		a = r.f.mv.cfg.Request.HTTP.ResponseAdapt
	}
	return mblb.AdaptContextChoice{Enable: c.Enable, Down: adaptDown(c.Down), Timeout: time.Duration(c.Timeout) * time.Millisecond,
		Preview: c.Preview, HTTP10: c.HTTP10, Target: adaptTarget(a, c.Virtual)}, true
}

// AdaptCurrent implements mblb.HTTPAdaptContexts: ADAPT::context_current
// in the ADAPT_ events about to run.
func (h *httpRules) AdaptCurrent(resp bool, i int) {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil && r.sess.Adapt() != nil {
		r.sess.Adapt().SetCurrent(resp, i)
	}
}

func adaptDown(s string) mblb.AdaptDown {
	for i, w := range adaptDowns {
		if w == s {
			return mblb.AdaptDown(i)
		}
	}
	return mblb.AdaptIgnore
}

// OnAdaptRequest implements mblb.HTTPAdaptEvents: ADAPT_REQUEST_HEADERS
// over a request the ICAP server modified, then ADAPT_REQUEST_RESULT
// (ADAPT::result is result), unless the first decided. Later events see
// the request as adapted.
func (h *httpRules) OnAdaptRequest(x *mblb.HTTPEvent, result string, modified bool) error {
	return h.adaptEvents(x, result, modified, rules.AdaptRequestHeaders, rules.AdaptRequestResult, &h.Request)
}

// OnAdaptResponse implements mblb.HTTPAdaptEvents for a member's
// response: ADAPT_RESPONSE_HEADERS, then ADAPT_RESPONSE_RESULT.
func (h *httpRules) OnAdaptResponse(x *mblb.HTTPEvent, result string, modified bool) error {
	return h.adaptEvents(x, result, modified, rules.AdaptResponseHeaders, rules.AdaptResponseResult, &h.Response)
}

func (h *httpRules) adaptEvents(x *mblb.HTTPEvent, result string, modified bool, headers, res rules.Event, head *rules.HTTPHead) error {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	prog := irules.Program(r.rules)
	if prog == nil || !prog.Handles(headers) && !prog.Handles(res) {
		return nil
	}
	if x.IsResponse() {
		defer h.requestOf(x)()
		h.StartResponse(x.Message(), x.Head())
	} else {
		h.StartRequest(x.Message(), x.Head())
	}
	if modified {
		if err := h.event(x, headers, head); err != nil || x.Decided() {
			return err
		}
	}
	if st := r.RuleSession(prog).Adapt(); st != nil {
		st.Result = result
	}
	return h.event(x, res, head)
}

// handlesAdapt reports whether a program has an ADAPT_ event.
func handlesAdapt(prog *rules.Program) bool {
	return prog.Handles(rules.AdaptRequestHeaders) || prog.Handles(rules.AdaptRequestResult) ||
		prog.Handles(rules.AdaptResponseHeaders) || prog.Handles(rules.AdaptResponseResult)
}
