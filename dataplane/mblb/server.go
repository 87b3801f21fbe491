package mblb

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/ssefilter"

	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// Errors a server connection fails with, as reported to MemberFailed.
var (
	// ErrResponseTimeout means the oldest request saw no response byte
	// within Config.ResponseTimeout.
	ErrResponseTimeout = errors.New("mblb: response timeout")
	// ErrServerClosed means the member closed a connection with requests
	// still unanswered.
	ErrServerClosed = errors.New("mblb: member closed the connection with requests pending")
	// ErrAborted means the proxy closed the connection on purpose (Leg.Abort:
	// `delete sys connection`, service-down-action); the member is not
	// blamed, but what was pending is sent again elsewhere.
	ErrAborted = errors.New("mblb: server connection aborted")
	errClosed  = errors.New("mblb: session closed")
	// errTunnel stops a server reader's framing: what follows passes
	// through to its client.
	errTunnel = errors.New("mblb: server connection is a tunnel")
	// errConnectTimeout ends a connect on an event loop that took longer
	// than Config.ConnectTimeout.
	errConnectTimeout = errors.New("mblb: connect timed out")
)

// Meter receives byte counts as they move, so that the proxy's own
// statistics (flow, virtual, pool, member, node) stay exact without the
// engine knowing about them. Calls come from the engine's goroutines and
// must not block.
type Meter interface {
	// Received counts n bytes read from the peer.
	Received(n int)
	// Sent counts n bytes written to the peer.
	Sent(n int)
}

// Leg is one server connection as the connection table shows it (seed
// §2.2: `any6 <-> vs <-> member`). Its address is stable for its life.
type Leg struct {
	Member Member
	// Local is the server side's source (ss-client), Remote the member
	// (ss-server).
	Local, Remote netip.AddrPort
	// Owner is the owning session's Tag; nil for a shared OneConnect
	// connection.
	Owner any
	// Opener is the Tag of the session whose message opened the
	// connection, shared or not: SERVER_CONNECTED runs in its rules.
	Opener any
	Opened time.Time
	// Meter, when LegOpened sets it, is told of every byte the leg moves.
	Meter Meter
	// BytesIn and MsgsIn count what the member sent, BytesOut and MsgsOut
	// what it was sent.
	BytesIn, BytesOut, MsgsIn, MsgsOut atomic.Uint64
	lastActive                         atomic.Int64
	pending                            atomic.Int32
	sc                                 *serverConn
}

// Abort resets the server connection (delete sys connection, a member's
// service-down-action). Requests it carried that saw no answer are sent to
// another member, as after a failure, but the member is not reported.
func (l *Leg) Abort() {
	if l.sc != nil {
		l.sc.fail(ErrAborted)
	}
}

// LastActive is when bytes last moved on the leg, for its idle time.
func (l *Leg) LastActive() time.Time { return time.Unix(0, l.lastActive.Load()) }

// Pending is the number of requests awaiting their response on the leg.
func (l *Leg) Pending() int { return int(l.pending.Load()) }

// queue is a FIFO of requests in a ring that grows and never shrinks, so a
// busy connection stops allocating.
type queue struct {
	ring       []*msg
	head, size int
}

func (q *queue) push(m *msg) {
	if q.size == len(q.ring) {
		n := make([]*msg, 2*len(q.ring)+4)
		for i := 0; i < q.size; i++ {
			n[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = n, 0
	}
	q.ring[(q.head+q.size)%len(q.ring)] = m
	q.size++
}

func (q *queue) peek() *msg {
	if q.size == 0 {
		return nil
	}
	return q.ring[q.head]
}

func (q *queue) pop() *msg {
	if q.size == 0 {
		return nil
	}
	m := q.ring[q.head]
	q.ring[q.head] = nil
	q.head = (q.head + 1) % len(q.ring)
	q.size--
	return m
}

// serverConn is one connection to a member: a FIFO of the requests written
// on it and not yet answered, and a reader that pairs each framed response
// with the oldest of them.
type serverConn struct {
	e     *Engine
	conn  net.Conn
	leg   Leg
	ms    *memberStats
	owner *ClientConn // nil for a pooled connection
	// iiop is the state of a connection one-connect shares among an
	// IIOP virtual's clients (iiopshare.go); nil elsewhere.
	iiop *iiopShared
	// strm is the response being streamed (server reader only).
	strm bodyStream
	// flow is the connection's part of flow control (flowcontrol.go).
	flow connFlow

	qmu sync.Mutex // guards q, out, writing, dead, closing, failErr
	q   queue
	// out holds requests queued and not yet written, in q's order; the
	// goroutine holding writing writes them.
	out, spare []*msg
	writing    bool
	wb, warr   net.Buffers
	// dead: no more requests may be queued; closing: the end was ours
	// (idle, shutdown), not the member's fault.
	dead, closing bool
	// drainBy: the client that owned the connection is gone and it
	// stays open until its answers still owed have come, or until this
	// time (Unix nanoseconds; Config.ShutdownTimeout); 0: not draining.
	drainBy int64
	// memberDrain: the connection's member was disabled or removed by a
	// commit (DrainMembers, drain.go); it carries no new request.
	memberDrain bool
	failErr     error
	down        atomic.Bool

	// iiopDrain: an IIOP connection so drained, closed by its reader
	// once nothing is owed on it (iiopdrain.go).
	iiopDrain atomic.Bool

	// zwAt is since when the socket has held bytes for a zero window
	// (the janitor's alone: CloseTimers, tcpclose.go).
	zwAt int64
	// idleTO is the connection's own idle timeout in nanoseconds (0: the
	// engine's; Leg.SetIdleTimeout, srcidle.go).
	idleTO atomic.Int64

	// Pool bookkeeping, guarded by the pool's lock, except npending.
	key         poolKey
	npending    atomic.Int32 // reserved or pending requests
	uses        int
	retired     bool
	idleCounted bool
	removed     bool
	stacked     bool // in its group's idle stack (poolGroup.pushIdle)
	created     int64

	// hdr is the reader's scratch space for inserted header lines.
	hdr []byte
	// hx is the reader's HTTP_RESPONSE view, reused; hshift and reframe
	// are its scratch for a response without its interim part and a
	// re-framed head.
	hx      HTTPEvent
	hshift  httpx.Head
	reframe []byte
	// splice and spliceSkip: what replaces the collected start of a
	// streamed response (HTTPEvent.ReplaceStart), and how many of the
	// bytes after its head it takes the place of.
	splice     []byte
	spliceSkip int
	// filterHead, filtered, plain and filterOut are the stream filter's
	// scratch: a response's head framed for its filtered body, a whole
	// body filtered and a chunked one's data, and a streamed part as it
	// goes to the client (httpfilter.go).
	filterHead, filtered, plain, filterOut []byte
	// html is the html profile's pass over the body of the response in
	// hand, until the body's transformation takes it; htmlOut a whole
	// body it rewrote (httphtml.go).
	html    *htmlfilter.Pass
	htmlOut []byte
	// sse is the sse profile's pass over the response in hand
	// (httpsse.go), as html is; sseOut a whole body's output.
	sse    *ssefilter.Pass
	sseOut []byte
	// zipped is the compressor's output for a whole body; cookieHead a
	// response head with its cookies encrypted (cookiecrypt.go).
	zipped, cookieHead []byte
	// rewritten is a whole body the rewrite profile changed (rewrite.go).
	rewritten []byte
	// fieldHead is a response head without the fields the profile
	// removes (httpfields.go); cachePlain a chunked body de-chunked for
	// the cache (httpcache.go).
	fieldHead, cachePlain []byte
	// h10 is a response head said as HTTP/1.0 (force-http-10-response).
	h10 []byte
	// chunkHead and chunkBody are a whole response's head and body
	// framed anew by response-chunking (httpchunking.go).
	chunkHead, chunkBody []byte
	// tun is the client this connection became the tunnel of (a 101, a
	// CONNECT's 2xx, HTTP::disable); the reader then passes bytes
	// through instead of framing them. Reader only.
	tun *ClientConn
	// tunFrom is the client's sequence number the tunnel starts at;
	// tunSkip: it is the disabled request's, whose answer is the tunnel.
	tunFrom uint64
	tunSkip bool
	// tunneled: the connection became a client's tunnel (any goroutine
	// may read it; a drained member's tunnel lives on as a connection).
	tunneled atomic.Bool
	// tunWS: the tunnel is a WebSocket upgrade of a virtual with the
	// websocket profile, framed (websocket.go). Reader only.
	tunWS bool

	// lp is set for a connection served by an event loop (loop_linux.go);
	// connecting is true until its non-blocking connect completes, and
	// requests queue meanwhile.
	lp         *connLoop
	connecting atomic.Bool

	// uploading: an upload's body is being written behind its head
	// (upload.go): the pool gives the connection to nobody else;
	// upQueued counts its bytes not yet written, upSess is its client.
	uploading atomic.Bool
	upQueued  atomic.Int64
	upSess    atomic.Pointer[ClientConn]

	// Rule framing state, used by the reader only.
	data    Data
	rel     int
	collect int
	lastRd  atomic.Int64
}

// dial opens a server connection to m for s and registers it. owner is nil
// for a pooled connection. The caller starts its reader (start) once it is
// reachable. On an event loop (cur) the connect does not wait: the
// connection is returned connecting, and lives on cur.
func (e *Engine) dial(s *ClientConn, m Member, owner *ClientConn, cur *evl) (*serverConn, error) {
	if s != nil && s.viaLocal {
		m.Via = s.local.Addr()
	}
	if s != nil && e.cfg.ServerInit != nil {
		if err := e.cfg.ServerInit(s.tag, s.clientAddr(), m); err != nil {
			return nil, errClosed
		}
	}
	if cur != nil {
		return e.dialLoop(s, m, owner, cur)
	}
	ms := e.memberStats(m.ID)
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.ConnectTimeout)
	c, err := e.cfg.Dial(ctx, s.clientAddr(), m)
	cancel()
	if err != nil {
		e.logf("mblb: connect to %s %s failed: %v", m.Name, m.Addr, err)
		e.memberFailed(m, ms, err)
		return nil, err
	}
	return e.attachConn(s, m, owner, ms, c)
}

// Unshared is implemented by a connection Dial returns that OneConnect
// must not lend to another request (a server-ssl connection made with a
// profile a rule chose for it alone, SSL::profile in SERVER_CONNECTED):
// it is closed once its response is in, as with ONECONNECT::reuse
// disable.
type Unshared interface{ Unshared() bool }

// attachConn makes the connected c to m a server connection from s,
// owned by owner: dial's, and min-conn's for one opened ahead (spare.go).
func (e *Engine) attachConn(s *ClientConn, m Member, owner *ClientConn, ms *memberStats, c net.Conn) (*serverConn, error) {
	remote := rawsock.AddrPortOf(c.RemoteAddr())
	if !remote.IsValid() {
		remote = m.Addr
	}
	sc := e.newServerConn(s, m, owner, ms, rawsock.AddrPortOf(c.LocalAddr()), remote, time.Now())
	sc.conn = c
	if u, ok := c.(Unshared); ok && owner == nil && u.Unshared() {
		sc.retired = true // closed after its response, never lent
	}
	if !e.register(sc) {
		c.Close()
		e.legGone(sc) // srcidle.go: what the proxy holds for it is given back
		return nil, errClosed
	}
	if e.cfg.Events.LegOpened != nil {
		e.cfg.Events.LegOpened(&sc.leg)
	}
	return sc, nil
}

// newServerConn is a server connection from s to m (owned by owner, nil
// for a pooled one; s is nil for one min-conn opened ahead of need), its
// leg and data stamped opened at now; dial and dialLoop give it its
// transport.
func (e *Engine) newServerConn(s *ClientConn, m Member, owner *ClientConn, ms *memberStats, local, remote netip.AddrPort, now time.Time) *serverConn {
	sc := &serverConn{e: e, ms: ms, owner: owner, created: now.UnixNano()}
	sc.leg.Member = m
	sc.leg.sc = sc
	sc.leg.Local = local
	sc.leg.Remote = remote
	if owner != nil {
		sc.leg.Owner = owner.tag
	}
	if s != nil {
		sc.leg.Opener = s.tag
		sc.data.client = s.client
	}
	sc.leg.Opened = now
	sc.leg.lastActive.Store(now.UnixNano())
	sc.lastRd.Store(now.UnixNano())
	sc.data.side = ServerSide
	sc.data.server = remote
	sc.data.leg = &sc.leg
	return sc
}

// register files sc among the engine's server connections and counts it;
// false once the engine is closed.
func (e *Engine) register(sc *serverConn) bool {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return false
	}
	e.servers[sc] = struct{}{}
	e.mu.Unlock()
	sc.ms.conns.Add(1)
	e.stats.serverConns.Add(1)
	return true
}

// start serves the connection's responses: a reader goroutine, or nothing
// more on an event loop (dialLoop registered it).
func (sc *serverConn) start() {
	if sc.lp == nil {
		go sc.readLoop()
	}
}

// submit queues m for writing. It takes over the caller's reference to m
// and reports false, handing it back, when the connection is already dead.
// With flush it also writes; otherwise the caller flushes later, so that
// the messages of one client read leave in one write. Whoever finds no
// write in progress writes everything queued, so concurrent clients on a
// shared connection share system calls too. A write error fails the
// connection; the reader then deals with what was pending.
func (sc *serverConn) submit(m *msg, flush bool, cur *evl) bool {
	sc.qmu.Lock()
	if sc.dead || sc.memberDrain {
		sc.qmu.Unlock()
		return false
	}
	m.refs.Add(1) // the writer's
	m.sentAt = sc.e.now()
	sc.q.push(m)
	sc.out = append(sc.out, m)
	sc.leg.pending.Add(1)
	if fc := sc.e.fc; fc != nil {
		sc.flowQueued(fc, m)
	}
	if flush {
		sc.flushFrom(cur)
	}
	sc.qmu.Unlock()
	return true
}

// flush writes what submit queued, unless a write is in progress (the
// writer will take it). cur is the event loop running the caller.
func (sc *serverConn) flush(cur *evl) {
	sc.qmu.Lock()
	sc.flushFrom(cur)
	sc.qmu.Unlock()
}

// flushFrom starts writing what is queued if nobody is. On an event loop
// only the connection's own loop writes, once connected; another loop
// posts the write to it. The caller holds qmu.
func (sc *serverConn) flushFrom(cur *evl) {
	if sc.writing || len(sc.out) == 0 {
		return
	}
	if sc.lp != nil {
		if sc.connecting.Load() {
			return // connected() writes them
		}
		if cur == nil || cur != sc.lp.loop() {
			sc.lp.postFlush(sc)
			return
		}
	} else if cur != nil {
		// A goroutine's connection (min-conn's, opened before any
		// client's loop was known) is written by a goroutine: a write
		// that waits for the member must not hold up the loop.
		sc.writing = true
		go sc.flushAside()
		return
	}
	sc.writing = true
	sc.flushLocked()
}

// flushAside is flushFrom's writer for a goroutine's connection that an
// event loop queued on; it holds the writing token.
func (sc *serverConn) flushAside() {
	sc.qmu.Lock()
	sc.flushLocked()
	sc.qmu.Unlock()
}

// flushLocked writes queued messages until none is left. The caller holds
// qmu and the writing token; qmu is released around each write.
func (sc *serverConn) flushLocked() {
	if sc.lp != nil {
		sc.lp.flushLocked(sc)
		return
	}
	for len(sc.out) > 0 && !sc.dead {
		batch := sc.out
		sc.out = sc.spare[:0]
		sc.qmu.Unlock()
		var n int64
		var err error
		if len(batch) == 1 {
			var k int
			k, err = sc.conn.Write(batch[0].b)
			n = int64(k)
		} else {
			sc.wb = sc.warr[:0]
			for _, m := range batch {
				sc.wb = append(sc.wb, m.b)
			}
			sc.warr = sc.wb[:0]
			n, err = sc.wb.WriteTo(sc.conn)
		}
		sc.leg.BytesOut.Add(uint64(n))
		if mt := sc.leg.Meter; mt != nil && n > 0 {
			mt.Sent(int(n))
		}
		parts := sc.uploadWritten(batch) // upload.go
		if fc := sc.e.fc; fc != nil {
			sc.flowWritten(fc, batch)
		}
		if err == nil {
			sc.ms.requests.Add(uint64(len(batch) - parts))
			sc.leg.MsgsOut.Add(uint64(len(batch) - parts))
			sc.leg.lastActive.Store(sc.e.now())
		}
		for i, m := range batch {
			m.unref()
			batch[i] = nil
		}
		if err != nil {
			sc.fail(err)
		}
		sc.qmu.Lock()
		sc.spare = batch[:0]
	}
	if sc.dead {
		if fc := sc.e.fc; fc != nil {
			sc.flowWritten(fc, sc.out)
		}
		for i, m := range sc.out {
			m.unref() // never to be written; the reader re-sends it
			sc.out[i] = nil
		}
		sc.out = sc.out[:0]
	}
	sc.writing = false
}

// fail ends the connection abruptly; the reader sees the error and
// re-sends what was unanswered.
func (sc *serverConn) fail(err error) {
	sc.qmu.Lock()
	if sc.failErr == nil {
		sc.failErr = err
	}
	sc.dead = true
	sc.qmu.Unlock()
	sc.down.Store(true)
	if sc.lp != nil {
		sc.lp.postEnd(sc)
		return
	}
	resetConn(sc.conn)
}

// shutdown closes the connection on purpose (idle, client gone, engine
// closed): no failure is reported.
func (sc *serverConn) shutdown() {
	sc.qmu.Lock()
	sc.endLocked()
}

// endLocked is shutdown for a caller holding qmu, which it releases.
func (sc *serverConn) endLocked() {
	sc.closing = true
	sc.dead = true
	sc.qmu.Unlock()
	sc.down.Store(true)
	if sc.lp != nil {
		sc.lp.postEnd(sc)
		return
	}
	sc.conn.Close()
}

// drainOrEnd ends a connection whose owner is gone: at once, unless
// Config.ShutdownTimeout lets it wait for the answers still owed on it
// (the mblb profile's shutdown-timeout), so that the member can finish
// them instead of seeing its connection closed under them.
func (sc *serverConn) drainOrEnd() {
	t := sc.e.cfg.ShutdownTimeout
	if t <= 0 {
		sc.shutdown()
		return
	}
	sc.qmu.Lock()
	if sc.dead || sc.q.size == 0 || sc.connecting.Load() {
		sc.endLocked()
		return
	}
	if sc.drainBy == 0 {
		sc.drainBy = sc.e.now() + int64(t)
	}
	sc.qmu.Unlock()
}

// expire applies the response timeout and, for a client's own connection,
// the idle timeout and the end of a drain (drainOrEnd).
func (sc *serverConn) expire(now int64) {
	e := sc.e
	if sc.connecting.Load() && sc.lp != nil && now-sc.created > int64(e.cfg.ConnectTimeout) {
		sc.fail(errConnectTimeout)
		return
	}
	sc.qmu.Lock()
	if sc.drainBy != 0 && sc.memberDrain && sc.tunneled.Load() {
		sc.drainBy = 0 // the answer owed made it a tunnel: it stays
	}
	if sc.drainBy != 0 && (sc.q.size == 0 || now > sc.drainBy) {
		if owed := sc.q.size; sc.memberDrain && owed != 0 {
			sc.qmu.Unlock()
			e.logf("mblb: %s %s drained, %d answer(s) still owed after %v: connection reset",
				sc.leg.Member.Name, sc.leg.Remote, owed, e.cfg.ShutdownTimeout)
			sc.fail(errDrainExpired)
			return
		}
		sc.endLocked()
		return
	}
	head := sc.q.peek()
	if head != nil && e.cfg.ResponseTimeout > 0 {
		since := head.sentAt
		if rd := sc.lastRd.Load(); rd > since {
			since = rd
		}
		if w := sc.leg.lastActive.Load(); sc.uploading.Load() && w > since {
			since = w // an upload's timeout runs from its last byte out
		}
		if now-since > int64(e.cfg.ResponseTimeout) {
			sc.qmu.Unlock()
			e.logf("mblb: no response from %s %s within %v", sc.leg.Member.Name, sc.leg.Remote, e.cfg.ResponseTimeout)
			sc.fail(ErrResponseTimeout)
			return
		}
	}
	if head == nil && sc.owner != nil {
		if e.idleSince(now, sc.leg.lastActive.Load(), sc.ownIdle()) { // srcidle.go
			// Marked dead under the same lock that saw it empty, so no
			// request can slip in before the close.
			sc.endLocked()
			if o := sc.owner; e.cfg.PropagateExpire && !o.isClosed() {
				o.expired(sc) // isolate-expire disabled (isolate.go)
			}
			return
		}
	}
	sc.qmu.Unlock()
}

func resetConn(c net.Conn) {
	if l, ok := c.(interface{ SetLinger(int) error }); ok {
		l.SetLinger(0)
	}
	c.Close()
}

// readLoop frames responses and hands each to the client whose request is
// the oldest pending, until the connection ends.
func (sc *serverConn) readLoop() {
	e := sc.e
	fr, hf := sc.responseFramer()
	st := newStream(fr, e.cfg.MaxMessageSize)
	defer st.release()
	for {
		k, err := st.read(sc.conn)
		if sc.took(&st, hf, k, err) {
			return
		}
	}
}

// responseFramer is the server side's framer (nil with rule framing) and,
// for HTTP, the same framer typed.
func (sc *serverConn) responseFramer() (Framer, *httpx.ResponseFramer) {
	e := sc.e
	switch e.respMode.Mode {
	case Rule:
		return nil, nil
	case HTTP:
		hf := sc.httpResponseFramer()
		return hf, hf
	}
	fr, _ := e.respMode.New(e.cfg.MaxMessageSize)
	return fr, nil
}

// received counts k bytes read from the member: the connection's and its
// leg's last activity, the leg's bytes in and its meter.
func (sc *serverConn) received(k int) {
	now := sc.e.now()
	sc.lastRd.Store(now)
	sc.leg.lastActive.Store(now)
	sc.leg.BytesIn.Add(uint64(k))
	if mt := sc.leg.Meter; mt != nil {
		mt.Received(k)
	}
}

// took frames k bytes just read into st; err is the read's error. It
// reports true when the connection has ended (failed has run).
func (sc *serverConn) took(st *stream, hf *httpx.ResponseFramer, k int, err error) bool {
	e := sc.e
	if k > 0 || err == nil {
		// (k 0 without an error: the socket turned out drained after a
		// read that filled the buffer; what is held is framed again.)
		if k > 0 {
			sc.received(k)
		}
		ferr := sc.frame(st)
		if ferr == errTunnel {
			sc.tunnelServer(st)
			return true
		}
		if st.end > st.start {
			// Part of the next response is here: its request has
			// been answered, at least in part, and must not run twice.
			sc.qmu.Lock()
			if h := sc.q.peek(); h != nil {
				h.started = true
			}
			sc.qmu.Unlock()
		}
		if ferr != nil {
			if errors.Is(ferr, ErrTooLarge) {
				e.logf("mblb: response from %s %s exceeds %d bytes", sc.leg.Member.Name, sc.leg.Remote, e.cfg.MaxMessageSize)
			}
			err = ferr
			sc.fail(ferr)
		}
	}
	if err != nil && sc.strm.req != nil && errors.Is(err, io.EOF) {
		for i := 0; sc.strm.collecting && i <= maxRounds; i++ {
			// The member closed before all its rules collect had
			// come: they get what there is (httpstream.go).
			sc.strm.collecting, sc.strm.resumed = false, true
			if sc.streamHead(st, hf) != nil {
				break
			}
		}
		// A streamed body that runs until the server closes ends now.
		if n, ok := hf.Finish(st.pending()); ok && !sc.strm.collecting && sc.strm.req != nil {
			sc.endStream(st.pending()[:n])
			st.start += n
		}
	} else if err != nil && hf != nil && errors.Is(err, io.EOF) && st.end > st.start {
		// A response whose body runs until the server closes is
		// complete now.
		if n, ok := hf.Finish(st.pending()); ok {
			sc.completeHTTP(st.pending()[:n], hf)
			st.start += n
		}
	}
	if err != nil {
		sc.failed(err)
		return true
	}
	return false
}

// frame cuts the received bytes into responses.
func (sc *serverConn) frame(st *stream) error {
	if hf, ok := st.fr.(*httpx.ResponseFramer); ok {
		for {
			if sc.strm.collecting { // httpstream.go
				if more, err := sc.collectResponse(st, hf); more || err != nil {
					return err
				}
				continue
			}
			if sc.strm.req != nil {
				if err := sc.streamBody(st, hf); err != nil || sc.strm.req != nil {
					return err
				}
				continue
			}
			if sc.tun != nil || sc.tunnelNext() {
				return errTunnel
			}
			b, err := st.next()
			if b == nil && err == nil && st.more && sc.lp == nil && hf.Waiting() != nil && drainedConn(sc.conn) {
				st.more = false // the read filled the buffer exactly
			}
			if b == nil && err == nil && !st.more && sc.streamsNow(hf) {
				// The head is in and the socket holds no more of the
				// body: it streams now rather than wait for a body the
				// member may send slowly (httpstream.go).
				err = httpx.ErrStreamBody
			}
			if err == httpx.ErrStreamBody {
				if sc.collectWait(st, hf) { // upload.go
					return nil
				}
				if err = sc.startStream(st, hf); err != nil {
					return err
				}
				continue
			}
			if err != nil || b == nil {
				return err
			}
			sc.completeHTTP(b, hf)
		}
	}
	if st.fr != nil {
		for {
			b, err := st.next()
			if err != nil || b == nil {
				return err
			}
			sc.complete(b)
		}
	}
	sc.qmu.Lock()
	head := sc.q.peek()
	sc.qmu.Unlock()
	var rh RuleHandler
	if head != nil {
		rh = head.sess.rule
	}
	if rh == nil {
		// Nobody asked and no rule can frame it: drop it.
		sc.e.stats.unsolicited.Add(1)
		st.start = st.end
		sc.rel = 0
		return nil
	}
	rejected, err := ruleStep(&sc.data, st, &sc.rel, &sc.collect, rh.ServerData, sc.emit)
	if err == nil && rejected {
		head.sess.rst(rstcause.RuleReject)
		head.sess.Close(true)
	}
	if rf := (ruleFailed{}); errors.As(err, &rf) {
		// SERVER_DATA failed: its client is reset, as BIG-IP resets a
		// flow whose rule fails; the connection ends with it (failed
		// sends the other clients' requests again).
		sc.e.logf("mblb: client %s: SERVER_DATA: %v, reset", head.sess.client, err)
		head.sess.rst(rstcause.TCLError)
		head.sess.Close(true)
	}
	return err
}

func (sc *serverConn) emit(b []byte, _ Target, _ string) error {
	sc.complete(b)
	return nil
}

// complete pairs one response with the oldest pending request.
func (sc *serverConn) complete(b []byte) { sc.completeWith(b, nil) }

// completeWith is complete; h, for an HTTP response, lets it be edited
// for its client.
func (sc *serverConn) completeWith(b []byte, h *httpx.Head) {
	sc.qmu.Lock()
	req := sc.q.pop()
	if sc.drainBy != 0 && sc.q.size == 0 {
		sc.endLocked() // the last answer owed has come
	} else {
		sc.qmu.Unlock()
	}
	e := sc.e
	if req == nil {
		e.stats.unsolicited.Add(1)
		return
	}
	sc.leg.pending.Add(-1)
	sc.leg.MsgsIn.Add(1)
	sc.ms.responses.Add(1)
	e.stats.responses.Add(1)
	if sc.owner == nil {
		if req.hx.noReuse {
			e.pool.retire(sc) // ONECONNECT::reuse disable
		}
		if h != nil && e.cfg.Request.HTTP.NTLM {
			e.pool.ntlmChallenged(sc, req.sess, b, h) // ntlm.go
		}
		e.pool.released(sc)
	}
	var r *msg
	if h != nil {
		var retry *msg
		if r, retry = sc.httpResponse(req, b, h); r == nil {
			if retry != nil {
				req.sess.send(retry, true, sc.lp.loop())
			}
			req.unref()
			return
		}
	} else {
		r = getMsg(len(b))
		copy(r.b, b)
	}
	req.sess.deliver(req.seq, r, sc.lp.loop())
	req.unref()
}

// failed runs once, on the reader, when the connection ends: it takes the
// connection out of service, reports the member when it was its fault, and
// sends again every request that saw no response byte.
func (sc *serverConn) failed(rerr error) {
	e := sc.e
	if ic := sc.strm.icap; ic != nil {
		ic.rest.Abort() // (half a body went to the ICAP server)
		sc.strm.icap = nil
	}
	// A connect that never completed (event loops only) sent nothing: its
	// requests go elsewhere whatever the retry settings.
	neverConnected := sc.connecting.Swap(false)
	sc.qmu.Lock()
	sc.dead = true
	closing := sc.closing
	err := sc.failErr
	aborted := err != nil // failErr is read under the lock that fail() takes
	if err == nil {
		err = rerr
		if errors.Is(rerr, io.EOF) {
			err = ErrServerClosed
		}
	}
	var entries []*msg
	for m := sc.q.pop(); m != nil; m = sc.q.pop() {
		entries = append(entries, m)
	}
	// unsent: requests queued here and never written (the member never
	// had them); known only while no write is in progress.
	var unsent []*msg
	if !sc.writing {
		if fc := sc.e.fc; fc != nil {
			sc.flowWritten(fc, sc.out)
		}
		for i, m := range sc.out {
			unsent = append(unsent, m)
			m.unref() // the writer's reference: it will never be written
			sc.out[i] = nil
		}
		sc.out = sc.out[:0]
	}
	sc.qmu.Unlock()
	sc.down.Store(true)
	sc.uploadDied() // upload.go
	sc.leg.pending.Store(0)
	graceful := closing || (len(entries) == 0 && !aborted && errors.Is(rerr, io.EOF))
	// A member that closes a connection (its FIN) as requests of ours are
	// on the way makes its kernel reset them: the read then fails with
	// EPIPE (the reset of a connection whose FIN came first), proof that
	// the member never took them. Those, and requests never written, go
	// again once, to any member, on another connection, as ones sent
	// after the FIN would have: the member's end was its close, not an
	// abort (with isolate-server disabled, that close goes on to the
	// client instead).
	finFirst := !closing && !aborted && !neverConnected && errors.Is(rerr, syscall.EPIPE)
	neverTook := func(m *msg) bool {
		return !m.started && !m.crossed && (finFirst || slices.Contains(unsent, m))
	}
	crossed := len(entries) > 0 // the member took none of them
	for _, m := range entries {
		crossed = crossed && neverTook(m)
	}
	// isolate-abort disabled: the member's reset is passed on to the
	// clients it carried requests of, and to its owner (isolate.go).
	abortOut := e.cfg.PropagateAbort && !graceful && !neverConnected && !crossed && peerReset(err)
	// isolate-server disabled: the member's orderly close (a FIN it
	// chose, not one of ours) ends its clients in order.
	finOut := e.cfg.PropagateServerClose && !closing && !aborted && !neverConnected && (errors.Is(rerr, io.EOF) || finFirst)
	switch {
	case sc.lp != nil:
		sc.lp.closeFD(sc, !graceful)
	case graceful:
		sc.conn.Close()
	default:
		resetConn(sc.conn)
	}
	if neverConnected {
		e.logf("mblb: connect to %s %s failed: %v", sc.leg.Member.Name, sc.leg.Remote, err)
		e.memberFailed(sc.leg.Member, sc.ms, err)
	} else if crossed {
		fate := "sent again"
		if finOut {
			fate = "not answered"
		}
		e.logf("mblb: server connection %s -> %s (%s) ended by its member as %d request(s) reached it: %s",
			sc.leg.Local, sc.leg.Remote, sc.leg.Member.Name, len(entries), fate)
	} else if !graceful {
		e.logf("mblb: server connection %s -> %s (%s) failed: %v; %d request(s) pending",
			sc.leg.Local, sc.leg.Remote, sc.leg.Member.Name, err, len(entries))
		var rf ruleFailed
		if !errors.Is(err, ErrAborted) && !errors.As(err, &rf) {
			e.memberFailed(sc.leg.Member, sc.ms, err) // a rule's error is not the member's
		}
	}
	sc.detach()
	if abortOut {
		e.logf("mblb: %s %s reset its connection: its clients are reset (isolate-abort disabled)", sc.leg.Member.Name, sc.leg.Remote)
		if o := sc.owner; o != nil && !o.isClosed() {
			o.rst(rstcause.Peer | rstcause.PeerReset)
			o.Close(true)
		}
	}
	var finTo []*ClientConn
	if finOut {
		e.logf("mblb: %s %s closed its connection: its clients are closed (isolate-server disabled)", sc.leg.Member.Name, sc.leg.Remote)
		if o := sc.owner; o != nil {
			finTo = append(finTo, o)
		}
	}
	for _, m := range entries {
		s := m.sess
		if finOut && !slices.Contains(finTo, s) {
			finTo = append(finTo, s)
		}
		switch {
		case s.isClosed():
			m.unref()
		case abortOut:
			m.unref()
			s.rst(rstcause.Peer | rstcause.PeerReset)
			s.Close(true)
		case m.hx.upload:
			// Part of its body may have gone: it is never sent twice.
			e.logf("mblb: client %s lost its upload to %s, reset", s.client, sc.leg.Member.Name)
			m.unref()
			s.rst(memberCause(err))
			s.Close(true)
		case neverConnected && !closing:
			m.exclude = append(m.exclude, sc.leg.Member.ID)
			s.send(m, true, sc.lp.loop())
		case m.started:
			e.logf("mblb: client %s lost a partly received response from %s, reset", s.client, sc.leg.Member.Name)
			m.unref()
			s.rst(memberCause(err))
			s.Close(true)
		case finOut && neverTook(m):
			// isolate-server disabled: the member's close reaches the
			// client instead, and what crossed it is not answered (an
			// empty answer keeps the client's order).
			s.deliver(m.seq, getMsg(0), sc.lp.loop())
			m.unref()
		case neverTook(m):
			m.crossed = true
			s.send(m, true, sc.lp.loop())
		case closing:
			// The end was announced (a response before it said close) or
			// ours: the member never took the request, through no fault
			// of its own, so it goes again to any member, with no retry
			// counted (one member alone would otherwise leave none).
			s.send(m, true, sc.lp.loop())
		case e.cfg.DisableRetry || m.tries >= e.cfg.MaxRetries:
			e.logf("mblb: client %s request unanswered by %s and not retried, reset", s.client, sc.leg.Member.Name)
			m.unref()
			s.rst(memberCause(err))
			s.Close(true)
		default:
			m.tries++
			m.exclude = append(m.exclude, sc.leg.Member.ID)
			e.stats.retries.Add(1)
			s.send(m, true, sc.lp.loop())
		}
	}
	for _, s := range finTo {
		s.closeWhenAnswered() // isolate.go
	}
}

// detach takes the connection out of its owner, the pool and the engine.
func (sc *serverConn) detach() {
	e := sc.e
	if sc.owner != nil {
		sc.owner.removeConn(sc)
	} else if e.pool != nil {
		e.pool.remove(sc)
	}
	e.mu.Lock()
	_, ok := e.servers[sc]
	delete(e.servers, sc)
	e.mu.Unlock()
	if !ok {
		return
	}
	sc.ms.conns.Add(-1)
	if e.cfg.Events.LegClosed != nil {
		e.cfg.Events.LegClosed(&sc.leg)
	}
}
