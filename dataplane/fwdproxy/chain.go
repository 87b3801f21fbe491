package fwdproxy

import (
	"net/http"
	"net/netip"
)

// A rule may choose how a proxied request leaves (Route): through a
// parent proxy (HTTP::proxy chain), to another address than its name's
// (HTTP::proxy iptuple), or with its absolute URI kept (HTTP::proxy
// uri-rewrite disable).

// next is where the route sends the request instead of its name's
// addresses: the chained proxy, else the rule's next hop; invalid for
// neither.
func (r Route) next() netip.AddrPort {
	if r.Chain.IsValid() {
		return r.Chain
	}
	return r.Hop
}

// destinations is the addresses to try for host:port: the route's next
// hop when a rule chose one in HTTP_REQUEST (the name is not resolved
// then: a chained proxy resolves it [M]), else the name's. When the name
// does not resolve, the client is answered and dsts is nil; keep then
// says whether its connection goes on.
func (s *Session) destinations(req *http.Request, host string, port uint16) (dsts []netip.AddrPort, keep bool) {
	if d := s.route.next(); d.IsValid() {
		return []netip.AddrPort{d}, true
	}
	dsts, err := s.resolve(host, port)
	if err != nil {
		return nil, s.resolveError(req, err)
	}
	return dsts, true
}

// reroute is dsts after HTTP_PROXY_*: the route's next hop when the
// rules left one, dsts when the name was resolved, or the name's
// addresses when the rules took back the hop that stood for them
// (dsts nil: the client was answered, keep says whether it goes on).
func (s *Session) reroute(req *http.Request, host string, port uint16, dsts []netip.AddrPort, routed bool) ([]netip.AddrPort, bool) {
	if d := s.route.next(); d.IsValid() {
		return []netip.AddrPort{d}, true
	}
	if routed {
		return s.destinations(req, host, port)
	}
	return dsts, true
}

// chainConnect sends a CONNECT through the chained proxy (on the
// client's kept connection to it, or a new one) and makes the tunnel
// through it when it answers 2xx. A chained tunnel is not intercepted by
// the SSL forward proxy: its TLS is the client's with the origin [M].
func (s *Session) chainConnect(req *http.Request) bool {
	o, _, err := s.originFor([]netip.AddrPort{s.route.Chain})
	if err != nil {
		code := http.StatusBadGateway
		if isTimeout(err) {
			code = http.StatusGatewayTimeout
		}
		return s.reply(code, s.p.cfg.ConnectError, false) == nil && !req.Close
	}
	return s.connectVia(req, o) // pool.go
}
