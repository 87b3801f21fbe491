package mrf

import "net/netip"

// LeaveAction is what becomes of a peer's member once the peer says it
// is leaving (a Diameter session profile's disconnect-peer-action, on a
// peer's Disconnect-Peer-Request).
type LeaveAction uint8

// The leave actions: LeaveNone leaves the member as it is (a new request
// may open a connection to it again at once); LeaveDisable disables it
// (no new connections but those persistence or a rule names);
// LeaveOffline takes it offline (no new connections at all).
const (
	LeaveNone LeaveAction = iota
	LeaveDisable
	LeaveOffline
)

// PeerLeaver is a protocol whose peers say they are leaving before they
// close (Diameter's DPR, answered by the protocol itself through Local).
type PeerLeaver interface {
	// Leaving says whether data, a message a peer connection sent that
	// the protocol handled, is the peer saying it leaves.
	Leaving(data []byte) bool
	// OnLeave is what becomes of the peer's member then.
	OnLeave() LeaveAction
}

// MemberHolder is an Env that can take a pool's member out of load
// balancing as LeaveDisable and LeaveOffline ask.
type MemberHolder interface {
	HoldMember(pool string, addr netip.AddrPort, a LeaveAction)
}

// left runs as peer connection o closes after a message its protocol
// handled: when that message was the peer saying it leaves, its member
// is held as the protocol's leave action says. Its requests in flight
// are handled as when any peer connection closes (Config.OnLost).
func (o *outgoing) left(data []byte) {
	pl, ok := o.r.cfg.Proto.(PeerLeaver)
	if !ok || !pl.Leaving(data) {
		return
	}
	a := pl.OnLeave()
	mh, ok := o.r.env.(MemberHolder)
	if a == LeaveNone || !ok || !o.addr.IsValid() {
		return
	}
	pool := o.r.cfg.DefaultPool
	if o.key.peer != "" {
		p := o.r.Peer(o.key.peer)
		if p == nil || p.Pool == "" {
			return // a host a rule named: no member to hold
		}
		pool = p.Pool
	}
	mh.HoldMember(pool, o.addr, a)
}
