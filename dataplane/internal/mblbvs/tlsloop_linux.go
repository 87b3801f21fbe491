//go:build linux

package mblbvs

import (
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/dataplane/tlsloop"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// TLS clients of an HTTP (message-balanced) virtual on the event loops.
// When the virtual's only TLS is a client-ssl profile, the client's
// CLIENT_ACCEPTED, handshake, CLIENTSSL_CLIENTCERT and CLIENTSSL_HANDSHAKE
// run on a goroutine over the net package (the handshake within the
// profile's handshake-timeout), and the session then moves to the loop
// chosen for the client, where the engine's loop session reads and writes
// the client's plaintext through it (mblb.ClientConn.SetTLS) and runs the
// rules' other events as on a plaintext virtual; SSL:: commands read the
// session (mblbRules.SSL; with rules the handshake runs over a
// tlsprof.HelloConn, which keeps the hellos' session IDs for
// SSL::sessionid), and SSL::disable in CLIENT_ACCEPTED starts the client
// on the loop in plaintext. Virtuals with server-ssl keep the goroutine
// front stage (tls.go).

// LoopTLS reports whether clients of the virtual, configured as snap
// says, run on the event loops once handshaken.
func (mv *VS) LoopTLS(snap *state.VirtualSnap) bool {
	t := snap.Cfg.TLS
	// (CLIENTSSL_CLIENTHELLO runs inside the handshake, which Serve's
	// front stage does.)
	p := irules.Program(snap.Cfg.Rules)
	return t != nil && t.Client != nil && t.Server == nil && !t.AllowNonSSL && mv.Loopable() && snap.Cfg.HTTP2 == nil &&
		(p == nil || !p.Handles(rules.ClientSSLClientHello) && !usesHandshake(p))
}

// Phases of a handshake, for a close from outside.
const (
	hsRunning int32 = iota
	hsDone
	hsKilled
)

// HandshakeForLoop serves a newly accepted (non-blocking) client of a
// LoopTLS virtual: on the calling goroutine, it is admitted, listed and
// handshaken, then its session starts on loop. ended runs once the
// client's socket is closed, however the client ends.
func (mv *VS) HandshakeForLoop(loop *evloop.Loop, fd int, client, local netip.AddrPort, ended func()) {
	vs := mv.vs
	snap := vs.Snap.Load()
	if !mv.LoopTLS(snap) { // the configuration changed meanwhile
		rawsock.Reset(fd)
		ended()
		return
	}
	ok, _, ifx := vs.AdmitArrival(snap, client, local, func() int { return rawsock.ArrivalIf(fd) })
	if !ok {
		mv.refuse(snap, fd, client, local, ifx) // disabled virtual, foreign source or the limit (loop_linux.go)
		ended()
		return
	}
	hc, err := tlsloop.DupConn(fd)
	if err != nil {
		rawsock.Reset(fd)
		vs.Leave(snap.Addr)
		ended()
		return
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
	var phase atomic.Int32
	var killReset atomic.Bool
	f.Closer = func(reset bool) {
		if phase.Load() == hsRunning {
			killReset.Store(reset)
			if phase.CompareAndSwap(hsRunning, hsKilled) {
				hc.SetDeadline(time.Unix(1, 0)) // the handshake fails now
				return
			}
		}
		s.Close(reset)
	}
	mv.env.Table.Add(&f.Flow)
	f.loopFront = true
	if f.rr != nil && !f.rr.accepted() { // before the handshake, as on BIG-IP
		hc.Close() // fd stays: the session's end closes it and runs finish
		return
	}
	if f.loopClear { // SSL::disable in CLIENT_ACCEPTED: plaintext
		hc.Close()
		if !phase.CompareAndSwap(hsRunning, hsDone) {
			s.Close(killReset.Load())
			return
		}
		loop.Post(s.Start)
		return
	}
	t := snap.Cfg.TLS
	if f.clientTLS != nil { // SSL::profile in CLIENT_ACCEPTED
		t = f.clientTLS
	}
	hc.SetDeadline(time.Now().Add(t.Handshake()))
	var under net.Conn = hc
	cfg := t.Client
	if f.rr != nil { // the hellos' session IDs, for SSL::sessionid
		h := tlsprof.NewHelloConn(hc, true)
		under, cfg = h, f.rr.keyLog(cfg, h)
	}
	under, cfg = t.WatchClient(under, cfg)
	if f.sslTag != nil { // ssl persistence: the session's name (persist.go)
		cfg = tlsprof.TagSessions(cfg, f.sslTag)
	}
	lc := tlsloop.Server(under, cfg)
	lc.LimitRecords(t.ClientMaxRecord)
	err = snap.NoteClientTLS(lc.TLS(), t.ClientHandshake(lc.TLS().Handshake), &f.cssl)
	hc.Close() // fd stays
	if err != nil {
		mv.env.Rst.Reset(rstArea, local, client, rstcause.TLSHandshake)
		s.Close(true)
		return
	}
	f.loopTLS = lc.TLS()
	f.noteSession()
	if !f.clientSSLEvents(f.loopTLS) { // the rule ended the client
		return
	}
	if !phase.CompareAndSwap(hsRunning, hsDone) {
		s.Close(killReset.Load())
		return
	}
	lc.Detach(fd)
	loop.Post(func() {
		s.SetTLS(lc)
		s.Start()
	})
}
