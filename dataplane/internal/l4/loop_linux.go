//go:build linux

package l4

import (
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/mblbvs"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/synhdr"

	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/tlsloop"
)

// On Linux every listener is a raw non-blocking socket registered in each
// of the plane's event loops (one per processor; the kernel wakes one loop
// per pending connection). A plain L4 flow — no rule handling proxy
// events, no message-based balancing — then lives entirely on the loop
// that accepted it (loopFlow): its two sockets are read when readable and
// written at once, with no goroutine of its own. A client-ssl flow of an
// otherwise plain virtual, and a client of a client-ssl HTTP virtual
// without rules, join a loop the same way once a goroutine has done the
// TLS handshake (tlsloop_linux.go). Any other flow is handed
// to the net package and served by goroutines (proxy.go, ruleflow.go, and
// dataplane/internal/mblbvs), which is where rules and message framing
// live.

// loopSet is the plane's event loops, started with the first listener.
type loopSet struct {
	ls []*loopRT
	wg sync.WaitGroup
}

// loopRT is one event loop and the plain flows it runs.
type loopRT struct {
	*evloop.Loop
	e     *Engine
	flows []*loopFlow
	pipes []*[2]int // empty pipes kept for the next bulk transfer
	// load is the client connections the loop serves (plain flows and
	// clients of message-balanced virtuals), counted from the moment
	// one is given to it, so that a burst of accepts spreads (pickLoop).
	load atomic.Int32
	// unload is load.Add(-1), made once: the end of a loop client.
	unload func()
}

// sparePipes bounds the empty pipes a loop keeps.
const sparePipes = 64

// getPipe returns an empty pipe, nil if none can be made (then the
// buffer goes on).
func (lr *loopRT) getPipe() *[2]int {
	if n := len(lr.pipes); n > 0 {
		p := lr.pipes[n-1]
		lr.pipes = lr.pipes[:n-1]
		return p
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return nil
	}
	return &fds
}

// putPipe keeps an empty pipe for later, or closes it.
func (lr *loopRT) putPipe(p *[2]int) {
	if len(lr.pipes) < sparePipes {
		lr.pipes = append(lr.pipes, p)
		return
	}
	closePipe(p)
}

func closePipe(p *[2]int) {
	unix.Close(p[0])
	unix.Close(p[1])
}

// loopTick is how often a loop checks its flows' idle and connect timers.
const loopTick = 200 * time.Millisecond

// ensureLoops starts the loops once. The caller (the plane, in Apply)
// serializes it.
func (e *Engine) ensureLoops() error {
	if e.loops.ls != nil {
		return nil
	}
	n := evloop.Procs()
	ls := make([]*loopRT, 0, n)
	for i := 0; i < n; i++ {
		el, err := evloop.New()
		if err != nil {
			for _, lr := range ls {
				lr.Stop(false)
			}
			return err
		}
		el.SetBusyPoll(e.env.BusyPoll)
		lr := &loopRT{Loop: el, e: e}
		lr.unload = func() { lr.load.Add(-1) }
		ls = append(ls, lr)
	}
	e.loops.ls = ls
	for _, lr := range ls {
		e.loops.wg.Add(1)
		go func() {
			defer e.loops.wg.Done()
			lr.Run(loopTick, lr.tick)
		}()
	}
	return nil
}

// stopLoops ends the loops after the work already posted to them (the
// aborts of Close) has run.
func (e *Engine) stopLoops() {
	for _, lr := range e.loops.ls {
		lr.Stop(true)
	}
	e.loops.wg.Wait()
	for _, lr := range e.loops.ls {
		for _, pp := range lr.pipes {
			closePipe(pp)
		}
		lr.pipes = nil
	}
}

// listenSys is a listener's socket and its registration in each loop.
type listenSys struct {
	fd  int
	acc []*acceptor // by loop
}

// Listen binds and listens on ap (accepting starts with Start), with
// Multipath TCP when mptcp is true (tcp profile mptcp enabled, client
// side) and the kernel has it.
func (e *Engine) Listen(ap netip.AddrPort, mptcp bool) (*Listener, error) {
	if err := e.ensureLoops(); err != nil {
		return nil, err
	}
	fd, err := rawsock.Listen(ap, mptcp)
	if err != nil {
		return nil, err
	}
	l := &Listener{Addr: ap, MPTCP: mptcp}
	l.fd = fd
	l.acc = make([]*acceptor, len(e.loops.ls))
	return l, nil
}

// CloseUnstarted closes a listener that never started (a commit that
// failed to bind another address).
func (l *Listener) CloseUnstarted() { unix.Close(l.fd) }

// ListenerFD is l's socket, for the every-port steering's socket map
// (dataplane/anyport.go); it stays l's.
func ListenerFD(l *Listener) int { return l.fd }

// Start registers ls in every loop: they accept from now on.
func (e *Engine) Start(ls []*Listener) {
	if len(ls) == 0 {
		return
	}
	for i, lr := range e.loops.ls {
		lr.Call(func() {
			for _, l := range ls {
				a := &acceptor{l: l, lr: lr}
				l.acc[i] = a
				a.arm()
			}
		})
	}
}

// Stop takes ls out of every loop, then closes them: no loop can
// be inside accept(2) on a descriptor number that is being reused.
func (e *Engine) Stop(ls []*Listener) {
	if len(ls) == 0 {
		return
	}
	for i, lr := range e.loops.ls {
		lr.Call(func() {
			for _, l := range ls {
				if a := l.acc[i]; a != nil {
					a.stopped = true
					a.disarm()
				}
			}
		})
	}
	for _, l := range ls {
		unix.Close(l.fd)
	}
}

// acceptor is one listener's registration in one loop.
type acceptor struct {
	l       *Listener
	lr      *loopRT
	tok     evloop.Token
	armed   bool
	stopped bool
}

func (a *acceptor) arm() {
	if a.armed || a.stopped {
		return
	}
	tok, err := a.lr.Add(a.l.fd, evloop.In|evloop.Exclusive, a, 0)
	if err != nil {
		a.lr.e.env.Log.Warn("cannot watch listener", "addr", a.l.Addr.String(), "err", err)
		return
	}
	a.tok, a.armed = tok, true
}

func (a *acceptor) disarm() {
	if a.armed {
		a.lr.Remove(a.l.fd, a.tok)
		a.armed = false
	}
}

// acceptBatch bounds the connections one readiness event accepts, so that
// a flood on one listener does not starve the loop's flows.
const acceptBatch = 32

// pickLoop is the loop a connection accepted on own is served by: the one
// serving the fewest client connections, own unless that one serves at
// least two fewer (a difference of one is not worth a hand-off, which
// costs a post and often a wake-up of the other loop's thread; with
// connections of one request each it would be paid for most). Why:
// the loop that wakes first for a burst of connections (wrk opening 64,
// say) accepts them all, while the others sleep; left there, one thread
// would carry them all with the other CPUs idle. A connection given to
// another loop costs one hand-off, at its start only (HAProxy's listeners
// likewise queue each accepted connection to the least loaded thread).
func (e *Engine) pickLoop(own *loopRT) *loopRT {
	best, bl := own, own.load.Load()-1
	for _, lr := range e.loops.ls {
		if l := lr.load.Load(); l < bl {
			best, bl = lr, l
		}
	}
	return best
}

// Ready accepts pending connections: plain flows and clients of a
// loopable message-balanced virtual start on this loop, the others go to
// the net package.
func (a *acceptor) Ready(_ uint8, _ uint32) {
	for i := 0; i < acceptBatch; i++ {
		vs := a.l.VS.Load()
		alts := a.l.Alts.Load()
		snap, plain, withTLS, mv, mvTLS := a.lr.e.howServed(vs)
		flags := unix.SOCK_CLOEXEC
		if plain || withTLS || mv != nil || alts != nil {
			flags |= unix.SOCK_NONBLOCK // with alts, whichever virtual takes it (handOff's net.FileConn takes either mode)
		}
		fd, peer, errno := rawsock.Accept4(a.l.fd, flags)
		switch errno {
		case 0:
		case unix.EAGAIN:
			return
		case unix.EINTR, unix.ECONNABORTED, unix.EPROTO, unix.EPERM:
			continue
		case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
			a.pause() // out of descriptors or memory: back off a moment
			return
		default:
			return
		}
		if alts != nil { // virtuals told apart by source: the most specific holding the client
			if v := Pick(vs, alts, peer.Addr()); v != vs {
				vs = v
				snap, plain, withTLS, mv, mvTLS = a.lr.e.howServed(vs)
			}
		}
		local := a.l.Addr
		// A listener on every port (port 0, dataplane/anyport.go), or a
		// network virtual's on its port, takes the addresses and ports
		// the steering hands it: the socket knows which.
		if (plain || withTLS || mv != nil) && (!local.Addr().IsValid() || local.Addr().IsUnspecified() || local.Port() == 0 || snap.Cfg.Network.IsValid()) {
			local = rawsock.Sockname(fd)
		}
		switch {
		case vs == nil:
			rawsock.Reset(fd)
		case snap != nil && snap.Cfg.VLANs != nil && !snap.Cfg.VLANs.Admits(rawsock.ArrivalIf(fd)):
			// It came in on a VLAN the virtual is not enabled on: as if
			// no virtual listened there (BIG-IP resets the SYN; here the
			// handshake is done by then, unless the listener is bound
			// to its one interface).
			rawsock.Reset(fd)
		case withTLS:
			// The handshake runs on a goroutine; the loop takes the client
			// after it.
			to := a.lr.e.pickLoop(a.lr)
			to.load.Add(1)
			if mvTLS != nil {
				go mvTLS.HandshakeForLoop(to.Loop, fd, peer, local, to.unload)
			} else {
				go to.handshakeTLS(vs, fd, peer, local)
			}
		case plain || mv != nil:
			to := a.lr.e.pickLoop(a.lr)
			to.load.Add(1)
			if to == a.lr {
				to.startClient(vs, mv, fd, peer, local)
			} else {
				to.Post(func() { to.startClient(vs, mv, fd, peer, local) })
			}
		default:
			a.lr.e.handOff(vs, fd)
		}
	}
}

// howServed is how a connection accepted for vs is served: on the loop
// (plain, or a loopable message virtual's mv), with its TLS handshake on
// a goroutine first (withTLS; a message virtual's: mvTLS), or else
// handed off to goroutines.
func (e *Engine) howServed(vs *state.Virtual) (snap *state.VirtualSnap, plain, withTLS bool, mv, mvTLS *mblbvs.VS) {
	if vs != nil {
		snap = vs.Snap.Load()
	}
	plain = snap != nil && snap.Plain()
	withTLS = !plain && snap != nil && loopTLS(snap) // tlsloop_linux.go
	if snap != nil && snap.Cfg.MBLB != nil {
		mv = e.env.MBLB.For(vs)
		switch {
		case mv == nil:
		case snap.Cfg.TLS == nil:
			if !mv.Loopable() || snap.Cfg.HTTP2 != nil || snap.BWC != nil { // HTTP/2 clients and a bandwidth controller's (its waits block): goroutines
				mv = nil
			}
		default:
			if snap.BWC == nil && mv.LoopTLS(snap) {
				mvTLS = mv
			}
			mv = nil
		}
	}
	withTLS = withTLS || mvTLS != nil
	return snap, plain, withTLS, mv, mvTLS
}

// pause stops accepting on this loop for 5 ms.
func (a *acceptor) pause() {
	a.disarm()
	time.AfterFunc(5*time.Millisecond, func() { a.lr.Post(a.arm) })
}

// handOff gives an accepted (blocking) socket to the net package and
// serves it on goroutines.
func (e *Engine) handOff(vs *state.Virtual, fd int) {
	f := os.NewFile(uintptr(fd), "")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return
	}
	tc.SetKeepAlive(false)
	go e.serve(vs, tc)
}

// Tags of a loop flow's two sockets.
const (
	tagClient uint8 = iota
	tagServer
)

// loopDir is one direction of a loop flow: bytes read but not yet written
// (the destination was full), and whether the source's FIN was seen.
type loopDir struct {
	buf    *[]byte
	off, n int
	rdhup  bool // the source's FIN has arrived (after what is unread)
	eof    bool // FIN passed on (or about to be)
	// tlsOut: records for the client wait in the flow's TLS session
	// (down only): the client's writability edge sends them.
	tlsOut bool
	// A bulk transfer moves through a pipe with rawsock.Splice(2): the kernel's
	// zero-copy path. piped is what the pipe holds.
	pipe  *[2]int
	piped int
	// send writes buf at the end of the loop's batch, with the batch's
	// other writes (deferWrite); deferred: it is in the loop's list.
	send     dirSender
	deferred bool
	iov      [1]unix.Iovec
	// finNext: the held bytes came from a short read after the source's
	// FIN was reported, so the FIN is next (pump). edged: the source had
	// an edge while they waited, so it is read again once they are out;
	// otherwise the short read drained it, and its next edge tells.
	finNext bool
	edged   bool
	// lowered: the destination's wake-up was moved to proxy-buffer-low
	// while the direction waits for it (bufferlow_linux.go).
	lowered bool
}

// dirSender is a direction's evloop.Sender: what a short read brought
// leaves at the end of the loop's batch.
type dirSender struct {
	lf *loopFlow
	up bool
}

// pending reports bytes read from the source and not yet written.
func (d *loopDir) pending() bool { return d.buf != nil || d.piped > 0 || d.tlsOut }

// loopFlow is a plain L4 flow served by one loop. Everything but Closer
// runs on that loop's thread.
type loopFlow struct {
	flow
	lr         *loopRT
	cfd, sfd   int
	ctok, stok evloop.Token
	up, down   loopDir
	closed     bool
	connecting bool
	connStart  int64
	idx        int // in lr.flows

	// The connect in progress.
	attempt  int
	failed   []*state.Member
	cpool    *state.Pool
	cps      *state.PoolSnap
	want     netip.AddrPort // the member a rule named (first attempt)
	reserved *state.Member  // chosen and counted, not yet connected
	dst      netip.AddrPort
	local    netip.AddrPort // known source, when the port was kept
	pd       persistDecision
	persists bool
	lq       *loopQueued // its place in the pool's connection queue (connqueue_loop_linux.go)

	// A client-ssl flow (tlsloop_linux.go): its session once handshaken,
	// and the handshake's phase and connection before.
	ctls      *tlsloop.Conn
	hs        atomic.Int32
	killReset atomic.Bool
	hsConn    *net.TCPConn

	cs *closeState // the close handling's timers (tcpclose_linux.go)
	// alertAt is when close_notify went to a client-ssl client whose own
	// has not come (loop time; 0: none awaited), for the profile's
	// alert-timeout (tick).
	alertAt int64
}

// startFlow runs a newly accepted plain connection.
// startClient starts an accepted client on lr, whose load already counts
// it: a plain flow, or a client of the message-balanced virtual mv.
func (lr *loopRT) startClient(vs *state.Virtual, mv *mblbvs.VS, fd int, client, local netip.AddrPort) {
	if mv != nil {
		if !mv.StartOnLoop(lr.Loop, fd, client, local, lr.unload) {
			lr.load.Add(-1)
		}
		return
	}
	lr.startFlow(vs, fd, client, local)
}

// startFlow starts a plain flow; lr's load counts it until it ends.
func (lr *loopRT) startFlow(vs *state.Virtual, fd int, client, local netip.AddrPort) {
	snap := vs.Snap.Load()
	ok, _, ifx := vs.AdmitArrival(snap, client, local, func() int { return rawsock.ArrivalIf(fd) })
	if !ok {
		if lr.e.refused(snap, client, local, ifx) { // rstcause.go
			rawsock.Reset(fd) // disabled virtual, foreign source or the limit: reset
		} else {
			rawsock.CloseQuietly(fd) // over the reject rate
		}
		lr.load.Add(-1)
		return
	}
	lf := &loopFlow{lr: lr, cfd: fd, sfd: -1}
	pr := &lf.flow
	pr.init(lr.e, vs, snap, client, local, lf)
	pr.Flow.Arrival = int32(ifx)
	if snap.SYN {
		pr.syn = synhdr.Read(fd) // synopts.go
	}
	lr.e.env.Table.Add(&pr.Flow)
	lf.idx = len(lr.flows)
	lr.flows = append(lr.flows, lf)
	lf.start()
}

// start connects a new flow on its loop to its first member.
func (lf *loopFlow) start() {
	pr := &lf.flow
	rawsock.SetNoDelay(lf.cfd)
	if s := pr.snap.Cfg.ClientTCP; s != nil {
		s.Apply(lf.cfd) // tcpopts.go
	}
	lf.pd, lf.persists = pr.persistKey()
	lf.cpool = pr.pool
	if rs := pr.rs; rs != nil && rs.Pool != nil { // CLIENT_ACCEPTED's choice (tlsloop_linux.go)
		lf.cpool, lf.want = rs.Pool, rs.Addr
	}
	if lf.cpool != nil {
		lf.cps = lf.cpool.Snap.Load()
	}
	lf.connectNext()
}

// connectNext starts a connect to the next member the pool (or the
// persistence record) gives, as reselect-tries allows; with none left the
// client is reset.
func (lf *loopFlow) connectNext() {
	pr := &lf.flow
	if lf.cpool == nil {
		lf.fail()
		return
	}
	tries := 0
	if lf.cps != nil {
		tries = lf.cps.Cfg.ReselectTries
	}
	if lf.lq == nil && lf.attempt == 0 && queuesFirst(lf.cpool, lf.want.IsValid()) {
		if lf.queueTurn(lf.cpool, true) == queueWait {
			return
		}
		lf.flow.because(rstcause.QueueFull)
		lf.fail() // beyond the queue's depth limit
		return
	}
	for ; lf.attempt <= tries; lf.attempt++ {
		m, pool, _ := pr.choose(lf.cpool, lf.want, lf.attempt, lf.failed, &lf.pd, lf.persists)
		if m == nil {
			switch lf.queueTurn(pool, false) {
			case queueWait:
				return
			case queueRetry:
				lf.attempt--
				continue
			}
			break
		}
		lf.queueServed()
		lf.cpool, lf.cps = pool, pool.Snap.Load()
		dst := pr.target(m)
		h := pr.source(dst, pool) // proxy.go: the translation address held
		if h.Err != nil {
			m.Release()
			lf.fail() // every translation address at its connection limit
			return
		}
		var fd int
		var done bool
		var local netip.AddrPort
		var errno syscall.Errno
		if h.Strict { // source-port preserve-strict
			fd, done, errno = rawsock.DialSideExact(h.Src, dst, pr.serverSide())
			if errno == syscall.EADDRINUSE || errno == syscall.EADDRNOTAVAIL {
				lf.flow.because(rstcause.SNATPort)
				m.Release()
				lf.fail()
				return
			}
			if errno == 0 {
				local = h.Src
			}
		} else {
			fd, done, local, errno = rawsock.DialSide(h.Src, dst, pr.serverSide()) // tcpopts.go, synopts.go
		}
		if errno != 0 {
			lf.flow.because(errnoCause(errno))
			m.ConnectFailed()
			m.Release()
			lf.failed = append(lf.failed, m)
			continue
		}
		lf.sfd, lf.reserved, lf.dst, lf.local = fd, m, dst, local
		serverOpts(lf.cps, fd) // tcpopts.go
		tok, err := lf.lr.Add(fd, rawsock.Events, lf, tagServer)
		if err != nil {
			rawsock.Close(fd)
			lf.sfd, lf.reserved = -1, nil
			m.Release()
			lf.failed = append(lf.failed, m)
			continue
		}
		lf.stok = tok
		if done {
			lf.established()
			return
		}
		lf.connecting, lf.connStart = true, lf.lr.Now()
		return
	}
	lf.fail()
}

// connectFailed gives up the connect in progress and tries the next
// member.
func (lf *loopFlow) connectFailed() {
	lf.lr.Forget(lf.stok)
	rawsock.Close(lf.sfd)
	lf.sfd, lf.stok, lf.connecting = -1, 0, false
	m := lf.reserved
	lf.reserved = nil
	m.ConnectFailed()
	m.Release()
	lf.failed = append(lf.failed, m)
	lf.attempt++
	lf.connectNext()
}

// established starts copying once the server side is connected.
func (lf *loopFlow) established() {
	pr := &lf.flow
	pr.clearCause() // rstcause.go
	lf.connecting = false
	local := lf.local
	if !local.IsValid() {
		local = rawsock.Sockname(lf.sfd)
	}
	s := &pr.first
	lf.reserved.ConnectSucceeded()
	pr.opened(s, lf.reserved, lf.cpool, lf.cps, local, lf.dst, &lf.pd, lf.persists)
	lf.reserved = nil
	pr.AddLeg(&s.leg)
	pr.srv.Store(s)
	// Registering reports what the client has sent meanwhile.
	var err error
	if lf.ctok, err = lf.lr.Add(lf.cfd, rawsock.Events, lf, tagClient); err != nil {
		lf.abort(true)
		return
	}
	if lf.ctls != nil {
		// The handshake may have read the client's first records: no edge
		// will tell of them.
		lf.pump(true)
	}
}

// Ready handles the events of the flow's sockets.
func (lf *loopFlow) Ready(tag uint8, ev uint32) {
	if lf.closed {
		return
	}
	if lf.lq != nil && !lf.connecting {
		lf.queuedEvent(ev) // waiting in a connection queue
		return
	}
	if lf.connecting {
		if tag != tagServer {
			return
		}
		if ev&(evloop.Err|evloop.Hup) != 0 {
			lf.flow.because(rstcause.ConnectRefused)
			lf.connectFailed()
			return
		}
		lf.established()
		if lf.closed {
			return
		}
		// On: the same edge may carry the server's first bytes.
	}
	if ev&evloop.Err != 0 {
		lf.flow.peerReset(tag == tagServer)
		lf.abort(true) // a reset (or error) on one side resets the other
		return
	}
	up := tag == tagClient // the client's socket is the source going up
	if ev&(evloop.RdHup|evloop.Hup) != 0 {
		lf.dir(up).rdhup = true
	}
	if up && lf.ctls != nil && ev&(evloop.In|evloop.RdHup|evloop.Hup) != 0 {
		lf.ctls.Readable(lf.up.rdhup)
	}
	if ev&evloop.Out != 0 && lf.dir(!up).pending() {
		lf.flush(!up)
	}
	if !lf.closed && ev&(evloop.In|evloop.RdHup|evloop.Hup) != 0 {
		lf.pump(up)
	}
	if !lf.closed && ev&evloop.Hup != 0 && lf.dir(up).eof {
		// The peer is gone both ways; nothing more will come from it.
		lf.abort(true)
	}
}

func (lf *loopFlow) dir(up bool) *loopDir {
	if up {
		return &lf.up
	}
	return &lf.down
}

// ends returns a direction's source and destination sockets.
func (lf *loopFlow) ends(up bool) (src, dst int) {
	if up {
		return lf.cfd, lf.sfd
	}
	return lf.sfd, lf.cfd
}

// pumpReads bounds the reads one event does on a busy source, so that a
// bulk transfer shares the loop with other flows.
const pumpReads = 8

// pump reads what the source has and writes it on. A short read drained
// the socket: the next edge will tell of more. A short read with the
// peer's FIN already reported means the FIN is next: it is passed on now,
// without the read(2) that would return 0.
func (lf *loopFlow) pump(up bool) {
	d := lf.dir(up)
	if d.eof || d.pending() {
		d.edged = d.deferred
		return
	}
	if lf.ctls != nil {
		if up {
			lf.pumpTLSUp()
		} else {
			lf.pumpTLSDown()
		}
		return
	}
	if d.pipe != nil {
		lf.pumpSplice(up)
		return
	}
	src, dst := lf.ends(up)
	for i := 0; i < pumpReads; i++ {
		buf, n := lf.readSource(src, up)
		if buf == nil {
			return
		}
		if up && lf.clone != nil {
			lf.clone.Both((*buf)[:n]) // clone.go
		}
		if n < len(*buf) && lf.deferWrite(d, buf, n) {
			return // the batch's end writes it, and passes the FIN on
		}
		w, werr := rawsock.WriteAll(dst, (*buf)[:n])
		if werr != nil {
			bufPool.Put(buf)
			lf.flow.peerReset(up)
			lf.abort(true)
			return
		}
		if w < n {
			d.buf, d.off, d.n = buf, w, n // the destination's next edge resumes
			lf.bufferFull(up)             // bufferlow_linux.go
			return
		}
		bufPool.Put(buf)
		if n < len(*buf) {
			if d.rdhup {
				lf.sourceEOF(up)
			}
			return
		}
		// A full buffer: a bulk transfer, the rest goes by splice (not
		// when a clone copies every byte).
		if lf.clone != nil {
			continue
		}
		if d.pipe = lf.lr.getPipe(); d.pipe != nil {
			lf.pumpSplice(up)
			return
		}
	}
	lf.again(up)
}

// deferWrite leaves the n bytes of a short read for the end of the loop's
// batch, where they leave with the batch's other writes in one system
// call (evloop.Sender), and reports false where the loop writes each
// socket at once. Why: bytes written at once wake their reader, which can
// take the loop's CPU before the loop's other writes. Until they are
// written the direction is pending, so nothing is read after them.
func (lf *loopFlow) deferWrite(d *loopDir, buf *[]byte, n int) bool {
	if !lf.lr.SendsTogether() {
		return false
	}
	d.buf, d.off, d.n = buf, 0, n
	d.finNext, d.edged = d.rdhup, false
	if !d.deferred {
		d.deferred = true
		d.send.lf, d.send.up = lf, d == &lf.up
		lf.lr.Defer(&d.send)
	}
	return true
}

// Stage hands the loop the bytes the direction holds (evloop.Sender).
func (ds *dirSender) Stage() (int, []unix.Iovec, bool) {
	lf := ds.lf
	d := lf.dir(ds.up)
	d.deferred = false
	if lf.closed || d.buf == nil {
		return 0, nil, false
	}
	_, dst := lf.ends(ds.up)
	d.iov[0].Base = &(*d.buf)[d.off]
	d.iov[0].SetLen(d.n - d.off)
	return dst, d.iov[:], true
}

// Sent takes what the destination took; the rest waits for its
// writability edge (evloop.Sender).
func (ds *dirSender) Sent(n int, errno syscall.Errno) {
	lf := ds.lf
	d := lf.dir(ds.up)
	d.iov[0] = unix.Iovec{}
	if errno != 0 && errno != syscall.EAGAIN {
		lf.abort(true)
		return
	}
	d.off += n
	if d.off < d.n {
		d.finNext = false // the writability edge reads on
		lf.bufferFull(ds.up)
		return
	}
	bufPool.Put(d.buf)
	d.buf = nil
	switch {
	case d.finNext:
		lf.sourceEOF(ds.up)
	case d.edged:
		lf.pump(ds.up)
	}
}

// Flush writes what the direction holds where Stage did not hand it over
// (evloop.Sender).
func (ds *dirSender) Flush() {
	d := ds.lf.dir(ds.up)
	d.deferred = false
	if !ds.lf.closed && d.buf != nil {
		ds.lf.flush(ds.up)
	}
}

// readSource reads what src, a direction's source, has into a pooled
// buffer and counts it. It returns a nil buffer when the read ends the
// turn: the socket is drained, the source reset (the flow is aborted:
// the other side is reset too) or its FIN came (passed on).
func (lf *loopFlow) readSource(src int, up bool) (*[]byte, int) {
	buf := bufPool.Get().(*[]byte)
	n, err := rawsock.Read(src, *buf)
	for err == syscall.EINTR {
		n, err = rawsock.Read(src, *buf)
	}
	switch {
	case err == syscall.EAGAIN:
		bufPool.Put(buf)
		return nil, 0
	case err != nil:
		bufPool.Put(buf)
		lf.flow.peerReset(!up)
		lf.abort(true)
		return nil, 0
	case n == 0:
		bufPool.Put(buf)
		lf.sourceEOF(up)
		return nil, 0
	}
	lf.count(n, up)
	return buf, n
}

// again asks the loop for another turn of a busy source, after the other
// flows had theirs.
func (lf *loopFlow) again(up bool) {
	if up {
		lf.lr.Again(lf.ctok)
	} else {
		lf.lr.Again(lf.stok)
	}
}

// count adds n bytes moved in one direction to the flow and everything it
// counts for.
func (lf *loopFlow) count(n int, up bool) {
	lf.countAt(n, up, &lf.first, lf.lr.Now())
}

// spliceMax is one splice(2) into an empty pipe: its default capacity.
const spliceMax = 64 << 10

// pumpSplice moves a bulk transfer source → pipe → destination until the
// source runs dry (then the pipe goes back to the loop and the direction
// returns to the buffer), the destination fills, or the turn ends.
func (lf *loopFlow) pumpSplice(up bool) {
	d := lf.dir(up)
	src, _ := lf.ends(up)
	for i := 0; i < pumpReads; i++ {
		n, errno := rawsock.Splice(src, d.pipe[1], spliceMax)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			lf.lr.putPipe(d.pipe) // empty: drained before each splice in
			d.pipe = nil
			return
		case errno != 0:
			lf.abort(true)
			return
		case n == 0:
			lf.lr.putPipe(d.pipe)
			d.pipe = nil
			lf.sourceEOF(up)
			return
		}
		lf.count(n, up)
		d.piped = n
		if !lf.drainPipe(up) {
			return
		}
	}
	lf.again(up)
}

// drainPipe splices the pipe's bytes to the destination; false when they
// could not all go (the destination is full, or the flow failed).
func (lf *loopFlow) drainPipe(up bool) bool {
	d := lf.dir(up)
	_, dst := lf.ends(up)
	for d.piped > 0 {
		k, errno := rawsock.Splice(d.pipe[0], dst, d.piped)
		switch errno {
		case 0:
			d.piped -= k
		case syscall.EINTR:
		case syscall.EAGAIN:
			lf.bufferFull(up)
			return false // the destination's next edge resumes
		default:
			lf.abort(true)
			return false
		}
	}
	return true
}

// flush writes a direction's pending bytes once its destination drained.
func (lf *loopFlow) flush(up bool) {
	d := lf.dir(up)
	if d.lowered {
		lf.bufferResumed(up) // bufferlow_linux.go
	}
	if d.tlsOut {
		lf.flushTLS()
		return
	}
	if d.piped > 0 {
		if lf.drainPipe(up) {
			lf.pump(up)
		}
		return
	}
	if d.buf == nil {
		return
	}
	_, dst := lf.ends(up)
	w, err := rawsock.WriteAll(dst, (*d.buf)[d.off:d.n])
	if err != nil {
		lf.abort(true)
		return
	}
	d.off += w
	if d.off < d.n {
		lf.bufferFull(up)
		return
	}
	bufPool.Put(d.buf)
	d.buf = nil
	// The source's edges were spent while the bytes waited: read on.
	lf.pump(up)
}

// sourceEOF passes a FIN on: a half-close, or, when the other direction
// has ended too, the close of both sockets.
func (lf *loopFlow) sourceEOF(up bool) {
	d := lf.dir(up)
	d.eof = true
	if lf.snap != nil && lf.snap.Cfg.TCPClose != nil && lf.closeOnFIN(lf.snap.Cfg.TCPClose, up) { // tcpclose_linux.go
		return
	}
	if !up && lf.ctls != nil {
		// close_notify first; the FIN once it went.
		if lf.ctls.CloseWrite() != nil || lf.ctls.Flush() != nil {
			lf.abort(true)
			return
		}
		if !lf.up.eof && lf.snap != nil && lf.snap.Cfg.TLS != nil && lf.snap.Cfg.TLS.ClientAlert > 0 {
			lf.alertAt = lf.lr.Now()
		}
		if lf.ctls.Buffered() > 0 {
			d.tlsOut = true
			return
		}
	}
	lf.passFIN(up)
}

// passFIN half-closes a direction's destination, or closes both sockets
// when the other direction has ended too (and sent all it had).
func (lf *loopFlow) passFIN(up bool) {
	if lf.dir(!up).eof && !lf.down.tlsOut {
		lf.closeBoth()
		return
	}
	_, dst := lf.ends(up)
	unix.RawSyscall(unix.SYS_SHUTDOWN, uintptr(dst), unix.SHUT_WR, 0)
}

// EndFlow implements flows.Ender: delete sys connection, service down
// actions and Close reach the flow through its loop.
func (lf *loopFlow) EndFlow(reset bool) {
	if lf.hsConn != nil && lf.killHandshake(reset) {
		return
	}
	lf.lr.Post(func() { lf.abort(reset) })
}

// abort ends the flow at once: the server side with a reset, the client
// side with a reset too (reset) or quietly (drop).
func (lf *loopFlow) abort(reset bool) {
	if lf.closed {
		return
	}
	lf.forget()
	lf.flow.rst(reset, lf.sfd >= 0)
	if lf.sfd >= 0 {
		rawsock.Reset(lf.sfd)
	}
	if reset {
		rawsock.Reset(lf.cfd)
	} else {
		rawsock.Close(lf.cfd)
	}
	lf.finish()
}

// closeBoth ends a flow whose both directions finished.
func (lf *loopFlow) closeBoth() {
	lf.forget()
	rawsock.Close(lf.sfd)
	rawsock.Close(lf.cfd)
	lf.finish()
}

// fail ends a flow that got no server side: the client is reset.
func (lf *loopFlow) fail() {
	lf.forget()
	lf.flow.orBecause(rstcause.NoServer)
	lf.flow.rst(true, false)
	rawsock.Reset(lf.cfd)
	lf.finish()
}

func (lf *loopFlow) forget() {
	lf.closed = true
	if lf.ctok != 0 {
		lf.lr.Forget(lf.ctok)
	}
	if lf.stok != 0 {
		lf.lr.Forget(lf.stok)
	}
}

// finish releases the flow's buffers, counts and table entry.
func (lf *loopFlow) finish() {
	lf.closed = true
	for _, d := range []*loopDir{&lf.up, &lf.down} {
		if d.buf != nil {
			bufPool.Put(d.buf)
			d.buf = nil
		}
		if d.pipe != nil {
			if d.piped > 0 {
				closePipe(d.pipe) // holds bytes that will never go
			} else {
				lf.lr.putPipe(d.pipe)
			}
			d.pipe, d.piped = nil, 0
		}
	}
	if m := lf.reserved; m != nil {
		m.Release()
		lf.reserved = nil
	}
	lf.queueGone()
	if lf.ctls != nil {
		lf.ctls.Release()
	}
	lf.retire()
	lr := lf.lr
	last := len(lr.flows) - 1
	if lf.idx <= last && lr.flows[lf.idx] == lf {
		lr.flows[lf.idx] = lr.flows[last]
		lr.flows[lf.idx].idx = lf.idx
		lr.flows[last] = nil
		lr.flows = lr.flows[:last]
		lr.load.Add(-1)
	}
}

// tick runs the loop's timers: connects that took too long move on to
// the next member, idle flows are reset on both sides.
func (lr *loopRT) tick(now int64) {
	connectTimeout := lr.e.env.ConnectTimeout
	for i := len(lr.flows) - 1; i >= 0; i-- {
		if i >= len(lr.flows) {
			continue
		}
		lf := lr.flows[i]
		if sn := lf.flow.snap; sn != nil && sn.Cfg.TCPClose != nil && lf.closeTimers(sn.Cfg.TCPClose, now) { // tcpclose_linux.go
			continue
		}
		if lf.alertAt != 0 && now-lf.alertAt >= int64(lf.flow.snap.Cfg.TLS.ClientAlert) {
			// The client never answered close_notify (alert-timeout).
			if n := lf.flow.cssl.Counters(); n != nil {
				n.AlertTimeouts.Add(1)
			}
			lf.flow.because(rstcause.AlertTimeout)
			lf.abort(true)
			continue
		}
		switch {
		case lf.connecting:
			if connectExpired(lf.flow.snap.Cfg.ServerTCP.Timeout(connectTimeout), lf.connStart, now) { // tcpopts.go
				lf.flow.because(rstcause.ConnectTimeout)
				lf.connectFailed()
			}
		case idleExpired(lf.IdleTimeout(), lf.LastActive(), now):
			lf.idleEnd() // tcpopts_linux.go
		}
	}
}

// LoopLoads is the client connections each event loop serves, for tests
// and for whoever wants to see how the loops share the work.
func (e *Engine) LoopLoads() []int {
	out := make([]int, len(e.loops.ls))
	for i, lr := range e.loops.ls {
		out[i] = int(lr.load.Load())
	}
	return out
}
