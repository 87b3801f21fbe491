package udp

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/sipmsg"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// flow is one client address and port on one listener: its table entry,
// the virtual's snapshot it started with, and its server sides (legs).
type flow struct {
	flows.Flow
	l     *Listener
	vs    *state.Virtual
	snap  *state.VirtualSnap
	pool  *state.Pool // the virtual's default pool
	dgram bool        // datagram-load-balancing
	ended atomic.Bool
	// opening is set from newFlow until the flow's first datagram is
	// through (its CLIENT_ACCEPTED run, its stamp fresh): the idle sweep
	// leaves such a flow alone however long a loaded machine keeps the
	// reader between publishing the flow and serving its datagram.
	opening atomic.Bool

	mu   sync.Mutex // legs and lsn, against end
	legs []*leg
	// lsn is the translations of the flow's server sides (lsn.go);
	// picked is the one SA_PICKED runs over, before its leg opens.
	lsn    []*lsn.Translation
	picked atomic.Pointer[lsn.Translation]
	// last is the leg the flow's datagrams follow (per-flow balancing);
	// only the listener's reader sets it.
	last atomic.Pointer[leg]

	// Persistence: the virtual's source-addr profile's key (decided once),
	// which a rule's persist command replaces (persist.go); the lookup
	// state.Choose calls, made once per flow; and the record the flow
	// made, refreshed when it ends. The reader alone uses persists, pers,
	// choosing.
	persists  bool
	pers      persistDecision
	persisted func() (*state.Pool, *state.Member)
	choosing  *state.Pool // the pool of the choice being made, for persisted
	madePers  bool        // under mu, with madeKey and madeScope
	madeKey   persist.Key
	madeScope persist.Scope
	// sipField is the sip_info field, found at the first datagram (sip.go).
	sipField sipmsg.Field
	// sip is the sip profile's proxy state (sipproxy.go), nil when the
	// profile sets no proxy setting.
	sip *sipState
	// mr is the flow's session of its virtual's message router (mrf.go),
	// nil without message-routing profiles; mrh its rules' events when
	// they have a clone command (a clone in the client's message's
	// ingress events starts from it), nil otherwise.
	mr  *mrf.Session
	mrh *mrfHooks
	// rad is the radius profile's state (radius.go), nil without one.
	rad *radiusState
	// gtp: the virtual has a gtp profile (gtp.go); gtps is its requests
	// in flight and persistence (gtpsession.go), nil without one.
	gtp  bool
	gtps *gtpState
	// dhcp is the dhcpv4 or dhcpv6 profile's relay state (dhcp.go), nil
	// without one.
	dhcp *dhcpState
	// tftp: the virtual's tftp profile; legs take the member's answers
	// from its transfer port (tftp.go).
	tftp bool
	// hash is the virtual's hash profile with a payload key, nil for none;
	// basePersists and basePers are the flow's decision without it
	// (hashpersist.go).
	hash         *config.Persistence
	basePersists bool
	basePers     persistDecision

	rs *ruleState // nil when the virtual's rules handle no event of ours
	// wq is the flow's own goroutine when its rules suspend events
	// (rulewait.go); nil otherwise, the reader running the events.
	wq *waitQueue
	// clone is the flow's clone sockets (dataplane/clone); nil without
	// clone pools. Set before the flow is published, closed by end.
	clone *clone.Datagrams
	// bwc paces the flow's datagrams on its virtual's bandwidth
	// controller, or the one a rule attached (bwc.go); nil: none.
	bwc atomic.Pointer[flowBWC]
	// pace is a rule's UDP::max_rate and UDP::max_buf_pkts on the flow,
	// ingress its IP::ingress_rate_limit (pace.go); nil: none.
	pace    atomic.Pointer[flowPace]
	ingress atomic.Pointer[ingressLimit]
	// key is the flow's in its listener's flows; out and orc the socket
	// its answers leave from: the listener's, or on every port one of
	// the flow's own bound to the port the client sent to
	// (anyport_linux.go).
	// raw: an ip-forward flow on every port, whose answers leave by
	// the engine's raw socket from Local (rawanswer_linux.go); out and
	// orc are then the listener's, for nothing sent.
	key flowKey
	out *net.UDPConn
	orc syscall.RawConn
	raw bool
	flowIO
}

// persistDecision is what a flow persists on: the key, the virtual's
// profile of its mode (nil: none) and the record's timeout.
type persistDecision struct {
	key     persist.Key
	prof    *config.Persistence
	timeout time.Duration
}

// leg is one server side of a flow: a UDP socket connected to a member
// (or a node a rule named), bound to the SNAT address, with a goroutine
// reading the member's answers.
type leg struct {
	f      *flow
	conn   *net.UDPConn
	rc     syscall.RawConn
	member *state.Member // nil for a node decision
	pool   *state.Pool   // nil for a node decision
	rec    flows.Leg
	// gone: closed before the flow ends (terminate-on-bye, sipproxy.go).
	gone atomic.Bool
	// tid is the member's transfer port on a TFTP leg, 0 until it
	// answers a request (tftp.go).
	tid atomic.Uint32
	// snat is the translation address the leg's socket holds (an ltm
	// snat-translation with a connection limit or idle timeout), given
	// back with the leg (release); nil without.
	snat *snatobj.Addr
	// pass ends the steering's pass over a node the rule named (Env.Pass),
	// held while the leg is open; nil: none.
	pass  func()
	legIO // the system's way of reading answers (io_linux.go, io_other.go)
}

// newFlow fills in a new client's flow to local (the listener's address,
// or on every port the address and the port the client sent to).
func newFlow(l *Listener, vs *state.Virtual, snap *state.VirtualSnap, key flowKey, local netip.AddrPort) *flow {
	cfg := snap.Cfg
	client := key.client
	f := &flow{l: l, vs: vs, snap: snap, pool: snap.Pool, dgram: cfg.TFTP == nil && (cfg.DatagramLB || cfg.SIP != nil || cfg.RADIUS != nil || cfg.GTP != nil || cfg.DHCP != nil)}
	f.key, f.out, f.orc = key, l.conn, l.rc
	f.Client, f.Local = client, local
	f.Virtual = vs.Name
	f.Flow.Protocol = "udp"
	f.SetIdleTimeout(snap.FlowIdle(local)) // a service-policy's timer policy (state/timers.go)
	if t := cfg.TFTP; t != nil {
		f.tftp = true // tftp.go
		if t.Idle > 0 {
			f.SetIdleTimeout(t.Idle)
		}
	}
	f.Closer = func(bool) { f.end() }
	f.opening.Store(true)
	for _, prof := range []*config.Persistence{cfg.Persist, cfg.FallbackPersist} {
		if prof != nil && prof.Method == config.PersistSourceAddr {
			f.persists = true
			f.pers = persistDecision{key: prof.SourceKey(client.Addr()), prof: prof, timeout: prof.Timeout}
			break
		}
	}
	if snap.EvMask != 0 {
		f.rs = &ruleState{}
		f.wq = newWaitQueue(f) // rulewait.go
	}
	if f.hash = hashProfile(cfg); f.hash != nil || cfg.RADIUS != nil || cfg.GTP != nil {
		f.basePersists, f.basePers = f.persists, f.pers
	}
	if f.persists || f.rs != nil || f.hash != nil {
		f.persisted = f.persistLookup
	}
	if snap.Clone != nil {
		f.clone = snap.Clone.StartDatagrams()
	}
	if snap.BWC != nil {
		// bwc.go; a rate-class besides a bwc-policy is chained after it.
		f.bwc.Store(newFlowBWCOn(f, snap.BWC.AttachClass(f.Client.String(), snap.RateClass)))
	}
	f.sip = newSIPState(cfg.SIP, local.String())
	f.rad = newRADIUSState(cfg.RADIUS, f) // radius.go
	f.gtp = cfg.GTP != nil
	f.gtps = newGTPState(cfg.GTP, cfg.Persist) // gtpsession.go
	f.dhcp = newDHCPState(cfg.DHCP, f)         // dhcp.go
	f.mr = newMRFSession(f)                    // mrf.go
	f.initIO()
	return f
}

// fromClient takes one client datagram of the flow: held while a rule's
// UDP::hold lasts, else forwarded.
func (f *flow) fromClient(b []byte) {
	if f.ended.Load() {
		return
	}
	f.Touch(f.l.e.now.Load())
	f.BytesIn.Add(uint64(len(b)))
	f.PktsIn.Add(1)
	f.vs.Stats.In(len(b), 1)
	f.vs.Prof.Conns.DgIn.Add(1)
	if il := f.ingress.Load(); il != nil && !il.allow() {
		return // IP::ingress_rate_limit (pace.go)
	}
	if f.mr != nil {
		// Message routing: each datagram as the client sent it, to
		// clientside and serverside pools alike (its messages go to
		// peers the router picks, not to one member [M]), as on TCP.
		if f.clone != nil {
			f.clone.Both(b)
		}
		f.mrfIn(b) // mrf.go
		return
	}
	if f.clone != nil {
		f.clone.Client(b) // as the client sent it, held or not
	}
	if f.rs != nil && f.hold(b) {
		// UDP::hold: the server is chosen and connected without the
		// datagram (LB_SELECTED, SERVER_CONNECTED), whose rules may
		// release what is held.
		if f.last.Load() == nil {
			f.pick()
		}
		for _, d := range f.released() {
			f.forward(d)
		}
		return
	}
	f.forward(b)
}

// forward runs a client datagram through CLIENT_DATA and sends it to the
// flow's member, choosing one first when the flow has none yet, balances
// every datagram, or a rule decided again.
func (f *flow) forward(b []byte) {
	lg := f.last.Load()
	sent := b                             // as the client sent it
	if f.dhcp != nil && !f.dhcpCheck(b) { // dhcp.go
		return
	}
	if f.gtp && !f.gtpCheck(b) { // gtp.go
		return
	}
	if f.rs != nil {
		var fwd, again bool
		if b, fwd, again = f.clientData(b); !fwd {
			return
		}
		if f.gtp {
			if b, fwd = f.gtpIn(b); !fwd { // gtp.go
				return
			}
			f.rs.mu.Lock()
			again = again || f.rs.Changed
			f.rs.mu.Unlock()
		}
		if again {
			lg = nil
		}
	}
	if f.dhcp != nil && !f.dhcp.cfg.Forwarding {
		f.dhcpRelay(b) // to every member (dhcp.go)
		return
	}
	var again *leg // a RADIUS request's retransmission follows its first copy
	if f.rad != nil {
		var ok bool
		if b, again, ok = f.radiusIn(b, sent); !ok { // radius.go
			return
		}
		if again != nil {
			lg = again
			f.last.Store(lg)
		}
	}
	if f.gtps != nil {
		// A retransmitted request follows its first copy (gtpsession.go).
		if again = f.gtpClient(b); again != nil {
			lg = again
			f.last.Store(lg)
		}
	}
	if again == nil && (lg == nil || f.dgram) {
		var sm sipmsg.Message
		ruled := false // a SIP event's decisions hold for this message
		if sc := f.snap.Cfg.SIP; sc != nil {
			var ok bool
			if sm, b, ruled, ok = f.sipIn(b, sc); !ok { // sip.go
				return
			}
			if f.sip != nil && f.sipClient(&sm) { // sipproxy.go
				if ruled {
					f.sipRuleDone()
				}
				return
			}
		}
		if f.hash != nil {
			f.hashChoose(sent) // hashpersist.go
		}
		lg = f.pick()
		if ruled {
			f.sipRuleDone()
		}
		if lg == nil {
			if f.sip != nil {
				f.sip.unchosen() // sipproxy.go
			}
			f.vs.Prof.Conns.DgDropped.Add(1) // no member can take it
			return
		}
		if f.sip != nil {
			b = f.sipChosen(&sm, lg)
		}
	}
	if f.snap.Cfg.SIP != nil {
		var ok bool
		if b, ok = f.sipOut(lg, b); !ok { // sip.go
			return
		}
	}
	if f.rad != nil {
		f.radiusSent(lg, b, sent)
	}
	if f.gtps != nil {
		f.gtpSent(lg)
	}
	if f.gtp && f.rs != nil {
		var ok bool
		if b, ok = f.gtpOut(lg, b); !ok { // gtp.go
			return
		}
	}
	if f.clone != nil {
		f.clone.Server(b) // as the member gets it
	}
	if p := f.pace.Load(); p != nil {
		p.up.Send(lg, b) // UDP::max_rate (pace.go)
		return
	}
	if fb := f.bwc.Load(); fb != nil {
		fb.up.Send(lg, b) // bwc.go
		return
	}
	if f.rs != nil {
		lg.send(b) // in order with what the rules sent
		f.sipSent(lg, b)
		return
	}
	if f.tftp {
		lg.tftpSend(b) // to the transfer's port (tftp.go)
		return
	}
	f.l.forward(lg, b)
}

// pick chooses the member of the next datagram (state.Choose: a rule's
// member, then persistence, then balancing) and returns its leg, opened
// if the flow has none to it. nil drops the datagram.
func (f *flow) pick() *leg {
	f.pruneLegs() // sipproxy.go
	for round := 0; ; round++ {
		lg, again := f.pickOnce(round < maxLBRounds)
		if !again {
			return lg
		}
	}
}

// maxLBRounds bounds how often LB_SELECTED and LB_FAILED may send one
// choice back to be made again.
const maxLBRounds = 3

// pickOnce is one round of pick. With rules, LB_FAILED runs when no member
// can take the datagram and LB_SELECTED when one was chosen; again is true
// when such an event decided anew (pool, member, node) and may choose
// again.
func (f *flow) pickOnce(mayRetry bool) (lg *leg, again bool) {
	pool, want := f.pool, netip.AddrPort{}
	var mode *state.ModeSpec
	var xlate irules.Target // only its translate choice (Xlate)
	var limits state.RuleLimits
	var holds *state.KeyHolds
	if rs := f.rs; rs != nil {
		rs.mu.Lock()
		nodeSel, selPool, selAddr := rs.Node, rs.Pool, rs.Addr
		mode, rs.Changed = rs.LBMode, false
		xlate.Xlate = rs.Xlate
		limits, holds = rs.Limits, &rs.Holds
		rs.mu.Unlock()
		if nodeSel {
			return f.nodeLeg(selAddr), false
		}
		if selPool != nil {
			pool, want = selPool, selAddr
		}
	}
	if pool == nil {
		if f.raw {
			// ip-forward on every port: where the client was going
			// (rawanswer_linux.go).
			return f.nodeLeg(f.Local), false
		}
		return nil, f.lbFailed(mayRetry)
	}
	var persisted func() (*state.Pool, *state.Member)
	how := state.Chooser{Reserve: !f.dgram, Mode: mode, Limits: limits, Holds: holds}
	if how.Limits.VirtualOver(f.vs, holds) {
		return nil, f.lbFailed(mayRetry) // LB::connlimit virtual (rules/commands_connlimit.go)
	}
	if f.rs != nil {
		f.rulePersist()
	}
	if f.persists {
		persisted, f.choosing = f.persisted, pool
		how.Override = f.pers.prof != nil && f.pers.prof.OverrideConnectionLimit
	}
	if f.sip != nil && f.sip.dlg.mem != nil {
		// The request's dialog (dialog-aware) goes where it began, while
		// that member can take it (sipproxy.go).
		persisted, f.choosing = f.sip.dlgPick, pool
	}
	m, pool, _ := state.Choose(pool, state.Target{Addr: want, Accept: state.AvailDown}, persisted, nil, how)
	if m == nil {
		return nil, f.lbFailed(mayRetry)
	}
	dst := xlate.Translate(f.snap.Cfg, m.Cfg.Load().Addr, f.Local) // with a rule's translate
	if goOn, again := f.lbSelected(pool, dst, mayRetry); !goOn || again {
		if !f.dgram {
			m.Release()
		}
		return nil, again
	}
	if f.dgram {
		m.Stats.Requests.Add(1)
		m.Node.Stats.Requests.Add(1)
		pool.Stats.Requests.Add(1)
	}
	for _, lg := range f.legs { // the reader is the only writer of legs
		if lg.member == m && lg.pool == pool && !lg.gone.Load() {
			if !f.dgram {
				m.Release() // the leg already holds the flow's count
			}
			if f.persists && (f.pers.key.Mode == persist.SIP || f.pers.key.Mode == persist.Hash || f.rad != nil || f.gtps != nil || f.rs != nil && f.rs.sipKeeping) {
				// A key of this datagram's own (sip.go, hashpersist.go,
				// a SIP event's persist): its record is made or
				// refreshed on a leg the flow had too, as on a new one
				// below.
				f.persistSave(f.pers, pool, m)
			}
			f.last.Store(lg)
			return lg, false
		}
	}
	if !f.serverInit(pool, dst) { // rules.go
		if !f.dgram {
			m.Release()
		}
		return nil, false
	}
	if f.dgram {
		m.ReserveOverride() // balancing respected the limits; the leg holds the count
	}
	lg = f.openLeg(dst, m, pool)
	if lg == nil {
		m.Release()
		return nil, false
	}
	pool.Stats.TryOpen(0)
	if !f.dgram {
		m.Stats.Requests.Add(1)
		m.Node.Stats.Requests.Add(1)
		pool.Stats.Requests.Add(1)
	}
	if f.persists {
		f.persistSave(f.pers, pool, m)
	}
	if !f.addLeg(lg) || !f.serverConnected(lg) {
		return nil, false
	}
	return lg, false
}

// nodeLeg is the leg to an address a rule named (node, forward): no pool,
// no member accounting; port 0 keeps the port the client reached.
func (f *flow) nodeLeg(a netip.AddrPort) *leg {
	if a.Port() == 0 {
		a = netip.AddrPortFrom(a.Addr(), f.Local.Port())
	}
	for _, lg := range f.legs {
		if lg.member == nil && lg.rec.Server == a && !lg.gone.Load() {
			f.last.Store(lg)
			return lg
		}
	}
	if !f.serverInit(nil, a) {
		return nil
	}
	var release func()
	if pass := f.l.e.env.Pass; pass != nil && !(f.raw && a == f.Local) {
		// A node the rule named (maybe computed at run time) in what a
		// wildcard or network virtual steers: passed over while the leg
		// lasts, each of its datagrams to the server's unconnected
		// socket being looked up (an ip-forward leg to where the client
		// was going leaves from that address, never steered).
		release = pass(a, true)
	}
	lg := f.openLeg(a, nil, nil)
	if lg == nil {
		if release != nil {
			release()
		}
		return nil
	}
	lg.pass = release
	if !f.addLeg(lg) || !f.serverConnected(lg) {
		return nil
	}
	return lg
}

// source is the server side's source address toward dst, a member of
// pool: the virtual's source-address-translation (unless the pool's
// allow-snat is no), or a rule's snat decision. The leg opened from it
// holds the translation address (Hold, given back with the leg).
func (f *flow) source(dst netip.AddrPort, pool *state.Pool) state.SNATHeld {
	var rule *state.SNATChoice
	if rs := f.rs; rs != nil {
		rs.mu.Lock()
		if rs.SNAT.Set {
			c := rs.SNAT
			rule = &c
		}
		rs.mu.Unlock()
	}
	return state.SNATSourceHeldOn(f.vs, f.snap, f.Client, f.Local, dst, rule, pool, int(f.Arrival))
}

// openLeg opens a server socket to dst from the flow's SNAT source,
// keeping the client's port when the kernel allows. nil when no socket
// can be made.
func (f *flow) openLeg(dst netip.AddrPort, m *state.Member, pool *state.Pool) *leg {
	var c *net.UDPConn
	var err error
	var held *snatobj.Addr
	if f.raw && dst == f.Local && m == nil {
		// ip-forward to an address of this host: from that address,
		// whatever the source-address-translation [M], which the
		// steering passes over (as l4's ip-forward connect does).
		c, err = sockopt.DialUDPFrom(netip.AddrPortFrom(dst.Addr(), 0), dst)
	} else if lp, want := f.lsnChoice(); lp != nil {
		c, err = f.dialLSN(lp, dst, want, f.tftp) // lsn.go
	} else {
		h := f.source(dst, pool)
		if h.Err != nil { // every translation address at its connection limit
			f.l.e.env.Log.Debug("udp: no server side", "virtual", f.Virtual, "server", dst.String(), "err", h.Err)
			return nil
		}
		switch {
		case f.tftp:
			c, err = listenFrom(h.Src, dst, h.Src.Addr() == f.Local.Addr()) // tftp.go
		case h.Strict: // source-port preserve-strict: the client's port or none
			c, err = net.DialUDP("udp", net.UDPAddrFromAddrPort(h.Src), net.UDPAddrFromAddrPort(dst))
		case h.Src.Addr() == f.Local.Addr():
			// automap from the address the client reached, of this
			// host though perhaps an IPv6 network's unassigned one:
			// bound as it is, not the kernel's choice (DialUDP's
			// fallback is for a remote client's own address).
			c, err = sockopt.DialUDPFrom(h.Src, dst)
		default:
			c, err = sockopt.DialUDP(h.Src, dst)
		}
		if h.Hold != nil {
			if err != nil {
				h.Hold.Release()
			} else {
				held = h.Hold
				if d, ok := h.Hold.UDPIdle(); ok {
					f.SetIdleTimeout(d)
				}
			}
		}
	}
	if err != nil {
		f.l.e.env.Log.Debug("udp: cannot open the server side", "virtual", f.Virtual, "server", dst.String(), "err", err)
		return nil
	}
	if s := f.snap.Cfg.ServerTCP; s != nil {
		s.ApplyConn(c) // the udp profile's send buffer, TTL, DF and checksums (udpopts.go)
	}
	if fb := f.bwc.Load(); fb != nil {
		fb.b.MarkConn(c) // the bandwidth controller's ip-tos and link-qos (bwc.go)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		c.Close()
		if held != nil {
			held.Release()
		}
		return nil
	}
	lg := &leg{f: f, conn: c, rc: rc, member: m, pool: pool, snat: held}
	lg.rec = flows.Leg{Client: c.LocalAddr().(*net.UDPAddr).AddrPort(), Server: dst}
	if m != nil {
		lg.rec.Pool, lg.rec.Member, lg.rec.Owner = pool.Name, m.Name, m
	}
	lg.initIO()
	return lg
}

// addLeg attaches a new leg to the flow and starts reading its answers;
// false (and the leg closed) when the flow ended meanwhile.
func (f *flow) addLeg(lg *leg) bool {
	f.mu.Lock()
	if f.ended.Load() {
		f.mu.Unlock()
		lg.conn.Close()
		lg.release()
		return false
	}
	f.legs = append(f.legs, lg)
	f.mu.Unlock()
	f.AddLeg(&lg.rec)
	f.last.Store(lg)
	go lg.readLoop()
	return true
}

// toClient sends a datagram to the flow's client from the virtual's
// address, and counts it.
func (f *flow) toClient(b []byte) {
	if f.raw {
		if f.l.e.raw.send(f.Local, f.Client, b) != nil {
			return
		}
	} else if _, err := f.out.WriteToUDPAddrPort(b, f.Client); err != nil {
		return
	}
	f.BytesOut.Add(uint64(len(b)))
	f.PktsOut.Add(1)
	f.vs.Stats.Out(len(b), 1)
	f.vs.Prof.Conns.DgOut.Add(1)
}

// release gives back the member's and pool's counts the leg held.
func (lg *leg) release() {
	if lg.pass != nil {
		lg.pass()
		lg.pass = nil
	}
	if lg.snat != nil {
		lg.snat.Release()
		lg.snat = nil
	}
	if m := lg.member; m != nil {
		m.Release()
		lg.pool.Stats.Close()
	}
}

// end closes the flow's server sides and gives back what it held: its
// table entry, the counts, its persistence record's refresh. Idle timeout,
// delete sys connection, a service-down-action, a rule's reject and the
// listener's end all come here; ending twice is harmless.
func (f *flow) end() {
	if !f.ended.CompareAndSwap(false, true) {
		return
	}
	f.l.forget(f)
	f.mu.Lock()
	legs, made, key, scope := f.legs, f.madePers, f.madeKey, f.madeScope
	cl := f.clone // a rule's clone command adds to it under f.mu (clone.go)
	f.mu.Unlock()
	for _, lg := range legs {
		if lg.gone.CompareAndSwap(false, true) {
			lg.conn.Close()
			lg.release()
		}
	}
	if f.mr != nil {
		f.mr.Close() // its own peer flows; the answers still due are lost
	}
	cl.Close()
	f.releaseLSN()          // lsn.go
	f.pace.Load().close()   // pace.go
	f.bwc.Swap(nil).close() // bwc.go
	switch {
	case f.wq != nil:
		f.wq.legs = legs // the flow's goroutine ends its rules
		close(f.wq.done)
	case f.rs != nil:
		f.endRules(legs)
	}
	if made {
		f.l.e.env.Persist.Touch(key, scope)
	}
	if nf := f.snap.Cfg.NetFlow; nf != nil { // netflow profile (dataplane/netflow)
		nf.Export(&f.Flow)
	}
	f.l.e.env.Table.Remove(&f.Flow)
	f.vs.Leave(f.snap.Addr)
	f.vs.Durs.Note(uint64(time.Since(f.Created()) / time.Millisecond))
	f.closeOut()
}

// closeOut closes the flow's own answering socket (on every port); an
// answer still on its way is lost, as after the flow's end.
func (f *flow) closeOut() {
	if f.out != f.l.conn {
		f.out.Close()
	}
}
