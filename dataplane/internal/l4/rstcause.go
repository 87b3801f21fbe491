package l4

import (
	"errors"
	"net"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// rstArea is the code location the L4 paths print in their reset lines.
const rstArea = "l4"

// because records why the flow is about to be reset, or may be: the
// last connect's failure stands until a connect succeeds (clearCause).
func (fl *flow) because(c rstcause.Cause) { fl.why.Store(uint32(c)) }

// orBecause records c unless a cause is already known: a pool that ran
// dry after its members refused says why they did.
func (fl *flow) orBecause(c rstcause.Cause) { fl.why.CompareAndSwap(0, uint32(c)) }

// clearCause forgets the failures of the connects before: a reset from
// now on is the peer's, passed on, unless a new cause is given.
func (fl *flow) clearCause() { fl.why.Store(0) }

// dialCause is the cause of a goroutine flow's failed connect.
func dialCause(err error) rstcause.Cause {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return rstcause.ConnectTimeout
	}
	return rstcause.ConnectRefused
}

// peerReset records that the peer on one side (the member's, server
// true, or the client's) reset the flow or failed under it, unless a
// cause is known already: the ends that follow pass its reset on to the
// other side. Only the log needs it, so it costs one atomic load while
// the log is off.
func (fl *flow) peerReset(server bool) {
	if !fl.e.env.Rst.On() {
		return
	}
	c := rstcause.PeerReset
	if server {
		c |= rstcause.Peer // the client's reset passes on the peer flow's
	}
	fl.why.CompareAndSwap(0, uint32(c))
}

// rst reports the resets of a flow's end with the cause recorded, if
// any: the client's (client true) and the member's (server true, once a
// server side was established). A cause recorded on the member's side
// (rstcause.Peer) prints "{peer}" on the client's line and the other
// causes on the member's; the side whose own reset is passed on is sent
// none, and has no line. While the log is off this is one atomic load.
func (fl *flow) rst(client, server bool) {
	if !fl.e.env.Rst.On() {
		return
	}
	c := rstcause.Cause(fl.why.Load())
	if c == rstcause.None {
		return
	}
	if client && c != rstcause.PeerReset {
		fl.e.env.Rst.Reset(rstArea, fl.Local, fl.Client, c)
	}
	if server && c != rstcause.PeerReset|rstcause.Peer {
		if sc := fl.srv.Load(); sc != nil {
			fl.e.env.Rst.Reset(rstArea, sc.leg.Client, sc.leg.Server, c^rstcause.Peer)
		}
	}
}

// refused reports the reset of a client the virtual did not admit
// (state.VirtualSnap.RefusedCause, worked out only while the log is on),
// and whether it is reset: not when this second's resets are over the
// reject rate (rstcause.Log.Refuse), or when a packet filter discards
// it: then the site closes it plainly.
func (e *Engine) refused(snap *state.VirtualSnap, client, local netip.AddrPort, ifx int) bool {
	if snap.Discards(client, local, ifx) {
		return false // a packet filter's discard: closed without a reset
	}
	if !e.env.Rst.Refuse() {
		return false
	}
	if e.env.Rst.On() {
		e.env.Rst.Reset(rstArea, local, client, snap.RefusedCause(client))
	}
	return true
}
