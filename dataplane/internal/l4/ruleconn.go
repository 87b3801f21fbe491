package l4

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/lsn"

	"github.com/openltm/openltm/dataplane/internal/state"

	"github.com/openltm/openltm/rules"
)

// maxCollect bounds what one side may hold for a rule: a collection that
// reaches it is handed to the rule at once, and a rule that still does not
// release it gets the flow reset rather than the proxy's memory.
const maxCollect = 1 << 20

// sideState is one side's collection: what TCP::collect asked for and the
// bytes held for the rule.
type sideState struct {
	collecting bool
	// on mirrors collecting for the zero-copy loop, which checks it
	// between reads without taking the flow's rule lock.
	on   atomic.Bool
	want int // 0: every arrival
	skip int // bytes still to pass through before collecting
	held []byte
	// fresh is set when data arrived (or a partial release left some)
	// since the rule last saw the payload.
	fresh bool
	// ssl is set by SSL::collect: the held bytes go to CLIENTSSL_DATA or
	// SERVERSSL_DATA instead of CLIENT_DATA or SERVER_DATA (tls.go).
	ssl bool
	// grown is how much TCP::payload replace grew (shrank) the bytes
	// still held, which TCP::offset takes back out; 0 once none are.
	grown int
}

// lbPick is a load-balancing choice not yet connected (LB_SELECTED).
type lbPick struct {
	pool *state.Pool
	addr netip.AddrPort
}

// ruleState is what a flow with rules carries beyond a plain flow. Events
// of one flow are serialized by mu (the client and server sides each have
// a goroutine); every rules.Conn method runs inside an event, under mu.
type ruleState struct {
	mu   sync.Mutex
	sess *rules.ConnState
	done bool
	ev   config.Event
	side [2]sideState

	// Bytes the rules produced, written after the event without the lock:
	// TCP::respond on the client side and released server data go to the
	// client; the reverse to the server.
	toClient, toServer []byte
	spare              [2][]byte
	wmu                [2]sync.Mutex // one writer per destination keeps order
	responded          bool
	// late is the clones a rule asked for in an event after
	// CLIENT_ACCEPTED, started when the event returns (clone.go).
	late []lateClone
	// msgOn says the running event is over a client's message, read on
	// the goroutine that reads the client, of a gateway that serves
	// messages (mqtt, fix, diameter, message routing): a rule's clone
	// there starts from that message (msg, then msgTerm: as the client
	// sent it), clone.go beginMsg.
	msgOn, msgBoth bool
	msg, msgTerm   []byte
	// msgBack says the message is the member's, read on the goroutine
	// reading that member (mqtt's MQTT_SERVER_ INGRESS and DATA, fix's
	// events with response-parsing, diameter's DIAMETER_INGRESS over a
	// member's message): a clone there copies the member's messages
	// from it on (clone.go, beginBack) into back, the flow's clone
	// connections of the member's messages, which the writer to the
	// client (msgWriter) and the readers of the members read.
	msgBack bool
	back    atomic.Pointer[clone.Flow]
	// srv is the clone connections a rule opened in SERVER_DATA, on the
	// member's goroutine, for the goroutine reading the client to join
	// at its next read (srvOn says there are some): clone.go,
	// joinSrvClones. clones: a rule has a clone command (the client's
	// side then never splices, so that such a clone sees every later
	// byte).
	srv    []*clone.Flow
	srvOn  atomic.Bool
	clones bool
	// cloned is what the flow's rules asked to clone to and were given
	// (Clone); eachRequest says the running event is a Diameter
	// request's LB_SELECTED after the flow's first message, where a
	// clone the flow already has goes on rather than starting a second
	// copy (clone.go).
	cloned      []cloneKey
	eachRequest bool

	// lsnRule is what the LSN:: commands set (rulelsn.go); lsnUsed
	// says one did, so that other flows skip the lock.
	lsnMu   sync.Mutex
	lsnRule lsn.Steer
	lsnUsed atomic.Bool

	// socks is the request SOCKS_REQUEST is deciding (socks.go).
	socks *rules.SOCKSState

	verdict       irules.Verdict
	detach        bool
	irules.Target // pool, member, node, snat and LB::mode decisions
	// Holds are the flow's counts under its LB::connlimit keys.
	Holds    state.KeyHolds
	pick     lbPick
	lbRounds int
	sslOff   [2]bool // SSL::disable per side (tls.go)
	sslSessionState
	sslHelloState // sslhello.go
	// sslTLS is the flow's TLS once a rule chose a profile (SSL::profile,
	// tls.go); nil: the virtual's.
	sslTLS *config.TLS
	// nonSSL is SSL::allow_nonssl for this connection (0: the profile's
	// allow-non-ssl, 1 on, -1 off); plainClient is set once allow-non-ssl
	// let the client through in plaintext; maxRecord is
	// SSL::maximum_record_size per side (0: the profile's), read by the
	// copy loops without the rule lock (tls.go).
	nonSSL      int8
	plainClient bool
	maxRecord   [2]atomic.Int32
	lbChoices   // LB::prime, LB::enable_decisionlog (rulelb.go)
	// toVirtual is the virtual server a rule handed the connection to
	// (`virtual NAME` in CLIENT_ACCEPTED, CLIENTSSL_CLIENTHELLO or
	// CLIENT_DATA), served once the event ends.
	toVirtual *state.Virtual
	// ftp is the FTP gateway's settings as FTP:: commands changed them
	// (nil until one asks); ftpStarted: the gateway read them (ftp.go).
	ftp        *rules.FTPSettings
	ftpStarted bool
	// mail is the STARTTLS offload's settings as SMTPS::, IMAP:: and
	// POP3:: commands changed them (nil until one asks); mailStarted: the
	// offload read them (starttls.go).
	mail        *rules.STARTTLSSettings
	mailStarted bool
	// ldapSrv is the server-ldap profile's settings as LDAP:: commands
	// changed them (nil until one asks); ldapSrvStarted: the member's
	// StartTLS read them (ldap.go).
	ldapSrv        *rules.STARTTLSSettings
	ldapSrvStarted bool
}

// modeOverride is the flow's LB::mode, or nil.
func (fl *flow) modeOverride() *state.ModeSpec {
	if fl.rs == nil {
		return nil
	}
	return fl.rs.LBMode
}

// eventBit is ev's bit in an event mask (0 for an event the proxy does not
// raise).
func eventBit(ev config.Event) uint32 {
	bit, _, _ := ev.Lookup()
	return bit
}

func (pr *proxied) handles(ev config.Event) bool { return pr.evMask&eventBit(ev) != 0 }

// RuleSession implements RuleConn: the flow's session, made at its first
// event and released by endRules.
func (pr *proxied) RuleSession(prog *rules.Program) *rules.ConnState {
	if pr.rs.sess == nil {
		pr.rs.sess = prog.NewConnState(pr)
		if so := pr.snap.Cfg.Stream; so != nil {
			pr.rs.sess.SetStream(so.Expr.String()) // stream.go
		}
	}
	return pr.rs.sess
}

// ---- The iRules view (rules.Conn) ----

var _ config.RuleConn = (*proxied)(nil)

// Addr implements rules.Conn.
// Socket implements rules.SocketConn: the client's connection, or the
// server connection once there is one.
func (pr *proxied) Socket(s rules.Side, fn func(fd int) error) error {
	if s == rules.ClientSide {
		return rawsock.Control(pr.client, fn)
	}
	sc := pr.srv.Load()
	if sc == nil || sc.conn == nil {
		return errors.New("the server side is not connected")
	}
	return rawsock.Control(sc.conn, fn)
}

// ArrivalIf implements rules.ArrivalConn: the interface the client's
// connection arrived on, kept by a listener whose virtual's rules read
// it (LINK::vlan_id) or that has a VLAN list.
func (pr *proxied) ArrivalIf() int {
	idx := 0
	rawsock.Control(pr.client, func(fd int) error { idx = rawsock.ArrivalIf(fd); return nil })
	return idx
}

func (pr *proxied) Addr(e rules.Endpoint) netip.AddrPort {
	switch e {
	case rules.EndClient:
		return pr.Client
	case rules.EndVirtual:
		return pr.Local
	case rules.EndServerLocal:
		if sc := pr.srv.Load(); sc != nil {
			return sc.leg.Client
		}
	case rules.EndServer:
		if sc := pr.srv.Load(); sc != nil {
			return sc.leg.Server
		}
		return pr.rs.pick.addr
	}
	return netip.AddrPort{}
}

// Protocol implements rules.Conn.
func (pr *proxied) Protocol() int { return 6 }

var _ rules.ConnLimiter = (*proxied)(nil)

// SetConnLimit implements rules.ConnLimiter: the flow's member choices
// from now on (a later LB decision, LB::reselect, a retry) honour it.
func (pr *proxied) SetConnLimit(scope rules.LimitScope, limit int64, key string) error {
	return pr.rs.SetConnLimit(scope, limit, key)
}

// ConnLimit implements rules.ConnLimiter.
func (pr *proxied) ConnLimit(scope rules.LimitScope) int64 { return pr.rs.ConnLimit(scope) }

// ruleLimits is the rule's LB::connlimit limits for a member choice, and
// the flow's counts under their keys (nil without rules).
func (fl *flow) ruleLimits() (state.RuleLimits, *state.KeyHolds) {
	if fl.rs == nil {
		return state.RuleLimits{}, nil
	}
	return fl.rs.Limits, &fl.rs.Holds
}

// Decide implements rules.Conn.
func (pr *proxied) Decide(d rules.Decision) error {
	rs := pr.rs
	if rs.ev == config.EventServerInit {
		// The member is chosen and being connected to: only the
		// source may still change [M: F5 lets SERVER_INIT set the
		// server side's addresses, not choose again].
		switch d.Kind {
		case rules.DecidePool, rules.DecideMember, rules.DecideNode, rules.DecideForward,
			rules.DecideReselect, rules.DecideVirtual, rules.DecideLBMode, rules.DecideDetach:
			return fmt.Errorf("%s is not valid in SERVER_INIT: the member is chosen already (use LB_SELECTED)", d.Kind)
		}
	}
	if ok, err := rs.Target.Decide(d, pr.e.env.Pools(), pr.Virtual, pr.Local, pr.e.snatPoolNamed); ok {
		return err
	}
	switch d.Kind {
	case rules.DecideDrop, rules.DecideDiscard:
		rs.verdict = irules.Drop
	case rules.DecideReject:
		rs.verdict = irules.Reject
	case rules.DecideReselect:
		if rs.ev != config.EventLBFailed && rs.ev != config.EventLBSelected {
			return errors.New("LB::reselect is only valid in LB_SELECTED and LB_FAILED")
		}
		switch {
		case d.Pool != "":
			kind := rules.DecidePool
			if d.Addr.IsValid() {
				kind = rules.DecideMember
			}
			return pr.Decide(rules.Decision{Kind: kind, Pool: d.Pool, Addr: d.Addr})
		case d.Addr.IsValid():
			rs.Pool, rs.Addr, rs.Node = nil, d.Addr, true
		}
		rs.Changed = true
	case rules.DecideVirtual:
		return pr.targetVirtual(d.Pool) // ruleflow.go
	case rules.DecideDetach:
		if !rs.side[rules.ClientSide].collecting {
			return errors.New("LB::detach needs the client side collected (TCP::collect) so that the next data can go to another server")
		}
		rs.detach = true
	default:
		return fmt.Errorf("%s is not supported", d.Kind)
	}
	return nil
}

// Collect implements rules.Conn.
func (pr *proxied) Collect(s rules.Side, length, skip int) error {
	st := &pr.rs.side[s]
	st.collecting, st.want, st.skip, st.ssl = true, length, skip, false
	st.on.Store(true)
	return nil
}

// Release implements rules.Conn.
func (pr *proxied) Release(s rules.Side, length int) error {
	rs := pr.rs
	st := &rs.side[s]
	k := len(st.held)
	if length >= 0 && length < k {
		k = length
	}
	if s == rules.ClientSide {
		rs.toServer = append(rs.toServer, st.held[:k]...)
	} else {
		rs.toClient = append(rs.toClient, st.held[:k]...)
	}
	n := copy(st.held, st.held[k:])
	st.held = st.held[:n]
	if n == 0 {
		st.grown = 0
		// Everything went: the side resumes the zero-copy path unless the
		// rule collects again later in this event.
		st.collecting = false
		st.on.Store(false)
	} else if k > 0 {
		st.fresh = true // the rest is a new payload for the rule
	}
	return nil
}

// Payload implements rules.Conn.
func (pr *proxied) Payload(s rules.Side) []byte { return pr.rs.side[s].held }

// ReplacePayload implements rules.Conn.
func (pr *proxied) ReplacePayload(s rules.Side, offset, length int, data []byte) error {
	st := &pr.rs.side[s]
	if offset < 0 || offset > len(st.held) || length < 0 {
		return fmt.Errorf("TCP::payload replace: offset %d is outside the %d-byte payload", offset, len(st.held))
	}
	end := min(offset+length, len(st.held))
	if len(st.held)-(end-offset)+len(data) > maxCollect {
		return fmt.Errorf("TCP::payload replace: the payload would exceed %d bytes", maxCollect)
	}
	tail := append([]byte(nil), st.held[end:]...)
	st.held = append(append(st.held[:offset], data...), tail...)
	st.grown += len(data) - (end - offset)
	return nil
}

var _ rules.StreamOffsetter = (*proxied)(nil)

// StreamOffset implements rules.StreamOffsetter (TCP::offset) from the
// flow's byte counts: a side's bytes received less those still held.
func (pr *proxied) StreamOffset(s rules.Side) (int64, error) {
	var in uint64
	if s == rules.ClientSide {
		in = pr.BytesIn.Load()
	} else {
		sc := pr.srv.Load()
		if sc == nil {
			return 0, errors.New("no server connection yet")
		}
		in = sc.leg.BytesIn.Load()
	}
	st := &pr.rs.side[s]
	return max(int64(in)-int64(len(st.held)-st.grown), 0), nil
}

// Respond implements rules.Conn.
func (pr *proxied) Respond(s rules.Side, data []byte) error {
	rs := pr.rs
	if s == rules.ServerSide {
		if pr.srv.Load() == nil {
			return errors.New("TCP::respond: no server connection")
		}
		rs.toServer = append(rs.toServer, data...)
		return nil
	}
	rs.toClient = append(rs.toClient, data...)
	rs.responded = true
	return nil
}

// Close implements rules.Conn: the flow closes once what is pending for
// the client has been written.
func (pr *proxied) Close(s rules.Side) error {
	if pr.rs.verdict == irules.GoOn {
		pr.rs.verdict = irules.Close
	}
	return nil
}

// Notify implements rules.Conn. Message boundaries matter only to
// message-based load balancing; a plain L4 flow has nothing to do.
func (pr *proxied) Notify(s rules.Side, n rules.NotifyKind) error { return nil }

// LBSelect implements rules.Conn.
func (pr *proxied) LBSelect() (string, netip.AddrPort, error) {
	pool := pr.pool
	if pr.rs.Pool != nil {
		pool = pr.rs.Pool
	}
	return state.LBSelect(pool, pr.rs.LBMode)
}

// LBServer implements rules.Conn.
func (pr *proxied) LBServer() (string, netip.AddrPort, bool) {
	// The choice LB_SELECTED or SERVER_INIT runs on comes first: it may
	// be another than the flow's server connection (a Diameter request's
	// member, diameter_lbselected.go; a choice after LB::detach).
	if pk := pr.rs.pick; pk.addr.IsValid() {
		name := ""
		if pk.pool != nil {
			name = pk.pool.Name
		}
		return name, pk.addr, true
	}
	if sc := pr.srv.Load(); sc != nil {
		name := ""
		if sc.pool != nil {
			name = sc.pool.Name
		}
		return name, sc.leg.Server, true
	}
	// No member yet (CLIENT_ACCEPTED): the pool the flow will go to, a
	// rule's choice or the virtual's, as BIG-IP answers there.
	if p := pr.lbPool(); p != nil && !pr.rs.Node {
		return p.Name, netip.AddrPort{}, true
	}
	return "", netip.AddrPort{}, false
}

// MemberStatus implements rules.Conn.
func (pr *proxied) MemberStatus(pool string, member netip.AddrPort) (string, error) {
	switch {
	case pool == "" && !member.IsValid():
		if sc := pr.srv.Load(); sc != nil && sc.member != nil {
			return sc.member.Availability().StatusWord(), nil
		}
		return "", errors.New("no pool member selected")
	case pool == "":
		return pr.e.env.Pools().NodeStatus(member.Addr())
	}
	return pr.e.env.Pools().MemberStatus(pr.Virtual, pool, member)
}

// ActiveMembers implements rules.Conn.
func (pr *proxied) ActiveMembers(pool string) ([]netip.AddrPort, error) {
	return pr.e.env.Pools().ActiveMembers(pr.Virtual, pool)
}

var _ rules.IdleTimer = (*proxied)(nil)

// FlowIdleTimeout implements rules.IdleTimer.
func (pr *proxied) FlowIdleTimeout() time.Duration { return pr.IdleTimeout() }

// SetFlowIdleTimeout implements rules.IdleTimer (IP::idle_timeout). The
// read deadlines of both sides move at once, so that a shorter timeout
// does not wait for the deadline the longer one set.
func (pr *proxied) SetFlowIdleTimeout(d time.Duration) {
	pr.SetIdleTimeout(d)
	last := pr.LastActive() // set since the flow entered the table, before its rules ran
	pr.armIdle(pr.client, last)
	if sc := pr.srv.Load(); sc != nil && sc.conn != nil {
		pr.armIdle(sc.conn, last)
	}
}

var _ rules.StatsConn = (*proxied)(nil)

// SideStats implements rules.StatsConn: the client's connection, or the
// server connection the flow has now (its age is the flow's).
func (pr *proxied) SideStats(s rules.Side) (rules.FlowStats, bool) {
	age := time.Since(pr.Created())
	if s == rules.ClientSide {
		return irules.Stats(&pr.Traffic, age), true
	}
	if sc := pr.srv.Load(); sc != nil {
		return irules.Stats(&sc.leg.Traffic, age), true
	}
	return rules.FlowStats{}, false
}

var _ rules.MemberMarker = (*proxied)(nil)

// MarkMember implements rules.MemberMarker.
func (pr *proxied) MarkMember(pool string, member netip.AddrPort, up bool) error {
	var cur *state.Member
	if sc := pr.srv.Load(); sc != nil {
		cur = sc.member
	}
	return pr.e.env.Pools().Mark(pr.Virtual, pool, member, cur, up)
}

var _ rules.FlowActivity = (*proxied)(nil)

// FlowLastActive implements rules.FlowActivity (FLOW::idle_duration).
func (pr *proxied) FlowLastActive() time.Time { return time.Unix(0, pr.LastActive()) }

// RefreshFlow implements rules.FlowActivity (FLOW::refresh): an expired
// read deadline finds the flow active and moves on.
func (pr *proxied) RefreshFlow() { pr.Touch(time.Now().UnixNano()) }
