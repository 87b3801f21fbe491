package mblb

import (
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
)

// AdaptContextChoice is one dynamic adaptation context a client's rules
// created (ADAPT::context_create): an exchange of its own, with its own
// settings, in the side's chain.
type AdaptContextChoice struct {
	Enable  bool
	Down    AdaptDown
	Timeout time.Duration
	Preview int
	HTTP10  bool
	// Target is the internal virtual server ADAPT::select chose for the
	// context (nil: the profile's).
	Target *AdaptTarget
}

func (c AdaptContextChoice) side() adaptSide {
	return adaptSide{set: true, off: !c.Enable, http10: c.HTTP10, down: c.Down, timeout: c.Timeout, preview: c.Preview, target: c.Target, dyn: true}
}

// HTTPAdaptContexts is implemented by an HTTPAdaptHandler whose rules
// may create dynamic adaptation contexts. AdaptContext is the side's
// i-th (false past the last), asked again after each exchange's ADAPT_
// events, which may have created more or deleted them all;
// AdaptCurrent says whose exchange the next ADAPT_ events follow (i < 0:
// the profile's, the static context).
type HTTPAdaptContexts interface {
	AdaptContext(resp bool, i int) (AdaptContextChoice, bool)
	AdaptCurrent(resp bool, i int)
}

// adaptRequestChain sends a whole request through its side's
// adaptation contexts in turn, each exchange followed by its
// ADAPT_REQUEST_ events: the profile's context when the rules created
// none (then any they create in its events), else their dynamic
// contexts in the order created. The first ICAP answer given in the
// request's place ends the chain. It returns the request to go on, the
// answer to give instead (if any), and ok false when the client ended.
func (s *ClientConn) adaptRequestChain(ra *Adapt, side adaptSide, b []byte, h *httpx.Head, x *HTTPEvent) ([]byte, *httpx.Head, []byte, bool) {
	var ac HTTPAdaptContexts
	if x != nil {
		ac, _ = s.hrule.(HTTPAdaptContexts)
	}
	static := !side.dyn
	for i := 0; ; {
		cur := side
		if ac != nil {
			if static {
				ac.AdaptCurrent(false, -1)
			} else {
				c, ok := ac.AdaptContext(false, i)
				if !ok {
					break
				}
				cur = c.side()
				ac.AdaptCurrent(false, i)
				i++
			}
		}
		nb, nh, answer, result, ok := s.adaptRequest(ra, cur, b, h, x)
		if !ok {
			return nil, nil, nil, false
		}
		if nb != nil {
			b, h = nb, nh
			if x != nil {
				x.edited, x.framingKept, x.bodySet, x.body = nil, false, false, nil
			}
		}
		if x != nil { // ADAPT_REQUEST_HEADERS and _RESULT
			if b, h, answer, ok = s.adaptRequestEvents(result, b, h, x, answer); !ok {
				return nil, nil, nil, false
			}
		}
		if answer != nil || ac == nil {
			return b, h, answer, true
		}
		static = false
	}
	return b, h, nil, true
}

// adaptResponseChain is adaptRequestChain for a whole member response
// (b from h.Start): the contexts of the response side, each exchange
// followed by its ADAPT_RESPONSE_ events. It returns the response to
// deliver, ok false when the client ended.
func (sc *serverConn) adaptResponseChain(ra *Adapt, req *msg, b []byte, h *httpx.Head) ([]byte, *httpx.Head, bool) {
	side := req.hx.respAdapt
	ac, _ := req.sess.hrule.(HTTPAdaptContexts)
	static := !side.dyn
	for i := 0; ; {
		cur := side
		if ac != nil {
			if static {
				ac.AdaptCurrent(true, -1)
			} else {
				c, ok := ac.AdaptContext(true, i)
				if !ok {
					break
				}
				cur = c.side()
				ac.AdaptCurrent(true, i)
				i++
			}
		}
		nb, nh, result, ok := sc.adaptResponse(ra, cur, req, b, h) // adapt.go
		if !ok {
			return nil, nil, false
		}
		if nb != nil {
			b, h = nb, nh
		}
		if result != "" && req.sess.hrule != nil { // ADAPT_RESPONSE_HEADERS and _RESULT
			if b, h, ok = sc.adaptResponseEvents(req, result, b, h); !ok {
				return nil, nil, false
			}
		}
		if ac == nil {
			break
		}
		static = false
	}
	return b, h, true
}
