package mrfdiam

import (
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// Leaving says whether a message a peer connection sent is a
// Disconnect-Peer-Request: the peer is leaving (the virtual answers it
// with a DPA and closes the connection).
func (s *Session) Leaving(data []byte) bool {
	m, err := diammsg.Parse(data)
	return err == nil && m.Request() && m.Code() == diammsg.CmdDisconnectPeer
}

// OnLeave is disconnect-peer-action, for a peer's DPR.
func (s *Session) OnLeave() mrf.LeaveAction { return s.OnDisconnect }

// RateLimits are the profile's message rate limits, for the router
// (mrf.RateLimiter): past a major limit a request is answered
// DIAMETER_TOO_BUSY (LostAnswer), past a critical one it is dropped.
func (s *Session) RateLimits() (ingress, egress mrf.RateLimits) { return s.Ingress, s.Egress }
