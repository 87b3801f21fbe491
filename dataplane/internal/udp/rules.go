package udp

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/rules"
)

// ruleState is what a flow whose virtual has rules carries. Events of one
// flow are serialized by mu (the client side runs on the listener's
// reader, each server side on its leg's goroutine); every rules.Conn
// method runs inside an event, under mu.
//
// The events: CLIENT_ACCEPTED when a client's first datagram makes its
// flow, CLIENT_DATA for every client datagram, LB_SELECTED on each choice
// of a member (LB_FAILED when none can take the datagram), SERVER_DATA for
// every answer, CLIENT_CLOSED when the flow ends. SERVER_CONNECTED runs
// when a server socket is opened for the flow, before the datagram that
// chose it is sent; SERVER_CLOSED for each when the flow ends, before
// CLIENT_CLOSED. UDP::payload is the datagram of the event; UDP::drop
// (and drop, discard) loses it; reject ends the flow; UDP::respond sends
// a datagram of its own. UDP::hold in CLIENT_ACCEPTED keeps the client's
// datagrams (held, up to the profile's bounds) while the server is chosen
// and connected without them; UDP::release in LB_SELECTED or
// SERVER_CONNECTED lets them go on, through CLIENT_DATA, in order.
type ruleState struct {
	mu      sync.Mutex
	sess    *rules.ConnState
	done    bool
	ev      config.Event
	payload []byte
	cur     *leg // the leg of a SERVER_DATA event
	reject  bool
	dropped bool

	irules.Target // pool, member, node, snat and LB::mode decisions
	// Holds are the flow's counts under its LB::connlimit keys.
	Holds    state.KeyHolds
	pick     lbPick // the choice LB_SELECTED runs on
	persist  rulePersistState
	toClient [][]byte
	toServer [][]byte
	// mrIn is the client's datagram whose message-routing ingress events
	// (the protocol's and MR_INGRESS) run now on the goroutine reading
	// the client, when the rules clone (mrf.go): a clone there starts
	// from it (clone.go).
	mrIn []byte

	// sipKept is the flow's target and persist decisions before a
	// client message's SIP event, given back once the message is dealt
	// with (sip.go); sipKeeping while it is held. sipLegKept is the same
	// for a member's message, given back before the event's lock is.
	sipKept    sipKept
	sipKeeping bool
	sipLegKept sipKept

	// UDP::hold: the client's datagrams wait in held (holdBytes in all)
	// until UDP::release.
	holding   bool
	held      [][]byte
	holdBytes int

	// lsnRule is what the LSN:: commands set (lsn.go); lsnUsed tells a
	// server side about to open, without the lock, that there is some.
	lsnRule lsn.Steer
	lsnUsed atomic.Bool
}

func (f *flow) handles(ev config.Event) bool {
	bit, _, _ := ev.Lookup()
	return f.snap.EvMask&bit != 0
}

// run runs ev on datagram b (nil for CLIENT_ACCEPTED) arriving on lg (nil
// for the client side). It returns the datagram to pass on (the rule may
// have replaced it), whether to pass it on, whether the rule made a new
// pool, member or node decision, and whether the flow goes on; the answers
// the rule made are sent before it returns.
func (f *flow) run(ev config.Event, lg *leg, b []byte) (out []byte, fwd, again, ok bool) {
	return f.runMsg(ev, lg, b, nil)
}

// runMsg is run; for SIP_REQUEST and SIP_RESPONSE, sip gets what the
// rule did to the message (sip.go).
func (f *flow) runMsg(ev config.Event, lg *leg, b []byte, sip *rules.SIPState) (out []byte, fwd, again, ok bool) {
	rs := f.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return nil, false, false, false
	}
	rs.ev, rs.payload, rs.cur = ev, b, lg
	if sip != nil {
		f.sipBegin(lg, b) // sip.go
	}
	err := f.snap.Cfg.Rules.Run(ev, f)
	if sip != nil {
		*sip = f.sipEnd(lg)
	}
	out, reject, dropped, again := rs.payload, rs.reject, rs.dropped, rs.Changed
	toClient, toServer := rs.toClient, rs.toServer
	rs.payload, rs.cur, rs.reject, rs.dropped, rs.toClient, rs.toServer = nil, nil, false, false, nil, nil
	rs.mu.Unlock()
	if err != nil {
		f.logRuleError(ev, err)
		f.end()
		return nil, false, false, false
	}
	if reject {
		f.end()
		return nil, false, false, false
	}
	for _, d := range toClient {
		f.toClient(d)
	}
	if len(toServer) > 0 {
		to := lg
		if to == nil {
			to = f.last.Load()
		}
		if to != nil {
			for _, d := range toServer {
				f.clone.Server(d)
				to.send(d)
			}
		}
	}
	return out, !dropped, again, true
}

// serverConnected runs SERVER_CONNECTED on a new server side; false when
// the rule dropped the datagram that chose it or ended the flow.
func (f *flow) serverConnected(lg *leg) bool {
	if f.rs == nil || !f.handles(config.EventServerConnected) {
		return true
	}
	_, fwd, _, ok := f.run(config.EventServerConnected, lg, nil)
	return ok && fwd
}

// serverInit runs SERVER_INIT before a new server side (leg) toward dst,
// a member of pool (nil: a node a rule named), is opened: once per
// server-side flow, as BIG-IP raises it, not per datagram. LB::server
// names dst; a snat or snatpool there sets the source openLeg takes.
// False when the rule dropped the datagram or ended the flow.
func (f *flow) serverInit(pool *state.Pool, dst netip.AddrPort) bool {
	if f.rs == nil || !f.handles(config.EventServerInit) {
		return true
	}
	rs := f.rs
	name := ""
	if pool != nil {
		name = pool.Name
	}
	rs.mu.Lock()
	rs.pick = lbPick{pool: name, addr: dst}
	rs.mu.Unlock()
	_, fwd, _, ok := f.run(config.EventServerInit, nil, nil)
	rs.mu.Lock()
	rs.pick = lbPick{}
	rs.mu.Unlock()
	return ok && fwd
}

// UDPHold implements rules.UDPHolder (CLIENT_ACCEPTED).
func (f *flow) UDPHold() error {
	f.rs.holding = true
	return nil
}

// UDPRelease implements rules.UDPHolder (LB_SELECTED, SERVER_CONNECTED):
// the held datagrams go on once the event is over.
func (f *flow) UDPRelease() error {
	f.rs.holding = false
	return nil
}

// hold keeps a copy of a client datagram while the rule holds the flow's
// ingress; false when it was not held (the rule released it). A datagram
// past the profile's bounds is dropped.
func (f *flow) hold(b []byte) bool {
	rs := f.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.holding {
		return false
	}
	cfg := f.snap.Cfg
	if len(rs.held) >= max(cfg.HoldPackets, 1) || (cfg.HoldBytes > 0 && len(rs.held) > 0 && rs.holdBytes+len(b) > cfg.HoldBytes) {
		f.vs.Prof.Conns.DgDropped.Add(1)
		return true
	}
	rs.held = append(rs.held, append([]byte(nil), b...))
	rs.holdBytes += len(b)
	return true
}

// released takes the held datagrams once the rule released them (nil
// while it holds).
func (f *flow) released() [][]byte {
	rs := f.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.holding {
		return nil
	}
	h := rs.held
	rs.held, rs.holdBytes = nil, 0
	return h
}

// logRuleError logs a hook's failure; the iRules engine logs its own.
func (f *flow) logRuleError(ev config.Event, err error) {
	var re *rules.RuntimeError
	if errors.As(err, &re) {
		return
	}
	f.l.e.env.Log.Error("TCL error: " + f.Virtual + " <" + string(ev) + "> - " + err.Error())
}

// accepted runs CLIENT_ACCEPTED on a new flow; false when the rule
// dropped the datagram or rejected the flow.
func (f *flow) accepted() bool {
	if !f.handles(config.EventClientAccepted) {
		return true
	}
	_, fwd, _, ok := f.run(config.EventClientAccepted, nil, nil)
	return ok && fwd
}

// clientData runs CLIENT_DATA on a client datagram.
func (f *flow) clientData(b []byte) (out []byte, fwd, again bool) {
	if !f.handles(config.EventClientData) {
		f.rs.mu.Lock()
		again = f.rs.Changed
		f.rs.mu.Unlock()
		return b, true, again
	}
	out, fwd, again, ok := f.run(config.EventClientData, nil, b)
	return out, fwd && ok, again
}

// serverData runs SERVER_DATA on a member's answer.
func (f *flow) serverData(lg *leg, b []byte) ([]byte, bool) {
	if !f.handles(config.EventServerData) {
		return b, true
	}
	out, fwd, _, ok := f.run(config.EventServerData, lg, b)
	return out, fwd && ok
}

// lbPick is a choice not yet sent to (LB_SELECTED).
type lbPick struct {
	pool string
	addr netip.AddrPort
}

// lbFailed runs LB_FAILED when no member can take a datagram; it reports
// whether the rule decided anew (and may be asked to choose again).
func (f *flow) lbFailed(mayRetry bool) bool {
	if f.rs == nil || !f.handles(config.EventLBFailed) {
		return false
	}
	_, fwd, again, ok := f.run(config.EventLBFailed, nil, nil)
	return ok && fwd && again && mayRetry
}

// lbSelected runs LB_SELECTED on a choice: goOn is false when the rule
// dropped the datagram or rejected the flow, again when it decided anew.
func (f *flow) lbSelected(pool *state.Pool, dst netip.AddrPort, mayRetry bool) (goOn, again bool) {
	if f.rs == nil || !f.handles(config.EventLBSelected) {
		return true, false
	}
	rs := f.rs
	rs.mu.Lock()
	rs.pick = lbPick{pool: pool.Name, addr: dst}
	rs.mu.Unlock()
	_, fwd, changed, ok := f.run(config.EventLBSelected, nil, nil)
	rs.mu.Lock()
	rs.pick = lbPick{}
	if !mayRetry {
		rs.Changed = false
	}
	rs.mu.Unlock()
	return ok && fwd, ok && fwd && changed && mayRetry
}

// endRules runs SERVER_CLOSED for each of the flow's server sides (legs),
// then CLIENT_CLOSED, and releases the flow's rule session.
func (f *flow) endRules(legs []*leg) {
	rs := f.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done {
		return
	}
	if f.handles(config.EventServerClosed) {
		for _, lg := range legs {
			rs.ev, rs.cur = config.EventServerClosed, lg
			if err := f.snap.Cfg.Rules.Run(config.EventServerClosed, f); err != nil {
				f.logRuleError(config.EventServerClosed, err)
			}
		}
		rs.cur = nil
	}
	if f.handles(config.EventClientClosed) {
		rs.ev = config.EventClientClosed
		if err := f.snap.Cfg.Rules.Run(config.EventClientClosed, f); err != nil {
			f.logRuleError(config.EventClientClosed, err)
		}
	}
	rs.done = true
	rs.Holds.Release() // LB::connlimit ... key
	if rs.sess != nil {
		rs.sess.Release()
		rs.sess = nil
	}
}

// ---- The iRules view (rules.Conn) ----

var _ config.RuleConn = (*flow)(nil)

// RuleSession implements config.RuleConn.
func (f *flow) RuleSession(prog *rules.Program) *rules.ConnState {
	if f.rs.sess == nil {
		f.rs.sess = prog.NewConnState(f)
		if f.rad != nil {
			f.rs.sess.SetRADIUS() // the RADIUS:: commands read the datagrams (radius.go)
		}
		if d := f.dhcp; d != nil {
			v := 4
			if d.cfg.V6 {
				v = 6
			}
			f.rs.sess.SetDHCP(v) // the DHCP commands read the datagrams (dhcp.go)
		}
		if f.snap.Cfg.SIP != nil {
			f.rs.sess.SetSIP() // the SIP:: commands answer in SIP events (sip.go)
			if h := f.snap.Cfg.SIP.PersistHeader; h != "" {
				f.rs.sess.SetSIPPersistField(h) // what SIP::persist reads
			}
		}
	}
	return f.rs.sess
}

// leg is the server side an event sees: the event's own, else the one
// the flow follows.
func (f *flow) curLeg() *leg {
	if lg := f.rs.cur; lg != nil {
		return lg
	}
	return f.last.Load()
}

// Addr implements rules.Conn.
func (f *flow) Addr(e rules.Endpoint) netip.AddrPort {
	switch e {
	case rules.EndClient:
		return f.Client
	case rules.EndVirtual:
		return f.Local
	case rules.EndServerLocal:
		if f.rs.ev == config.EventServerInit {
			return netip.AddrPort{} // not opened yet
		}
		if lg := f.curLeg(); lg != nil {
			return lg.rec.Client
		}
	case rules.EndServer:
		if f.rs.pick.addr.IsValid() {
			return f.rs.pick.addr
		}
		if lg := f.curLeg(); lg != nil {
			return lg.rec.Server
		}
	}
	return netip.AddrPort{}
}

// Protocol implements rules.Conn: UDP is IP protocol 17.
func (f *flow) Protocol() int { return 17 }

// Decide implements rules.Conn.
func (f *flow) Decide(d rules.Decision) error {
	rs := f.rs
	if rs.ev == config.EventServerInit {
		// The member is chosen and its server side being opened: only
		// the source may still change [M: as on a standard virtual].
		switch d.Kind {
		case rules.DecidePool, rules.DecideMember, rules.DecideNode, rules.DecideForward,
			rules.DecideReselect, rules.DecideVirtual, rules.DecideLBMode, rules.DecideDetach:
			return fmt.Errorf("%s is not valid in SERVER_INIT: the member is chosen already (use LB_SELECTED)", d.Kind)
		}
	}
	if ok, err := rs.Target.Decide(d, f.l.e.env.Pools(), f.Virtual, f.Local, f.snatPoolNamed); ok {
		return err
	}
	switch d.Kind {
	case rules.DecideDrop, rules.DecideDiscard:
		rs.dropped = true
	case rules.DecideReject:
		rs.reject = true
	default:
		return fmt.Errorf("%s is not supported on a UDP virtual server", d.Kind)
	}
	return nil
}

// snatPoolNamed resolves a snatpool name in the running configuration.
func (f *flow) snatPoolNamed(name string) ([]netip.Addr, bool) {
	return f.l.e.env.Running().SnatPool(name)
}

// errNoStream is what the byte-stream commands say on a datagram flow.
var errNoStream = errors.New("a UDP virtual server gives each datagram to CLIENT_DATA and SERVER_DATA; there is no byte stream to collect, release, close or mark")

// Collect implements rules.Conn: nothing to collect on datagrams.
func (f *flow) Collect(s rules.Side, length, skip int) error { return errNoStream }

// Release implements rules.Conn.
func (f *flow) Release(s rules.Side, length int) error { return errNoStream }

// Close implements rules.Conn.
func (f *flow) Close(s rules.Side) error { return errNoStream }

// Notify implements rules.Conn.
func (f *flow) Notify(s rules.Side, n rules.NotifyKind) error { return errNoStream }

// eventSide is the side of the running event.
func (f *flow) eventSide() rules.Side {
	if f.rs.ev == config.EventServerData {
		return rules.ServerSide
	}
	return rules.ClientSide
}

// Payload implements rules.Conn: the event's datagram, on its side.
func (f *flow) Payload(s rules.Side) []byte {
	if s != f.eventSide() {
		return nil
	}
	return f.rs.payload
}

// ReplacePayload implements rules.Conn: the datagram passed on is
// rewritten.
func (f *flow) ReplacePayload(s rules.Side, offset, length int, data []byte) error {
	rs := f.rs
	if s != f.eventSide() || rs.payload == nil {
		return errors.New("UDP::payload replace: no datagram on this side in this event")
	}
	p := rs.payload
	if offset < 0 || offset > len(p) || length < 0 {
		return fmt.Errorf("UDP::payload replace: offset %d is outside the %d-byte datagram", offset, len(p))
	}
	end := min(offset+length, len(p))
	if len(p)-(end-offset)+len(data) > maxDatagram-8-40 {
		return errors.New("UDP::payload replace: the datagram would exceed the largest UDP payload")
	}
	out := make([]byte, 0, len(p)-(end-offset)+len(data))
	out = append(append(append(out, p[:offset]...), data...), p[end:]...)
	rs.payload = out
	return nil
}

// Respond implements rules.Conn: one datagram to the client (client side)
// or to the current server (server side).
func (f *flow) Respond(s rules.Side, data []byte) error {
	d := append([]byte(nil), data...)
	if s == rules.ServerSide {
		if f.curLeg() == nil {
			return errors.New("UDP::respond: no server chosen yet")
		}
		f.rs.toServer = append(f.rs.toServer, d)
		return nil
	}
	f.rs.toClient = append(f.rs.toClient, d)
	return nil
}

// LBSelect implements rules.Conn.
func (f *flow) LBSelect() (string, netip.AddrPort, error) {
	pool := f.pool
	if f.rs.Pool != nil {
		pool = f.rs.Pool
	}
	return state.LBSelect(pool, f.rs.LBMode)
}

// LBServer implements rules.Conn.
func (f *flow) LBServer() (string, netip.AddrPort, bool) {
	if pk := f.rs.pick; pk.addr.IsValid() {
		return pk.pool, pk.addr, true
	}
	if lg := f.curLeg(); lg != nil {
		return lg.rec.Pool, lg.rec.Server, true
	}
	// No member yet (CLIENT_ACCEPTED): the pool the flow will go to, a
	// rule's choice or the virtual's, as BIG-IP answers there.
	if p := f.lbPool(); p != nil && !f.rs.Node {
		return p.Name, netip.AddrPort{}, true
	}
	return "", netip.AddrPort{}, false
}

// MemberStatus implements rules.Conn.
func (f *flow) MemberStatus(pool string, member netip.AddrPort) (string, error) {
	switch {
	case pool == "" && !member.IsValid():
		if lg := f.curLeg(); lg != nil && lg.member != nil {
			return lg.member.Availability().StatusWord(), nil
		}
		return "", errors.New("no pool member selected")
	case pool == "":
		return f.l.e.env.Pools().NodeStatus(member.Addr())
	}
	return f.l.e.env.Pools().MemberStatus(f.Virtual, pool, member)
}

// ActiveMembers implements rules.Conn.
func (f *flow) ActiveMembers(pool string) ([]netip.AddrPort, error) {
	return f.l.e.env.Pools().ActiveMembers(f.Virtual, pool)
}

var _ rules.IdleTimer = (*flow)(nil)

// FlowIdleTimeout implements rules.IdleTimer.
func (f *flow) FlowIdleTimeout() time.Duration { return f.IdleTimeout() }

// SetFlowIdleTimeout implements rules.IdleTimer (IP::idle_timeout): the
// sweeper reads the flow's timeout on its next pass.
func (f *flow) SetFlowIdleTimeout(d time.Duration) { f.SetIdleTimeout(d) }

var _ rules.StatsConn = (*flow)(nil)

// SideStats implements rules.StatsConn: the client's flow, or the member
// leg its datagrams follow now (its age is the flow's).
func (f *flow) SideStats(s rules.Side) (rules.FlowStats, bool) {
	age := time.Since(f.Created())
	if s == rules.ClientSide {
		return irules.Stats(&f.Traffic, age), true
	}
	if lg := f.curLeg(); lg != nil {
		return irules.Stats(&lg.rec.Traffic, age), true
	}
	return rules.FlowStats{}, false
}

var _ rules.MemberMarker = (*flow)(nil)

// MarkMember implements rules.MemberMarker: the current member is the one
// the flow's datagrams follow.
func (f *flow) MarkMember(pool string, member netip.AddrPort, up bool) error {
	var cur *state.Member
	if lg := f.curLeg(); lg != nil {
		cur = lg.member
	}
	return f.l.e.env.Pools().Mark(f.Virtual, pool, member, cur, up)
}

var _ rules.FlowActivity = (*flow)(nil)

// FlowLastActive implements rules.FlowActivity (FLOW::idle_duration).
func (f *flow) FlowLastActive() time.Time { return time.Unix(0, f.LastActive()) }

// RefreshFlow implements rules.FlowActivity (FLOW::refresh): the sweeper
// measures the idle time from now.
func (f *flow) RefreshFlow() { f.Touch(time.Now().UnixNano()) }

var _ rules.UDPSocketConn = (*flow)(nil)

// UDPSocket implements rules.UDPSocketConn (UDP::sendbuffer): the client
// side is the socket the flow answers from (the listener's, or its own on
// every port), the server side the leg's.
func (f *flow) UDPSocket(s rules.Side, fn func(fd int) error) error {
	rc := f.orc
	if s == rules.ServerSide {
		lg := f.curLeg()
		if lg == nil || lg.rc == nil {
			return errors.New("the server side has no socket yet")
		}
		rc = lg.rc
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

var _ rules.ConnLimiter = (*flow)(nil)

// SetConnLimit implements rules.ConnLimiter: the flow's member choices
// from now on honour it (each datagram's on a per-datagram virtual).
func (f *flow) SetConnLimit(scope rules.LimitScope, limit int64, key string) error {
	return f.rs.SetConnLimit(scope, limit, key)
}

// ConnLimit implements rules.ConnLimiter.
func (f *flow) ConnLimit(scope rules.LimitScope) int64 { return f.rs.ConnLimit(scope) }
