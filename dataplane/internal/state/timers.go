package state

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// FlowIdle is the idle timeout a new flow of the virtual gets, the
// client having reached local: the virtual's protocol profile's (Idle),
// unless the timer policy of its service-policy has a rule for the
// flow's protocol and destination port (dataplane/timerpol). Chosen once
// per flow, at open; a virtual without one pays a nil check.
//
// [M] The destination port is the one the client reached (local), so a
// virtual on a port list or every port, and one with translate-port
// disabled, match the client's destination port; the member's port after
// translation plays no part.
func (s *VirtualSnap) FlowIdle(local netip.AddrPort) time.Duration {
	if s.Cfg.Timers == nil {
		return s.Idle
	}
	return s.timerIdle(local)
}

func (s *VirtualSnap) timerIdle(local netip.AddrPort) time.Duration {
	proto := 6
	if s.Cfg.Protocol == config.ProtoUDP {
		proto = 17
	}
	if d, ok := s.Cfg.Timers.Idle(proto, local.Port()); ok {
		return d
	}
	return s.Idle
}

// RelatedIdle is the idle timeout of a flow of protocol proto that a
// rule's listen opened for one of the virtual's connections, reached on
// port of the listener: the rule of the virtual's timer policy for them,
// else def (the relay's own default). A relay is the virtual's flow, so
// the virtual's policy times it [M: as a TCP related connection, matched
// on the port the peer reached]; without a policy, a nil check.
func (s *VirtualSnap) RelatedIdle(proto int, port uint16, def time.Duration) time.Duration {
	if s.Cfg.Timers == nil {
		return def
	}
	if d, ok := s.Cfg.Timers.Idle(proto, port); ok {
		return d
	}
	return def
}
