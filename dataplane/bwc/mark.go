package bwc

import (
	"net"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// MarkSide is the socket settings of a marking: IP_TOS (and the IPv6
// traffic class) and SO_PRIORITY where not pass-through; ok false when
// both are, and the sockets are left as they are.
func MarkSide(m config.BWCMark) (s sockopt.Side, ok bool) {
	if m.TOS >= 0 {
		s.TOS, s.SetTOS = uint8(m.TOS), true
	}
	if m.QoS >= 0 {
		s.Priority, s.SetPriority = m.QoS, true
	}
	return s, s.SetTOS || s.SetPriority
}

// MarkConn marks c's packets as the flow's marking says (ip-tos and
// link-qos of its policy or category, or BWC::mark's); a nil b, or
// pass-through, leaves c as it is.
func (b *Bucket) MarkConn(c net.Conn) {
	if b == nil {
		return
	}
	s, ok := MarkSide(b.Mark())
	if !ok {
		return
	}
	rawsock.Control(c, func(fd int) error {
		s.Apply(fd) // the zero Side's other settings change nothing
		return nil
	})
}
