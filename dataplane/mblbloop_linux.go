//go:build linux

package dataplane

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/state"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/mblb"
)

// Message-balanced clients on the event loops: when a virtual's engine can
// run there (mblb.Engine.Loopable: no HTTP framing, no exclusive
// OneConnect), the loop that accepts a client keeps it, and the engine
// serves its messages and server connections on that loop's thread.

// dialFD is the engine's DialFD: a non-blocking connect with the
// virtual's SNAT, keeping the client's port when it is free, as dial does.
func (mv *mblbVS) dialFD() func(netip.AddrPort, mblb.Member) (int, bool, netip.AddrPort, error) {
	return func(client netip.AddrPort, m mblb.Member) (int, bool, netip.AddrPort, error) {
		snap := mv.vs.Snap.Load()
		fd, done, local, errno := rawsock.Dial(mv.source(snap, client, m.Addr), m.Addr)
		if errno != 0 {
			return -1, false, netip.AddrPort{}, errno
		}
		return fd, done, local, nil
	}
}

// startMBLB gives a newly accepted (non-blocking) client of a
// message-balanced virtual to its engine, on this loop.
func (lr *loopRT) startMBLB(vs *state.Virtual, mv *mblbVS, fd int, client, local netip.AddrPort) {
	snap := vs.Snap.Load()
	if !vs.Admit(snap, client) {
		rawsock.Reset(fd) // disabled virtual, foreign source or the limit: reset
		return
	}
	rawsock.SetNoDelay(fd)
	f, opts := mv.newFlow(snap, client, local)
	f.sess = mv.eng.NewLoopSession(lr.Loop, fd, client, opts, f.finish)
	s := f.sess
	f.Closer = func(reset bool) { s.Close(reset) }
	lr.p.table.Add(&f.Flow)
	if f.rr != nil && !f.rr.accepted() {
		return // closed: the session's end runs finish
	}
	s.Start()
}
