package l4

import (
	"net/netip"
	"slices"
	"sync"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// Clone pools (dataplane/clone): a flow of a virtual with clone pools
// starts its clone connections when the client is admitted (flow.init) and
// closes them when it retires; the copy loops hand over what the client
// sends. Flows of virtuals without clone pools test one nil pointer.

// cloneRead mirrors b, read from the client. When the bytes go to the
// member as they are (no rule collecting them) the serverside pools get
// them too; otherwise those get what the rule releases (cloneSent).
func (fl *flow) cloneRead(b []byte, st *sideState) {
	if st != nil && st.on.Load() {
		fl.clone.Client(b)
		return
	}
	fl.clone.Both(b)
}

// cloneSent mirrors b, rewritten on its way to the member (a stream
// filter, a rule's release), to the serverside pools.
func (fl *flow) cloneSent(b []byte) {
	if fl.clone != nil {
		fl.clone.Server(b)
	}
}

var _ rules.Cloner = (*proxied)(nil)

// Clone implements rules.Cloner: the clone command (also in a client
// message's events on message gateways, beginMsg, and in a member
// message's ingress events there, beginBack; in SERVER_DATA on
// plain TCP flows, joinSrvClones; in socks' and ftp's events before
// their loops, earlyCloneEvent). In CLIENT_ACCEPTED,
// before the copy loops start, the flow's clone connections change
// while no loop reads them. In the later events a plain TCP flow runs
// on its client's goroutine (CLIENT_DATA, LB_SELECTED, LB_FAILED,
// SERVER_CONNECTED; lateCloneEvent) the clone is taken under the rule
// lock and started when the event returns (startLateClones), from the
// bytes the member has not been sent yet. Elsewhere it is skipped and
// counted as dropped (the commit warned): in CLIENT_CLOSED the
// client's bytes have all passed (nothing is left to copy [M]), an ilx
// plugin owns its connection, and rtsp's and the other gateways' loops
// read the clone connections without a lock once they run. An rtsp flow's reader copies the client's bytes as it
// reads them (cloneClient), its writer what the member gets. The
// copies count on the virtual's clone counters and on the clone
// member's, as the virtual's clone pools' do. A member named is taken
// whatever its monitor says, as F5 documents; one forced offline (or
// at its connection limit) gets no copy, counted as dropped [M].
func (pr *proxied) Clone(pool string, member netip.AddrPort, side rules.Side, ev rules.Event) error {
	key := cloneKey{pool, member, side}
	if pr.rs != nil && pr.rs.eachRequest && slices.Contains(pr.rs.cloned, key) {
		// A Diameter request's LB_SELECTED (diameter_lbselected.go)
		// naming a clone the flow already has, from its first
		// message's LB_SELECTED or a DIAMETER_INGRESS: that clone goes
		// on copying the flow's messages, no second copy [M: BIG-IP's
		// clone is a setting of the connection].
		return nil
	}
	accepted := ev == rules.ClientAccepted && pr.rs != nil && pr.rs.ev == config.EventClientAccepted && pr.snap.Cfg.ILX == nil ||
		pr.rs != nil && earlyCloneEvent(ev, pr.rs.ev, pr.snap.Cfg)
	msg := !accepted && pr.rs != nil && pr.rs.msgOn
	late := !accepted && !msg && pr.rs != nil && lateCloneEvent(ev, pr.rs.ev) && LateClonable(pr.snap.Cfg)
	srvData := !accepted && !msg && !late && pr.rs != nil && ev == rules.ServerData && pr.rs.ev == config.EventServerData && LateClonable(pr.snap.Cfg)
	if !accepted && !late && !msg && !srvData {
		pr.vs.Clone.Dropped.Add(1)
		return rules.ErrCloneEvent
	}
	set, d, ok, err := state.RuleClone(pr.e.env.Pools(), pr.vs, pr.snap, pr.Virtual, pool, member)
	if !ok {
		return err
	}
	if pr.rs != nil && len(pr.rs.cloned) < maxClonedKeys && !slices.Contains(pr.rs.cloned, key) {
		pr.rs.cloned = append(pr.rs.cloned, key)
	}
	if srvData {
		// The member's goroutine, the rule lock held: the clone
		// connection opens now and waits for the goroutine reading the
		// client, which joins it before it copies its next bytes
		// (joinSrvClones); the copy is the client's bytes from the
		// command on.
		pr.rs.srv = append(pr.rs.srv, set.Add(nil, d, side == rules.ServerSide))
		pr.rs.srvOn.Store(true)
		return nil
	}
	if msg {
		// The rule lock is held; the gateway starts it when the event
		// returns (startMsgClones). A clientside copy begins with the
		// message the event is over, as the client sent it.
		lc := lateClone{set: set, d: d, server: side == rules.ServerSide, both: pr.rs.msgBoth, back: pr.rs.msgBack}
		if lc.back {
			// The member's message (beginBack): serverside starts with
			// it as the member sent it, clientside with it as the client
			// gets it, written after the event (startBackClones).
			if lc.server {
				lc.seed = append([]byte(nil), pr.rs.msg...)
			}
		} else if !lc.server || lc.both {
			lc.seed = append(append([]byte(nil), pr.rs.msg...), pr.rs.msgTerm...)
		}
		pr.rs.late = append(pr.rs.late, lc)
		return nil
	}
	if late {
		// The rule lock is held; the event's runEvent starts it. A
		// clientside copy begins with the client's bytes not yet sent
		// to the member, as they are at the command.
		lc := lateClone{set: set, d: d, server: side == rules.ServerSide}
		if !lc.server {
			rs := pr.rs
			lc.seed = append(append([]byte(nil), rs.toServer...), rs.side[rules.ClientSide].held...)
		}
		pr.rs.late = append(pr.rs.late, lc)
		return nil
	}
	pr.clone = set.Add(pr.clone, d, side == rules.ServerSide)
	return nil
}

// cloneKey is a rule's clone command as written: its pool, its member
// (zero: the pool's choice) and side.
type cloneKey struct {
	pool   string
	member netip.AddrPort
	side   rules.Side
}

// maxClonedKeys bounds ruleState.cloned: a flow's rules name a few clone
// pools, not many.
const maxClonedKeys = 16

// lateCloneEvent reports whether a clone in ev (the rule's event, run as
// cur by runEvent) can start on a plain TCP flow: the events that run
// on the goroutine that reads the client, so that the flow's clone
// connections change where the client-side copy loop reads them.
func lateCloneEvent(ev rules.Event, cur config.Event) bool {
	switch ev {
	case rules.ClientData:
		return cur == config.EventClientData
	case rules.LBSelected:
		return cur == config.EventLBSelected
	case rules.LBFailed:
		return cur == config.EventLBFailed
	case rules.ServerConnected:
		return cur == config.EventServerConnected
	}
	return false
}

// joinSrvClones adds the clone connections SERVER_DATA opened
// (rs.srv) to the flow's, on the goroutine reading the client before it
// copies its next bytes, or when the flow ends (finish, which closes
// them with the others), under the lock of the writer to the member
// (flushTo's), as startLateClones does.
func (pr *proxied) joinSrvClones() {
	rs := pr.rs
	rs.mu.Lock()
	fs := rs.srv
	rs.srv = nil
	rs.srvOn.Store(false)
	rs.mu.Unlock()
	rs.wmu[1].Lock()
	for _, f := range fs {
		pr.clone = pr.clone.Join(f)
	}
	rs.wmu[1].Unlock()
}

// earlyCloneEvent reports whether a clone in ev (run as cur) comes,
// on a gateway of cfg's kind, on the client's goroutine after
// CLIENT_ACCEPTED but before the flow's copy loops start, so that it
// changes the flow's clone connections as CLIENT_ACCEPTED's does: a
// socks virtual's SOCKS_REQUEST (the tunnel is copied from its first
// byte; the SOCKS request itself never is [M]), an ftp virtual's
// LB_SELECTED, LB_FAILED and SERVER_CONNECTED (bind, before the
// control connection's pumps; the member speaks first, so no client
// byte has passed).
func earlyCloneEvent(ev rules.Event, cur config.Event, cfg *config.Virtual) bool {
	switch {
	case cfg.ILX != nil || cfg.TLS != nil && cfg.TLS.Forward != nil:
		return false
	case cfg.Socks != nil:
		return ev == rules.SOCKSRequest && cur == eventSOCKSRequest
	case cfg.FTP != nil:
		return ev != rules.ClientData && lateCloneEvent(ev, cur)
	}
	return false
}

// EarlyCloneEvents is the events after CLIENT_ACCEPTED in which
// earlyCloneEvent lets a rule's clone start on cfg's kind, for the
// daemon's warnings at commit; nil for the other kinds.
func EarlyCloneEvents(cfg *config.Virtual) []rules.Event {
	switch {
	case cfg.ILX != nil || cfg.TLS != nil && cfg.TLS.Forward != nil:
		return nil
	case cfg.Socks != nil:
		return []rules.Event{rules.SOCKSRequest}
	case cfg.FTP != nil:
		return []rules.Event{rules.LBSelected, rules.LBFailed, rules.ServerConnected}
	}
	return nil
}

// LateClonable reports whether a rule's clone on a virtual of cfg's
// kind may start after CLIENT_ACCEPTED (in CLIENT_DATA, LB_SELECTED,
// LB_FAILED or SERVER_CONNECTED): a plain TCP flow (with client-ssl,
// server-ssl or a stream profile too), whose client bytes one copy loop
// reads. Flows served message by message, or by a gateway of their
// own (ftp, socks, ilx, starttls, server-ldap, the SSL forward proxy),
// clone from CLIENT_ACCEPTED only. The daemon asks it to warn at
// commit of the clones it skips.
func LateClonable(cfg *config.Virtual) bool {
	return cfg.FTP == nil && cfg.Socks == nil && cfg.ILX == nil && cfg.MQTT == nil &&
		cfg.FIX == nil && cfg.RTSP == nil && cfg.Diameter == nil && cfg.MRF == nil &&
		cfg.STARTTLS == nil && cfg.ServerLDAP == nil && cfg.MBLB == nil &&
		(cfg.TLS == nil || cfg.TLS.Forward == nil)
}

// lateClone is a rule's clone taken in an event after CLIENT_ACCEPTED,
// waiting for the event to return.
type lateClone struct {
	set    *clone.Set
	d      clone.Dest
	server bool
	seed   []byte // clientside: the bytes it starts with
	// both: seed goes to a serverside copy too (message routing, whose
	// copies are the client's messages on both sides).
	both bool
	// back: taken in an event over a member's message, it copies the
	// member's messages (startBackClones), not the client's.
	back bool
}

// startLateClones opens the clone connections a rule's event asked for
// (late, taken out of the rule state by runEvent on the client's
// goroutine, before what the event released is written). The flow's
// clone connections change under the lock of the writer to the member,
// the one other place that reads them (flushTo, on the member's
// goroutine or a timer's), and are replaced, not appended to (Join). A
// clientside copy starts with the client's bytes the member had not
// been sent at the command (held by TCP::collect, or released and
// waiting), then every byte read; a serverside copy starts with the
// next bytes written to the member, which include what the event
// released [M: BIG-IP copies the packets from the command on; the bytes
// a collect holds are the event's own, so the clone gets them].
func (pr *proxied) startLateClones(late []lateClone) {
	pr.joinClones(late, &pr.rs.wmu[1])
}

// joinClones opens the clone connections of late, each clientside one
// starting with its seed, and adds them to the flow's under wmu, the
// lock of the other goroutines that read them (nil: none does).
func (pr *proxied) joinClones(late []lateClone, wmu *sync.Mutex) {
	if wmu != nil {
		wmu.Lock()
		defer wmu.Unlock()
	}
	for _, lc := range late {
		f := lc.set.Add(nil, lc.d, lc.server)
		if lc.both {
			f.Both(lc.seed)
		} else {
			f.Client(lc.seed)
		}
		pr.clone = pr.clone.Join(f)
	}
}

// A rule's clone in a client message's events on gateways that serve
// the client message by message (mqtt: MQTT_CLIENT_INGRESS and
// MQTT_CLIENT_DATA; fix: FIX_HEADER and FIX_MESSAGE over the client's
// messages; diameter: DIAMETER_INGRESS; message routing: its
// protocol's ingress event -- GENERICMESSAGE_INGRESS, SIP_REQUEST and
// SIP_RESPONSE, DIAMETER_INGRESS, MQTT_CLIENT_INGRESS -- and
// MR_INGRESS), which run on the goroutine reading the client: the
// gateway marks the event with beginMsg, Clone queues the copy, and
// the gateway opens it when the event returns (startMsgClones), before
// the message goes on. clientside starts with that message as the
// client sent it, serverside with the message as the member gets it
// (after the event's edits), then every later one, as a clone in
// CLIENT_ACCEPTED copies [M: BIG-IP's clone is a setting of the
// connection from the command on; F5 names no event for it]. A
// gateway whose rules have no clone marks nothing (a bool test per
// event).

// bindMsg is bindMember for a gateway whose client's first message raw
// (as the client sent it) chose the member: the events of the choice
// (LB_SELECTED, LB_FAILED, SERVER_CONNECTED) run on the goroutine
// reading the client before any loop starts, and a clone in them
// starts from that message, clientside (the member gets it after the
// bind, so serverside copies it from there), then the client's later
// ones, as a clone in the message's own event does. clones: a rule has
// a clone command; without, it is bindMember.
func (pr *proxied) bindMsg(raw []byte, clones bool) *serverConn {
	if !clones || pr.rs == nil {
		return pr.bindMember()
	}
	rs := pr.rs
	rs.mu.Lock()
	rs.beginMsg(raw, nil, false)
	rs.mu.Unlock()
	sc := pr.bindMember() // runEvent starts the clones its events took
	rs.mu.Lock()
	late := rs.endMsg()
	rs.mu.Unlock()
	pr.startMsgClones(late, nil) // none left but an event's that ended the flow
	return sc
}

// beginMsg marks the event about to run as one over the client's
// message raw (then term, a message-routing terminator); both: a
// serverside copy starts with it too (message routing copies the
// client's messages as sent on both sides). rs.mu is held.
func (rs *ruleState) beginMsg(raw, term []byte, both bool) {
	rs.msgOn, rs.msg, rs.msgTerm, rs.msgBoth = true, raw, term, both
}

// endMsg ends what beginMsg or beginBack marked and takes the clones
// the event asked for; rs.mu is held.
func (rs *ruleState) endMsg() []lateClone {
	late := rs.late
	rs.late, rs.msgOn, rs.msg, rs.msgTerm, rs.msgBoth, rs.msgBack = nil, false, nil, nil, false, false
	return late
}

// A rule's clone in an event over a member's message (mqtt's
// MQTT_SERVER_INGRESS and MQTT_SERVER_DATA, fix's FIX_HEADER and
// FIX_MESSAGE over the member's messages with response-parsing,
// diameter's DIAMETER_INGRESS over a member's message), which runs on
// the goroutine reading that member: the gateway marks the event with
// beginBack, Clone queues the copy, and the gateway opens it when the
// event returns (startBackClones). The copy is of the member's
// messages from that one on [M: BIG-IP's clone is a setting of the
// connection from the command on, and copies the packets of both
// directions; openltm's copies are of one direction each, and an event
// over the member's messages copies the member's]: serverside as the
// member sent them (the message in hand, then each one as it is read,
// msgWriter.fromMember), clientside as the client gets them (each
// write to the client, msgWriter.write). They go to clone connections
// of their own (ruleState.back), never to the client's copies.

// beginBack marks the event about to run as one over the member's
// message raw, as the member sent it; rs.mu is held.
func (rs *ruleState) beginBack(raw []byte) {
	rs.msgOn, rs.msgBack, rs.msg = true, true, raw
}

// startBackClones opens the clones an event over a member's message
// asked for (endMsg) and adds them to the flow's copies of the
// members' messages (rs.back) under w's lock of the writer to the
// client, which copies to the clientside ones; a serverside one starts
// with the message in hand, as the member sent it.
func (pr *proxied) startBackClones(late []lateClone, w *msgWriter) {
	if late == nil {
		return
	}
	w.mu[0].Lock()
	defer w.mu[0].Unlock()
	f := pr.rs.back.Load()
	for _, lc := range late {
		c := lc.set.Add(nil, lc.d, lc.server)
		c.Server(lc.seed)
		f = f.Join(c)
	}
	pr.rs.back.Store(f)
}

// startMsgClones opens the clones a client message's event asked for
// (endMsg), on the goroutine reading the client, under wmu: the lock of
// the writer to the members, which copies to serverside (msgWriter;
// nil where nothing else reads the flow's clones).
func (pr *proxied) startMsgClones(late []lateClone, wmu *sync.Mutex) {
	if late != nil {
		pr.joinClones(late, wmu)
	}
}

// cloneClient is a flow's clone connections as the writer a reader of
// the client's bytes copies into (io.TeeReader): an rtsp flow's, whose
// messages are parsed and sent again, so that clientside pools still
// get them as the client sent them. It reads pr.clone at each write, on
// the goroutine reading the client, where RTSP_REQUEST's clone joins.
type cloneClient struct{ pr *proxied }

// Write implements io.Writer; the copy never fails the read.
func (c cloneClient) Write(p []byte) (int, error) {
	c.pr.clone.Client(p)
	return len(p), nil
}
