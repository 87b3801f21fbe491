package mblb

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// ClientOptions describe one client connection to the engine.
type ClientOptions struct {
	// Tag is the proxy's own flow record; it comes back in Choice.Tag and
	// Leg.Owner so the proxy can attach server legs to its flow.
	Tag any
	// Source is the address the server side would use for this client
	// (after SNAT); OneConnect's source-mask groups clients by it. Invalid
	// means the client's own address.
	Source netip.Addr
	// ViaLocal says the server connection's source depends on the
	// address the client reached (Local): automap on a virtual whose
	// clients reach many addresses (a network, every port). Dial is then
	// given that address (Member.Via), and OneConnect groups the
	// connections by Source even without a source-mask, so that a
	// connection leaving from one address never serves a client of
	// another.
	ViaLocal bool
	// Rule frames messages when the engine uses rule framing; with
	// declarative framing the framer decides and Rule is not called.
	Rule RuleHandler
	// HTTPRule runs HTTP_REQUEST and HTTP_RESPONSE on an engine with HTTP
	// framing; nil when the client's rules handle neither.
	HTTPRule HTTPRuleHandler
	// SIPRule runs the SIP events (SIP_REQUEST, SIP_RESPONSE, the send
	// and done events) on an engine with SIP framing (sipsession.go); nil
	// when the client's rules handle none.
	SIPRule SIPRuleHandler
	// Touch is called with the time (Unix nanoseconds) whenever bytes
	// move on the client side, to keep the proxy's idle time current.
	Touch func(now int64)
	// Meter, when set, is told of every byte moved on the client side.
	Meter Meter
	// Local is the virtual server's address the client connected to
	// (redirect-rewrite nodes); invalid means the connection's own.
	Local netip.AddrPort
	// Client is the client's address and port when the connection's
	// RemoteAddr is not a TCP one (an HTTP/3 client's lanes), so that
	// what the engine does by the client (SNAT, persistence, lsn
	// translation and LSN:: steering) sees it; invalid means the
	// connection's own.
	Client netip.AddrPort
	// OwnIdle gives the client Idle as its idle timeout (0: none) in
	// place of the engine's, as SetIdleTimeout does: a virtual's timer
	// policy decides it per client when it connects.
	OwnIdle bool
	Idle    time.Duration
}

// Session is one client connection being balanced message by message.
type ClientConn struct {
	e      *Engine
	c      net.Conn
	client netip.AddrPort
	source netip.Addr
	// viaLocal: ClientOptions.ViaLocal.
	viaLocal bool
	tag      any
	rule     RuleHandler
	hrule    HTTPRuleHandler
	// sipRule runs the SIP events of a SIP virtual (sipsession.go).
	sipRule SIPRuleHandler
	// iiop is an IIOP client's routing state (iiopsession.go), for a
	// drained member's connections (iiopdrain.go); nil elsewhere.
	iiop *iiopSession
	// clone is given this client's requests as Config.Clone is (a rule's
	// clone pool command, SetClone); nil: none.
	clone func(received, sent []byte)
	// hresp: hrule has response events to run (HTTPResponseFilter); a
	// response is otherwise handed on as without a rule.
	hresp bool
	hx    HTTPEvent  // the reader's HTTP_REQUEST view, reused
	ax    *HTTPEvent // the ADAPT_REQUEST_ events' view (adapt.go), made at first use
	// persistRule is what the rules' persist commands set for the
	// requests framed from now on (cookie.go); zero: the profiles'.
	persistRule PersistRule
	// up is the request whose body is being streamed (upload.go);
	// upWake and upResume tell the reader its connection has room.
	up upload
	// upHead and upHH: a copy of a streamed request's head, and its
	// parse, while its rules collect its body (the read buffer may move
	// meanwhile); upSplice: what replaces the collected part.
	upHead   []byte
	upHH     httpx.Head
	upHH2    httpx.Head
	upSplice []byte
	// upPreview: the start of a streamed chunked body, decoded, as a
	// REQMOD preview takes it (adaptUpload).
	upPreview []byte
	// reqPlain and reqFiltered are the stream filter's scratch for a
	// whole request body (httpfilter.go); upFiltered for a part of an
	// upload.
	reqPlain, reqFiltered, upFiltered []byte
	// reqChunked is a whole request body framed anew by request-chunking
	// (httpchunking.go).
	reqChunked []byte
	// cacheOut is a cache hit's answer being copied out, and hitHead,
	// hitExtra and hitOut its edits (httpcache.go).
	cacheOut, hitHead, hitExtra, hitOut []byte
	// cev is the scratch of the rules' CACHE_REQUEST and CACHE_RESPONSE
	// (httpcache_events.go); made at the first.
	cev *cacheEventScratch
	// cookieHead is a request head with its cookies decrypted
	// (cookiecrypt.go).
	cookieHead []byte
	upWake     chan struct{}
	upResume   atomic.Bool
	touch      func(int64)
	meter      Meter
	async      bool // a writer goroutine writes to the client (OneConnect)
	// perConn: HTTP without OneConnect balances the connection, not each
	// request: requests follow sticky, the member of the first one.
	perConn   bool
	sticky    Member // guarded by mu
	hasSticky bool
	// decisionLog: a rule's LB::enable_decisionlog (guarded by mu).
	decisionLog bool
	httpDone    bool // reader only: the client asked to close, or sent garbage
	// HTTP, reader only: continued (a 100 Continue was sent for the
	// request in progress), nreq (requests read), upgrading (a request
	// that may open a tunnel was sent: nothing more is framed until its
	// answer), label (ONECONNECT::label in force), reframe (scratch for
	// a re-framed head).
	continued bool
	nreq      int
	upgrading bool
	label     string
	reframe   []byte
	// selPersist: ONECONNECT::select persist is in force (oneconnect.go);
	// reader only, as label.
	selPersist bool
	// current is the target a rule chose last (SetTarget, or a request's
	// HTTP_REQUEST): the client's later requests go there too until a
	// rule chooses another, as a BIG-IP client-side connection keeps its
	// current pool. currentSet: a rule has chosen.
	current    Target
	currentSet bool
	// local is the virtual server's address the client connected to.
	local netip.AddrPort
	// hsend runs LB_SELECTED's edits and HTTP_REQUEST_SEND; hxs is its
	// event, guarded by sendMu (a retry sends from a server reader).
	hsend  HTTPSendHandler
	sendMu sync.Mutex
	hxs    HTTPEvent
	// Tunnel (under mu): tunSC is the server connection the client is
	// joined to once a 101, a CONNECT's 2xx or HTTP::disable made the
	// connection a tunnel; noSwitch says the member refused an upgrade;
	// tunEnds counts the directions that reached their end.
	tunSC    *serverConn
	tunToken bool // the tunnel holds the writing token for good
	noSwitch bool
	tunEnds  atomic.Int32
	// WebSocket (under mu; websocket.go): what WS_REQUEST and
	// WS_RESPONSE decided (WS::enabled false, WS::masking), and the
	// framing of the tunnel once the upgrade is answered.
	ws    wsChoice
	wsTun *wsTunnel

	// parked are requests waiting in a connection queue (under mu;
	// connqueue.go).
	parked []*msg

	// flow is the client's part of flow control (flowcontrol.go).
	flow sessFlow

	// paused are the server connections (on event loops) that stopped
	// reading a streamed response until this client takes its parts.
	paused []*serverConn

	mu   sync.Mutex
	cond sync.Cond
	// wcond wakes the OneConnect writer goroutine only (a hand-off, a
	// response for it, the close), not at every response written inline.
	wcond    sync.Cond
	slots    []*msg // responses by sequence number modulo MaxInFlight
	nextSeq  uint64 // next request's sequence number
	nextOut  uint64 // next response to write
	writing  bool
	closed   bool
	wb, warr net.Buffers
	held     []*msg
	// rawc lets a OneConnect session's responses be written by the server
	// reader that completes them, without a hand-off to the writer
	// goroutine, as long as the client's socket takes them at once: a
	// write that would block hands the rest (backlog, the responses in
	// bheld, bclose when the last one closes the client) to the writer
	// together with the writing token, so a slow client still never stalls
	// a shared server connection.
	rawc    syscall.RawConn
	handoff bool
	bclose  bool
	backlog net.Buffers
	bheld   []*msg
	nbFn    func(uintptr) bool
	nbBufs  net.Buffers
	nbN     int64
	nbErr   error
	conns   []*serverConn // this client's own server connections
	dirty   []*serverConn // written to by this read, not yet flushed (reader only)

	// lp is set when the session is served by an event loop rather than
	// goroutines (loop_linux.go). Everything below is then the loop's:
	// stalled holds requests read beyond MaxInFlight, in order, and the
	// client is not read again until they are out; eof means the client
	// half-closed and is closed once answered; flushPosted (under mu)
	// means a write of ready responses is already posted to the loop.
	lp          *sessLoop
	stalled     queue
	eof         bool
	flushPosted bool

	dialMu sync.Mutex // one dial at a time, so one connection per member

	lastActive atomic.Int64
	// idleOverride is a rule's idle timeout for this client
	// (IP::idle_timeout): 0 the engine's, negative none, else nanoseconds.
	idleOverride atomic.Int64
	closedFlag   atomic.Bool
	// abortOwn: the client reset, and isolate-abort disabled passes that
	// on to its own server connections (isolate.go).
	abortOwn atomic.Bool
	// expireOwn: the client expired idle, and isolate-expire disabled
	// passes that on to its own server connections; clientFIN: the
	// client half-closed, which isolate-client enabled keeps from them;
	// finBy: a member's close was passed on (isolate-server disabled),
	// and the client closes once answered or at this time (Unix ns)
	// (isolate.go).
	expireOwn, clientFIN atomic.Bool
	finBy                atomic.Int64
	// eofAt is when the client half-closed (Unix ns, 0: not), zwFD its
	// socket plus one while the zero-window timer may read it, and zwAt
	// since when that socket has held bytes for a zero window (the
	// janitor's alone): CloseTimers (tcpclose.go).
	eofAt atomic.Int64
	zwFD  atomic.Int32
	zwAt  int64
	// resetLast: the response that closes the client (a rule's
	// HTTP::respond -reset) is followed by a reset, not a FIN.
	resetLast atomic.Bool
	// hsts is HTTP::hsts's Strict-Transport-Security line for the
	// connection's answers (nil inside: none), in place of the http
	// profile's; nil: the profile's.
	hsts atomic.Pointer[[]byte]
	// ntlm is the member connection group the client's NTLM
	// authentication lives on, nil while none (ntlm.go); ntlmOff is
	// NTLM::disable.
	ntlm    atomic.Pointer[ntlmPin]
	ntlmOff atomic.Bool
	// passthrough and rejected say why the HTTP filter last went into
	// passthrough, and why it rejected the client (HTTP::passthrough_reason,
	// HTTP::reject_reason); 0: it did not.
	passthrough, rejected atomic.Uint32
	bytesIn, bytesOut     atomic.Uint64
	msgsIn, msgsOut       atomic.Uint64
	data                  Data
	rel, collect          int
	runClient             func(*Data) error
	emitFn                func([]byte, Target, string) error
}

// SessionStats are one client connection's counters.
type SessionStats struct {
	BytesIn, BytesOut uint64
	// Requests and Responses count messages from and to the client.
	Requests, Responses uint64
	// InFlight is the number of requests not yet answered to the client.
	InFlight int
}

// NewClientConn takes charge of an accepted client connection. Run serves it.
func (e *Engine) NewClientConn(c net.Conn, opt ClientOptions) *ClientConn {
	if opt.Client.IsValid() {
		return e.newSession(c, opt.Client, opt)
	}
	return e.newSession(c, rawsock.AddrPortOf(c.RemoteAddr()), opt)
}

// newSession is NewClientConn for c, nil on an event loop.
func (e *Engine) newSession(c net.Conn, client netip.AddrPort, opt ClientOptions) *ClientConn {
	s := &ClientConn{
		e:       e,
		c:       c,
		client:  client,
		tag:     opt.Tag,
		rule:    opt.Rule,
		hrule:   opt.HTTPRule,
		hresp:   handlesResponses(opt.HTTPRule),
		touch:   opt.Touch,
		meter:   opt.Meter,
		async:   e.pool != nil,
		perConn: e.cfg.Request.Mode == HTTP && e.pool == nil,
		slots:   make([]*msg, e.cfg.MaxInFlight),
	}
	s.local = opt.Local
	s.sipRule = opt.SIPRule
	if c != nil && !s.local.IsValid() {
		s.local = rawsock.AddrPortOf(c.LocalAddr())
	}
	if sh, ok := opt.HTTPRule.(HTTPSendHandler); ok && sh.HandlesRequestSend() {
		s.hsend = sh
	}
	if sc, ok := c.(syscall.Conn); ok && s.async {
		s.rawc, _ = sc.SyscallConn()
		s.nbFn = s.nbWrite
	}
	s.source, s.viaLocal = opt.Source, opt.ViaLocal
	if !s.source.IsValid() {
		s.source = s.client.Addr()
	}
	s.cond.L = &s.mu
	s.wcond.L = &s.mu
	s.lastActive.Store(time.Now().UnixNano())
	s.data.side = ClientSide
	s.data.client = s.client
	if s.rule != nil {
		s.runClient = s.rule.ClientData
	}
	s.emitFn = s.emit
	if e.fc != nil {
		s.flow.wakeCh = make(chan struct{}, 1)
		s.flow.resumeFn = s.flowResume
	}
	if opt.OwnIdle {
		s.SetIdleTimeout(opt.Idle)
	}
	e.mu.Lock()
	if e.closed {
		s.closed = true
		s.closedFlag.Store(true)
	} else {
		e.sessions[s] = struct{}{}
	}
	e.mu.Unlock()
	return s
}

// Rebind moves a session that has not run yet onto c, the same client's
// connection by another way: an HTTP virtual with the http2 profile
// starts each client's session on an in-memory pipe, runs
// CLIENT_ACCEPTED and the TLS handshake with it, and moves it onto the
// client's own connection when the client turns out to speak HTTP/1,
// keeping what the rules set on it (persistence, target, idle timeout).
func (s *ClientConn) Rebind(c net.Conn) {
	s.c = c
	s.rawc, s.nbFn = nil, nil
	if sc, ok := c.(syscall.Conn); ok && s.async {
		s.rawc, _ = sc.SyscallConn()
		s.nbFn = s.nbWrite
	}
}

// Client is the client's address.
func (s *ClientConn) Client() netip.AddrPort { return s.client }

// LastActive is when bytes last moved on the client side (Unix nanoseconds).
func (s *ClientConn) LastActive() int64 { return s.lastActive.Load() }

// IdleTimeout is the client's idle timeout (0: none): the engine's, or
// what a rule set with SetIdleTimeout.
func (s *ClientConn) IdleTimeout() time.Duration {
	switch o := s.idleOverride.Load(); {
	case o < 0:
		return 0
	case o > 0:
		return time.Duration(o)
	}
	return s.e.cfg.IdleTimeout
}

// SetIdleTimeout gives this client an idle timeout of its own (0: none),
// for IP::idle_timeout. The janitor checks it every quarter of the
// shortest timeout it serves.
func (s *ClientConn) SetIdleTimeout(d time.Duration) {
	s.e.ownIdle.Store(true)
	if d <= 0 {
		s.idleOverride.Store(-1)
		return
	}
	s.idleOverride.Store(int64(d))
	s.e.wantTick(d / 4)
}

// Stats returns the session's counters.
func (s *ClientConn) Stats() SessionStats {
	s.mu.Lock()
	inflight := int(s.nextSeq - s.nextOut)
	s.mu.Unlock()
	return SessionStats{
		BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load(),
		Requests: s.msgsIn.Load(), Responses: s.msgsOut.Load(),
		InFlight: inflight,
	}
}

func (s *ClientConn) isClosed() bool { return s.closedFlag.Load() }

// Refresh counts now as activity on the client side, so that a rule
// (FLOW::refresh) can keep a quiet connection from its idle timeout.
func (s *ClientConn) Refresh() { s.active() }

func (s *ClientConn) active() {
	now := s.e.now()
	s.lastActive.Store(now)
	if s.touch != nil {
		s.touch(now)
	}
}

// Run reads and dispatches the client's messages until the connection ends.
// A client that half-closes gets its outstanding answers before the close.
// It returns nil for an orderly end and the reason otherwise.
func (s *ClientConn) Run() error {
	if s.isClosed() {
		resetConn(s.c)
		return errClosed
	}
	if s.e.cfg.Request.Mode == SIP {
		return s.runSIP() // sipsession.go
	}
	if s.e.cfg.Request.Mode == IIOP {
		return s.runIIOP() // iiopsession.go
	}
	if s.async {
		go s.writer()
	}
	e := s.e
	fr, err := s.requestFramer()
	if err != nil {
		return err
	}
	st := newStream(fr, e.cfg.MaxMessageSize)
	defer st.release()
	defer s.abortUpload() // upload.go
	defer s.flushDirty()
	if e.cfg.Close.ZeroWindow > 0 {
		s.watchFD(connFD(s.c)) // tcpclose.go
	}
	for {
		k, err := st.read(s.c)
		if k > 0 {
			if ferr := s.take(&st, k); ferr != nil {
				return ferr
			}
			if fc := e.fc; fc != nil && !s.upgrading {
				if s.flowAwait(fc) != nil {
					return nil
				}
			}
			for s.upgrading {
				sc := s.awaitSwitch()
				if sc != nil {
					return s.tunnelClient(&st, sc)
				}
				if s.isClosed() {
					return nil
				}
				// Refused: what followed the request is HTTP again.
				if ferr := s.take(&st, 0); ferr != nil {
					return ferr
				}
			}
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				s.tooLarge()
				return err
			}
			if errors.Is(err, io.EOF) && s.uploadCut() { // upload.go
				return nil
			}
			if errors.Is(err, io.EOF) {
				s.noteEOF() // tcpclose.go
				s.noteFIN() // isolate.go
				s.drain()
				s.Close(false)
				return nil
			}
			if s.isClosed() {
				return nil // closed on purpose: idle, rule, proxy
			}
			s.clientReset(err) // isolate.go
			return err
		}
	}
}

// requestFramer is the client side's framer, nil with rule framing; it
// fails when rule framing has no rule.
func (s *ClientConn) requestFramer() (Framer, error) {
	e := s.e
	if e.cfg.Request.Mode != Rule {
		fr, _ := e.cfg.Request.New(e.cfg.MaxMessageSize)
		return fr, nil
	}
	if s.rule == nil {
		e.logf("mblb: client %s: rule framing without a rule, reset", s.client)
		s.Close(true)
		return nil, errors.New("mblb: rule framing needs a rule")
	}
	return nil, nil
}

// take counts k bytes just read into st and dispatches the messages they
// complete. A non-nil error means the session is closed.
func (s *ClientConn) take(st *stream, k int) error {
	s.active()
	s.bytesIn.Add(uint64(k))
	if s.meter != nil {
		s.meter.Received(k)
	}
	var ferr error
	if st.fr != nil {
		ferr = s.frame(st)
	} else {
		var rejected bool
		rejected, ferr = ruleStep(&s.data, st, &s.rel, &s.collect, s.runClient, s.emitFn)
		if ferr == nil && rejected {
			s.flushDirty()
			s.rst(rstcause.RuleReject)
			s.Close(true)
			return errors.New("mblb: rejected by rule")
		}
	}
	s.flushDirty()
	if ferr != nil {
		if errors.Is(ferr, ErrTooLarge) {
			s.tooLarge()
			return ferr
		}
		if !errors.Is(ferr, errClosed) {
			s.e.logf("mblb: client %s: %v, reset", s.client, ferr)
			var rf ruleFailed
			switch {
			case errors.Is(ferr, httpx.ErrHeaderTooLarge) || errors.Is(ferr, httpx.ErrTooManyHeaders):
				s.rst(rstcause.HeaderTooLarge)
			case errors.As(ferr, &rf):
				s.rst(rstcause.TCLError)
			}
		}
		s.Close(true)
		return ferr
	}
	return nil
}

// rst reports the reset of the client about to be sent, with its cause
// (one atomic load while tm.rstcause.log is off).
func (s *ClientConn) rst(c rstcause.Cause) { s.e.cfg.Rst.Reset(rstArea, s.local, s.client, c) }

// rstRule reports the reset of a client whose rule failed (err) or
// rejected it.
func (s *ClientConn) rstRule(err error) {
	if err != nil {
		s.rst(rstcause.TCLError)
		return
	}
	s.rst(rstcause.RuleReject)
}

// rstMember reports the reset of a client whose member connection sc
// ended under it, with the cause of that end as far as it is known yet
// (none: the member's end has words of ours [M]).
func (s *ClientConn) rstMember(sc *serverConn) {
	if !s.e.cfg.Rst.On() {
		return
	}
	sc.qmu.Lock()
	err := sc.failErr
	sc.qmu.Unlock()
	s.rst(memberCause(err))
}

// rstArea is the code location the engine prints in its reset lines.
const rstArea = "mblb"

// tooLarge resets a client that sent a message over MaxMessageSize.
func (s *ClientConn) tooLarge() {
	s.e.stats.oversize.Add(1)
	s.e.logf("mblb: client %s sent a message over %d bytes, reset", s.client, s.e.cfg.MaxMessageSize)
	s.Close(true)
}

// frame cuts the client's bytes into messages and dispatches each.
func (s *ClientConn) frame(st *stream) error {
	if rf, ok := st.fr.(*httpx.RequestFramer); ok {
		return s.frameHTTP(st, rf)
	}
	for {
		b, err := st.next()
		if err != nil || b == nil {
			return err
		}
		if err := s.emit(b, Target{}, ""); err != nil {
			return err
		}
	}
}

// emit copies one framed request out of the read buffer and dispatches it.
func (s *ClientConn) emit(b []byte, t Target, persist string) error {
	m := getMsg(len(b))
	copy(m.b, b)
	m.target, m.persist = t, persist
	if s.e.pool != nil {
		m.hx.label = s.ocLabel(persist)
	}
	if c := s.e.cfg.Clone; c != nil {
		c(s.client, b, b)
	}
	if s.clone != nil {
		s.clone(b, b)
	}
	s.msgsIn.Add(1)
	if !s.dispatch(m) {
		return errClosed
	}
	return nil
}

// flushDirty writes the requests this read queued.
//
// On an event loop, a server connection living on the same loop is
// written at the end of the loop's batch instead: on a pooled connection
// other clients' requests handled in the same batch join the same write,
// and on a client's own connections the batch's writes wake the members
// together, which then find several requests at once instead of one per
// wake-up (length framing at 64 clients: the members' CPU per message
// 11.5 -> 9.5 us; figures in README.md, "On event loops").
func (s *ClientConn) flushDirty() {
	cur := s.lp.loop()
	for i, sc := range s.dirty {
		if cur != nil && sc.lp.loop() == cur {
			sc.lp.deferFlush(sc)
		} else {
			sc.flush(cur)
		}
		s.dirty[i] = nil
	}
	s.dirty = s.dirty[:0]
}

// dispatch numbers a request, waiting while the client has MaxInFlight
// unanswered, and queues it on a server connection. On an event loop it
// does not wait: the request is held, with every one after it, until the
// window moves.
func (s *ClientConn) dispatch(m *msg) bool {
	w := uint64(len(s.slots))
	s.mu.Lock()
	if s.lp != nil {
		if !s.closed && (s.stalled.size > 0 || s.nextSeq-s.nextOut >= w) {
			s.mu.Unlock()
			s.stalled.push(m)
			return true
		}
	} else {
		if !s.closed && s.nextSeq-s.nextOut >= w {
			// Answers can only come once the queued requests are out.
			s.mu.Unlock()
			s.flushDirty()
			s.mu.Lock()
		}
		for !s.closed && s.nextSeq-s.nextOut >= w {
			s.cond.Wait()
		}
	}
	if s.closed {
		s.mu.Unlock()
		m.unref()
		return false
	}
	return s.number(m)
}

// notePipelined tells the engine's Pipelined of a request framed while an
// earlier one of the client is unanswered (numbered and not yet written
// back, or held by a loop until the window moves). The first request of
// a connection costs nothing.
func (s *ClientConn) notePipelined() {
	fn := s.e.cfg.Pipelined
	if fn == nil || s.nreq == 0 {
		return
	}
	s.mu.Lock()
	waiting := s.nextSeq != s.nextOut || (s.lp != nil && s.stalled.size > 0)
	s.mu.Unlock()
	if waiting {
		fn()
	}
}

// number gives m the client's next sequence number and sends it. The
// caller holds mu, which number releases.
func (s *ClientConn) number(m *msg) bool {
	m.seq = s.nextSeq
	s.nextSeq++
	s.mu.Unlock()
	if m.hx.local {
		// An answer the proxy made (on a loop, where localReply does
		// not wait for the window): it is the response for its place.
		s.deliver(m.seq, m, s.lp.loop())
		return true
	}
	m.sess = s
	s.e.stats.messages.Add(1)
	// An exclusive pool may make the next message wait for a connection
	// to go idle: none may then be held by a request not yet written.
	return s.send(m, s.e.pool != nil && s.e.pool.exclusive, s.lp.loop())
}

// send chooses a member and a server connection for m and queues it there,
// choosing again when a connect fails. It takes over the caller's reference.
// With no member left, the client is reset. With flush it writes at once;
// otherwise the connection joins the reader's dirty list. cur is the event
// loop running the caller (nil on goroutines): a connection it opens lives
// there.
func (s *ClientConn) send(m *msg, flush bool, cur *evl) bool {
	e := s.e
	for attempt := 0; attempt < maxPickAttempts; attempt++ {
		if s.isClosed() {
			if t := m.ticket; t != nil {
				m.ticket = nil
				t.Cancel()
			}
			m.unref()
			return false
		}
		t := m.target
		stay := false
		s.mu.Lock()
		perConn, dlog := s.perConn, s.decisionLog
		// A rule that names another pool, a member or a node moves
		// the connection; otherwise it stays with its member.
		if perConn && s.hasSticky && !(m.ruleTarget && (t.Node || t.Member.IsValid() || t.Pool != s.sticky.Pool)) {
			t = Target{Pool: s.sticky.Pool, Member: s.sticky.Addr}
			stay = true
		}
		s.mu.Unlock()
		client := s.client
		if m.hx.xff.IsValid() {
			client = netip.AddrPortFrom(m.hx.xff, 0)
		}
		cookie := !stay && !m.ruleTarget && m.cookie.IsValid() && t.Member == m.cookie && !t.Node
		mem, err := e.cfg.Pick(Choice{Exclude: m.exclude, Target: t, Persist: m.persist, Client: client, Tag: s.tag, Stay: stay, Cookie: cookie, NoPersist: m.hx.noPersist, Msg: m.b,
			Queueable: m.queueable(), Ticket: m.ticket, DecisionLog: dlog})
		m.ticket = nil
		if err != nil {
			if t := queuedTicket(err); t != nil {
				m.ticket = t
				s.park(m)
				return true
			}
		}
		if err == nil && excluded(m.exclude, mem.ID) {
			err = ErrNoMember
		}
		if err == nil && perConn {
			s.mu.Lock()
			s.sticky, s.hasSticky = mem, true
			s.mu.Unlock()
		}
		if errors.Is(err, ErrNoMember) && len(m.exclude) > 0 && !m.crossed {
			// A retry that excluded every member left goes back, once,
			// to one it excluded (on a new connection), as HAProxy's
			// retries go to the same server: a pool of one member would
			// otherwise lose every request its member's reset caught.
			m.crossed = true
			m.exclude = m.exclude[:0]
			continue
		}
		if err != nil {
			var ans *Answered
			if !errors.As(err, &ans) && m.hx.fallback != "" {
				ans = &Answered{Response: e.fallbackResponse(m.hx.fallback)}
			}
			if ans != nil {
				// LB_FAILED answered the client itself, or the fallback
				// host: that is the request's response.
				s.answerInstead(m, ans.Response, m.httpClose || !ans.KeepAlive, cur)
				return true
			}
			e.logf("mblb: client %s: %v, reset", s.client, err)
			cause := rstcause.NoServer
			if m.refused != 0 {
				cause = m.refused // every member's connect refused for its source (srcidle.go)
			}
			m.unref()
			s.rst(cause)
			s.Close(true)
			return false
		}
		var sc *serverConn
		if m.hx.tunnel != 0 && (s.lp != nil || e.pool != nil) {
			sc, err = s.tunnelConn(mem)
		} else {
			sc, err = s.connFor(mem, m.hx.label, cur)
		}
		if err != nil {
			if errors.Is(err, errClosed) {
				m.unref()
				return false
			}
			if errors.Is(err, errNoRoom) {
				continue // choose again: the member has no room now
			}
			if c := refusedCause(err); c != 0 {
				m.refused = c // srcidle.go
			}
			m.exclude = append(m.exclude, mem.ID)
			continue
		}
		if s.hsend != nil && m.hx.hlen > 0 && sc.connecting.Load() {
			// SERVER_CONNECTED comes first: HTTP_REQUEST_SEND runs when
			// the connect completes (sendHooks).
			m.hx.sendPending = true
		} else if s.hsend != nil && m.hx.hlen > 0 {
			var ok bool
			if m, ok = s.requestSend(m, sc); !ok {
				if sc.owner == nil {
					e.pool.released(sc)
				}
				return false
			}
		}
		if rl := e.cfg.Request.HTTP.RequestLog; rl != nil && m.hx.hlen > 0 && m.hx.logAt == 0 && m.tries == 0 {
			if !s.logRequest(rl, m, sc) { // reqlog.go
				// Its line could not be logged: the profile answers.
				s.giveBack(sc)
				s.answerInstead(m, rl.Respond, m.httpClose || rl.CloseOnError, cur)
				return true
			}
		}
		if sf := e.cfg.Request.HTTP.SFlow; sf != nil && m.hx.hlen > 0 && m.tries == 0 && !m.hx.sflow && sf.Pick() {
			s.sflowPicked(m) // sflow.go
		}
		if m.hx.tunnel == tunnelNow {
			s.joinTunnel(sc)
		}
		if m.hx.upload {
			s.uploadConn(sc) // upload.go
		}
		if sc.submit(m, flush, cur) {
			if !flush {
				s.markDirty(sc)
			}
			return true
		}
		// The connection ended between choice and write (idle close or a
		// failure being handled): choose again without blaming anyone.
		s.giveBack(sc)
	}
	e.logf("mblb: client %s: no server connection after %d attempts, reset", s.client, maxPickAttempts)
	m.unref()
	s.Close(true)
	return false
}

// giveBack returns a connection chosen for a request that will not go
// on it.
func (s *ClientConn) giveBack(sc *serverConn) {
	if sc.owner == nil {
		s.e.pool.released(sc)
	} else {
		s.removeConn(sc)
	}
}

func (s *ClientConn) markDirty(sc *serverConn) {
	for _, x := range s.dirty {
		if x == sc {
			return
		}
	}
	s.dirty = append(s.dirty, sc)
}

func excluded(list []MemberID, id MemberID) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

// connFor returns the connection to carry a message to m: the client's own
// (opened on the first message to m, as seed 000 §2.2 saw) or a pooled one.
func (s *ClientConn) connFor(m Member, label string, cur *evl) (*serverConn, error) {
	if s.e.pool != nil {
		return s.e.pool.acquire(s, m, label, cur)
	}
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	s.mu.Lock()
	for _, sc := range s.conns {
		if sc.leg.Member.ID == m.ID && !sc.down.Load() {
			s.mu.Unlock()
			return sc, nil
		}
	}
	s.mu.Unlock()
	if sp := s.e.spare; sp != nil {
		if sc := sp.take(s, m, cur); sc != nil { // min-conn (spare.go)
			return s.own(sc, (*serverConn).start)
		}
	}
	return s.dialOwn(m, cur)
}

// dialOwn opens a server connection of the client's own to m and starts
// it, unless the client closed meanwhile (errClosed).
func (s *ClientConn) dialOwn(m Member, cur *evl) (*serverConn, error) {
	return s.dialOwnWith(m, cur, (*serverConn).start)
}

// dialOwnWith is dialOwn with the connection's reader started by start
// (SIP sessions read their members' messages their own way).
func (s *ClientConn) dialOwnWith(m Member, cur *evl, start func(*serverConn)) (*serverConn, error) {
	sc, err := s.e.dial(s, m, s, cur)
	if err != nil {
		return nil, err
	}
	return s.own(sc, start)
}

// own files sc, just dialled or opened ahead (min-conn, spare.go), as
// the client's own and starts its reader with start, unless the client
// closed meanwhile (errClosed).
func (s *ClientConn) own(sc *serverConn, start func(*serverConn)) (*serverConn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sc.shutdown()
		start(sc)
		return nil, errClosed
	}
	s.conns = append(s.conns, sc)
	s.mu.Unlock()
	start(sc)
	return sc, nil
}

func (s *ClientConn) removeConn(sc *serverConn) {
	s.mu.Lock()
	for i, x := range s.conns {
		if x == sc {
			last := len(s.conns) - 1
			s.conns[i] = s.conns[last]
			s.conns[last] = nil
			s.conns = s.conns[:last]
			break
		}
	}
	s.mu.Unlock()
}

// answerInstead makes resp the answer to m in place of a member's (an
// LB_FAILED rule's, the fallback host's, a request-log failure's proxy
// response): a tunnel it asked for is refused, an upload's body goes
// nowhere (upload.go), and the client is closed after it when
// closeAfter.
func (s *ClientConn) answerInstead(m *msg, resp []byte, closeAfter bool, cur *evl) {
	r := getMsg(len(resp))
	copy(r.b, resp)
	r.closeAfter = closeAfter
	seq := m.seq
	if m.hx.tunnel != 0 {
		s.switchRefused()
	}
	if m.hx.upload {
		s.up.discard = true
	}
	m.unref()
	s.deliver(seq, r, cur)
}

// deliver files response r for request seq and writes it, with any that
// follow it in order, when it is the next one the client is owed. cur is
// the event loop running the caller, nil on goroutines.
func (s *ClientConn) deliver(seq uint64, r *msg, cur *evl) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		r.unref()
		return
	}
	s.slots[seq%uint64(len(s.slots))] = r
	var err error
	finished := false
	if seq == s.nextOut && !s.writing {
		switch {
		case s.lp != nil:
			// Only the session's own loop writes to its socket.
			if cur != nil && cur == s.lp.loop() {
				if s.lp.deferWrite() {
					break // the loop's batch end writes it
				}
				s.writing = true
				err = s.flushLocked(true)
				finished = s.loopFlushed()
			} else if !s.flushPosted {
				s.flushPosted = true
				s.lp.postFlush()
			}
		case !s.async:
			s.writing = true
			err = s.flushLocked(false)
		case s.rawc != nil:
			s.writing = true
			err = s.flushLocked(true)
		default:
			s.wcond.Signal()
		}
	}
	s.mu.Unlock()
	if err != nil {
		s.Close(s.resetOnEnd(err))
	} else if finished {
		s.Close(false)
	}
}

// flushLocked writes every response ready in order. The caller holds mu and
// the writing token; mu is released around the write, and the token is
// given back when nothing is left. With nb (a OneConnect server reader
// writing inline) no write blocks: what the socket does not take at once
// goes to the writer goroutine, which keeps the token until it is out.
func (s *ClientConn) flushLocked(nb bool) error {
	for {
		last, ok := s.gather()
		if !ok {
			return nil
		}
		s.mu.Unlock()
		var n int64
		var err error
		rest := net.Buffers(nil)
		if nb {
			n, rest, err = s.tryWrite(s.wb)
		} else if len(s.held) == 1 {
			var k int
			k, err = s.c.Write(s.held[0].b)
			n = int64(k)
		} else {
			n, err = s.wb.WriteTo(s.c)
		}
		if done, err := s.wrote(n, rest, err, last); done {
			return err
		}
	}
}

// gather takes the responses ready in order for one write (held, wb) and
// reports whether the last of them closes the connection; ok false, with
// the writing token given back, when none is ready or the session is
// closed. The caller holds mu and the writing token.
func (s *ClientConn) gather() (last, ok bool) {
	w := uint64(len(s.slots))
	s.held = s.held[:0]
	s.wb = s.warr[:0]
	for {
		i := s.nextOut % w
		r := s.slots[i]
		if r == nil {
			break
		}
		s.slots[i] = nil
		s.held = append(s.held, r)
		s.wb = append(s.wb, r.b)
		if r.more {
			// The rest of this response has not arrived: nothing
			// after it may be written yet.
			break
		}
		s.nextOut++
		if r.closeAfter {
			last = true
			break
		}
	}
	if len(s.held) == 0 || s.closed {
		s.writing = false
		for _, r := range s.held {
			r.unref()
		}
		s.cond.Broadcast() // a tunnel waits for the last answer's write
		return false, false
	}
	s.warr = s.wb[:0]
	s.cond.Broadcast() // the window moved; the reader and drain may go on
	if len(s.paused) > 0 {
		s.resumeParts() // httpstream.go
	}
	return last, true
}

// wrote takes the outcome of a write of what gather took (n bytes
// written, rest not taken by a socket that would block, err) and reports
// whether flushing is done (with its error) or goes on. The caller holds
// the writing token, not mu; mu is held on return.
func (s *ClientConn) wrote(n int64, rest net.Buffers, err error, last bool) (bool, error) {
	s.bytesOut.Add(uint64(n))
	if s.meter != nil && n > 0 {
		s.meter.Sent(int(n))
	}
	if len(rest) > 0 && err == nil {
		s.mu.Lock()
		if s.closed {
			s.writing = false
			s.mu.Unlock()
			for _, r := range s.held {
				r.unref()
			}
			s.mu.Lock()
			return true, nil
		}
		s.backlog = append(s.backlog[:0], rest...)
		s.bheld = append(s.bheld[:0], s.held...)
		s.bclose = last
		s.handoff = true
		s.wcond.Signal()
		return true, nil
	}
	s.msgsOut.Add(uint64(len(s.held)))
	for _, r := range s.held {
		r.unref()
	}
	s.active()
	s.mu.Lock()
	if err == nil && last {
		err = errCloseAfter
	}
	if err != nil {
		s.writing = false
		s.cond.Broadcast()
		return true, err
	}
	return false, nil
}

// tryWrite writes what the client's socket takes without blocking and
// returns the bytes written and the buffers (or parts) left. The caller
// holds the writing token, which guards the nb fields.
func (s *ClientConn) tryWrite(bufs net.Buffers) (int64, net.Buffers, error) {
	s.nbBufs, s.nbN, s.nbErr = bufs, 0, nil
	var err error
	if s.lp != nil {
		s.lp.write(s)
	} else {
		err = s.rawc.Write(s.nbFn)
	}
	if s.nbErr != nil {
		err = s.nbErr
	}
	bufs, n := s.nbBufs, s.nbN
	s.nbBufs, s.nbErr = nil, nil
	return n, bufs, err
}

// nbWrite is tryWrite's callback, kept as a method value so that a write
// allocates nothing.
func (s *ClientConn) nbWrite(fd uintptr) bool {
	for len(s.nbBufs) > 0 {
		b := s.nbBufs[0]
		if len(b) == 0 {
			s.nbBufs = s.nbBufs[1:]
			continue
		}
		k, e := syscall.Write(int(fd), b)
		if e == syscall.EINTR {
			continue
		}
		if k > 0 {
			s.nbN += int64(k)
			if k == len(b) {
				s.nbBufs = s.nbBufs[1:]
			} else {
				s.nbBufs[0] = b[k:]
			}
		}
		if e != nil {
			if e != syscall.EAGAIN {
				s.nbErr = &net.OpError{Op: "write", Net: "tcp", Err: e}
			}
			return true
		}
		if k < len(b) {
			return true
		}
	}
	return true
}

// writer is the client writer of a OneConnect session: it finishes the
// writes a shared server connection's reader could not make without
// waiting for the client (and, without a raw socket, makes them all).
func (s *ClientConn) writer() {
	w := uint64(len(s.slots))
	s.mu.Lock()
	for {
		for !s.closed && !s.handoff && (s.writing || s.slots[s.nextOut%w] == nil) {
			s.wcond.Wait()
		}
		if s.closed {
			break
		}
		if s.handoff {
			s.handoff = false
			last := s.bclose
			s.mu.Unlock()
			n, err := s.backlog.WriteTo(s.c)
			s.bytesOut.Add(uint64(n))
			if s.meter != nil && n > 0 {
				s.meter.Sent(int(n))
			}
			s.msgsOut.Add(uint64(len(s.bheld)))
			s.dropHeld()
			s.active()
			s.mu.Lock()
			if err == nil && last {
				err = errCloseAfter
			}
			if err != nil {
				s.writing = false
				s.cond.Broadcast()
				s.mu.Unlock()
				s.Close(s.resetOnEnd(err))
				return
			}
		} else {
			s.writing = true
		}
		if err := s.flushLocked(false); err != nil {
			s.mu.Unlock()
			s.Close(s.resetOnEnd(err))
			return
		}
	}
	if s.handoff {
		s.handoff = false
		s.writing = false
		s.dropHeld()
	}
	s.mu.Unlock()
}

// dropHeld lets go of the responses of a handed-off write (written, or
// never to be). The caller holds the writing token.
func (s *ClientConn) dropHeld() {
	for i, r := range s.bheld {
		r.unref()
		s.bheld[i] = nil
	}
	s.bheld = s.bheld[:0]
}

// drain waits, after the client half-closed, until every answer is written.
func (s *ClientConn) drain() {
	s.mu.Lock()
	for !s.closed && (s.nextOut != s.nextSeq || s.writing) {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// EndFlow is Close, as the connection table's flows.Ender: the engines
// that make a flow per connection name the session itself rather than a
// closure over it (an allocation per connection).
func (s *ClientConn) EndFlow(reset bool) { s.Close(reset) }

// Close ends the session: reset true resets the client (idle timeout,
// `delete sys connection`, errors), false closes it in order. Its own
// server connections close with it, or once the answers still owed on
// them have come, within Config.ShutdownTimeout; requests it has on
// shared ones are answered into the void.
func (s *ClientConn) Close(reset bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.closedFlag.Store(true)
	s.zwFD.Store(0)
	for i, r := range s.slots {
		if r != nil {
			r.unref()
			s.slots[i] = nil
		}
	}
	conns := s.conns
	s.conns = nil
	parked := s.parked
	s.parked = nil
	s.resumeParts()
	if s.tunSC != nil && s.tunSC.owner == nil {
		conns = append(conns, s.tunSC)
	}
	s.cond.Broadcast()
	s.wcond.Broadcast()
	s.mu.Unlock()
	if s.lp != nil {
		if reset {
			s.e.stats.resets.Add(1)
		}
		s.lp.close(s, reset)
	} else if reset {
		s.e.stats.resets.Add(1)
		resetConn(s.c)
	} else {
		if tc, ok := s.c.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		s.c.Close()
	}
	for _, sc := range conns {
		switch {
		case sc.owner != s:
			sc.shutdown()
		case s.abortOwn.Load():
			sc.fail(ErrAborted) // isolate-abort disabled (isolate.go)
		case s.expireOwn.Load():
			sc.shutdown() // isolate-expire disabled
		case s.clientFIN.Load() && s.e.cfg.KeepOnClientClose:
			s.e.logf("mblb: client %s closed; its connection to %s %s stays open (isolate-client enabled)",
				s.client, sc.leg.Member.Name, sc.leg.Remote)
		default:
			sc.drainOrEnd()
		}
	}
	if len(parked) > 0 {
		cancelParked(parked)
	}
	if s.e.pool != nil {
		if s.e.cfg.Request.HTTP.NTLM {
			s.e.pool.ntlmClosed(s) // ntlm.go
		}
		s.e.pool.wake()
	}
	s.e.mu.Lock()
	delete(s.e.sessions, s)
	s.e.mu.Unlock()
}

// Socket runs fn with the client's socket descriptor, for a rule's
// socket commands (TCP::rtt, IP::tos ...): the loop's own socket, or the
// one under the client's net.Conn. fn runs on the caller's thread, which
// on a loop is the loop's (rules run there), so the descriptor is live.
func (s *ClientConn) Socket(fn func(fd int) error) error {
	if fd, ok := s.lp.socket(); ok {
		return fn(fd)
	}
	return rawsock.Control(s.c, fn)
}

// SetHSTS makes line (ending in CRLF; nil: none) the
// Strict-Transport-Security field added to the connection's answers
// that have none, in place of the http profile's hsts (HTTP::hsts).
func (s *ClientConn) SetHSTS(line []byte) { s.hsts.Store(&line) }

// HSTS is the line SetHSTS set, and whether it was set.
func (s *ClientConn) HSTS() ([]byte, bool) {
	if p := s.hsts.Load(); p != nil {
		return *p, true
	}
	return nil, false
}

// Why the HTTP filter of a client connection went into passthrough
// (ClientConn.Passthrough), numbered as F5 lists HTTP::passthrough_reason's
// answers [M: the numbers are the list's order].
const (
	PassthroughNone       = 0 // F5's "Unknown"
	PassthroughRule       = 1 // HTTP::disable
	PassthroughConnect    = 2 // a CONNECT the member accepted
	PassthroughWebSockets = 3 // an Upgrade the member accepted (101)
)

// Why the HTTP filter rejected a client's request (ClientConn.Rejected)
// [M: F5 documents no list for HTTP::reject_reason].
const (
	RejectNone            = 0
	RejectBadRequest      = 1 // a request that cannot be read: 400
	RejectOversizeHeaders = 2 // past max-header-size: reset
	RejectExcessHeaders   = 3 // past max-header-count: reset
	RejectBodyTooLarge    = 4 // past the request body bound: reset
)

// Passthrough is why the HTTP filter last went into passthrough
// (PassthroughNone when it did not), for HTTP::passthrough_reason.
func (s *ClientConn) Passthrough() uint32 { return s.passthrough.Load() }

// Rejected is why the HTTP filter rejected the client's request
// (RejectNone when it did not), for HTTP::reject_reason.
func (s *ClientConn) Rejected() uint32 { return s.rejected.Load() }
