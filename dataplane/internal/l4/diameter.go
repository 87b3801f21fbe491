package l4

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/snatobj"
	"github.com/openltm/openltm/rules"
)

// A diameter profile on a plain TCP virtual makes its flows Diameter
// peers, served on goroutines by serveDiameter (msgflow.go holds what
// they share with the fix and mqtt profiles'). The client's messages are
// framed on the header's length (dataplane/diammsg), and each request is
// balanced on its own, as BIG-IP's classic diameter profile does:
//
//   - The client's first message (its CER) goes to the member the pool
//     chooses (with rules: LB_SELECTED and SERVER_CONNECTED as usual),
//     whose CEA answers the client. Each further member the flow opens
//     a connection to is sent the same CER first, and its CEA is taken
//     by openltm, not passed on: the client sees one peer, the virtual
//     (F5's deployment guide describes this replay) [M].
//   - A request goes to the member its persistence key persists to (the
//     persist-avp value, inside parent-avp when set, or DIAMETER::persist),
//     else to the member the pool's balancing chooses for it; with
//     rules, LB_SELECTED runs for that choice and may send it elsewhere
//     (diameter_lbselected.go); the key is then recorded on that member
//     for the virtual (persist-timeout of BIG-IP's universal
//     persistence, 180 s [M]).
//   - A member's answers go to the client as they come: each connection
//     to a member serves this client only, so the hop-by-hop identifier
//     the client chose pairs the answer with its request unchanged. A
//     member's own requests reach the client with a hop-by-hop identifier
//     of the flow's, and the client's answer goes back to that member
//     with the member's identifier restored; an answer nobody asked for
//     is dropped (counted).
//   - A member's Device-Watchdog-Request is answered by openltm (DWA,
//     DIAMETER_SUCCESS, with the client's identity as sent to the
//     members), as is its Disconnect-Peer-Request, after which no request
//     goes to it; the client's DWR is a request like any other [M].
//   - A client's request is kept until answered; when its member's
//     connection ends or it is not answered within retransmit-timeout,
//     it goes to another member with the T flag set, up to
//     max-retransmit-attempts, after which the client is answered
//     DIAMETER_UNABLE_TO_DELIVER (and reset with reset-on-timeout). With
//     watchdog-timeout an idle member connection is sent DWRs and reset
//     after max-watchdog-failure of them unanswered.
//   - Rules (commands_diameter_retx.go in rules) may set a request's
//     retransmission (DIAMETER::retransmission, the connection's
//     DIAMETER::retransmission_default): disabled keeps it out of the
//     queue, busy and unable answer the client DIAMETER_TOO_BUSY or
//     DIAMETER_UNABLE_TO_DELIVER instead of sending it again, a timeout
//     of its own, error codes whose answers send it again.
//     DIAMETER_RETRANSMISSION runs over the request about to be sent
//     again (the rule may drop it or answer instead) and over the answer
//     the virtual makes when it cannot be delivered; DIAMETER::retransmit
//     sends an answer's request again, DIAMETER::respond answers from
//     the rule, DIAMETER::retry sends a request the rule kept.
//   - handshake-timeout bounds each member's capabilities exchange: a
//     member whose CEA does not come in time is reset (counted); when
//     its CEA was the client's, the client's CER goes to another member,
//     whose CEA answers it (else the client is reset).
//   - Under client-ssl and server-ssl the messages are read and written
//     through TLS (RFC 6733 13: TLS from the connection's start), each
//     member connection handshaking on its own.
//   - A message that cannot be framed or parsed resets the connection
//     (counted in show ltm profile diameter; tm.rstcause.log says
//     "Diameter message malformed") [M]. A member's malformed message
//     resets that member's connection only.

// diamPeer is one member connection of a Diameter flow.
type diamPeer struct {
	sc      *serverConn
	rd      diammsg.Reader
	primary bool // the flow's pr.srv (released with the flow)
	// replay: its CEA answers the CER openltm replayed and is taken
	// (under the flow's mu); cea is that CEA, kept for the client should
	// the member whose CEA was the client's fail its handshake.
	replay bool
	cea    []byte
	// cerAt is when the CER went to it (unix ns), 0 once its CEA is in
	// (handshake-timeout).
	cerAt atomic.Int64
	dead  atomic.Bool
	late  atomic.Bool // reset for handshake-timeout
	// host is the member's Origin-Host from its CEA, for
	// overwrite-destination-host (under the flow's mu).
	host []byte
	buf  [2][]byte // rewrite buffers of its reader
	// last is when the member's last message came (unix ns), dwrAt when
	// the virtual's last DWR went, dwrOut how many went unanswered and
	// dwrHBH the last one's hop-by-hop id (watchdog-timeout).
	last, dwrAt atomic.Int64
	dwrOut      atomic.Int32
	dwrHBH      atomic.Uint32
}

// srvReq is a member's request in flight to the client.
type srvReq struct {
	peer *diamPeer
	hbh  uint32
}

// diamFlow is one Diameter connection's state.
type diamFlow struct {
	pr     *proxied
	opt    *diameter.Options
	counts *diameter.Counts
	table  *diameter.Table
	// prog is the virtual's rules when they handle DIAMETER_INGRESS,
	// DIAMETER_EGRESS or DIAMETER_RETRANSMISSION; nil: messages are only
	// framed and routed.
	prog *rules.Program
	// clones: a rule has a clone command, which may start in the
	// client's messages' DIAMETER_INGRESS (clone.go, beginMsg).
	clones bool
	// lbsel: the rules handle LB_SELECTED, which runs for each request's
	// choice (diameter_lbselected.go).
	lbsel bool
	// want is the pool, member or node decision the client's last
	// message's DIAMETER_INGRESS made (set: one was made), for its
	// request; the client's reader's alone.
	want diamTarget
	// defaults are the connection's retransmission settings
	// (DIAMETER::retransmission_default; nil: the profile's), under mu;
	// profRetx the profile's as rules read them.
	defaults *rules.DiameterRetx
	profRetx rules.DiameterRetx
	// open: the client has its CEA (or goes without: DIAMETER::state).
	open atomic.Bool
	pool *state.Pool
	rd   diammsg.Reader
	w    msgWriter
	buf  [2][]byte // rewrite buffers of the client's reader

	mu     sync.Mutex
	peers  []*diamPeer
	srvReq map[uint32]srvReq
	hbh    uint32 // the flow's next hop-by-hop identifier toward the client
	// cer is the client's CER as the first member got it, replayed to
	// the others; host and realm its Origin-Host and Origin-Realm.
	cer, host, realm []byte
	// pend are the client's requests awaiting a member's answer, by
	// hop-by-hop identifier, kept to be sent again elsewhere when their
	// member fails (nil when max-retransmit-attempts is 0 and
	// retransmit-timeout too); done stops the retransmit timer.
	pend map[uint32]*pending
	retx bool // pend is kept
	done chan struct{}
	// pickMu serializes choosing and opening member connections between
	// the client's reader and the retransmissions.
	pickMu sync.Mutex
}

// pending is a client's request in flight to a member.
type pending struct {
	raw   []byte // the request as the client's rule left it (a copy)
	peer  *diamPeer
	sent  time.Time
	tries int // how many times it was sent again
	// set is its retransmission settings as rules left them (the
	// profile's when Action and Timeout are empty).
	set rules.DiameterRetx
}

// serveDiameter runs a Diameter connection; head is what an earlier
// virtual read of it (handoff.go).
func (pr *proxied) serveDiameter(head []byte) {
	x := &diamFlow{pr: pr, opt: pr.snap.Cfg.Diameter, counts: &pr.vs.Prof.Diameter, table: &pr.vs.Prof.DiameterPersist}
	x.clones = pr.rs != nil && pr.rs.clones // a rule clones: clone.go, beginMsg, beginBack and bindMsg
	x.w.cloneBack(pr, x.clones)
	skip := false
	if pr.rs != nil {
		if prog := irules.Program(pr.rules); prog != nil && (prog.Handles(rules.DiameterIngress) || prog.Handles(rules.DiameterEgress) || prog.Handles(rules.DiameterRetransmission)) {
			x.prog = prog
		}
		x.lbsel = pr.handles(config.EventLBSelected)
		// CLIENT_ACCEPTED ran: the connection's settings from it.
		pr.rs.mu.Lock()
		if sess := pr.rs.sess; sess != nil {
			x.defaults = sess.DiameterDefaults()
			var host string
			if skip, host = sess.DiameterSkipCER(); host != "" {
				x.host = []byte(host)
			}
		}
		pr.rs.mu.Unlock()
	}
	x.profRetx = rules.DiameterRetx{Action: "retransmit", Timeout: x.opt.RetransmitTimeout}
	if x.opt.MaxRetransmit == 0 {
		x.profRetx.Action = "unable"
	}
	x.open.Store(skip)
	var src io.Reader = pr.clientConn() // the plaintext under client-ssl (tls.go)
	if len(head) > 0 {
		src = io.MultiReader(bytes.NewReader(head), src)
	}
	x.rd = diammsg.Reader{R: src, Max: x.opt.Max}
	x.hbh = uint32(time.Now().UnixNano())
	if x.retx = x.opt.MaxRetransmit > 0 || x.opt.RetransmitTimeout > 0 || x.prog != nil || x.defaults != nil; x.retx {
		x.pend = make(map[uint32]*pending)
	}
	defer x.closePeers()
	defer pr.finishLeg()
	if x.opt.RetransmitTimeout > 0 || x.opt.WatchdogTimeout > 0 || x.opt.HandshakeTimeout > 0 || x.retx {
		x.done = make(chan struct{})
		defer close(x.done)
		go x.timer()
	}
	m, ok := x.next()
	if !ok {
		return
	}
	raw, out, ok := x.ingress(m.Raw, nil, false)
	if !ok {
		return
	}
	if raw == nil { // dropped
		m, ok = x.next()
		if !ok {
			return
		}
		raw, out = m.Raw, rules.DiameterOutcome{}
	}
	sc := pr.bindMsg(m.Raw, x.clones) // msgflow.go; clone.go: as the client sent it
	if sc == nil {
		return
	}
	x.pool = sc.pool
	if x.pool == nil {
		x.pool = pr.pool
	}
	x.want = diamTarget{} // the first message's decision: the L4 connect followed it
	p := x.addPeer(sc, true, false)
	if m, _ := diammsg.Parse(raw); m.Raw != nil && m.Request() && m.Code() == diammsg.CmdCapabilitiesExchange {
		raw = x.toServer(raw, p, &x.buf)
		x.mu.Lock()
		x.cer = append([]byte(nil), raw...)
		cm := diammsg.Msg{Raw: x.cer}
		x.host, x.realm = cm.Get(diammsg.AVPOriginHost), cm.Get(diammsg.AVPOriginRealm)
		x.mu.Unlock()
		p.cerAt.Store(time.Now().UnixNano())
		if !x.send(p, raw, diamCtx{peer: p}) {
			return
		}
		if x.opt.ConnectionPrime {
			x.prime()
		}
	} else if !x.request(raw, out, true) {
		return
	}
	for {
		m, ok := x.next()
		if !ok {
			return
		}
		raw, out, ok := x.ingress(m.Raw, nil, false)
		if !ok {
			return
		}
		if raw == nil {
			continue
		}
		if m, _ = diammsg.Parse(raw); m.Raw == nil {
			x.reset()
			return
		}
		if m.Request() {
			if !x.request(raw, out, true) {
				return
			}
			continue
		}
		x.mu.Lock()
		r, found := x.srvReq[m.HopByHop()]
		delete(x.srvReq, m.HopByHop())
		x.mu.Unlock()
		if !found || r.peer.dead.Load() {
			x.counts.Dropped.Add(1)
			continue
		}
		m.SetHopByHop(r.hbh)
		if !x.send(r.peer, x.toServer(raw, r.peer, &x.buf), diamCtx{peer: r.peer}) {
			return
		}
	}
}

// next reads and checks the client's next message; false when the flow
// ends (reset, or the client closed: then every member's connection is
// half-closed).
func (x *diamFlow) next() (diammsg.Msg, bool) {
	pr := x.pr
	raw, err := pr.readMsg(pr.client, x.rd.Next) // msgflow.go
	if err == nil {
		pr.countRead(len(raw), true, nil)
		if pr.clone != nil {
			pr.clone.Client(raw) // clone.go: serverside pools get what the members get (msgWriter)
		}
		m, perr := diammsg.Parse(raw)
		if perr == nil {
			x.tally(m)
			return m, true
		}
		err = perr
	}
	switch {
	case err == errIdle:
	case err == io.EOF:
		x.mu.Lock()
		peers := x.peers
		x.mu.Unlock()
		if len(peers) == 0 {
			pr.closeGraceful()
		}
		for _, p := range peers {
			closeWrite(p.sc.netConn()) // tls.go: close_notify, then the FIN
		}
	case diammsg.Malformed(err):
		x.reset()
	default:
		pr.end(true)
	}
	return diammsg.Msg{}, false
}

func (x *diamFlow) tally(m diammsg.Msg) {
	if m.Request() {
		x.counts.Requests.Add(1)
	} else {
		x.counts.Answers.Add(1)
	}
}

// reset ends the flow for a message that could not be read.
func (x *diamFlow) reset() {
	x.counts.Malformed.Add(1)
	x.pr.because(rstcause.DiameterMalformed)
	x.pr.end(true)
}

// request sends a client's request to the member its persistence key or
// the pool's balancing chooses, out being what the client's rules did to
// it (DIAMETER::persist and its reset, DIAMETER::retransmission); false when the flow
// ended. reader: on the client's reader, whose rewrite buffers it may
// use (DIAMETER::retry's requests come from other goroutines too).
func (x *diamFlow) request(raw []byte, out rules.DiameterOutcome, reader bool) bool {
	m := diammsg.Msg{Raw: raw}
	key := x.opt.PersistKey(m)
	if k := out.Persist; k != "" {
		key = []byte(k)
	}
	x.pickMu.Lock()
	if out.PersistReset && key != nil {
		x.table.Forget(key)
	}
	var p *diamPeer
	if reader && x.want.set {
		p = x.pickWanted(key) // diameter_lbselected.go
	} else {
		p = x.pick(key, nil)
	}
	x.pickMu.Unlock()
	if p == nil {
		x.pr.orBecause(rstcause.NoServer)
		x.pr.end(true)
		return false
	}
	if x.retx {
		x.track(raw, p, out.Retx)
	}
	buf := &x.buf
	if !reader {
		buf = new([2][]byte)
	}
	return x.send(p, x.toServer(raw, p, buf), diamCtx{peer: p})
}

// retry sends the requests a rule's DIAMETER::retry gave, as the
// client's: across, through persistence and DIAMETER_EGRESS; else to the
// member the pool chooses, without rules.
func (x *diamFlow) retry(list []rules.DiameterRetry) bool {
	for _, r := range list {
		if !r.Across {
			x.pickMu.Lock()
			p := x.pick(nil, nil)
			x.pickMu.Unlock()
			if p == nil {
				x.counts.Dropped.Add(1)
				continue
			}
			if x.retx {
				x.track(r.Raw, p, nil)
			}
			if !x.w.write(x.pr, true, p.sc, x.toServer(r.Raw, p, new([2][]byte))) && p.primary {
				return false
			}
			continue
		}
		if !x.request(r.Raw, rules.DiameterOutcome{}, false) {
			return false
		}
	}
	return true
}

// maxPending bounds the requests a flow keeps for retransmission; past
// it, a request is sent without being kept.
const maxPending = 4096

// track keeps the client's request raw, sent to member p, until its
// answer comes; set is what the client's rules set for it (nil: the
// connection's settings, else the profile's). A request whose action is
// disabled is not kept.
func (x *diamFlow) track(raw []byte, p *diamPeer, set *rules.DiameterRetx) {
	m := diammsg.Msg{Raw: raw}
	x.mu.Lock()
	defer x.mu.Unlock()
	var eff rules.DiameterRetx
	if set != nil || x.defaults != nil {
		eff = set.Over(x.defaults.Over(rules.DiameterRetx{}))
		if eff.Action == "disabled" {
			delete(x.pend, m.HopByHop())
			return
		}
	}
	if len(x.pend) >= maxPending {
		return
	}
	x.pend[m.HopByHop()] = &pending{raw: append([]byte(nil), raw...), peer: p, sent: time.Now(), set: eff}
}

// awaits says whether the answer hbh of member p has its request in the
// queue (found), and whether that request is still p's (mine).
func (x *diamFlow) awaits(p *diamPeer, hbh uint32) (found, mine bool) {
	if !x.retx {
		return false, true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	r, ok := x.pend[hbh]
	if !ok {
		return false, true
	}
	return true, r.peer == p
}

// errorCode says whether the answer m's Result-Code is one of the error
// codes of its pending request hbh (DIAMETER::retransmission
// error-codes): the request is then sent again instead.
func (x *diamFlow) errorCode(hbh uint32, m diammsg.Msg) bool {
	x.mu.Lock()
	r, ok := x.pend[hbh]
	var codes []uint32
	if ok {
		codes = r.set.ErrorCodes
	}
	x.mu.Unlock()
	if len(codes) == 0 {
		return false
	}
	rc := m.Get(diammsg.AVPResultCode)
	if len(rc) != 4 {
		return false
	}
	return slices.Contains(codes, binary.BigEndian.Uint32(rc))
}

// answered says whether member p's answer with hop-by-hop id hbh goes to
// the client: not when the request was since sent to another member
// (its answer will), nor when it was already answered unable to deliver.
func (x *diamFlow) answered(p *diamPeer, hbh uint32) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, ok := x.pend[hbh]
	if !ok {
		return true
	}
	if r.peer != p {
		return false
	}
	delete(x.pend, hbh)
	return true
}

// timer sends again the requests whose member has not answered within
// retransmit-timeout, until the flow ends.
func (x *diamFlow) timer() {
	every := time.Second
	for _, d := range []time.Duration{x.opt.RetransmitTimeout, x.opt.WatchdogTimeout, x.opt.HandshakeTimeout} {
		if d > 0 {
			every = min(every, max(d/4, 100*time.Millisecond))
		}
	}
	if x.prog != nil {
		every = min(every, 250*time.Millisecond) // a rule's timeouts, in seconds
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-x.done:
			return
		case now := <-t.C:
			if x.opt.WatchdogTimeout > 0 {
				x.watchdog(now)
			}
			if x.opt.HandshakeTimeout > 0 {
				x.handshakes(now)
			}
			if !x.retx {
				continue
			}
			x.mu.Lock()
			type due struct {
				hbh  uint32
				peer *diamPeer
			}
			var late []due
			for hbh, r := range x.pend {
				to := r.set.Timeout
				if to <= 0 {
					to = x.opt.RetransmitTimeout
				}
				if to > 0 && now.Sub(r.sent) >= to {
					late = append(late, due{hbh, r.peer})
				}
			}
			x.mu.Unlock()
			for _, d := range late {
				// Only while it is still that member's: a failed
				// member's reader may have sent it on meanwhile.
				x.retransmit(d.hbh, d.peer, "timeout")
			}
		}
	}
}

// watchdog sends a DWR to each member connection idle for
// watchdog-timeout (RFC 3539's watchdog, as BIG-IP's profile runs it
// toward members) and resets one that left max-watchdog-failure of them
// unanswered: its reader then ends and its requests go elsewhere.
func (x *diamFlow) watchdog(now time.Time) {
	wd := x.opt.WatchdogTimeout.Nanoseconds()
	x.mu.Lock()
	peers := append([]*diamPeer(nil), x.peers...)
	host, realm := x.host, x.realm
	x.mu.Unlock()
	n := now.UnixNano()
	for _, p := range peers {
		if p.dead.Load() || n-p.last.Load() < wd || n-p.dwrAt.Load() < wd {
			continue
		}
		if int(p.dwrOut.Load()) >= max(x.opt.MaxWatchdogFailure, 1) {
			x.counts.WatchdogFailures.Add(1)
			p.dead.Store(true)
			reset(p.sc.conn)
			continue
		}
		var b []byte
		if host != nil {
			b = diammsg.AppendAVP(b, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, host)
			b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, realm)
		}
		x.mu.Lock()
		x.hbh++
		hbh := x.hbh
		x.mu.Unlock()
		p.dwrHBH.Store(hbh)
		p.dwrOut.Add(1)
		p.dwrAt.Store(n)
		x.w.write(x.pr, true, p.sc, diammsg.Build(diammsg.FlagRequest, diammsg.CmdDeviceWatchdog, 0, hbh, hbh, b))
	}
}

// failed sends again every request member p had not answered when its
// connection ended.
func (x *diamFlow) failed(p *diamPeer) {
	if x.pr.ended.Load() {
		return
	}
	x.mu.Lock()
	var lost []uint32
	for hbh, r := range x.pend {
		if r.peer == p {
			lost = append(lost, hbh)
		}
	}
	x.mu.Unlock()
	for _, hbh := range lost {
		x.retransmit(hbh, p, "timeout") // [M: F5 names no reason for a member lost]
	}
}

// handshakes resets the member connections whose CEA has not come
// within handshake-timeout (counted). When that member's CEA was to
// answer the client, the client's CER goes to another member, whose CEA
// answers it instead: one already connected gives the CEA it sent (or
// will send) the virtual; with none, the client is reset.
func (x *diamFlow) handshakes(now time.Time) {
	to := x.opt.HandshakeTimeout.Nanoseconds()
	x.mu.Lock()
	var late []*diamPeer
	for _, p := range x.peers {
		if at := p.cerAt.Load(); at != 0 && !p.dead.Load() && now.UnixNano()-at >= to {
			late = append(late, p)
		}
	}
	x.mu.Unlock()
	for _, p := range late {
		x.counts.HandshakeTimeouts.Add(1)
		p.late.Store(true)
		p.dead.Store(true)
		p.cerAt.Store(0)
		x.mu.Lock()
		client := !p.replay
		x.mu.Unlock()
		reset(p.sc.conn)
		if client && !x.pr.ended.Load() {
			x.takeOver(p)
		}
	}
}

// takeOver finds the client another member to complete its capabilities
// exchange after failed, the member that was to, did not.
func (x *diamFlow) takeOver(failed *diamPeer) {
	x.pickMu.Lock()
	q := x.pick(nil, failed)
	var cea []byte
	if q != nil {
		x.mu.Lock()
		if q.cea != nil {
			cea = q.cea
		} else {
			q.replay = false // its CEA, still to come, is the client's
		}
		x.mu.Unlock()
	}
	x.pickMu.Unlock()
	if q == nil {
		x.pr.because(rstcause.DiameterHandshake)
		x.pr.end(true)
		return
	}
	if cea != nil {
		x.answer(q, x.toClient(cea, new([2][]byte)), diamCtx{client: true, peer: q})
		x.open.Store(true)
	}
}

// retransmit sends the pending request hbh again to another member than
// the one it went to (from: only when it is still that member's), with
// the T flag set (RFC 6733 3), reason saying why
// (DIAMETER::retransmission_reason); once max-retransmit-attempts are
// spent, or no other member can take it, the client is answered
// DIAMETER_UNABLE_TO_DELIVER and, with reset-on-timeout, reset. A
// request whose action is busy or unable is answered so at once;
// DIAMETER_RETRANSMISSION runs over the request before it goes.
func (x *diamFlow) retransmit(hbh uint32, from *diamPeer, reason string) {
	if x.pr.ended.Load() {
		return
	}
	x.pickMu.Lock()
	x.mu.Lock()
	r, ok := x.pend[hbh]
	if !ok || (from != nil && r.peer != from) {
		x.mu.Unlock()
		x.pickMu.Unlock()
		return
	}
	old, act := r.peer, r.set.Action
	tries := x.opt.MaxRetransmit
	if act == "retransmit" {
		tries = max(tries, 1) // a rule asked for it [M]
	}
	give := r.tries >= tries || act == "busy" || act == "unable"
	x.mu.Unlock()
	var p *diamPeer
	if !give {
		p = x.pick(x.opt.PersistKey(diammsg.Msg{Raw: r.raw}), old)
	}
	x.mu.Lock()
	if p == nil {
		delete(x.pend, hbh)
	} else {
		r.tries++
		r.peer, r.sent = p, time.Now()
		r.raw[4] |= diammsg.FlagRetransmit
	}
	raw := append([]byte(nil), r.raw...)
	x.mu.Unlock()
	x.pickMu.Unlock()
	code := uint32(diammsg.ResultUnableToDeliver)
	if act == "busy" {
		code = diammsg.ResultTooBusy
	}
	if p == nil {
		x.undeliverable(raw, code, reason, act == "")
		return
	}
	if x.prog != nil && x.prog.Handles(rules.DiameterRetransmission) {
		out, ok := x.run(rules.DiameterRetransmission, raw, diamCtx{client: true, reason: reason})
		if !ok {
			return
		}
		var act string
		if out.Retx != nil {
			act = out.Retx.Action
		}
		if out.Drop || act != "" && act != "retransmit" {
			x.mu.Lock()
			if r, ok := x.pend[hbh]; ok && r.peer == p {
				delete(x.pend, hbh)
			}
			x.mu.Unlock()
			switch act {
			case "busy":
				x.undeliverable(raw, diammsg.ResultTooBusy, reason, false)
			case "unable":
				x.undeliverable(raw, diammsg.ResultUnableToDeliver, reason, false)
			default: // dropped (counted by run), or disabled: the request ends here
				if !out.Drop {
					x.counts.Dropped.Add(1)
				}
			}
			return
		}
		raw = out.Raw
	}
	x.counts.Retransmitted.Add(1)
	x.send(p, x.toServer(raw, p, new([2][]byte)), diamCtx{peer: p, reason: reason})
}

// undeliverable answers the client's request raw with Result-Code code
// (DIAMETER_UNABLE_TO_DELIVER or DIAMETER_TOO_BUSY, E flag set, as RFC
// 6733 6.1.8 has an agent do when no peer can take a request) from the
// identity the client's CEA gave [M: F5 documents the answer, not its
// AVPs], after DIAMETER_RETRANSMISSION ran over it. spent: the attempts
// ran out (not a rule's choice), so that with reset-on-timeout the
// client's connection is then reset.
func (x *diamFlow) undeliverable(raw []byte, code uint32, reason string, spent bool) {
	if code == diammsg.ResultTooBusy {
		x.counts.Busy.Add(1)
	} else {
		x.counts.Undelivered.Add(1)
	}
	m := diammsg.Msg{Raw: raw}
	host, realm := []byte(x.opt.OriginHostToClient), []byte(x.opt.OriginRealmToClient)
	x.mu.Lock()
	for _, p := range x.peers {
		if len(host) == 0 {
			host = p.host // the first member whose CEA is in [M]
		}
	}
	x.mu.Unlock()
	if len(realm) == 0 {
		realm = m.Get(diammsg.AVPDestinationRealm)
	}
	ans := diammsg.AppendAnswer(nil, m, code, host, realm, nil)
	if x.prog != nil && x.prog.Handles(rules.DiameterRetransmission) {
		out, ok := x.run(rules.DiameterRetransmission, ans, diamCtx{client: true, reason: reason})
		if !ok {
			return
		}
		if out.Drop {
			x.counts.Dropped.Add(1)
			return
		}
		ans = out.Raw
	}
	if !x.w.write(x.pr, false, nil, ans) {
		return
	}
	if spent && x.opt.ResetOnTimeout {
		x.pr.because(rstcause.DiameterTimeout)
		x.pr.end(true)
	}
}

// pick is the member connection for a request with persistence key key
// (nil: none), opened when the flow has none to that member yet; nil
// when no member can take it.
//
// avoid, when not nil, is a member connection that failed the request:
// neither it nor its member is chosen.
func (x *diamFlow) pick(key []byte, avoid *diamPeer) *diamPeer {
	p := x.choosePeer(key, avoid)
	if p == nil || !x.lbsel {
		return p
	}
	return x.selected(p, key, avoid) // diameter_lbselected.go
}

// choosePeer is pick's choice before LB_SELECTED: the persisted member,
// else the pool's balancing, else any member connection open.
func (x *diamFlow) choosePeer(key []byte, avoid *diamPeer) *diamPeer {
	now := time.Now()
	var failed []*state.Member
	if avoid != nil && avoid.sc.member != nil {
		failed = append(failed, avoid.sc.member)
	}
	if key != nil {
		if addr, ok := x.table.Lookup(key, now); ok && (avoid == nil || avoid.sc.member == nil || avoid.sc.member.Cfg.Load().Addr != addr) {
			if p := x.peerAt(addr); p != nil {
				x.counts.Persisted.Add(1)
				x.table.Save(key, addr, persistTTL, now)
				return p
			}
			if x.pool != nil {
				if m := state.MemberAt(x.pool, addr); m != nil && m.Availability() <= state.AvailDisabled {
					if p := x.dial(m, x.pool); p != nil {
						x.counts.Persisted.Add(1)
						x.table.Save(key, addr, persistTTL, now)
						return p
					}
				}
			}
		}
	}
	var p *diamPeer
	if x.pool != nil {
		for range 4 {
			m, _, _ := state.Choose(x.pool, state.Target{}, nil, failed, state.Chooser{Mode: x.pr.modeOverride()})
			if m == nil {
				break
			}
			if p = x.peerOf(m); p != nil {
				break
			}
			if p = x.dial(m, x.pool); p != nil {
				break
			}
			failed = append(failed, m)
		}
	}
	if p == nil {
		p = x.anyPeer(avoid)
	}
	if p != nil && p == avoid {
		return nil
	}
	if p != nil && key != nil && p.sc.member != nil {
		x.table.Save(key, p.sc.member.Cfg.Load().Addr, persistTTL, now)
	}
	return p
}

// persistTTL is how long a persist-avp record lives unused: BIG-IP's
// universal persistence default [M].
const persistTTL = 180 * time.Second

func (x *diamFlow) peerAt(addr netip.AddrPort) *diamPeer {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.peers {
		if !p.dead.Load() && p.sc.member != nil && p.sc.member.Cfg.Load().Addr == addr {
			return p
		}
	}
	return nil
}

func (x *diamFlow) peerOf(m *state.Member) *diamPeer {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.peers {
		if !p.dead.Load() && p.sc.member == m {
			return p
		}
	}
	return nil
}

func (x *diamFlow) anyPeer(avoid *diamPeer) *diamPeer {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.peers {
		if !p.dead.Load() && p != avoid && (avoid == nil || avoid.sc.member == nil || p.sc.member != avoid.sc.member) {
			return p
		}
	}
	return nil
}

// dial opens a connection to member m of pool for this flow and sends
// it the client's CER; nil when it cannot be opened.
func (x *diamFlow) dial(m *state.Member, pool *state.Pool) *diamPeer {
	pr := x.pr
	if pr.ended.Load() || !m.Reserve() {
		return nil
	}
	dst := pr.target(m)
	c, t, hold, err := pr.dialExtra(dst, pool) // lsn.go
	if err != nil {
		if !errors.Is(err, snatobj.ErrFull) && err != errSNAT { // every SNAT address full, or preserve-strict's port in use: not the member's failure
			m.ConnectFailed()
		}
		m.Release()
		return nil
	}
	m.ConnectSucceeded()
	ps := pool.Snap.Load()
	serverConnOpts(ps, c) // tcpopts.go
	s := &serverConn{conn: c, xlat: t, snat: hold}
	pr.opened(s, m, pool, ps, rawsock.AddrPortOf(c.LocalAddr()), dst, nil, false)
	return x.join(s)
}

// join makes s, a connection just opened for this flow, one of its
// member connections, and sends it the client's CER when the client has
// sent it; nil when it cannot be used.
func (x *diamFlow) join(s *serverConn) *diamPeer {
	pr := x.pr
	pr.AddLeg(&s.leg)
	if !pr.originateMember(s) { // server-ssl (tls.go): this member only
		s.conn.Close()
		s.release()
		return nil
	}
	x.mu.Lock()
	cer := x.cer
	x.mu.Unlock()
	p := x.addPeer(s, false, cer != nil)
	if cer != nil {
		var buf [2][]byte
		p.cerAt.Store(time.Now().UnixNano())
		if !x.send(p, x.hostIP(cer, s.leg.Client.Addr(), &buf), diamCtx{peer: p, locked: true}) {
			return nil
		}
	}
	return p
}

// prime connects every other available member at once
// (connection-prime).
func (x *diamFlow) prime() {
	if x.pool == nil {
		return
	}
	ps := x.pool.Snap.Load()
	if ps == nil {
		return
	}
	for _, m := range ps.Members {
		if m.Availability() == state.AvailUp && x.peerOf(m) == nil {
			x.dial(m, x.pool)
		}
	}
}

// addPeer makes sc one of the flow's member connections and starts its
// reader (replay: the CER is replayed to it).
func (x *diamFlow) addPeer(sc *serverConn, primary, replay bool) *diamPeer {
	p := &diamPeer{sc: sc, primary: primary, replay: replay}
	p.rd = diammsg.Reader{R: sc.netConn(), Max: x.opt.Max} // through server-ssl (tls.go)
	if x.opt.WatchdogTimeout > 0 {
		p.last.Store(time.Now().UnixNano())
	}
	x.mu.Lock()
	x.peers = append(x.peers, p)
	x.mu.Unlock()
	if x.pr.ended.Load() {
		p.dead.Store(true)
		reset(sc.conn)
	}
	x.pr.legsLeft.Add(1)
	go x.serve(p)
	return p
}

// closePeers resets the member connections of a flow that was reset.
func (x *diamFlow) closePeers() {
	if !x.pr.ended.Load() {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.peers {
		reset(p.sc.conn)
	}
}

// send writes raw to member p after DIAMETER_EGRESS (ctx: what the
// event is told); false when the flow ended for it (a failed write to a
// member other than the first only loses that member).
func (x *diamFlow) send(p *diamPeer, raw []byte, ctx diamCtx) bool {
	if x.prog != nil && x.prog.Handles(rules.DiameterEgress) {
		out, ok := x.run(rules.DiameterEgress, raw, ctx)
		if !ok {
			return false
		}
		if out.Drop {
			return true
		}
		raw = out.Raw
	}
	if !x.w.write(x.pr, true, p.sc, raw) { // msgflow.go
		p.dead.Store(true)
		return !p.primary
	}
	return true
}

// serve reads member p's messages until its connection ends.
func (x *diamFlow) serve(p *diamPeer) {
	pr := x.pr
	defer pr.finishLeg()
	defer func() {
		p.dead.Store(true)
		if x.retx {
			x.failed(p)
		}
		if !p.primary {
			p.sc.conn.Close()
			p.sc.release()
		}
	}()
	for {
		raw, err := pr.readMsg(p.sc.conn, p.rd.Next) // msgflow.go
		if err != nil {
			if diammsg.Malformed(err) {
				x.counts.Malformed.Add(1)
				reset(p.sc.conn)
			}
			return
		}
		pr.countRead(len(raw), false, p.sc)
		x.w.fromMember(raw) // clone.go, startBackClones: as the member sent it
		if x.opt.WatchdogTimeout > 0 {
			p.last.Store(time.Now().UnixNano())
		}
		m, err := diammsg.Parse(raw)
		if err != nil {
			x.counts.Malformed.Add(1)
			reset(p.sc.conn)
			return
		}
		x.tally(m)
		if !x.fromMember(p, m) {
			return
		}
	}
}

// fromMember handles one message of member p; false when p's reader is
// to stop.
func (x *diamFlow) fromMember(p *diamPeer, m diammsg.Msg) bool {
	if p.late.Load() {
		return false // reset for its handshake: what was in flight is not taken
	}
	if m.Request() {
		switch m.Code() {
		case diammsg.CmdDeviceWatchdog, diammsg.CmdDisconnectPeer:
			x.counts.Watchdogs.Add(1)
			x.mu.Lock()
			var b []byte
			if x.host != nil {
				b = diammsg.AppendAVP(b, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, x.host)
				b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, x.realm)
			}
			x.mu.Unlock()
			b = diammsg.AppendAVP(b, diammsg.AVPResultCode, diammsg.AVPFlagMandatory, 0, diammsg.U32(diammsg.ResultSuccess))
			ans := diammsg.Build(0, m.Code(), 0, m.HopByHop(), m.EndToEnd(), b)
			if m.Code() == diammsg.CmdDisconnectPeer {
				p.dead.Store(true)
			}
			return x.w.write(x.pr, true, p.sc, ans)
		}
		raw, _, ok := x.ingress(m.Raw, p, false)
		if !ok || raw == nil {
			return ok
		}
		m = diammsg.Msg{Raw: raw}
		x.mu.Lock()
		x.hbh++
		our := x.hbh
		if x.srvReq == nil {
			x.srvReq = make(map[uint32]srvReq)
		}
		if len(x.srvReq) < 4096 {
			x.srvReq[our] = srvReq{peer: p, hbh: m.HopByHop()}
		}
		x.mu.Unlock()
		raw = x.toClient(raw, &p.buf)
		diammsg.Msg{Raw: raw}.SetHopByHop(our)
		return x.answer(p, raw, diamCtx{client: true, peer: p})
	}
	if m.Code() == diammsg.CmdDeviceWatchdog && x.opt.WatchdogTimeout > 0 && m.HopByHop() == p.dwrHBH.Load() {
		p.dwrOut.Store(0) // the answer to the virtual's own DWR
		return true
	}
	if m.Code() == diammsg.CmdCapabilitiesExchange {
		p.cerAt.Store(0)
		x.mu.Lock()
		p.host = append([]byte(nil), m.Get(diammsg.AVPOriginHost)...)
		replay := p.replay
		if replay {
			// The CEA to a replayed CER: the client already has its own
			// (kept should the member giving it fail its handshake).
			p.replay = false
			p.cea = append([]byte(nil), m.Raw...)
		}
		x.mu.Unlock()
		if p.sc.member != nil && len(p.host) > 0 {
			x.table.SetHost(p.sc.member.Cfg.Load().Addr, p.host)
		}
		if replay {
			if rc := m.Get(diammsg.AVPResultCode); len(rc) != 4 || binary.BigEndian.Uint32(rc) != diammsg.ResultSuccess {
				return false // the member refused the client: no request goes to it
			}
			return true
		}
		x.open.Store(true)
	}
	hbh := m.HopByHop()
	found, mine := x.awaits(p, hbh)
	if !mine {
		x.counts.Dropped.Add(1) // sent again since: the new member answers
		return true
	}
	raw, out, ok := x.ingress(m.Raw, p, found)
	if !ok || raw == nil {
		return ok
	}
	if found && (out.Retransmit || x.errorCode(hbh, diammsg.Msg{Raw: raw})) {
		why := "error_code"
		if out.Retransmit {
			why = "irule"
		}
		x.retransmit(hbh, p, why)
		return true
	}
	return x.answer(p, x.toClient(raw, &p.buf), diamCtx{client: true, peer: p, pending: found, hbh: hbh})
}

// answer writes raw (from member p) to the client after DIAMETER_EGRESS;
// false when the flow ended. An answer whose request was queued
// (ctx.pending) takes it out of the queue, unless the rule sent it again
// (DIAMETER::retransmit) or it went to another member meanwhile.
func (x *diamFlow) answer(p *diamPeer, raw []byte, ctx diamCtx) bool {
	if x.prog != nil && x.prog.Handles(rules.DiameterEgress) {
		out, ok := x.run(rules.DiameterEgress, raw, ctx)
		if !ok {
			return false
		}
		if ctx.pending && out.Retransmit {
			x.retransmit(ctx.hbh, p, "irule")
			return true
		}
		if out.Drop {
			return true
		}
		raw = out.Raw
	}
	if ctx.pending && !x.answered(p, ctx.hbh) {
		x.counts.Dropped.Add(1)
		return true
	}
	return x.w.write(x.pr, false, p.sc, raw)
}

// diamCtx is where a message a DIAMETER_ event runs over is: on the
// client's side (client) or member peer's; why it is retransmitted; for
// an answer, whether its request hbh is queued.
type diamCtx struct {
	client  bool
	peer    *diamPeer
	reason  string
	pending bool
	hbh     uint32
	locked  bool // under pickMu (dial's replayed CER)
}

// ingress runs DIAMETER_INGRESS over raw, which came from the client
// (p nil) or member p (pending: an answer whose request is queued): the
// message as the rule left it, nil when it dropped it, and what else the
// rule did; false when the flow ended.
func (x *diamFlow) ingress(raw []byte, p *diamPeer, pending bool) ([]byte, rules.DiameterOutcome, bool) {
	if x.prog == nil || !x.prog.Handles(rules.DiameterIngress) {
		return raw, rules.DiameterOutcome{}, true
	}
	out, ok := x.run(rules.DiameterIngress, raw, diamCtx{client: p == nil, peer: p, pending: pending})
	if !ok || out.Drop {
		return nil, out, ok
	}
	return out.Raw, out, true
}

// state is DIAMETER::state for a message on ctx's side.
func (x *diamFlow) state(ctx diamCtx) string {
	switch {
	case x.pr.ended.Load():
		return "CLOSING"
	case !ctx.client && ctx.peer != nil && ctx.peer.dead.Load():
		return "CLOSED"
	case !ctx.client && ctx.peer != nil && ctx.peer.cerAt.Load() != 0:
		return "WAIT_ICEA"
	case ctx.client && !x.open.Load():
		return "WAIT_ICEA"
	}
	return "IOPEN"
}

// run runs ev over raw and applies what the rule did to the flow: a
// verdict, DIAMETER::disconnect, DIAMETER::respond's messages (to the
// client on its side, else to ctx.peer), DIAMETER::retry's requests, the
// connection's retransmission settings. out.Raw is the message as the
// rule left it (raw when its edit made no message); out.Drop is counted.
// false when the flow ended.
func (x *diamFlow) run(ev rules.Event, raw []byte, ctx diamCtx) (rules.DiameterOutcome, bool) {
	pr, rs := x.pr, x.pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return rules.DiameterOutcome{}, false
	}
	sess := pr.RuleSession(x.prog)
	rs.ev = config.Event(ev.String())
	// The client's message's DIAMETER_INGRESS runs on the goroutine
	// reading the client (ingress, ctx.peer nil): a clone there starts
	// from the message.
	msg := x.prog != nil && x.clones && ev == rules.DiameterIngress && ctx.client && ctx.peer == nil
	// A member's message's DIAMETER_INGRESS runs on the goroutine
	// reading that member (serve): a clone there copies the members'
	// messages from it on (clone.go, beginBack).
	back := x.prog != nil && x.clones && ev == rules.DiameterIngress && !ctx.client && ctx.peer != nil
	switch {
	case msg:
		rs.beginMsg(raw, nil, false)
	case back:
		rs.beginBack(raw)
	}
	// A client's message's DIAMETER_INGRESS, on the client's reader:
	// a pool, member or node decision there is its request's.
	ingress := ev == rules.DiameterIngress && ctx.client && ctx.peer == nil
	if ingress {
		rs.Changed = false
	}
	sess.BeginDiameterWith(raw, rules.DiameterContext{ClientSide: ctx.client, Reason: ctx.reason, Pending: ctx.pending,
		State: x.state(ctx), Profile: x.profRetx})
	err := sess.Run(ev)
	if ingress && rs.Changed {
		x.want = diamTarget{set: true, pool: rs.Pool, addr: rs.Addr, node: rs.Node}
	}
	out := sess.EndDiameter()
	defaults := sess.DiameterDefaults()
	v, detach := rs.verdict, rs.detach
	rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
	var late []lateClone
	if msg || back {
		late = rs.endMsg()
	}
	rs.mu.Unlock()
	if back {
		pr.startBackClones(late, &x.w)
	} else {
		pr.startMsgClones(late, &x.w.mu[1])
	}
	if defaults != nil {
		x.mu.Lock()
		x.defaults = defaults
		x.mu.Unlock()
	}
	if !pr.applyRule(config.Event(ev.String()), err, v, detach) {
		return out, false
	}
	if out.Disconnect {
		pr.end(true)
		return out, false
	}
	for _, m := range out.Respond {
		x.counts.Responded.Add(1)
		if ctx.client {
			if !x.w.write(pr, false, nil, m) {
				return out, false
			}
		} else if ctx.peer != nil {
			x.w.write(pr, true, ctx.peer.sc, m)
		}
	}
	if len(out.Retry) > 0 {
		if ctx.locked {
			go x.retry(out.Retry) // a member being connected holds pickMu
		} else if !x.retry(out.Retry) {
			return out, false
		}
	}
	if out.Drop {
		x.counts.Dropped.Add(1)
	}
	if out.Edited {
		if _, err := diammsg.Parse(out.Raw); err != nil {
			out.Raw = raw
		}
	}
	return out, true
}

// set rewrites AVP code of *m to v through the buffers of its reader.
func set(m *diammsg.Msg, buf *[2][]byte, code uint32, v []byte) {
	i := 0
	if len(buf[0]) > 0 && len(m.Raw) > 0 && &buf[0][:1][0] == &m.Raw[0] {
		i = 1
	}
	buf[i] = m.Set(buf[i][:0], code, v)
	m.Raw = buf[i]
}

// toServer applies the profile's rewrites toward member p.
func (x *diamFlow) toServer(raw []byte, p *diamPeer, buf *[2][]byte) []byte {
	o := x.opt
	m := diammsg.Msg{Raw: raw}
	if o.OriginHostToServer != "" {
		set(&m, buf, diammsg.AVPOriginHost, []byte(o.OriginHostToServer))
	}
	if o.OriginRealmToServer != "" {
		set(&m, buf, diammsg.AVPOriginRealm, []byte(o.OriginRealmToServer))
	}
	if m.Request() && m.AppID() != 0 {
		if o.DestinationRealm != "" {
			set(&m, buf, diammsg.AVPDestinationRealm, []byte(o.DestinationRealm))
		}
		if o.OverwriteDestHost && m.Get(diammsg.AVPDestinationHost) != nil {
			x.mu.Lock()
			host := p.host
			x.mu.Unlock()
			if len(host) == 0 && p.sc.member != nil {
				// A new connection's CEA is not in yet: the one the
				// member gave before.
				host = x.table.Host(p.sc.member.Cfg.Load().Addr)
			}
			if len(host) > 0 {
				set(&m, buf, diammsg.AVPDestinationHost, host)
			}
		}
	}
	if m.Code() == diammsg.CmdCapabilitiesExchange && m.Request() {
		return x.hostIP(m.Raw, p.sc.leg.Client.Addr(), buf)
	}
	return m.Raw
}

// hostIP rewrites a CER's or CEA's Host-IP-Address to a (host-ip-rewrite).
func (x *diamFlow) hostIP(raw []byte, a netip.Addr, buf *[2][]byte) []byte {
	m := diammsg.Msg{Raw: raw}
	if x.opt.HostIPRewrite && a.IsValid() && m.Get(diammsg.AVPHostIPAddress) != nil {
		set(&m, buf, diammsg.AVPHostIPAddress, diammsg.Address(a))
	}
	return m.Raw
}

// toClient applies the profile's rewrites toward the client.
func (x *diamFlow) toClient(raw []byte, buf *[2][]byte) []byte {
	o := x.opt
	m := diammsg.Msg{Raw: raw}
	if o.OriginHostToClient != "" {
		set(&m, buf, diammsg.AVPOriginHost, []byte(o.OriginHostToClient))
	}
	if o.OriginRealmToClient != "" {
		set(&m, buf, diammsg.AVPOriginRealm, []byte(o.OriginRealmToClient))
	}
	if m.Code() == diammsg.CmdCapabilitiesExchange && !m.Request() {
		return x.hostIP(m.Raw, x.pr.Local.Addr(), buf)
	}
	return m.Raw
}
