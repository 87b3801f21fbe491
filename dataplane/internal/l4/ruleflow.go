package l4

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rstcause"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/tlsprof"

	"github.com/openltm/openltm/rules"
)

// maxRefires bounds how often a side's data event runs again on data the
// rule left held, without new bytes arriving (a rule that releases a little
// and collects again): past it the side waits for the peer.
const maxRefires = 1000

// serveRules runs a flow whose virtual has rules. CLIENT_ACCEPTED runs
// first; then, unless the rule collects the client's data, the server side
// is connected at once and both directions splice as plain flows do. A
// collecting rule holds the server connection back until it releases data
// or decides (delayed binding): a client that connects and sends nothing
// has no server flow.
func (pr *proxied) serveRules() {
	warmStack()
	pr.legsLeft.Store(1)
	if pr.handles(config.EventClientAccepted) && !pr.runEvent(config.EventClientAccepted) {
		pr.finishLeg()
		return
	}
	if to := pr.rs.toVirtual; to != nil {
		pr.handTo(to)
		return
	}
	if !pr.terminate() { // tls.go
		pr.end(true)
		pr.finishLeg()
		return
	}
	if !pr.peekFirst() { // sslpersist.go
		pr.finishLeg()
		return
	}
	if to := pr.rs.toVirtual; to != nil { // in CLIENTSSL_CLIENTHELLO
		pr.handTo(to)
		return
	}
	if pr.snap.Cfg.FTP != nil {
		pr.serveFTPRules() // ftp.go
		return
	}
	if pr.snap.Cfg.MQTT != nil {
		head := pr.head
		pr.head = nil
		pr.serveMQTT(head) // mqtt.go
		return
	}
	if pr.snap.Cfg.FIX != nil {
		head := pr.head
		pr.head = nil
		pr.serveFIX(head) // fix.go
		return
	}
	if pr.snap.Cfg.RTSP != nil {
		head := pr.head
		pr.head = nil
		pr.serveRTSP(head) // rtsp.go
		return
	}
	if pr.snap.Cfg.Diameter != nil {
		head := pr.head
		pr.head = nil
		pr.serveDiameter(head) // diameter.go
		return
	}
	if pr.snap.Cfg.MRF != nil {
		head := pr.head
		pr.head = nil
		pr.serveMRF(head) // mrf.go
		return
	}
	if pr.snap.Cfg.STARTTLS != nil {
		pr.serveSTARTTLSRules() // starttls.go
		return
	}
	pr.pump(true, nil)
}

// runEvent runs ev and applies what the rule asked: a verdict (reject,
// drop, close), LB::detach, and the bytes it released or sent. It reports
// whether the flow goes on; when not, its sockets are already closed and
// the caller unwinds.
func (pr *proxied) runEvent(ev config.Event) bool {
	rs := pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return false
	}
	rs.ev = ev
	switch ev {
	case config.EventClientData:
		rs.side[rules.ClientSide].fresh = false
	case config.EventServerData:
		rs.side[rules.ServerSide].fresh = false
	}
	err := pr.rules.Run(ev, pr)
	v, detach, prime := rs.verdict, rs.detach, rs.prime
	rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
	late := rs.late
	rs.late = nil
	rs.mu.Unlock()
	if late != nil {
		// clone.go: a clone after CLIENT_ACCEPTED. Started even when the
		// event ends the flow: its member was chosen and counted, and
		// the clone connection gives the count back when it closes.
		pr.startLateClones(late)
	}
	if !pr.applyRule(ev, err, v, detach) {
		return false
	}
	// LB::prime, LB::connect (rulelb.go), which the rules allow in
	// CLIENT_ACCEPTED and CLIENT_DATA alone.
	return !prime || (ev != config.EventClientAccepted && ev != config.EventClientData) || pr.primed()
}

// applyRule carries out what an event (or a script `after` scheduled,
// ruleafter.go) asked, once the rule lock is released.
func (pr *proxied) applyRule(ev config.Event, err error, v irules.Verdict, detach bool) bool {
	if err != nil {
		pr.logRuleError(ev, err)
		pr.because(rstcause.TCLError)
		pr.end(true)
		return false
	}
	switch v {
	case irules.Reject:
		pr.because(rstcause.RuleReject)
		pr.end(true)
		return false
	case irules.Drop:
		pr.closeGraceful()
		return false
	}
	if detach {
		pr.detachServer()
	}
	if !pr.flush() {
		return false
	}
	if v == irules.Close {
		pr.closeGraceful()
		return false
	}
	return true
}

// logRuleError logs a hook's failure. The iRules engine logs its own
// errors (through its Env.Log) in BIG-IP's words, so only other hooks'
// errors are written here, in the same shape.
func (pr *proxied) logRuleError(ev config.Event, err error) {
	var re *rules.RuntimeError
	if errors.As(err, &re) {
		return
	}
	pr.e.env.Log.Error("TCL error: " + pr.Virtual + " <" + string(ev) + "> - " + err.Error())
}

// flush writes what the rules produced: to the client always, to the
// server once it exists. It reports whether the flow goes on.
func (pr *proxied) flush() bool {
	if !pr.flushTo(false) {
		return false
	}
	if pr.srv.Load() != nil {
		return pr.flushTo(true)
	}
	return true
}

// flushTo writes one destination's pending bytes. The buffer is taken out
// under the rule lock and written without it, so a slow peer never stalls
// the other direction's events; one writer per destination keeps order.
func (pr *proxied) flushTo(server bool) bool {
	rs := pr.rs
	d := 0
	if server {
		d = 1
	}
	rs.wmu[d].Lock()
	defer rs.wmu[d].Unlock()
	rs.mu.Lock()
	buf := &rs.toClient
	if server {
		buf = &rs.toServer
	}
	out := *buf
	if len(out) == 0 {
		rs.mu.Unlock()
		return true
	}
	*buf = rs.spare[d][:0]
	rs.spare[d] = nil
	rs.mu.Unlock()

	var (
		n   int
		err error
		sc  *serverConn
	)
	if server {
		sc = pr.srv.Load()
		if sc == nil {
			return true // detached meanwhile: the bytes have nowhere to go
		}
		if sc.tls != nil {
			n, err = tlsprof.WriteRecords(sc.tls, out, pr.recordLimit(rules.ServerSide))
		} else {
			n, err = sc.conn.Write(out)
		}
		pr.cloneSent(out[:n]) // clone.go
		sc.out(n, state.Packets(n))
	} else {
		n, err = pr.clientWrite(out)
		pr.clientOut(n, state.Packets(n))
	}
	if cap(out) <= 64<<10 {
		rs.mu.Lock()
		rs.spare[d] = out[:0]
		rs.mu.Unlock()
	}
	if err != nil {
		pr.lost(sc)
		return false
	}
	return true
}

// pendingToServer reports whether released client bytes wait for a server.
func (pr *proxied) pendingToServer() bool {
	rs := pr.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.toServer) > 0
}

// collectBytes adds bytes read on a collecting side: skip bytes pass
// straight on, the rest is held for the rule.
func (rs *ruleState) collectBytes(st *sideState, up bool, data []byte) {
	if st.skip > 0 {
		k := min(st.skip, len(data))
		if up {
			rs.toServer = append(rs.toServer, data[:k]...)
		} else {
			rs.toClient = append(rs.toClient, data[:k]...)
		}
		st.skip -= k
		data = data[k:]
	}
	if len(data) > 0 {
		st.held = append(st.held, data...)
		st.fresh = true
	}
}

// bind connects the server side: load balancing (LB_SELECTED before the
// connect), LB_FAILED when no member is available or the connect fails
// (the rule may LB::reselect, or answer the client itself), then
// SERVER_CONNECTED and the server side's loop.
func (pr *proxied) bind() bool {
	rs := pr.rs
	pr.watchClose() // tcpclose.go
	for round := 0; ; round++ {
		sc, err := pr.connect()
		if err == nil {
			return pr.connected(sc)
		}
		if err == errFlowEnded {
			return false
		}
		if !pr.handles(config.EventLBFailed) || round >= 3 {
			pr.end(true)
			return false
		}
		rs.mu.Lock()
		rs.Changed = false
		rs.mu.Unlock()
		if !pr.runEvent(config.EventLBFailed) {
			return false
		}
		rs.mu.Lock()
		changed, responded := rs.Changed, rs.responded
		rs.mu.Unlock()
		if !changed {
			if responded {
				pr.closeGraceful() // the rule answered the client itself
			} else {
				pr.end(true)
			}
			return false
		}
	}
}

// connected runs SERVER_CONNECTED and starts the server side's loop
// (an FTP control connection's is started by serveFTPRules).
func (pr *proxied) connected(sc *serverConn) bool {
	if pr.handles(config.EventServerConnected) && !pr.runEvent(config.EventServerConnected) {
		return false
	}
	if !pr.originate(sc) { // tls.go
		return false
	}
	if !pr.passFirst(sc) { // sslpersist.go
		pr.end(true)
		return false
	}
	if pr.snap.Cfg.FTP != nil || pr.snap.Cfg.MQTT != nil || pr.snap.Cfg.FIX != nil || pr.snap.Cfg.RTSP != nil || pr.snap.Cfg.Diameter != nil || pr.snap.Cfg.MRF != nil || pr.snap.Cfg.STARTTLS != nil {
		return true
	}
	pr.legsLeft.Add(1)
	go pr.pump(false, sc)
	return true
}

// pump runs one direction of a flow with rules: collected (buffered reads,
// CLIENT_DATA or SERVER_DATA) while the rule collects that side, the
// zero-copy loop otherwise, switching as the rule asks. up is the client
// side; sc is the server connection the server side's pump serves.
func (pr *proxied) pump(up bool, sc *serverConn) {
	defer pr.finishLeg()
	side, ev := rules.ClientSide, config.EventClientData
	if !up {
		side, ev = rules.ServerSide, config.EventServerData
		if pr.handles(ev) {
			warmStack()
		}
		if sc.helloBack && !pr.serverHello(sc) { // sslpersist.go
			pr.lost(sc)
			return
		}
	}
	st := &pr.rs.side[side]
	for {
		if !pr.collectLoop(up, sc, st, ev) {
			return
		}
		if up {
			if pr.srv.Load() == nil && !pr.bind() {
				return
			}
			if !pr.flush() {
				return
			}
			if sc = pr.srv.Load(); sc == nil {
				return
			}
		}
		if pr.tlsOn(sc) {
			if !pr.copyLoopTLS(up, sc, st) {
				return
			}
			continue
		}
		src, dst := pr.client, sc.conn
		if !up {
			src, dst = sc.conn, pr.client
		}
		if !pr.copyLoop(src, dst, up, sc, st) {
			return
		}
	}
}

// afterData connects the server side when the client's rule released
// bytes and none exists yet (the end of delayed binding), and writes what
// is pending.
func (pr *proxied) afterData(up bool) bool {
	if up && pr.srv.Load() == nil && pr.pendingToServer() {
		if !pr.bind() {
			return false
		}
	}
	return pr.flush()
}

// collectLoop reads one side while the rule collects it, running the data
// event as collected bytes satisfy TCP::collect. It returns true when the
// rule stopped collecting (the side goes back to the zero-copy path) and
// false when the side is over.
func (pr *proxied) collectLoop(up bool, sc *serverConn, st *sideState, ev config.Event) bool {
	rs := pr.rs
	src, nc := pr.client, pr.clientConn()
	if !up {
		src, nc = sc.conn, sc.netConn()
	}
	var r sockReader
	if pr.tlsOn(sc) {
		r.nc = nc // read through TLS
	}
	refires := 0
	started := false
	for {
		rs.mu.Lock()
		done, collecting := rs.done, st.collecting
		fire := collecting && st.fresh && len(st.held) > 0 &&
			(st.want == 0 || len(st.held) >= st.want || len(st.held) >= maxCollect)
		full := collecting && len(st.held) >= maxCollect
		ssl := st.ssl
		rs.mu.Unlock()
		if done || (!up && pr.gone(sc)) {
			return false
		}
		if fire && refires < maxRefires {
			refires++
			if !pr.dataEvent(up, ssl, ev) {
				return false
			}
			if up && pr.rs.toVirtual != nil { // `virtual NAME` (handoff_data.go)
				pr.handOnData()
				return false
			}
			if !pr.afterData(up) {
				return false
			}
			continue
		}
		if full {
			pr.e.env.Log.Warn("Rule on virtual " + pr.Virtual + " <" + string(ev) + "> holds more than 1 MiB without releasing it; connection reset")
			pr.end(true)
			return false
		}
		if !collecting {
			return true
		}
		refires = 0
		if !started {
			if err := r.init(src); err != nil {
				pr.lost(sc)
				return false
			}
			if idle := pr.IdleTimeout(); idle > 0 {
				src.SetReadDeadline(idleDeadline(idle, time.Now().UnixNano()))
			}
			started = true
		}
		data, err := r.read()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src) {
				continue
			}
			if err == io.EOF {
				pr.collectEOF(up, sc, st, ev)
				return false
			}
			pr.peerReset(!up)
			pr.lost(sc)
			return false
		}
		pr.countRead(len(data), up, sc)
		if up && pr.clone != nil {
			pr.clone.Client(data) // clone.go: serverside gets what is released (flushTo)
		}
		rs.mu.Lock()
		rs.collectBytes(st, up, data)
		rs.mu.Unlock()
		r.done()
		if !pr.afterData(up) {
			return false
		}
	}
}

// collectEOF ends a collecting side at its peer's FIN: the rule sees what
// it collected one last time, then the half-close is passed on (or, when
// no server was ever connected, the flow closes).
func (pr *proxied) collectEOF(up bool, sc *serverConn, st *sideState, ev config.Event) {
	rs := pr.rs
	rs.mu.Lock()
	fire, ssl := st.collecting && len(st.held) > 0, st.ssl
	rs.mu.Unlock()
	if fire && !pr.dataEvent(up, ssl, ev) {
		return
	}
	if fire && up && rs.toVirtual != nil { // `virtual NAME` (handoff_data.go)
		pr.handOnData()
		return
	}
	if fire && !pr.afterData(up) {
		return
	}
	if !up {
		if !pr.gone(sc) {
			dst := pr.clientConn()
			closeWrite(dst)
			pr.awaitAlert(false, dst) // alert-timeout, as copyLoopTLS
		}
		return
	}
	if s := pr.srv.Load(); s != nil {
		dst := s.netConn()
		closeWrite(dst)
		pr.awaitAlert(true, dst)
		return
	}
	pr.closeGraceful()
}

// detachServer closes the server side on LB::detach: SERVER_CLOSED runs,
// the member's counts are given back, and the next released client bytes
// are load balanced afresh.
func (pr *proxied) detachServer() {
	sc := pr.srv.Load()
	if sc == nil {
		return
	}
	if pr.handles(config.EventServerClosed) {
		pr.runEvent(config.EventServerClosed)
	}
	if !pr.srv.CompareAndSwap(sc, nil) {
		return
	}
	sc.conn.Close()
	pr.RemoveLeg(&sc.leg)
	sc.release()
	rs := pr.rs
	rs.mu.Lock()
	rs.lbRounds = 0
	rs.mu.Unlock()
}

// endRules runs SERVER_CLOSED (when a server side is connected) and
// CLIENT_CLOSED once the flow is over, and gives the rule session back.
func (pr *proxied) endRules() {
	rs := pr.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done {
		return
	}
	for _, ev := range [...]config.Event{config.EventServerClosed, config.EventClientClosed} {
		if !pr.handles(ev) || (ev == config.EventServerClosed && pr.srv.Load() == nil) {
			continue
		}
		rs.ev = ev
		if err := pr.rules.Run(ev, pr); err != nil {
			pr.logRuleError(ev, err)
		}
	}
	rs.done = true
	rs.resumeHold()
	rs.Holds.Release() // LB::connlimit ... key
	if rs.sess != nil {
		rs.sess.Release()
		rs.sess = nil
	}
	rs.side[0].held, rs.side[1].held = nil, nil
	rs.toClient, rs.toServer, rs.spare = nil, nil, [2][]byte{}
}

// stackReserve is how much stack a rule event may use without the runtime
// growing the goroutine's stack in the middle of the interpreter.
const stackReserve = 8 << 10

// warmStack grows the calling goroutine's stack while it is shallow. Rule
// events recurse through the interpreter; growing a fresh goroutine's
// stack from inside that recursion copies and adjusts every frame, several
// times over, which costs more than the rule itself. Grown here, with few
// frames to move, the same growth is cheap; the garbage collector shrinks
// the stack again if the flow stays idle.
//
//go:noinline
func warmStack() byte {
	var pad [stackReserve]byte
	return stackSink(pad[:])
}

//go:noinline
func stackSink(b []byte) byte { return b[len(b)-1] }

// maxVirtualHops bounds how many times one connection is handed from
// virtual server to virtual server, so that two rules naming each other
// end in a reset instead of a loop.
const maxVirtualHops = 4

// targetVirtual is `virtual NAME`: the connection goes to that virtual
// server as a connection of its own (its profiles, rules and pool; VIP
// targeting VIP), which works only before anything is decided for the
// client, so only in CLIENT_ACCEPTED, in CLIENTSSL_CLIENTHELLO on a
// virtual that passes TLS through (the hello it read goes along,
// handoff.go), or in CLIENT_DATA before a member was connected (the
// collected bytes go along, handoff_data.go), and not on a virtual that
// terminates TLS (its handshake would have to be undone).
func (pr *proxied) targetVirtual(name string) error {
	rs := pr.rs
	if rs.ev != config.EventClientAccepted && rs.ev != eventClientHello && rs.ev != config.EventClientData {
		return fmt.Errorf("virtual %s: a connection is handed to another virtual server in CLIENT_ACCEPTED, in CLIENT_DATA before a member is connected, or in CLIENTSSL_CLIENTHELLO on a virtual server that passes TLS through", name)
	}
	if pr.snap.Cfg.TLS != nil {
		return fmt.Errorf("virtual %s: a virtual server with a client-ssl profile cannot hand its connection on", name)
	}
	if err := pr.dataTargetable(name); err != nil { // handoff_data.go
		return err
	}
	var vs *state.Virtual
	if pr.e.env.Virtual != nil {
		vs = pr.e.env.Virtual(name)
	}
	if vs == nil {
		return fmt.Errorf("virtual %s: no such virtual server", name)
	}
	rs.toVirtual = vs
	return nil
}

// handTo serves the client connection on the virtual server the rule
// named, in this goroutine; this flow stays in the table (the client's
// connection to the first virtual) until that one has served it.
func (pr *proxied) handTo(vs *state.Virtual) {
	pr.handOn(vs)
	pr.finishLeg()
}

// handOn is handTo without the end of the caller's leg.
func (pr *proxied) handOn(vs *state.Virtual) {
	if pr.hops+1 >= maxVirtualHops {
		pr.e.env.Log.Warn(fmt.Sprintf("virtual %s: the connection from %s has been handed on %d times; reset", vs.Name, pr.Client, pr.hops+1))
		pr.end(true)
		return
	}
	pr.ended.Store(true) // the other virtual server closes the client
	head := pr.head
	pr.head = nil
	pr.e.serveHop(vs, pr.client, pr.hops+1, head)
}
