package mblbvs

import "net/netip"

// cloneRequest is the engine's Clone: each request of a virtual with
// clone pools goes to a member of each clone pool chosen for it, on a
// connection of its own (dataplane/clone), which ends once the request is
// written. Without clone pools it costs the snapshot's load.
func (mv *VS) cloneRequest(_ netip.AddrPort, received, sent []byte) {
	snap := mv.vs.Snap.Load()
	if snap == nil || snap.Clone == nil {
		return
	}
	f := snap.Clone.Start()
	if f == nil {
		return
	}
	f.Client(received)
	f.Server(sent)
	f.Close()
}
