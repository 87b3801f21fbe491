package mrfsip

import (
	"bytes"
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// The session profile's Route and loop settings.
//
// honor-route-header: a client's request whose Route fields name a hop
// goes to that hop (RFC 3261 §16.4, §16.6 steps 6 and 7) rather than by
// the router's routes or the virtual's pool, unless a rule routed it
// (MR::message route, SIP::route). A first Route value naming the
// virtual itself (its address and port: a Record-Route it inserted) is
// taken off first; a request whose Request-URI is the virtual's own
// (no user, its address and port: sent by a strict router) gets the
// last Route value as its Request-URI.
// The hop's URI must hold an address: a name is not resolved, and such
// a request is routed as if it had no Route [M]. With honor-route-mode
// loose the hop's Route value stays for the hop to take off (loose
// routing, RFC 3261 §16.12); with strict the hop is addressed as an
// RFC 2543 strict router: its URI becomes the Request-URI and the
// Request-URI goes to the end of the Route fields (§16.6 step 6) [M:
// F5 names the modes; openltm reads them so].
//
// loop-detection-mode: loose answers 482 Loop Detected to every
// client's request that carries a Via the virtual inserted; strict
// does so only when the request is the one the virtual sent (RFC 3261
// §16.3 step 4): the virtual's branch then carries a hash of the
// request's Request-URI, From, To, Call-ID, CSeq, Proxy-Require and
// Proxy-Authorization and of the Via it had on top, and a request that
// comes back changed (spiralling: another proxy sent it on to another
// Request-URI) is routed again [M: the Via hashed is the one below the
// virtual's, as it was on top when the virtual forwarded the request].

// NextHop is the hop a client's request names in its Route fields
// (honor-route-header), for the router (mrf.NextHopper).
func (s *Session) NextHop(msg *mrf.Message) (netip.AddrPort, bool) {
	if !s.HonorRoute {
		return netip.AddrPort{}, false
	}
	m, err := sipmsg.Parse(msg.Data)
	if err != nil || !m.Request || m.Count(sipmsg.Route) == 0 {
		return netip.AddrPort{}, false
	}
	var first, second []byte
	n := 0
	m.EachValue(sipmsg.Route, func(v []byte) bool {
		if n == 0 {
			first = v
		} else {
			second = v
		}
		n++
		return n < 2
	})
	hop := first
	if s.names(sipmsg.RouteURI(first)) {
		hop = second
	}
	if hop == nil {
		return netip.AddrPort{}, false
	}
	return s.addrOf(sipmsg.RouteURI(hop))
}

// addrOf is the address and port a URI names, false when its host is
// not an address.
func (s *Session) addrOf(uri []byte) (netip.AddrPort, bool) {
	h, p, ok := sipmsg.URIHostPort(uri)
	if !ok {
		return netip.AddrPort{}, false
	}
	a, err := netip.ParseAddr(string(h))
	if err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), true
}

// names says whether uri names the virtual (its address and port).
func (s *Session) names(uri []byte) bool {
	if !s.self.IsValid() {
		return false
	}
	a, ok := s.addrOf(uri)
	return ok && a == s.self
}

// reroute is request m as it leaves under honor-route-header (its own
// Route value taken off, a strict router's Request-URI restored, the
// strict mode's rewrite), nil when it is left as it is.
func (s *Session) reroute(m *sipmsg.Message) []byte {
	var routes [][]byte
	m.EachValue(sipmsg.Route, func(v []byte) bool {
		routes = append(routes, v)
		return len(routes) < maxVias
	})
	if len(routes) == 0 {
		return nil
	}
	uri, changed := m.URI, false
	if bytes.IndexByte(uri, '@') < 0 && s.names(uri) {
		// A strict router sent it here (RFC 3261 §16.4): the
		// Request-URI is a Record-Route value of the virtual's, which
		// names no user.
		uri, routes, changed = sipmsg.RouteURI(routes[len(routes)-1]), routes[:len(routes)-1], true
	}
	if len(routes) > 0 && s.names(sipmsg.RouteURI(routes[0])) {
		routes, changed = routes[1:], true
	}
	if s.StrictRoute && len(routes) > 0 {
		if _, ok := s.addrOf(sipmsg.RouteURI(routes[0])); ok {
			next := sipmsg.RouteURI(routes[0])
			routes = append(routes[1:], append(append([]byte("<"), uri...), '>'))
			uri, changed = next, true
		}
	}
	if !changed {
		return nil
	}
	return sipmsg.AppendRerouted(nil, m, uri, routes)
}

// loopFields are what loop-detection-mode strict hashes besides the
// Request-URI and the Via below the virtual's.
var loopFields = [...]sipmsg.Field{sipmsg.From, sipmsg.To, sipmsg.CallID, sipmsg.CSeq,
	sipmsg.NewField("Proxy-Require"), sipmsg.NewField("Proxy-Authorization")}

// loopHash is the hash a strict loop check compares: of the request's
// Request-URI, loopFields and via (the Via value that was on top when
// the virtual forwarded it).
func loopHash(m *sipmsg.Message, via []byte) uint64 {
	h := uint64(14695981039346656037)
	add := func(b []byte) {
		for _, c := range bytes.TrimSpace(b) {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	add(m.URI)
	for _, f := range loopFields {
		v, _ := m.Header(f)
		add(v)
	}
	add(via)
	return h
}

// sameLoopHash says whether the virtual's Via found in Via field i
// (value v, its branch at at) carries the hash of request m as it is
// now: the request has looped, not spiralled. A branch without a hash
// (inserted under loose) counts as a loop.
func (s *Session) sameLoopHash(m *sipmsg.Message, v []byte, at, i int) bool {
	br := v[at+len(s.loop):]
	if e := bytes.IndexAny(br, ";, \t"); e >= 0 {
		br = br[:e]
	}
	dot := bytes.IndexByte(br, '.')
	if dot < 0 {
		return true
	}
	want, err := strconv.ParseUint(string(br[dot+1:]), 36, 64)
	if err != nil {
		return true
	}
	// The Via below the virtual's: the rest of its field, else the
	// next field's first value.
	var below []byte
	if c := bytes.IndexByte(v[at:], ','); c >= 0 {
		below = sipmsg.FirstValue(v[at+c+1:])
	} else if nv, ok := m.HeaderAt(sipmsg.Via, i+1); ok {
		below = sipmsg.FirstValue(nv)
	}
	return loopHash(m, below) == want
}

// ConnectBackTo is where a response due to a client whose TCP
// connection has ended is delivered (do-not-connect-back disabled,
// mrf.ConnectBacker): the top Via's received address, else its sent-by
// host, at its sent-by port (5060 when none; RFC 3261 §18.2.2), once
// the virtual's own Via is off. With honor-via disabled there is none
// [M: F5 falls back on the Via only while honor-via is enabled].
func (s *Session) ConnectBackTo(data []byte) (netip.AddrPort, bool) {
	if s.IgnoreVia {
		return netip.AddrPort{}, false
	}
	m, err := sipmsg.Parse(data)
	if err != nil || m.Request {
		return netip.AddrPort{}, false
	}
	v, ok := m.Header(sipmsg.Via)
	if !ok {
		return netip.AddrPort{}, false
	}
	v = sipmsg.FirstValue(v)
	// SIP/2.0/TCP host[:port][;params]
	sp := bytes.IndexAny(v, " \t")
	if sp < 0 {
		return netip.AddrPort{}, false
	}
	sentBy, params := bytes.TrimSpace(v[sp:]), []byte(nil)
	if i := bytes.IndexByte(sentBy, ';'); i >= 0 {
		sentBy, params = bytes.TrimSpace(sentBy[:i]), sentBy[i:]
	}
	uri := append([]byte("sip:"), sentBy...)
	h, port, ok := sipmsg.URIHostPort(uri)
	if !ok {
		return netip.AddrPort{}, false
	}
	for len(params) > 0 {
		params = params[1:]
		p := params
		if i := bytes.IndexByte(p, ';'); i >= 0 {
			p, params = p[:i], p[i:]
		} else {
			params = nil
		}
		if k, val, ok := bytes.Cut(bytes.TrimSpace(p), []byte("=")); ok && bytes.EqualFold(bytes.TrimSpace(k), []byte("received")) {
			h = bytes.Trim(bytes.TrimSpace(val), "[]")
		}
	}
	a, err := netip.ParseAddr(string(h))
	if err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}
