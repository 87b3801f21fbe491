package gslb

import (
	"net"
	"net/netip"

	"github.com/openltm/openltm/rules"
)

// Suspended queries: a rule calling `after` (DNS_REQUEST, DNS_RESPONSE,
// LB_SELECTED, LB_FAILED) holds its query's answer back for the delay,
// as BIG-IP suspends the event. A UDP reader answers inline, so while the
// plan has such a rule each UDP query that reaches the rules goes to a
// goroutine of its own, which answers it over the listener's socket when
// its rules are done: the reader goes on with the next datagram. TCP
// queries already have a goroutine per connection.

// maxSuspended bounds the UDP queries in goroutines of their own at
// once; a query beyond it is dropped (counted), as a server out of
// resources does, rather than held up behind the others [M].
const maxSuspended = 4096

func usesAfter(rs []*rules.Rule) bool {
	for _, r := range rs {
		if r.UsesAfter() {
			return true
		}
	}
	return false
}

// answerAsync answers one datagram in a goroutine of its own and sends
// the answer from conn to from. in is the reader's buffer: it is copied.
func (s *Server) answerAsync(conn *net.UDPConn, in []byte, from netip.AddrPort, k listenerKey) {
	if s.suspended.Add(1) > maxSuspended {
		s.suspended.Add(-1)
		s.stats.queries.Inc(0)
		s.stats.dropped.Inc(0)
		return
	}
	q := append([]byte(nil), in...)
	if !s.goBackground(func() {
		defer s.suspended.Add(-1)
		resp, send := s.answerPacked(q, from, make([]byte, 0, 2048), k)
		if send {
			conn.WriteToUDPAddrPort(resp, from)
		}
	}) {
		s.suspended.Add(-1)
	}
}
