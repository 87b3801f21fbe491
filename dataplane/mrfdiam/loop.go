package mrfdiam

import (
	"bytes"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// Loop detection (RFC 6733 6.1.3, 6.7.1): the Route-Record AVP and the
// answer a looping request gets.
const (
	avpRouteRecord     = 282
	resultLoopDetected = 3005 // DIAMETER_LOOP_DETECTED
)

// looped says whether request m already passed this virtual: one of its
// Route-Records is the virtual's origin-host.
func (s *Session) looped(m diammsg.Msg) bool {
	me := []byte(s.OriginHost)
	found := false
	m.Each(func(a diammsg.AVP) bool {
		if a.Code == avpRouteRecord && a.Vendor == 0 && bytes.EqualFold(a.Data, me) {
			found = true
			return false
		}
		return true
	})
	return found
}

// routeRecord appends to the request m as it leaves (in bufs[i]) the
// Route-Record of the peer it came from, the request's Origin-Host as
// it arrived (from) [M: openltm reads the adjacent peer's identity from
// the request rather than from that peer's capabilities exchange]; it
// returns the message and the buffer to use next.
func (s *Session) routeRecord(bufs *[2][]byte, i int, m, from diammsg.Msg) (diammsg.Msg, int) {
	oh := from.Get(diammsg.AVPOriginHost)
	if len(oh) == 0 {
		return m, i
	}
	bufs[i] = m.Insert(bufs[i][:0], avpRouteRecord, diammsg.AVPFlagMandatory, 0, oh)
	return diammsg.Msg{Raw: bufs[i]}, i ^ 1
}
