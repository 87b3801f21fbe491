package mblbvs

import (
	"net"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// VLAN-limited SNATs and NATs on HTTP and the other message-based
// virtuals: while a SNAT or NAT of the commit has a VLAN list
// (VirtualSnap.SNATArrival), each client's arrival interface is kept by
// its address (arrivals) for as long as the client's flow lives, and its
// server connections' source choice (sourceHeld, the HTTP/2 member
// connections, a forward proxy's own) reads it there: the engine dials
// by client address, not by flow. Without a list: one boolean test per
// client and per server connection, nothing kept.

// noteArrival keeps f's arrival interface for its server connections'
// source choice: f.Arrival, read from c when the accept did not (the
// goroutine paths; c nil: none to read). The OneConnect grouping's
// source (opts.Source, nil: none) is chosen again with it.
func (mv *VS) noteArrival(snap *state.VirtualSnap, f *mblbFlow, c *net.TCPConn, opts *mblb.ClientOptions) {
	if !snap.SNATArrival {
		return
	}
	if f.Arrival == 0 && c != nil {
		rawsock.Control(c, func(fd int) error { f.Arrival = int32(rawsock.ArrivalIf(fd)); return nil })
	}
	if f.Arrival == 0 {
		return
	}
	mv.arrivals.Store(f.Client, f.Arrival)
	f.arrivalKept = true
	if opts != nil {
		from := snap.Cfg.Destination
		// The client's ltm snat object may be automap only on this
		// interface (its VLAN list): the mark is decided again.
		if opts.ViaLocal = viaLocal(snap, f.Client, f.Local, int(f.Arrival)); opts.ViaLocal {
			from = f.Local
		}
		opts.Source = state.SNATSourceUncountedOn(mv.vs, snap, f.Client, from, snap.Cfg.Destination, nil, snap.Pool, int(f.Arrival)).Addr()
	}
}

// forgetArrival drops what noteArrival kept for f, at its end.
func (mv *VS) forgetArrival(f *mblbFlow) {
	if f.arrivalKept {
		mv.arrivals.CompareAndDelete(f.Client, f.Arrival)
	}
}

// arrival is the arrival interface of the client at client for its
// server connection's source choice (state.SNATSourceHeldOn); 0 when not
// known (no VLAN list in the commit, a connection no client opened).
func (mv *VS) arrival(snap *state.VirtualSnap, client netip.AddrPort) int {
	if !snap.SNATArrival || !client.IsValid() {
		return 0
	}
	if v, ok := mv.arrivals.Load(client); ok {
		return int(v.(int32))
	}
	return 0
}
