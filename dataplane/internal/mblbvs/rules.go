package mblbvs

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/rules"
)

// mblbRules runs a message-balanced client connection's iRules. Its events
// come from several goroutines (the client reader, each server
// connection's reader), so one lock orders them, as a proxied flow's rule
// lock does. During CLIENT_DATA and SERVER_DATA the rule works on the
// engine's *mblb.Data: TCP::payload, TCP::release, TCP::collect and
// TCP::notify cut messages, and pool / pool member / node direct the
// messages notified after them.
type mblbRules struct {
	mu sync.Mutex
	f  *mblbFlow
	// ssl is the handshake's events' and commands' state (sslhello.go).
	ssl sslRuleState
	// h2: the client speaks HTTP/2 through the http2 profile's gateway
	// (http2.go); set before its first request.
	h2 bool
	// h3: the client speaks HTTP/3 through the http3 profile (http3.go).
	h3 bool
	// h2off: HTTP2::disable ran in CLIENT_ACCEPTED (http2rules.go).
	h2off atomic.Bool
	snap  *state.VirtualSnap
	rules config.Rules
	sess  *rules.ConnState
	d     *mblb.Data // the event's data; nil in other events
	ev    config.Event
	// verdict of the current event: reject/drop end the client.
	verdict irules.Verdict
	server  netip.AddrPort // the server side of a SERVER_CONNECTED
	local   netip.AddrPort
	// picked is the lsn translation SA_PICKED runs over (lsn.go).
	picked *lsn.Translation
	// lsn is what the client's LSN:: commands set, under lsnMu (lsn.go).
	lsnMu sync.Mutex
	lsn   lsn.Steer
	// limits are the rule's LB::connlimit limits (virtual, node,
	// poolmember), read by each request's member choice on another
	// goroutine; limited is set once a rule set one (connlimit.go).
	limits  [3]atomic.Int64
	limited atomic.Bool
	// keys are the limits' keys (LB::connlimit ... key; nil: none), holds
	// the client's counts under them, given back when it closes.
	keys  [3]atomic.Pointer[string]
	holds state.KeyHolds
	// init takes the snat decisions of a SERVER_INIT running
	// (serverinit.go); nil in other events.
	init *irules.Target
	// beforeTLS is set while SERVER_CONNECTED runs for a server-ssl
	// connection whose handshake has not started (connectedBeforeTLS):
	// SSL::disable and SSL::enable serverside then set its clear.
	beforeTLS *pendingTLS
	// self is the rules.Conn the session is made with: r, or on an HTTP
	// virtual the httpRules around it.
	self rules.Conn
	// hx is the message of the HTTP_REQUEST or HTTP_RESPONSE running;
	// nil in other events.
	hx *mblb.HTTPEvent
	// http is the HTTP half on an HTTP virtual, nil elsewhere; lbFailed
	// is set while LB_FAILED runs, where HTTP::respond answers.
	http     *httpRules
	lbFailed bool
	// pdTarget takes the pool, member or node decision of a PERSIST_DOWN
	// (persist.go) or LB_FAILED running; nil in other events.
	pdTarget *mblb.Target
	// sipPersist takes the persist decision of a client's SIP_REQUEST
	// running (sip.go); nil in other events.
	sipPersist *sipPersistDecision
	// httpEv is the HTTP event running (runEvent).
	httpEv rules.Event
	// named is the last pool a rule named and the index it was found in
	// (namedPool): a rule names the same pool request after request.
	named struct {
		idx  *state.Pools
		name string
		pool *state.Pool
	}
	// ckRule is the last `persist cookie` setting handed to the engine
	// (cookie.go), reused while the rule asks for the same.
	ckRule *mblb.CookieRule
	// onClientData and onServerData: the rules handle CLIENT_DATA and
	// SERVER_DATA, asked once for the client rather than per message.
	onClientData, onServerData bool
	// onLBSelected: the rules handle LB_SELECTED, where a pool, member
	// or node decision sends the message elsewhere (lbselected.go).
	onLBSelected bool
	// selecting is set while LB_SELECTED runs, selPool then the chosen
	// member's pool ("" for a node), which LB::server names.
	selecting bool
	selPool   string
	// accepting is set while CLIENT_ACCEPTED runs, where the clone
	// command is taken (clone.go).
	accepting bool
	// syn is what the client's SYN carried, when the virtual's listener
	// keeps SYNs (state.VirtualSnap.SYN); read once as the client comes.
	syn *synhdr.SYN
}

// ClientSYN implements rules.SYNConn.
func (r *mblbRules) ClientSYN() (*synhdr.SYN, synhdr.Picks) {
	var p synhdr.Picks
	if c := r.snap.Cfg.ClientTCP; c != nil {
		p = c.TCPOptions
	}
	return r.syn, p
}

func newMBLBRules(f *mblbFlow, snap *state.VirtualSnap) *mblbRules {
	r := &mblbRules{f: f, snap: snap, rules: snap.Cfg.Rules}
	r.self = r
	if r.rules != nil {
		r.onClientData = r.rules.Handles(config.EventClientData)
		r.onServerData = r.rules.Handles(config.EventServerData)
		r.onLBSelected = r.rules.Handles(config.EventLBSelected)
	}
	return r
}

// RuleSession implements RuleConn: the client's session, made at its
// first event and released by end.
func (r *mblbRules) RuleSession(prog *rules.Program) *rules.ConnState {
	if r.sess == nil {
		r.sess = prog.NewConnState(r.self)
		if so := r.f.mv.cfg.Request.HTTP.Stream; so != nil && r.http != nil {
			expr := ""
			if so.Expr != nil {
				expr = so.Expr.String()
			}
			r.sess.SetStream(expr) // stream.go
		}
		if r.f.mv.cfg.Request.HTTP.Rewrite != nil && r.http != nil {
			r.sess.SetRewrite() // rewrite.go
		}
		if r.f.mv.cfg.Request.HTTP.Compress != nil && r.http != nil {
			r.sess.SetCompress()
		}
		if r.f.mv.cfg.Request.HTTP.Cache != nil && r.http != nil {
			r.sess.SetCache()
		}
		if h := &r.f.mv.cfg.Request.HTTP; (h.RequestAdapt != nil || h.ResponseAdapt != nil) && r.http != nil {
			setAdapt(r.sess, h) // adapt.go
		}
		if r.f.mv.cfg.Request.HTTP.WebSocket != nil && r.http != nil {
			r.sess.SetWebSocket() // websocket.go
		}
		if r.f.mv.cfg.Request.HTTP.HTML != nil && r.http != nil {
			r.sess.SetHTML(true) // html.go
		}
		if h := r.f.mv.cfg.Request.SIP.PersistHeader; h != "" && r.f.mv.cfg.Request.Mode == mblb.SIP {
			r.sess.SetSIPPersistField(h) // what SIP::persist reads (sip.go)
		}
	}
	return r.sess
}

// Socket implements rules.SocketConn for the client side. The server
// side of a message-based or HTTP virtual is many connections (a
// message's member changes from one to the next), so a socket command
// there is the rule's error.
func (r *mblbRules) Socket(s rules.Side, fn func(fd int) error) error {
	if s != rules.ClientSide {
		return errors.New("the server side of a message-based or HTTP virtual has no one connection")
	}
	return r.f.sess.Socket(fn)
}

// ArrivalIf implements rules.ArrivalConn: the interface the client's
// connection arrived on (LINK::vlan_id).
func (r *mblbRules) ArrivalIf() int {
	idx := 0
	r.f.sess.Socket(func(fd int) error { idx = rawsock.ArrivalIf(fd); return nil })
	return idx
}

// run runs one event under the lock.
func (r *mblbRules) run(ev config.Event, d *mblb.Data) error {
	if !r.rules.Handles(ev) {
		return nil
	}
	return r.runHandled(ev, d)
}

// logRuleError logs a rule's failure other than a runtime error (which
// the rules engine logs itself, as BIG-IP's TCL error line).
func (mv *VS) logRuleError(virtual string, ev any, err error) {
	if err == nil {
		return
	}
	var re *rules.RuntimeError
	if !errors.As(err, &re) {
		mv.env.Log.Error(fmt.Sprintf("Rule %s <%s>: %v", virtual, ev, err))
	}
}

// runHandled is run for an event the caller knows the rules handle.
func (r *mblbRules) runHandled(ev config.Event, d *mblb.Data) error {
	r.ev, r.d, r.verdict = ev, d, irules.GoOn
	err := r.rules.Run(ev, r)
	if err == nil && r.verdict != irules.GoOn && d != nil {
		d.Reject()
	}
	r.d = nil
	r.f.mv.logRuleError(r.f.Virtual, ev, err)
	return err
}

// runEvent runs an event of the rules engine that the proxy hook does
// not list (the HTTP events) under the lock, as run does.
func (r *mblbRules) runEvent(ev rules.Event) error {
	prog := irules.Program(r.rules)
	if prog == nil || !prog.Handles(ev) {
		return nil
	}
	r.verdict = irules.GoOn
	r.httpEv = ev
	err := r.RuleSession(prog).Run(ev)
	r.httpEv = rules.RuleInit
	r.f.mv.logRuleError(r.f.Virtual, ev, err)
	return err
}

// accepted runs CLIENT_ACCEPTED; false means the rule refused the client.
func (r *mblbRules) accepted() bool {
	r.mu.Lock()
	r.accepting = true
	err := r.run(config.EventClientAccepted, nil)
	r.accepting = false
	v := r.verdict
	r.mu.Unlock()
	return r.goOn(err, v)
}

// rstConnected reports the client's reset after a SERVER_CONNECTED that
// failed (err) or did not let the flow go on (reject, drop: the client
// is reset either way [M: logged as the rule's reject]).
func (r *mblbRules) rstConnected(err error) {
	c := rstcause.RuleReject
	if err != nil {
		c = rstcause.TCLError
	}
	r.f.mv.env.Rst.Reset(rstArea, r.f.Local, r.f.Client, c)
}

// goOn ends the client after an event that failed (reset), rejected
// (reset) or dropped it (close); true means the client carries on.
func (r *mblbRules) goOn(err error, v irules.Verdict) bool {
	if err != nil || v == irules.Reject {
		c := rstcause.RuleReject
		if err != nil {
			c = rstcause.TCLError
		}
		r.f.mv.env.Rst.Reset(rstArea, r.f.Local, r.f.Client, c)
		r.f.sess.Close(true)
		return false
	}
	if v != irules.GoOn {
		r.f.sess.Close(false)
		return false
	}
	return true
}

// ClientData implements mblb.RuleHandler (CLIENT_DATA).
func (r *mblbRules) ClientData(d *mblb.Data) error {
	if !r.onClientData {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runHandled(config.EventClientData, d)
}

// ServerData implements mblb.RuleHandler (SERVER_DATA). Without a handler
// every read of the member is one response, as on a virtual whose rule only
// frames requests.
func (r *mblbRules) ServerData(d *mblb.Data) error {
	if !r.onServerData {
		d.Release(-1)
		d.Notify()
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runHandled(config.EventServerData, d)
}

// serverConnected runs SERVER_CONNECTED, which the rules handle (legOpened
// asks), for a new server connection of the client's own; a rule error
// there resets the client.
func (r *mblbRules) serverConnected(l *mblb.Leg) {
	r.mu.Lock()
	r.server, r.local = l.Remote, l.Local
	err := r.runHandled(config.EventServerConnected, nil)
	r.server, r.local = netip.AddrPort{}, netip.AddrPort{}
	v := r.verdict
	r.mu.Unlock()
	if err != nil || v != irules.GoOn {
		r.rstConnected(err)
		r.f.sess.Close(true) // at once, as in serverHandshake (tls.go)
	}
}

// lbSelected runs LB_SELECTED for one message's choice (every request on
// an HTTP virtual, as BIG-IP does with OneConnect; every message on an
// mblb one), with LB::server naming the member. t is where a pool,
// member or node decision (or LB::reselect) made there sends the message
// instead, zero without one (VS.selected follows it). False means the
// rule ended the client (reject, drop, an error).
func (r *mblbRules) lbSelected(member netip.AddrPort, pool string) (t mblb.Target, ok bool) {
	r.mu.Lock()
	r.server, r.pdTarget = member, &t
	r.selecting, r.selPool = true, pool
	err := r.runHandled(config.EventLBSelected, nil)
	r.server, r.pdTarget = netip.AddrPort{}, nil
	r.selecting, r.selPool = false, ""
	v := r.verdict
	r.mu.Unlock()
	if !r.goOn(err, v) {
		return mblb.Target{}, false
	}
	return t, true
}

// lbQueued runs LB_QUEUED when a request joins its pool's connection
// queue (connqueue.go); false when the rule ended the client (reject,
// drop, a Tcl error), which then leaves the queue.
func (r *mblbRules) lbQueued() bool {
	if !r.rules.Handles(config.EventLBQueued) {
		return true
	}
	r.mu.Lock()
	err := r.run(config.EventLBQueued, nil)
	v := r.verdict
	r.verdict = irules.GoOn
	r.mu.Unlock()
	return r.goOn(err, v)
}

// noMember runs LB_FAILED when no member can take a message. On an HTTP
// virtual the rule may answer the request itself (HTTP::respond,
// HTTP::redirect): the answer comes back as *mblb.Answered; otherwise the
// result is mblb.ErrNoMember and the client is reset.
//
// A pool, member or node decision in LB_FAILED (`pool backup`,
// `LB::reselect pool backup`, `node 10.0.0.9 80`) is returned as the
// target to try instead, as BIG-IP sends the request there.
func (r *mblbRules) noMember() (mblb.Target, error) {
	if !r.rules.Handles(config.EventLBFailed) {
		return mblb.Target{}, mblb.ErrNoMember
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var t mblb.Target
	r.lbFailed, r.pdTarget = true, &t
	err := r.run(config.EventLBFailed, nil)
	r.lbFailed, r.pdTarget = false, nil
	if r.http != nil {
		defer r.http.ClearActions()
	}
	if err != nil || r.verdict != irules.GoOn {
		return mblb.Target{}, mblb.ErrNoMember
	}
	if r.http != nil {
		for _, a := range r.http.Actions {
			switch a.Kind {
			case rules.HTTPRespond:
				return mblb.Target{}, &mblb.Answered{Response: a.Data, KeepAlive: a.KeepAlive && !a.Reset}
			case rules.HTTPFallback:
				return mblb.Target{}, &mblb.Answered{Response: mblb.FallbackRedirect(a.Text, r.f.mv.cfg.Request.HTTP.ServerAgent)}
			}
		}
	}
	return t, mblb.ErrNoMember
}

// end runs CLIENT_CLOSED and gives the rule session back.
func (r *mblbRules) end() {
	r.mu.Lock()
	r.run(config.EventClientClosed, nil)
	if r.sess != nil {
		r.sess.Release()
		r.sess = nil
	}
	r.holds.Release() // LB::connlimit ... key
	r.mu.Unlock()
}

var _ config.RuleConn = (*mblbRules)(nil)

// Addr implements rules.Conn.
func (r *mblbRules) Addr(e rules.Endpoint) netip.AddrPort {
	switch e {
	case rules.EndClient:
		return r.f.Client
	case rules.EndVirtual:
		return r.f.Local
	case rules.EndServerLocal:
		return r.local
	case rules.EndServer:
		if r.hx != nil && r.hx.IsResponse() {
			return r.hx.Server()
		}
		if r.d != nil && r.d.Side() == mblb.ServerSide {
			return r.d.Server()
		}
		return r.server
	}
	return netip.AddrPort{}
}

// Protocol implements rules.Conn.
func (r *mblbRules) Protocol() int { return 6 }

// Decide implements rules.Conn: pool, member and node decisions direct the
// messages notified after them, one by one (seed 000 §4.2).
func (r *mblbRules) Decide(d rules.Decision) error {
	if r.init != nil {
		return r.initDecide(d) // serverinit.go
	}
	switch d.Kind {
	case rules.DecidePool, rules.DecideMember:
		pool := r.namedPool(d.Pool)
		if pool == nil {
			return fmt.Errorf("no such pool: %s", d.Pool)
		}
		t := mblb.Target{Pool: pool.Name}
		if d.Kind == rules.DecideMember {
			m := state.MemberAt(pool, d.Addr)
			if m == nil {
				return fmt.Errorf("no such member %s in pool %s", d.Addr, pool.Name)
			}
			t.Member = m.Cfg.Load().Addr
		}
		return r.selectTarget(t)
	case rules.DecideNode:
		return r.selectTarget(mblb.Target{Member: d.Addr, Node: true})
	case rules.DecideReselect:
		// LB::reselect: where the message goes instead of the member
		// that could not take it (LB_FAILED, and PERSIST_DOWN).
		if r.pdTarget == nil {
			return errors.New("LB::reselect is acted on in LB_SELECTED and LB_FAILED on a message-based or HTTP virtual")
		}
		switch {
		case d.Pool != "" && d.Addr.IsValid():
			return r.Decide(rules.Decision{Kind: rules.DecideMember, Pool: d.Pool, Addr: d.Addr})
		case d.Pool != "":
			return r.Decide(rules.Decision{Kind: rules.DecidePool, Pool: d.Pool})
		case d.Addr.IsValid():
			return r.selectTarget(mblb.Target{Member: d.Addr, Node: true})
		}
		if p := r.snap.Pool; p != nil {
			return r.selectTarget(mblb.Target{Pool: p.Name})
		}
		return errors.New("LB::reselect: the virtual has no pool")
	case rules.DecideReject:
		r.verdict = irules.Reject
	case rules.DecideDrop, rules.DecideDiscard:
		r.verdict = irules.Drop
	case rules.DecideSnat, rules.DecideSnatAuto, rules.DecideSnatNone, rules.DecideSnatPool:
		return errors.New("snat decisions are acted on in SERVER_INIT on a message-based or HTTP virtual (each server connection's source); elsewhere set source-address-translation")
	default:
		return fmt.Errorf("%s is not supported on a message-based virtual", d.Kind)
	}
	return nil
}

// namedPool is the pool a rule names (Pools.Named), looked up once per
// name and commit: a commit stores a new index, which ends the memo.
func (r *mblbRules) namedPool(name string) *state.Pool {
	idx := r.f.mv.env.Pools()
	if m := &r.named; m.idx == idx && m.name == name {
		return m.pool
	}
	p := idx.Named(r.f.Virtual, name)
	r.named.idx, r.named.name, r.named.pool = idx, name, p
	return p
}

func (r *mblbRules) selectTarget(t mblb.Target) error {
	if r.pdTarget != nil {
		*r.pdTarget = t
		return nil
	}
	if r.hx != nil {
		if r.hx.IsResponse() {
			return errHTTPResponseDecision
		}
		r.hx.Select(t)
		return nil
	}
	if r.f.mv.cfg.Request.Mode == mblb.HTTP && (r.connPhase() == phaseAccepted || r.inClientHandshake()) {
		// The client's current pool, member or node on an HTTP virtual:
		// its requests go there until a rule chooses another.
		r.f.sess.SetTarget(t)
		return nil
	}
	if r.d == nil || r.d.Side() != mblb.ClientSide {
		if r.ev == config.EventClientAccepted && r.f.mv.cfg.Request.Mode != mblb.HTTP {
			return errors.New("on a message-based virtual, choose the pool, member or node per message in CLIENT_DATA or LB_SELECTED")
		}
		return fmt.Errorf("a pool, member or node decision in %s is not acted on: it applies to requests, %s", r.decisionEvent(), r.decisionWhere())
	}
	r.d.Select(t)
	return nil
}

// decisionEvent names the event running, for a refused decision.
func (r *mblbRules) decisionEvent() string {
	if r.httpEv != rules.RuleInit {
		return r.httpEv.String()
	}
	return string(r.ev)
}

// decisionWhere says where the virtual's kind takes a pool, member or
// node decision: HTTP_REQUEST on an HTTP virtual, SIP_REQUEST or
// CLIENT_DATA on a SIP one, CLIENT_DATA on other message-based ones;
// LB_SELECTED and LB_FAILED on all.
func (r *mblbRules) decisionWhere() string {
	switch r.f.mv.cfg.Request.Mode {
	case mblb.HTTP:
		return "make it in HTTP_REQUEST (or LB_SELECTED, LB_FAILED) on an HTTP virtual"
	case mblb.SIP:
		return "make it in SIP_REQUEST or CLIENT_DATA (or LB_SELECTED, LB_FAILED) on a SIP virtual"
	}
	return "make it in CLIENT_DATA (or LB_SELECTED, LB_FAILED) on a message-based virtual"
}

// Collect implements rules.Conn. The engine collects all the time on a
// message-based virtual; a length only says when the next event runs.
func (r *mblbRules) Collect(s rules.Side, length, skip int) error {
	if r.d != nil && sideOf(r.d) == s {
		r.d.Collect(length)
	}
	return nil
}

func sideOf(d *mblb.Data) rules.Side {
	if d.Side() == mblb.ServerSide {
		return rules.ServerSide
	}
	return rules.ClientSide
}

// Release implements rules.Conn.
func (r *mblbRules) Release(s rules.Side, length int) error {
	if r.d != nil && sideOf(r.d) == s {
		r.d.Release(length)
	}
	return nil
}

// Payload implements rules.Conn.
func (r *mblbRules) Payload(s rules.Side) []byte {
	if r.d != nil && sideOf(r.d) == s {
		return r.d.Payload()
	}
	return nil
}

// ReplacePayload implements rules.Conn.
func (r *mblbRules) ReplacePayload(s rules.Side, offset, length int, data []byte) error {
	return errors.New("TCP::payload replace is not supported on a message-based virtual")
}

// Respond implements rules.Conn.
func (r *mblbRules) Respond(s rules.Side, data []byte) error {
	return errors.New("TCP::respond is not supported on a message-based virtual (answers must keep the client's request order)")
}

// Close implements rules.Conn: the client is closed after the event.
func (r *mblbRules) Close(s rules.Side) error {
	if r.verdict == irules.GoOn {
		r.verdict = irules.Close
	}
	return nil
}

// Notify implements rules.Conn: TCP::notify request ends a request at the
// bytes released so far, TCP::notify response a response; each notified
// request is balanced on its own.
func (r *mblbRules) Notify(s rules.Side, n rules.NotifyKind) error {
	if r.d == nil {
		return errors.New("TCP::notify is only valid in CLIENT_DATA and SERVER_DATA")
	}
	switch {
	case n == rules.NotifyRequest && sideOf(r.d) != rules.ClientSide:
		return errors.New("TCP::notify request is only valid on the client side")
	case n == rules.NotifyResponse && sideOf(r.d) != rules.ServerSide:
		return errors.New("TCP::notify response is only valid on the server side")
	}
	r.d.Notify()
	return nil
}

// LBSelect implements rules.Conn.
func (r *mblbRules) LBSelect() (string, netip.AddrPort, error) {
	return state.LBSelect(r.snap.Pool, nil)
}

// LBServer implements rules.Conn: on the server side, the member that
// answers; on an HTTP virtual with the pool the request goes to
// (currentPool), which is all there is before a member is chosen.
func (r *mblbRules) LBServer() (string, netip.AddrPort, bool) {
	pool := ""
	switch {
	case r.selecting:
		pool = r.selPool // LB_SELECTED: the chosen member's pool
	case r.f.mv.cfg.Request.Mode == mblb.HTTP:
		pool = r.currentPool()
	}
	if a := r.Addr(rules.EndServer); a.IsValid() {
		return pool, a, true
	}
	if pool != "" {
		return pool, netip.AddrPort{}, true
	}
	return "", netip.AddrPort{}, false
}

// currentPool is the pool an HTTP virtual's request goes to as things
// stand: the one this request's rule chose, else the connection's current
// one (a rule's earlier choice), else the virtual's; "" when the choice
// is a node or the virtual has no pool.
func (r *mblbRules) currentPool() string {
	if r.hx != nil && !r.hx.IsResponse() {
		if t, ok := r.hx.Selected(); ok {
			return t.Pool
		}
	}
	if r.f.sess != nil {
		if t, ok := r.f.sess.Current(); ok {
			return t.Pool
		}
	}
	if p := r.snap.Pool; p != nil {
		return p.Name
	}
	return ""
}

// MemberStatus implements rules.Conn.
func (r *mblbRules) MemberStatus(pool string, member netip.AddrPort) (string, error) {
	if pool == "" {
		return "", errors.New("LB::status needs a pool on a message-based virtual")
	}
	return r.f.mv.env.Pools().MemberStatus(r.f.Virtual, pool, member)
}

// ActiveMembers implements rules.Conn.
func (r *mblbRules) ActiveMembers(pool string) ([]netip.AddrPort, error) {
	return r.f.mv.env.Pools().ActiveMembers(r.f.Virtual, pool)
}

var _ rules.IdleTimer = (*mblbRules)(nil)

// FlowIdleTimeout implements rules.IdleTimer.
func (r *mblbRules) FlowIdleTimeout() time.Duration { return r.f.sess.IdleTimeout() }

// SetFlowIdleTimeout implements rules.IdleTimer (IP::idle_timeout): the
// client's session and its row in the connection table.
func (r *mblbRules) SetFlowIdleTimeout(d time.Duration) {
	r.f.sess.SetIdleTimeout(d)
	r.f.SetIdleTimeout(d)
}

var _ rules.StatsConn = (*mblbRules)(nil)

// SideStats implements rules.StatsConn: the client's connection, or the
// connection to the member the event concerns (serverLeg).
func (r *mblbRules) SideStats(s rules.Side) (rules.FlowStats, bool) {
	if s == rules.ClientSide {
		return irules.Stats(&r.f.Traffic, time.Since(r.f.Created())), true
	}
	lf := r.serverLeg()
	if lf == nil {
		return rules.FlowStats{}, false
	}
	return irules.Stats(&lf.leg.Traffic, time.Since(lf.Created())), true
}

// serverLeg is the connection to the member the event concerns: the one
// this client opened, else (OneConnect) one another client opened; nil
// when there is none.
func (r *mblbRules) serverLeg() *legFlow {
	srv := r.Addr(rules.EndServer)
	if !srv.IsValid() {
		return nil
	}
	var found *legFlow
	r.f.mv.legs.Range(func(k, v any) bool {
		if l := k.(*mblb.Leg); l.Remote == srv {
			found = v.(*legFlow)
			return l.Opener != r.f
		}
		return true
	})
	return found
}

var _ rules.MemberMarker = (*mblbRules)(nil)

// MarkMember implements rules.MemberMarker: the current member is the one
// the event's message went to.
func (r *mblbRules) MarkMember(pool string, member netip.AddrPort, up bool) error {
	var cur *state.Member
	if lf := r.serverLeg(); lf != nil {
		cur = lf.m
	}
	return r.f.mv.env.Pools().Mark(r.f.Virtual, pool, member, cur, up)
}

var _ rules.FlowActivity = (*mblbRules)(nil)

// FlowLastActive implements rules.FlowActivity (FLOW::idle_duration): the
// client side's last activity, which the session's idle timeout measures.
func (r *mblbRules) FlowLastActive() time.Time { return time.Unix(0, r.f.sess.LastActive()) }

// RefreshFlow implements rules.FlowActivity (FLOW::refresh).
func (r *mblbRules) RefreshFlow() { r.f.sess.Refresh() }
