//go:build linux

package mblbvs

import (
	"net/netip"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/synhdr"
)

// Message-balanced clients on the event loops: when a virtual's engine can
// run there (Loopable: no exclusive OneConnect pool of rule framing), the loop
// that accepts a client keeps it, and the engine serves its messages and
// server connections on that loop's thread.

// Loopable reports whether the engine's clients may run on the event loop
// that accepts them (mblb.Engine.Loopable).
// An explicit proxy's clients stay on goroutines (fwdproxy.go).
// So do a virtual's with an lsn pool, or whose rules steer translations
// (LSN::pool), whose member connections are made from translations
// (lsn.go).
func (mv *VS) Loopable() bool {
	if snap := mv.vs.Snap.Load(); snap != nil && (snap.LSN != nil || irules.Program(snap.Cfg.Rules).SteersLSN()) {
		return false
	}
	return mv.fwd == nil && mv.eng.Loopable()
}

// dialFD is the engine's DialFD: a non-blocking connect with the
// virtual's SNAT, keeping the client's port when it is free, as dial does.
func (mv *VS) dialFD() func(netip.AddrPort, mblb.Member) (int, bool, netip.AddrPort, error) {
	return func(client netip.AddrPort, m mblb.Member) (int, bool, netip.AddrPort, error) {
		snap := mv.vs.Snap.Load()
		h := mv.sourceHeld(snap, client, m) // snathold.go
		if h.Err != nil {
			return -1, false, netip.AddrPort{}, refused(h.Err) // snathold.go
		}
		var fd int
		var done bool
		var local netip.AddrPort
		var errno syscall.Errno
		var release func()
		if m.Ref == nil && mv.env.Pass != nil {
			// A node the rule named (maybe computed): passed over by
			// the steering until its connect is done (passedUntil).
			release = mv.env.Pass(m.Addr, false)
		}
		if h.Strict { // source-port preserve-strict: exactly the client's port, or no connection (snathold.go)
			fd, done, errno = rawsock.DialSideExact(h.Src, m.Addr, snap.Cfg.ServerTCP)
			local = h.Src
		} else {
			fd, done, local, errno = rawsock.DialSide(h.Src, m.Addr, snap.Cfg.ServerTCP)
		}
		if release != nil {
			mv.passedUntil(snap, release, done || errno != 0)
		}
		if errno != 0 {
			if h.Hold != nil {
				h.Hold.Release()
			}
			if h.Strict && (errno == syscall.EADDRINUSE || errno == syscall.EADDRNOTAVAIL) {
				return -1, false, netip.AddrPort{}, refusedPort
			}
			return -1, false, netip.AddrPort{}, errno
		}
		if h.Hold != nil {
			if !local.IsValid() {
				local = rawsock.Sockname(fd)
			}
			mv.holdSNAT(local, m.Addr, h.Hold) // the engine's leg is to m.Addr (attachFD)
		}
		serverFDOpts(m, fd) // tcpopts.go
		return fd, done, local, nil
	}
}

// passedUntil ends a node's pass (release) once its non-blocking connect
// is over: at once when it is (done), else after the connect timeout,
// by which the event loop has the connection or has given up [M: the
// loop does not report the handshake's end here; the pass, bounded by
// the timeout, also lets a client's SYN to that destination through
// meanwhile].
func (mv *VS) passedUntil(snap *state.VirtualSnap, release func(), done bool) {
	if done {
		release()
		return
	}
	d := snap.Cfg.ServerTCP.Timeout(mv.env.ConnectTimeout)
	if d <= 0 {
		d = 5 * time.Second
	}
	time.AfterFunc(d, release)
}

// StartOnLoop gives a newly accepted (non-blocking) client of the
// virtual to its engine, on loop, from loop's thread (see Loopable). It
// reports whether the client was taken; ended then runs on loop once the
// client's socket is closed, however the session ends.
func (mv *VS) StartOnLoop(loop *evloop.Loop, fd int, client, local netip.AddrPort, ended func()) bool {
	vs := mv.vs
	snap := vs.Snap.Load()
	ok, _, ifx := vs.AdmitArrival(snap, client, local, func() int { return rawsock.ArrivalIf(fd) })
	if !ok {
		mv.refuse(snap, fd, client, local, ifx) // disabled virtual, foreign source or the limit
		return false
	}
	rawsock.SetNoDelay(fd)
	if s := snap.Cfg.ClientTCP; s != nil {
		s.Apply(fd) // tcpopts.go
	}
	f, opts := mv.newFlow(snap, client, local)
	f.Arrival = int32(ifx)
	mv.noteArrival(snap, f, nil, &opts) // arrival.go
	if snap.SYN && f.rr != nil {
		f.rr.syn = synhdr.Read(fd) // rules.go
	}
	f.ended = ended
	f.sess = mv.eng.NewLoopClientConn(loop, fd, client, opts, f.finish)
	s := f.sess
	f.End = s
	mv.env.Table.Add(&f.Flow)
	if f.rr != nil && !f.rr.accepted() {
		return true // closed: the session's end runs finish
	}
	s.Start()
	return true
}

// refuse closes a client the virtual did not admit: with a reset, which
// is logged while tm.rstcause.log is on, unless this second's resets are
// over the reject rate (rstcause.Log.Refuse); then plainly.
func (mv *VS) refuse(snap *state.VirtualSnap, fd int, client, local netip.AddrPort, ifx int) {
	if snap.Discards(client, local, ifx) || !mv.env.Rst.Refuse() { // a packet filter's discard, or over the rate
		rawsock.CloseQuietly(fd)
		return
	}
	if mv.env.Rst.On() {
		mv.env.Rst.Reset(rstArea, local, client, snap.RefusedCause(client))
	}
	rawsock.Reset(fd)
}
