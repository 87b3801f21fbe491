package mrf

import (
	"errors"
	"net/netip"
)

// What the MR:: commands that act on a client connection's own settings
// and on its router's peer connections (MR::prime, MR::ignore_peer_port,
// MR::always_match_port, MR::connect_back_port,
// MR::equivalent_transport) change. A rule's setting lasts as long as
// the connection; a connection whose rules set nothing costs nothing
// more on the message path.

// Prime opens p's connections before any message needs them (MR::prime):
// each of its number-connections, shared ones on the router, a
// per-client peer's on s (nil: a per-client peer is left alone, there
// being no client to own them). It returns at once; the connections
// open in the background, as a message routed to p would open them, and
// one already open is left as it is. A prime that cannot connect
// counts as a connection failure and nothing else [M: F5 documents the
// command, not its failures].
func (r *Router) Prime(p *Peer, s *Session) error {
	if p == nil {
		return errNoRoute
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return errors.New("router closed")
	}
	perClient := p.Mode == PerClient || r.cfg.stuck()
	if perClient && s == nil {
		return errors.New("a per-client peer is primed from a client connection")
	}
	if s == nil {
		s = &Session{r: r}
	}
	go func() {
		for i := range max(p.Conns, 1) {
			k := connKey{peer: p.Name, instance: i}
			s.mu.Lock()
			r.mu.Lock()
			var o *outgoing
			if perClient {
				o = s.own[k]
			} else {
				o = r.shared[k]
			}
			r.mu.Unlock()
			s.mu.Unlock()
			if o != nil {
				continue
			}
			s.conn(p, &Message{Instance: i})
		}
	}()
	return nil
}

// SetPortMatch sets how a message routed to a host (MR::message route
// host) finds an open connection: ignore (MR::ignore_peer_port) takes
// one to the host's address whatever its port; always
// (MR::always_match_port) wants the port too, whatever ignore says.
func (s *Session) SetPortMatch(ignore, always bool) {
	s.mu.Lock()
	s.ignorePort, s.matchPort = ignore, always
	s.mu.Unlock()
}

// PortMatch is what SetPortMatch set.
func (s *Session) PortMatch() (ignore, always bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ignorePort, s.matchPort
}

// anyPort is the open shared connection to m's host's address on any
// port, for a session that ignores the peer port (nil: none, or the
// session matches ports).
func (s *Session) anyPort(m *Message) *outgoing {
	s.mu.Lock()
	ignore := s.ignorePort && !s.matchPort
	s.mu.Unlock()
	if !ignore {
		return nil
	}
	want := m.RouteHost.Addr().Unmap()
	r := s.r
	r.mu.Lock()
	var found *outgoing
	for _, o := range r.shared {
		if o.addr.Addr().Unmap() == want && !o.isDead() {
			found = o
			break
		}
	}
	r.mu.Unlock()
	if found == nil {
		return nil
	}
	m.Peer, m.Member = found.key.peer, found.addr
	r.C.ConnsReused.Add(1)
	return found
}

// SetConnectBackPort is MR::connect_back_port PORT: the port an answer
// due to the session's client goes to once its connection has ended
// and the router connects back to it (0: the client's own port).
func (s *Session) SetConnectBackPort(port uint16) {
	s.mu.Lock()
	s.backPort = port
	s.mu.Unlock()
}

// ConnectBack is where an answer due to the session's client goes once
// its flow has ended: client with its port replaced by
// MR::connect_back_port's, when a rule set one.
func (s *Session) ConnectBack(client netip.AddrPort) netip.AddrPort {
	s.mu.Lock()
	p := s.backPort
	s.mu.Unlock()
	if p == 0 {
		return client
	}
	return netip.AddrPortFrom(client.Addr(), p)
}

// ConnectBackPort is what SetConnectBackPort set (0: none).
func (s *Session) ConnectBackPort() uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backPort
}

// SetEquivalent is MR::equivalent_transport: the transports whose
// connections the session's messages may use as their own's. [M: a
// peer's connections are kept by peer, not by transport, in openltm, so
// a connection one transport made already serves every message routed
// to its peer; the list is kept for the rules to read.]
func (s *Session) SetEquivalent(ts []string) {
	s.mu.Lock()
	s.equiv = append([]string(nil), ts...)
	s.mu.Unlock()
}

// Equivalent is what SetEquivalent set.
func (s *Session) Equivalent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.equiv...)
}
