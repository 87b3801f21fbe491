package mrf

import "net/netip"

// NextHopper is a protocol whose requests may name their next hop
// themselves (a SIP request's Route fields, under the session profile's
// honor-route-header): such a request, when no rule routed it, goes to
// that hop before the router's routes and the virtual's pool are looked
// at, as a rule's `route host` would send it.
type NextHopper interface {
	NextHop(m *Message) (netip.AddrPort, bool)
}

// nextHop is the connection to the hop request m names (ok false: it
// names none, or its protocol names no hops).
func (s *Session) nextHop(m *Message) (o *outgoing, ok bool, err error) {
	nh, is := s.r.cfg.Proto.(NextHopper)
	if !is || m.Answer {
		return nil, false, nil
	}
	a, is := nh.NextHop(m)
	if !is {
		return nil, false, nil
	}
	o, err = s.conn(&Peer{Name: "host " + a.String(), Host: a, Conns: 1}, m)
	return o, true, err
}
