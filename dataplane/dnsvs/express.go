package dnsvs

import (
	"net/netip"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/rpz"
)

type express struct{ x gslb.Express }

// SetExpress hands the profiles' NOTIFYs to DNS Express (its answers
// come through the GSLB's AnswerVirtual); nil takes it away.
func (e *Engine) SetExpress(x gslb.Express) {
	if x == nil {
		e.x.Store(nil)
		return
	}
	e.x.Store(&express{x})
}

// notify is a NOTIFY's step: DNS Express answers it, and one it passes
// on (notify-action bypass or repeat, a zone it does not hold) goes to
// the pool when unhandled-query-action is allow, as BIG-IP sends it to
// the back-end server; otherwise DNS Express's answer goes back. ok is
// false without DNS Express.
func (s *Service) notify(r *dns.Msg, wire []byte, client netip.Addr) (m *dns.Msg, st step, ok bool) {
	x := s.e.x.Load()
	if x == nil {
		return nil, 0, false
	}
	m, pass := x.x.Notify(wire, r, client)
	if pass && s.p.Unhandled == "allow" {
		s.st.Allow.Add(1)
		return nil, stepForward, true
	}
	if m == nil {
		return nil, stepDrop, true
	}
	return m, stepAnswer, true
}

// policySource is where the caches' response-policy-zones are read: DNS
// Express's store, nil without one.
func (e *Engine) policySource() rpz.Source {
	if x := e.x.Load(); x != nil {
		if src, ok := x.x.(rpz.Source); ok {
			return src
		}
	}
	return nil
}
