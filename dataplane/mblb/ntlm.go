package mblb

import (
	"bytes"
	"strconv"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/httpx"
)

// The ntlm profile. A member that authenticates with NTLM (or Negotiate,
// its SPNEGO wrapping) authenticates the connection, not the request:
// after the three legs (a 401 with WWW-Authenticate NTLM, the client's
// Authorization NTLM negotiate message answered by a 401 carrying the
// challenge, the client's authenticate message) every later request on
// that connection is the authenticated user's, whatever it carries.
// OneConnect hands an idle connection to whichever client comes next, so
// without the profile a second client may be served as the first
// client's user. With it (HTTPOptions.NTLM):
//
//   - a pooled connection whose response was a 401 with WWW-Authenticate
//     NTLM or Negotiate moves, before it goes idle, to a group of the
//     pool that only this client's requests use (a poolKey with a label
//     no ONECONNECT::label can give);
//   - when the client's next request carries Authorization NTLM or
//     Negotiate, the client stays with that group and its member until
//     it closes, and the group's connections close with it; when it does
//     not, the group's connections close and the client goes back to the
//     shared pool [M: BIG-IP's exact handling of an unanswered challenge
//     is not documented];
//   - NTLM::disable stops it for the client connection (its group closes
//     at its next request).
//
// The group is an ordinary pool group, so reuse counts, idle timeouts
// and event loops treat its connections as any other's.

// ntlmPin is a client's private group: the pool key of its connections
// and the member they go to.
type ntlmPin struct {
	key    poolKey
	member Member
	// confirmed: a request with Authorization NTLM or Negotiate followed
	// the challenge (written and read on the session's thread only).
	confirmed bool
}

// ntlmLabels numbers the private groups' labels.
var ntlmLabels atomic.Uint64

// ntlmScheme reports whether an authentication header value names NTLM
// or Negotiate (alone, or followed by its token).
func ntlmScheme(v []byte) bool {
	v = bytes.TrimLeft(v, " \t")
	for _, s := range [...]string{"ntlm", "negotiate"} { // (EqualFold takes lower case)
		if len(v) >= len(s) && httpx.EqualFold(v[:len(s)], s) && (len(v) == len(s) || v[len(s)] == ' ') {
			return true
		}
	}
	return false
}

// ntlmChallenged runs on the reader of a pooled connection sc for a
// response of s's request (b, h) before the connection is released: a
// 401 asking for NTLM or Negotiate moves sc to s's private group.
func (p *connPool) ntlmChallenged(sc *serverConn, s *ClientConn, b []byte, h *httpx.Head) {
	if h.Status != 401 || s.ntlmOff.Load() || s.isClosed() {
		return
	}
	asks := false
	httpx.Fields(b[h.Start:], h.HeaderEnd-h.Start, func(n, v []byte, _, _ int) bool {
		asks = httpx.EqualFold(n, "www-authenticate") && ntlmScheme(v)
		return !asks
	})
	if !asks {
		return
	}
	pin := s.ntlm.Load()
	if pin == nil {
		np := &ntlmPin{member: sc.leg.Member}
		np.key = poolKey{id: sc.key.id, to: sc.key.to, src: sc.key.src, label: "\x00ntlm " + strconv.FormatUint(ntlmLabels.Add(1), 10)}
		if !s.ntlm.CompareAndSwap(nil, np) {
			return // another member challenged the client at once: that one stays [M]
		}
		pin = np
		p.e.stats.ntlmChallenged.Add(1)
	}
	if pin.key.id != sc.key.id {
		return // the client's authentication lives on another member
	}
	p.mu.Lock()
	if sc.key != pin.key && !sc.removed && !sc.retired {
		p.move(sc, pin.key)
	}
	p.mu.Unlock()
}

// move files sc under key instead of its own group. The caller holds mu.
func (p *connPool) move(sc *serverConn, key poolKey) {
	if g := p.groups[sc.key]; g != nil {
		for i, x := range g.conns {
			if x == sc {
				last := len(g.conns) - 1
				g.conns[i] = g.conns[last]
				g.conns[last] = nil
				g.conns = g.conns[:last]
				break
			}
		}
		// An entry left from an earlier idle spell must not hand it to
		// another client of the old group.
		for i := range g.idle {
			st := &g.idle[i]
			for j, x := range st.conns {
				if x == sc {
					st.conns = append(st.conns[:j], st.conns[j+1:]...)
					break
				}
			}
		}
		sc.stacked = false
		p.dropEmpty(sc.key, g)
	}
	ng := p.groups[key]
	if ng == nil {
		ng = &poolGroup{}
		p.groups[key] = ng
	}
	sc.key = key
	ng.conns = append(ng.conns, sc)
}

// ntlmRequest runs on the session's thread for each request m (head b,
// h) of a client with a private group: a request answering the
// challenge keeps the client on the group and its member; another, or
// NTLM::disable, gives the group up.
func (s *ClientConn) ntlmRequest(m *msg, b []byte, h *httpx.Head) {
	pin := s.ntlm.Load()
	if pin == nil {
		return
	}
	if !pin.confirmed && !s.ntlmOff.Load() && ntlmScheme(httpx.HeaderValue(b, h, "authorization")) {
		pin.confirmed = true
		s.e.stats.ntlmBound.Add(1)
		s.mu.Lock()
		s.perConn = true
		s.sticky, s.hasSticky = pin.member, true
		s.mu.Unlock()
	}
	if !pin.confirmed || s.ntlmOff.Load() {
		s.ntlm.Store(nil)
		s.mu.Lock()
		s.perConn = false
		s.mu.Unlock()
		s.e.pool.closeGroup(pin.key)
		s.e.stats.ntlmUnbound.Add(1)
		return
	}
	m.hx.label = pin.key.label
}

// ntlmClosed closes the private group of a client that closed.
func (p *connPool) ntlmClosed(s *ClientConn) {
	if pin := s.ntlm.Load(); pin != nil {
		p.closeGroup(pin.key)
	}
}

// closeGroup closes the idle connections of the group key and retires
// the busy ones, which close once answered.
func (p *connPool) closeGroup(key poolKey) {
	var closing []*serverConn
	p.mu.Lock()
	if g := p.groups[key]; g != nil {
		for _, sc := range g.conns {
			if sc.idleCounted {
				closing = append(closing, sc)
			} else {
				sc.retired = true
			}
		}
	}
	for _, sc := range closing {
		p.removeLocked(sc)
	}
	p.mu.Unlock()
	for _, sc := range closing {
		sc.shutdown()
	}
}

// http10 is head with its status line's version said as HTTP/1.0
// (force-http-10-response); ok is false when it already is.
func (sc *serverConn) http10(head []byte) ([]byte, bool) {
	if !bytes.HasPrefix(head, []byte("HTTP/1.1")) {
		return head, false
	}
	sc.h10 = append(append(sc.h10[:0], "HTTP/1.0"...), head[len("HTTP/1.1"):]...)
	return sc.h10, true
}

// NTLM turns the ntlm profile's binding on or off for the client
// connection from this request on (NTLM::enable, NTLM::disable).
func (x *HTTPEvent) NTLM(on bool) {
	if x.sess != nil {
		x.sess.ntlmOff.Store(!on)
	}
}
