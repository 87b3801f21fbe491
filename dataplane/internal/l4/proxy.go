package l4

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rstcause"

	"github.com/openltm/openltm/dataplane/internal/state"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/lb"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/dataplane/snatobj"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/rules"
)

// serverConn is one server-side connection of a flow. A flow has at most
// one at a time; a rule's LB::detach may replace it, so each copy loop
// holds the one it serves.
type serverConn struct {
	conn     *net.TCPConn
	leg      flows.Leg
	member   *state.Member // nil for a node or forward decision
	pool     *state.Pool   // nil for a node or forward decision
	tls      *tls.Conn     // server-ssl: TLS over conn (tls.go)
	tlsCfg   *tls.Config   // tls's configuration (its session cache)
	ssl      state.SSLHeld // tls's place in the server-ssl profile's connections
	fastest  bool
	awaiting atomic.Bool // fastest-node: a request is outstanding
	// clock times the member's answers for its inband monitor's
	// response-time (nil without one).
	clock *monitor.ResponseClock
	// helloBack: the member's first bytes are read for its ServerHello's
	// session ID before they are copied (ssl persistence, sslpersist.go).
	helloBack bool
	// xlat is the lsn translation a flow's extra member connection holds
	// (a diameter profile's other members, lsn.go dialExtra), given back
	// with it; nil for the flow's own (pr.lsn).
	xlat *lsn.Translation
	// snat is the ltm snat-translation address such a connection holds
	// (dialExtra), given back with it; nil for none and for the flow's
	// own (fl.snat).
	snat *snatobj.Addr
}

// flow is what both L4 engines keep of one client connection and its
// server side: the flow table entry, the virtual and its snapshot, the
// server connection, the persistence state, and the rule state when the
// virtual's rules handle proxy events (nil on the event loops, which run
// only flows without). Member choice, translation, counting and the end
// of a flow are its methods, the same for both engines.
type flow struct {
	flows.Flow
	e     *Engine
	vs    *state.Virtual
	snap  *state.VirtualSnap
	srv   atomic.Pointer[serverConn]
	first serverConn                  // the first server connection, kept inline
	why   atomic.Uint32               // the reset's rstcause.Cause, once known (rstcause.go)
	pool  *state.Pool                 // the virtual's default pool
	rs    *ruleState                  // nil for flows without rules
	pers  atomic.Pointer[flowPersist] // nil until the flow persists (flowpersist.go)
	cssl  state.SSLHeld               // the client's TLS in its client-ssl profile's connections (tls.go)
	// firstKey is the persistence key in the client's first bytes: the
	// session ID of its TLS hello (ssl), its RDP cookie (msrdp); nil
	// without one (sslpersist.go).
	firstKey []byte
	// sessionDir is the member an RDP client's session-directory routing
	// token names (msrdp has-session-dir yes; sslpersist.go).
	sessionDir netip.AddrPort
	// clone is the copies of the client's bytes for the virtual's clone
	// pools (clone.go); nil without.
	clone *clone.Flow
	// syn is what the client's SYN carried, read once when the flow
	// starts on a virtual that keeps SYNs (synopts.go); nil otherwise.
	syn *synhdr.SYN
	// lsn is the flow's large-scale NAT translation (lsn.go); nil
	// without one.
	lsn atomic.Pointer[lsn.Translation]
	// snat is the translation address the flow's server connection
	// holds (an ltm snat-translation with a connection limit or idle
	// timeout; source), given back when the flow ends or dials again;
	// nil without.
	snat atomic.Pointer[snatobj.Addr]
}

// proxied is a flow served by goroutines: its client connection, one
// goroutine per direction, and the rules' events; in one allocation for
// flows without rules.
type proxied struct {
	flow
	client *net.TCPConn
	ctls   *tls.Conn // client-ssl: TLS over client (tls.go)
	// hello is the client's TLS hello while CLIENTSSL_CLIENTHELLO runs.
	hello *tls.ClientHelloInfo
	// c3d is what the rules chose with SSL::c3d (tls.go); nil: nothing.
	c3d *sslfwd.C3DRule
	// hops counts the virtual servers that handed this connection on
	// before this one (`virtual NAME`, ruleflow.go).
	hops int
	// head is the client's first bytes a flow with rules read before
	// choosing a member, until they are passed on (sslpersist.go).
	head []byte
	// rtspWant is the member of the RTSP session the client's first
	// request named (rtsp.go): the connection goes there.
	rtspWant netip.AddrPort
	// related is the server of the rule's listen that took this
	// connection (listen.go): the connection goes there.
	related netip.AddrPort
	rules   config.Rules
	evMask  uint32 // events the rules handle

	legsLeft atomic.Int32
	// eofs counts the directions that read their source's FIN, so that
	// the second does not pass a half-close on while the first leg has
	// not counted itself finished yet (passFIN).
	eofs  atomic.Int32
	ended atomic.Bool
	// watched: the close timers of the flow run (tcpclose.go).
	watched bool
	// alert waits for the peer's close_notify after the proxy sent one
	// (alert-timeout, tls.go); nil while none is awaited.
	alert atomic.Pointer[time.Timer]
	// streams are the stream filters of the two directions (client to
	// server first); nil without a stream profile (stream.go).
	streams *[2]streamDir
	// bwc is the bandwidth controller's bucket the flow's bytes wait on
	// before they are written, either way (bwc.go); nil: none.
	bwc atomic.Pointer[bwc.Bucket]
	// ingress is a rule's limit on the client's packets
	// (IP::ingress_rate_limit), which the client side's reads wait on
	// (ingress.go); nil: none.
	ingress atomic.Pointer[bwc.Ingress]
}

// reset closes c with a TCP reset.
func reset(c *net.TCPConn) {
	c.SetLinger(0)
	c.Close()
}

// closeQuietly closes a client with a FIN where it can: what it has sent
// so far is read and dropped first, since Linux resets a connection
// closed with data unread (rawsock.CloseQuietly).
func closeQuietly(c *net.TCPConn) {
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { rawsock.Drain(int(fd)) }) // Go's sockets are non-blocking
	}
	c.Close()
}

// Sentinel errors of connect.
var (
	errNoPool    = errors.New("no pool")
	errNoMember  = errors.New("no member available")
	errConnect   = errors.New("connect failed")
	errFlowEnded = errors.New("the rule ended the flow")
)

// serve runs one accepted client connection to its end.
func (e *Engine) serve(vs *state.Virtual, c *net.TCPConn) { e.serveHop(vs, c, 0, nil) }

// serveHop runs a client connection that hops virtual servers handed on
// before vs (`virtual NAME`) to its end; head is what the last of them
// read of it (its TLS hello, handoff.go), nil when nothing.
func (e *Engine) serveHop(vs *state.Virtual, c *net.TCPConn, hops int, head []byte) {
	if vs == nil {
		reset(c)
		return
	}
	snap := vs.Snap.Load()
	cfg := snap.Cfg
	client, local := rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr())
	ok, pfClass, ifx := vs.AdmitArrival(snap, client, local, func() (ifx int) {
		rawsock.Control(c, func(fd int) error { ifx = rawsock.ArrivalIf(fd); return nil })
		return ifx
	})
	if !ok {
		if e.refused(snap, client, local, ifx) { // rstcause.go
			reset(c) // disabled virtual, foreign source or a limit: reset
		} else {
			closeQuietly(c) // over the reject rate
		}
		return
	}
	if s := cfg.ClientTCP; s != nil {
		s.ApplyConn(c) // tcpopts.go
	}
	if snap.DNS != nil {
		// A dns profile: the queries are answered (or forwarded) one by
		// one (dataplane/dnsvs).
		snap.DNS.ServeTCP(vs, snap, c, ifx)
		vs.Leave(snap.Addr)
		return
	}
	if cfg.MBLB != nil {
		// Message-based load balancing: each message is balanced on its own.
		e.env.MBLB.ServeHanded(vs, snap, c, head)
		return
	}
	pr := &proxied{client: c, hops: hops, head: head}
	pr.init(e, vs, snap, client, local, pr)
	if snap.BWC != nil {
		pr.attachBWC(snap.BWC, client.Addr().String()) // bwc.go
		if snap.RateClass != nil {
			pr.bwc.Load().SetClass(snap.RateClass.Attach("")) // the virtual's rate-class after its bwc-policy
		}
	}
	if pfClass != "" {
		// The packet filter that let the client in names a rate class:
		// the flow is in it, as rateclass would put it [M: in place of
		// the virtual's rate-class, as a later rateclass would].
		pr.RateClass(pfClass) // bwc.go; a class gone since the commit: not shaped
	}
	if snap.SYN {
		pr.syn = readSYNConn(c) // synopts.go
	}
	if cfg.Stream != nil {
		pr.streams = new([2]streamDir)
	}
	if snap.EvMask != 0 || ((cfg.TLS != nil || sslPersists(cfg)) && handlesSSL(cfg.Rules)) || ((cfg.Socks != nil || cfg.ILX != nil) && cfg.Rules != nil) || ((cfg.MQTT != nil || cfg.FIX != nil || cfg.RTSP != nil || cfg.Diameter != nil || cfg.MRF != nil) && cfg.Rules != nil) {
		pr.rules, pr.evMask, pr.rs = cfg.Rules, snap.EvMask, &ruleState{clones: irules.Program(cfg.Rules).Clones()}
	}
	pr.Flow.Arrival = int32(ifx)
	e.env.Table.Add(&pr.Flow)

	if cfg.Socks != nil {
		pr.serveSocks() // socks.go
		return
	}
	if cfg.ILX != nil {
		pr.serveILX() // ilx.go
		return
	}

	if cfg.TLS != nil && cfg.TLS.Forward != nil {
		pr.serveForward() // sslfwd.go
		return
	}
	if pr.rs != nil {
		pr.serveRules()
		return
	}
	if cfg.TLS != nil && !pr.terminate() { // tls.go
		pr.finish(true)
		return
	}
	head = pr.head // the bytes handed over, unless terminate took them (handoff.go)
	pr.head = nil
	if cfg.MQTT != nil {
		pr.legsLeft.Store(1)
		pr.serveMQTT(head) // mqtt.go
		return
	}
	if cfg.FIX != nil {
		pr.legsLeft.Store(1)
		pr.serveFIX(head) // fix.go
		return
	}
	if cfg.RTSP != nil {
		pr.legsLeft.Store(1)
		pr.serveRTSP(head) // rtsp.go
		return
	}
	if cfg.Diameter != nil {
		pr.legsLeft.Store(1)
		pr.serveDiameter(head) // diameter.go
		return
	}
	if cfg.MRF != nil {
		pr.legsLeft.Store(1)
		pr.serveMRF(head) // mrf.go
		return
	}
	if cfg.Persist.Peeks() && !terminatesTLS(cfg) { // sslpersist.go
		var err error
		if head, pr.firstKey, err = firstKey(cfg, pr.client, head); err != nil {
			pr.finish(false)
			return
		}
	}
	pr.watchClose() // tcpclose.go
	sc, err := pr.connect()
	if err != nil {
		pr.finish(true)
		return
	}
	if cfg.TLS != nil && !pr.originate(sc) {
		pr.finish(true)
		return
	}
	// The first bytes read for a persistence key, and the member's answer
	// read for its session (sslpersist.go).
	if len(head) > 0 && !pr.passHead(sc, head) {
		pr.finish(true)
		return
	}
	sc.helloBack = sslPersists(cfg) && !terminatesTLS(cfg)
	if cfg.FTP != nil {
		pr.serveFTP(sc) // ftp.go
		return
	}
	if cfg.STARTTLS != nil {
		pr.serveSTARTTLS(sc, cfg.STARTTLS.Mode) // starttls.go
		return
	}
	pr.legsLeft.Store(2)
	go pr.copy(sc.conn, pr.client, false, sc)
	pr.copy(pr.client, sc.conn, true, sc)
}

// init fills in a new flow's table entry for the virtual.
func (fl *flow) init(e *Engine, vs *state.Virtual, snap *state.VirtualSnap, client, local netip.AddrPort, end flows.Ender) {
	fl.e, fl.vs, fl.snap, fl.pool = e, vs, snap, snap.Pool
	fl.Client, fl.Local = client, local
	fl.Virtual = vs.Name
	fl.Flow.Protocol = "tcp"
	fl.SetIdleTimeout(snap.FlowIdle(local)) // a service-policy's timer policy (state/timers.go)
	fl.End = end
	if snap.Clone != nil {
		fl.clone = snap.Clone.Start() // clone.go
	}
}

// connect chooses a member and opens the server side, trying other members
// on failure as reselect-tries allows. With rules, their pool, member or
// node decision is followed and LB_SELECTED runs before each connect.
func (pr *proxied) connect() (*serverConn, error) {
	rs := pr.rs
	pool, want := pr.pool, netip.AddrPort{}
	if pr.related.IsValid() {
		return pr.dialDirect(pr.related) // listen.go
	}
	if rs != nil {
		if rs.Node {
			return pr.dialDirect(rs.Addr)
		}
		if rs.Pool != nil {
			pool, want = rs.Pool, rs.Addr
		}
	}
	if !want.IsValid() && pr.rtspWant.IsValid() {
		want = pr.rtspWant // rtsp.go: the member of the session the client named
	}
	if pool == nil {
		if pr.snap.Cfg.IPForward {
			if pr.Local == pr.snap.Cfg.Destination {
				// A network virtual on a port reached at its own
				// listener's address: forwarded, it would come back to
				// itself.
				return nil, errNoPool
			}
			return pr.dialDirect(pr.Local) // ip-forward: where the client was going
		}
		return nil, errNoPool
	}
	ps := pool.Snap.Load()
	tries := 0
	if ps != nil {
		tries = ps.Cfg.ReselectTries
	}
	// Persistence beats load balancing: a record's member is used while it
	// may take persisted clients (disabled is fine, forced offline or down
	// is not); otherwise the pool balances and the record is replaced.
	pr.sessionDir, _ = sessionDirTarget(pr.snap.Cfg, pr.firstKey) // sslpersist.go
	pd, persists := pr.persistKey()
	if persists && rs != nil && pr.handles(config.EventPersistDown) {
		// flowpersist.go: PERSIST_DOWN, and what the rule decided in it.
		again, err := pr.persistDownEvent(&pd, pool)
		if err != nil || again {
			if err != nil {
				return nil, err
			}
			return pr.connect()
		}
		pd, persists = pr.persistKey()
	}
	var failed []*state.Member
	var queued *queuedFlow // the flow's place in the pool's connection queue (connqueue.go)
	defer queueLeave(&queued)
	if queuesFirst(pool, want.IsValid()) {
		if retry, err := pr.queueTurn(&queued, pool, nil, true); !retry {
			if err == nil {
				err = errNoMember
			}
			pr.because(rstcause.QueueFull)
			return nil, err
		}
	}
	for attempt := 0; attempt <= tries; attempt++ {
		var m *state.Member
		var by state.ChosenBy
		m, pool, by = pr.choose(pool, want, attempt, failed, &pd, persists)
		if m == nil {
			if retry, err := pr.queueTurn(&queued, pool, failed, false); retry {
				attempt--
				continue
			} else if err != nil {
				return nil, err
			}
			pr.orBecause(rstcause.NoServer)
			return nil, errNoMember
		}
		queueServed(&queued)
		ps = pool.Snap.Load()
		dst := pr.target(m)
		if rs != nil {
			pr.logDecision(pool, m, by, dst) // rulelb.go
		}
		if rs != nil && pr.handles(config.EventLBSelected) {
			rs.mu.Lock()
			rs.pick, rs.Changed = lbPick{pool: pool, addr: dst}, false
			rs.mu.Unlock()
			ok := pr.runEvent(config.EventLBSelected)
			rs.mu.Lock()
			rs.pick = lbPick{}
			changed := rs.Changed
			rs.mu.Unlock()
			if !ok {
				m.Release()
				return nil, errFlowEnded
			}
			if changed && rs.lbRounds < 3 {
				// The rule chose again: follow its choice instead.
				rs.lbRounds++
				m.Release()
				return pr.connect()
			}
		}
		if rs != nil && !pr.serverInit(pool, dst) {
			m.Release()
			return nil, errFlowEnded
		}
		// lsn.go; errLSN: no translation; errFlowEnded: SA_PICKED ended the flow
		sc, err := pr.dialServer(dst, pool)
		if err == errLSN || err == errSNAT || err == errFlowEnded {
			m.Release()
			return nil, err
		}
		if err == nil {
			serverConnOpts(ps, sc) // tcpopts.go
			m.ConnectSucceeded()
			pr.clearCause() // rstcause.go
			s := pr.newServerConn()
			s.conn = sc
			pr.opened(s, m, pool, ps, rawsock.AddrPortOf(sc.LocalAddr()), dst, &pd, persists)
			return pr.attach(s)
		}
		m.ConnectFailed()
		m.Release()
		failed = append(failed, m)
		pr.because(dialCause(err))
	}
	return nil, errConnect
}

// choose picks the member for one connect attempt and reserves a
// connection on it (see choose): on the first attempt the member a rule
// named (passed over only when forced offline) or, without one, the
// persisted member (past its limits with override-connection-limit);
// then the pool's balancing, skipping members that failed.
func (fl *flow) choose(pool *state.Pool, want netip.AddrPort, attempt int, failed []*state.Member, pd *persistDecision, persists bool) (*state.Member, *state.Pool, state.ChosenBy) {
	var t state.Target
	var persisted func() (*state.Pool, *state.Member)
	if attempt == 0 {
		switch {
		case want.IsValid():
			t = state.Target{Addr: want, Accept: state.AvailDown}
		case fl.sessionDir.IsValid():
			// The session directory's member, when it is in the pool and
			// may take persisted clients; else as without it.
			t = state.Target{Addr: fl.sessionDir, Accept: state.AvailDisabled}
			if persists {
				persisted = func() (*state.Pool, *state.Member) { return fl.persistLookup(pd, pool) }
			}
		case persists:
			persisted = func() (*state.Pool, *state.Member) { return fl.persistLookup(pd, pool) }
		}
	}
	how := state.Chooser{Mode: fl.modeOverride(), Reserve: true,
		Override: persists && pd.prof != nil && pd.prof.OverrideConnectionLimit}
	how.Limits, how.Holds = fl.ruleLimits()
	if how.Limits.VirtualOver(fl.vs, how.Holds) {
		return nil, pool, state.ByBalancing // LB::connlimit virtual (rules/commands_connlimit.go)
	}
	return state.Choose(pool, t, persisted, failed, how)
}

// opened records a server connection from local to member m at dst: the
// pool's and member's counts, the flow's leg, and the persistence record.
func (fl *flow) opened(s *serverConn, m *state.Member, pool *state.Pool, ps *state.PoolSnap, local, dst netip.AddrPort, pd *persistDecision, persists bool) {
	s.member, s.pool = m, pool
	s.clock = m.ResponseClock()
	pool.Stats.TryOpen(0)
	pool.Stats.Requests.Add(1)
	m.Stats.Requests.Add(1)
	m.Node.Stats.Requests.Add(1)
	s.fastest = ps.Alg == lb.Fastest
	s.leg = flows.Leg{Client: local, Server: dst, Pool: pool.Name, Member: m.Name, Owner: m}
	if persists {
		fl.persistSave(pd, pool, m)
	}
}

// dialDirect opens the server side to an address a rule named (node,
// forward): no pool, no member accounting. Port 0 keeps the port the
// client connected to.
func (pr *proxied) dialDirect(a netip.AddrPort) (*serverConn, error) {
	if a.Port() == 0 {
		a = netip.AddrPortFrom(a.Addr(), pr.Local.Port())
	}
	if pr.handles(config.EventLBSelected) {
		rs := pr.rs
		rs.mu.Lock()
		rs.pick, rs.Changed = lbPick{addr: a}, false
		rs.mu.Unlock()
		ok := pr.runEvent(config.EventLBSelected)
		rs.mu.Lock()
		rs.pick = lbPick{}
		changed := rs.Changed
		rs.mu.Unlock()
		if !ok {
			return nil, errFlowEnded
		}
		if changed && rs.lbRounds < 3 {
			rs.lbRounds++
			return pr.connect()
		}
	}
	if !pr.serverInit(nil, a) {
		return nil, errFlowEnded
	}
	var c *net.TCPConn
	var err error
	if a == pr.Local && pr.snap.Cfg.IPForward {
		// ip-forward: the destination is an address of this host (the
		// steering sees only those), so the connection leaves from that
		// address, whatever the source-address-translation or lsn pool
		// [M]: the steering passes such a connection over (dataplane/
		// internal/sklookup), and it reaches the address's own listener
		// instead of coming back to the virtual.
		c, err = pr.e.DialSide(netip.AddrPortFrom(a.Addr(), 0), a, pr.serverSide())
	} else {
		// A destination the rule computed may be in what a wildcard or
		// network virtual steers, where the commit could not pass it
		// over (dataplane's ownDests): passed over until the connect is
		// done, the SYN's only lookup (passPort).
		release := pr.e.passOver(a, false)
		c, err = pr.dialServer(a, nil) // lsn.go: from the lsn pool too
		release()
		if err == errLSN || err == errSNAT || err == errFlowEnded {
			return nil, err
		}
	}
	if err != nil {
		return nil, errConnect
	}
	s := pr.newServerConn()
	s.conn = c
	s.leg = flows.Leg{Client: rawsock.AddrPortOf(c.LocalAddr()), Server: a}
	return pr.attach(s)
}

// passOver is env.Pass: the steering passes over ap until release; a
// release that does nothing without steering (or without env.Pass).
func (e *Engine) passOver(ap netip.AddrPort, udp bool) (release func()) {
	if e.env.Pass == nil {
		return noRelease
	}
	return e.env.Pass(ap, udp)
}

func noRelease() {}

// serverInit runs SERVER_INIT, when a rule handles it, just before a
// server connection's SYN to dst (of pool; nil: a node): LB::server
// names it, as in LB_SELECTED, and what its snat or snatpool chose is
// the source pr.source then takes. False: the rule ended the flow.
func (pr *proxied) serverInit(pool *state.Pool, dst netip.AddrPort) bool {
	if !pr.handles(config.EventServerInit) {
		return true
	}
	rs := pr.rs
	rs.mu.Lock()
	rs.pick = lbPick{pool: pool, addr: dst}
	rs.mu.Unlock()
	ok := pr.runEvent(config.EventServerInit)
	rs.mu.Lock()
	rs.pick = lbPick{}
	rs.mu.Unlock()
	return ok
}

// newServerConn returns the flow's inline server record the first time,
// a fresh one after a detach (the old one may still be read by its loop).
func (pr *proxied) newServerConn() *serverConn {
	if pr.first.conn == nil {
		return &pr.first
	}
	return &serverConn{}
}

// attach makes s the flow's server side, unless the flow ended meanwhile
// (deleted, idle) — then the new connection is closed at once.
func (pr *proxied) attach(s *serverConn) (*serverConn, error) {
	pr.AddLeg(&s.leg)
	pr.srv.Store(s)
	if pr.ended.Load() {
		reset(s.conn)
		return nil, errFlowEnded
	}
	return s, nil
}

// target is where the server side connects for member m (see
// translated).
func (fl *flow) target(m *state.Member) netip.AddrPort {
	if fl.rs != nil {
		return fl.translated(m.Cfg.Load().Addr) // rulelb.go
	}
	return state.Translate(fl.snap.Cfg, m.Cfg.Load().Addr, fl.Local)
}

// source is the server side's source for the flow's connection to dst,
// a member of pool (nil: a node a rule named), with a rule's snat or
// snatpool decision if any (state.SNATSourceHeld). The flow holds the
// translation address until it ends or dials again (fl.snat), and takes
// its ltm snat-translation's tcp-idle-timeout instead of the profile's.
// Every translation address at its connection limit (Err) records the
// reset's cause. Without a limit or idle timeout: two nil tests.
func (fl *flow) source(dst netip.AddrPort, pool *state.Pool) state.SNATHeld {
	var rule *state.SNATChoice
	if fl.rs != nil && fl.rs.SNAT.Set {
		rule = &fl.rs.SNAT
	}
	h := state.SNATSourceHeldOn(fl.vs, fl.snap, fl.Client, fl.Local, dst, rule, pool, int(fl.Arrival))
	if h.Hold != nil || fl.snat.Load() != nil {
		if old := fl.snat.Swap(h.Hold); old != nil {
			old.Release()
		}
		if h.Hold != nil {
			if d, ok := h.Hold.TCPIdle(); ok {
				fl.SetIdleTimeout(d)
			}
		}
	}
	if h.Err != nil {
		fl.because(rstcause.SNATLimit)
	}
	return h
}

// extraSource is source for a server connection beside the flow's own
// (a diameter profile's other members): the translation address is
// held by that connection (serverConn.snat), not the flow, and the
// flow's idle timeout is left alone.
func (fl *flow) extraSource(dst netip.AddrPort, pool *state.Pool) state.SNATHeld {
	var rule *state.SNATChoice
	if fl.rs != nil && fl.rs.SNAT.Set {
		rule = &fl.rs.SNAT
	}
	return state.SNATSourceHeldOn(fl.vs, fl.snap, fl.Client, fl.Local, dst, rule, pool, int(fl.Arrival))
}

// dialSource is DialSide from the held choice h: exactly its port for
// source-port preserve-strict (errSNAT, the reset's cause recorded, when
// the port is in use), errSNAT at once when every translation address
// is at its limit.
func (pr *proxied) dialSource(h state.SNATHeld, dst netip.AddrPort) (*net.TCPConn, error) {
	if h.Err != nil {
		return nil, errSNAT
	}
	if !h.Strict {
		return pr.e.DialSide(h.Src, dst, pr.serverSide())
	}
	c, err := pr.e.dialExact(h.Src, dst, pr.serverSide(), false) // lsn.go
	if errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL) {
		pr.because(rstcause.SNATPort)
		return nil, errSNAT
	}
	return c, err
}

// Dial connects to dst from src (see source), keeping src's port (if not
// 0) when the kernel allows and falling back to any port otherwise; the
// connect is given up after the plane's connect timeout (see
// connectExpired).
func (e *Engine) Dial(src, dst netip.AddrPort) (*net.TCPConn, error) {
	return e.DialSide(src, dst, nil)
}

// DialSide is Dial with a tcp profile's server side set on the socket
// before its SYN leaves (see rawsock.DialSide), and its connect timeout
// (fastl4's tcp-handshake-timeout) instead of the plane's when it has
// one.
func (e *Engine) DialSide(src, dst netip.AddrPort, side *sockopt.Side) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: side.Timeout(e.env.ConnectTimeout), KeepAlive: -1}
	if side != nil && side.MPTCP {
		d.SetMultipathTCP(true) // falls back to TCP where the kernel refuses
	}
	keep := src.Port() != 0
	d.Control = dialControl(src, dst, keep, side)
	c, err := d.DialContext(context.Background(), "tcp", dst.String())
	if err != nil && keep && (errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EADDRINUSE)) {
		d.Control = dialControl(src, dst, false, side)
		c, err = d.DialContext(context.Background(), "tcp", dst.String())
	}
	if err != nil {
		return nil, err
	}
	return c.(*net.TCPConn), nil
}

// dialControl binds the new socket to src (when valid) and starts the
// connect itself. To a server on this host the kernel completes the whole
// handshake inside that connect(2), so when the net package then calls
// connect it gets success at once and skips parking the goroutine until
// the socket is writable and asking for SO_ERROR; to a remote server it
// gets EALREADY and waits as usual. The call does not enter the
// scheduler's syscall state (see rawsock.Read): it never blocks, but running
// the handshake makes it long enough for the runtime to hand the
// processor to another thread.
func dialControl(src, dst netip.AddrPort, keepPort bool, side *sockopt.Side) func(string, string, syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		var cerr error
		err := rc.Control(func(fd uintptr) {
			side.Apply(int(fd))
			side.ApplyPeer(int(fd), dst.Addr())
			if src.IsValid() {
				if cerr = rawsock.BindTo(int(fd), src, keepPort); cerr != nil {
					return
				}
			}
			cerr = rawsock.StartConnect(fd, dst)
		})
		if err != nil {
			return err
		}
		return cerr
	}
}

const bufSize = 16 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// spliceChunk is how much a bulk transfer moves through the kernel's
// zero-copy path between counter updates.
const spliceChunk = 1 << 20

// sockReader reads a socket without holding a buffer while it is idle: it
// waits for readability first and only then takes a pooled buffer. The
// collecting loops of flows with rules use it; plain copy loops inline the
// same steps to stay allocation-free.
type sockReader struct {
	nc  net.Conn // set: read through it (TLS), blocking, instead of rc
	rc  syscall.RawConn
	buf *[]byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

func (r *sockReader) init(c *net.TCPConn) error {
	if r.nc != nil {
		return nil
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	r.rc = rc
	r.fn = func(fd uintptr) bool {
		r.buf = bufPool.Get().(*[]byte)
		for {
			r.n, r.err = syscall.Read(int(fd), *r.buf)
			if r.err != syscall.EINTR {
				break
			}
		}
		if r.err == syscall.EAGAIN {
			bufPool.Put(r.buf)
			r.buf = nil
			return false
		}
		return true
	}
	return nil
}

// read returns the next bytes, valid until done; io.EOF at the peer's FIN.
func (r *sockReader) read() ([]byte, error) {
	if r.nc != nil {
		r.buf = bufPool.Get().(*[]byte)
		n, err := r.nc.Read(*r.buf)
		if n > 0 {
			return (*r.buf)[:n], nil // an error comes again with the next read
		}
		r.done()
		if err == nil {
			err = io.ErrNoProgress
		}
		return nil, err
	}
	err := r.rc.Read(r.fn)
	if err == nil {
		err = r.err
		if err == nil && r.n <= 0 {
			err = io.EOF
		}
	}
	if err != nil {
		r.done()
		return nil, err
	}
	return (*r.buf)[:r.n], nil
}

// done gives the buffer back.
func (r *sockReader) done() {
	if r.buf != nil {
		bufPool.Put(r.buf)
		r.buf = nil
	}
}

// copy moves bytes from src to dst until either side ends, then counts the
// leg as finished.
func (pr *proxied) copy(src, dst *net.TCPConn, up bool, sc *serverConn) {
	defer pr.finishLeg()
	if !up && sc.helloBack && !pr.serverHello(sc) { // sslpersist.go
		pr.lost(sc)
		return
	}
	if pr.tlsOn(sc) {
		pr.copyLoopTLS(up, sc, nil)
		return
	}
	pr.copyLoop(src, dst, up, sc, nil)
}

// copyLoop moves bytes from src to dst until either side ends. up is the
// client-to-server direction. While idle it holds no buffer; a read that
// fills the buffer switches to splice for the rest of the burst. st, for
// flows with rules, is src's side: when a rule turns collection on, the
// bytes just read go to the rule instead and copyLoop returns true.
func (pr *proxied) copyLoop(src, dst *net.TCPConn, up bool, sc *serverConn, st *sideState) bool {
	if pr.streams != nil {
		return pr.copyFiltered(src, dst, up, sc, st) // stream.go
	}
	rc, err := src.SyscallConn()
	if err != nil {
		pr.lost(sc)
		return false
	}
	if idle := pr.IdleTimeout(); idle > 0 {
		src.SetReadDeadline(idleDeadline(idle, time.Now().UnixNano()))
	}
	// The read function is a local closure over locals, not a sockReader,
	// so that a plain flow's copy loops allocate nothing.
	var (
		buf  *[]byte
		n    int
		rerr error
	)
	readFn := func(fd uintptr) bool {
		buf = bufPool.Get().(*[]byte)
		for {
			n, rerr = rawsock.Read(int(fd), *buf)
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			bufPool.Put(buf)
			buf = nil
			return false
		}
		return true
	}
	wc, err := dst.SyscallConn()
	if err != nil {
		pr.lost(sc)
		return false
	}
	var (
		w    int
		werr error
	)
	low := pr.lowSide(up) // proxy-buffer-low of dst's side, nil: none (tcpopts.go)
	writeFn := func(fd uintptr) bool {
		if werr == errLowWait { // woken below proxy-buffer-low
			werr = nil
			low.LowResume(int(fd))
		}
		for w < n {
			k, err := rawsock.Write(int(fd), (*buf)[w:n])
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				if err != syscall.EAGAIN {
					werr = err
				} else if low != nil {
					// dst is full: wait here, woken below low.
					werr = errLowWait
					low.LowWait(int(fd))
					return false
				}
				break
			}
			w += k
		}
		return true
	}
	var lr *io.LimitedReader
	for {
		err := rc.Read(readFn)
		if err != nil {
			if buf != nil {
				bufPool.Put(buf)
				buf = nil
			}
			if errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src) {
				continue
			}
			pr.lost(sc)
			return false
		}
		if rerr != nil || n <= 0 {
			bufPool.Put(buf)
			buf = nil
			if rerr == nil {
				if c := pr.snap.Cfg.TCPClose; c != nil && pr.closeOnFIN(c, up) { // tcpclose.go
					return false
				}
				// EOF: pass the half-close on. When the other direction of
				// a plain flow has ended already, finish closes dst next
				// and close(2) sends the same FIN (nothing is left unread
				// on dst: its loop read dst's FIN), so shutdown(2) would
				// be a wasted call on every connection.
				if !pr.gone(sc) && pr.passFIN() {
					wc.Control(rawsock.ShutWrite)
				}
				return false
			}
			pr.peerReset(!up)
			pr.lost(sc) // reset (or error) from src: reset the other side
			return false
		}
		if up && pr.rs != nil && pr.rs.srvOn.Load() {
			pr.joinSrvClones() // clone.go: SERVER_DATA's
		}
		if up && pr.clone != nil {
			pr.cloneRead((*buf)[:n], st) // clone.go
		}
		if st != nil && st.on.Load() {
			pr.countRead(n, up, sc)
			rs := pr.rs
			rs.mu.Lock()
			rs.collectBytes(st, up, (*buf)[:n])
			rs.mu.Unlock()
			bufPool.Put(buf)
			buf = nil
			return true
		}
		pr.count(n, up, sc)
		if b := pr.bwc.Load(); b != nil {
			b.WaitDir(n, up) // bwc.go
		}
		if up {
			if ip := pr.ingress.Load(); ip != nil {
				ip.Wait(n) // bwc.Ingress
			}
		}
		w, werr = 0, nil
		if err := wc.Write(writeFn); err != nil {
			werr = err
		}
		if werr == nil && w < n {
			_, werr = dst.Write((*buf)[w:n])
		}
		full := n == len(*buf)
		bufPool.Put(buf)
		buf = nil
		if werr != nil {
			pr.peerReset(up)
			pr.lost(sc)
			return false
		}
		if full && (!up || pr.clone == nil && (pr.rs == nil || !pr.rs.clones)) && low == nil && pr.bwc.Load() == nil && (!up || pr.ingress.Load() == nil) { // a clone copies every client byte (a rule may add one on the client's goroutine, so the member's side does not read it), proxy-buffer-low, a bandwidth controller and an ingress limit wait here: no splice
			if lr == nil {
				lr = &io.LimitedReader{}
			}
			for {
				lr.R, lr.N = src, spliceChunk
				m, err := dst.ReadFrom(lr)
				if m > 0 {
					pr.count(int(m), up, sc)
				}
				if err != nil {
					if errors.Is(err, os.ErrDeadlineExceeded) && (m > 0 || pr.stillActive(src)) {
						pr.armIdle(src, pr.LastActive())
						continue
					}
					pr.lost(sc)
					return false
				}
				if m < spliceChunk {
					break // EOF or a pause: back to the buffer loop
				}
			}
		}
	}
}

// gone reports whether sc is no longer the flow's server side (a rule
// detached it): its loop then ends without touching the client.
func (pr *proxied) gone(sc *serverConn) bool {
	return sc != nil && pr.srv.Load() != sc
}

// lost ends the flow with resets after a failure on sc's loop, unless sc
// was detached on purpose.
func (pr *proxied) lost(sc *serverConn) {
	if !pr.gone(sc) {
		pr.end(true)
	}
}

// stillActive decides on an expired read deadline: if the flow saw traffic
// within its idle timeout (on either side) the deadline moves on; otherwise
// the flow is idle and is reset.
func (pr *proxied) stillActive(src *net.TCPConn) bool {
	last, idle := pr.LastActive(), pr.IdleTimeout()
	if idle <= 0 {
		src.SetReadDeadline(time.Time{}) // a rule took the timeout away
		return true
	}
	if idleExpired(idle, last, time.Now().UnixNano()) {
		pr.because(rstcause.IdleTimeout)
		pr.idleEnd() // tcpopts.go
		return false
	}
	src.SetReadDeadline(idleDeadline(idle, last))
	return true
}

// armIdle sets c's read deadline to when the flow, last active at last,
// becomes idle, or clears it when the flow has no idle timeout.
func (fl *flow) armIdle(c net.Conn, last int64) {
	if idle := fl.IdleTimeout(); idle > 0 {
		c.SetReadDeadline(idleDeadline(idle, last))
	} else {
		c.SetReadDeadline(time.Time{})
	}
}

// count adds n bytes moved in one direction to the flow, its virtual, and
// the server side's leg, member, pool and node.
func (pr *proxied) count(n int, up bool, sc *serverConn) {
	pr.countAt(n, up, sc, time.Now().UnixNano())
}

// countAt is count with the time given (an event loop's batch time).
func (fl *flow) countAt(n int, up bool, sc *serverConn, now int64) {
	pk := state.Packets(n)
	fl.Touch(now)
	if up {
		fl.clientIn(n, pk)
		sc.out(n, pk)
		return
	}
	sc.in(n, pk)
	fl.clientOut(n, pk)
}

// countRead counts n bytes read but held for a rule: the client side (up)
// or the server side's inbound half.
func (pr *proxied) countRead(n int, up bool, sc *serverConn) {
	pr.Touch(time.Now().UnixNano())
	if up {
		pr.clientIn(n, state.Packets(n))
	} else {
		sc.in(n, state.Packets(n))
	}
}

func (fl *flow) clientIn(n int, pk uint64) {
	fl.BytesIn.Add(uint64(n))
	fl.PktsIn.Add(pk)
	fl.vs.Stats.In(n, pk)
}

func (fl *flow) clientOut(n int, pk uint64) {
	fl.BytesOut.Add(uint64(n))
	fl.PktsOut.Add(pk)
	fl.vs.Stats.Out(n, pk)
}

// out counts bytes sent to the server.
func (sc *serverConn) out(n int, pk uint64) {
	sc.leg.BytesOut.Add(uint64(n))
	sc.leg.PktsOut.Add(pk)
	m := sc.member
	if m == nil {
		return
	}
	m.Stats.Out(n, pk)
	sc.pool.Stats.Out(n, pk)
	m.Node.Stats.Out(n, pk)
	if sc.fastest && sc.awaiting.CompareAndSwap(false, true) {
		m.Node.Outstanding.Add(1)
	}
	if sc.clock != nil {
		sc.clock.Sent(time.Now().UnixNano())
	}
}

// in counts bytes received from the server.
func (sc *serverConn) in(n int, pk uint64) {
	sc.leg.BytesIn.Add(uint64(n))
	sc.leg.PktsIn.Add(pk)
	m := sc.member
	if m == nil {
		return
	}
	m.Stats.In(n, pk)
	sc.pool.Stats.In(n, pk)
	m.Node.Stats.In(n, pk)
	if sc.fastest && sc.awaiting.CompareAndSwap(true, false) {
		m.Node.Outstanding.Add(-1)
	}
	if sc.clock != nil {
		sc.clock.Answered(time.Now().UnixNano())
	}
}

// EndFlow implements flows.Ender with end.
func (pr *proxied) EndFlow(reset bool) { pr.end(reset) }

// end closes both sides: with resets (reset true), or, for drop, the server
// side with a reset and the client side quietly.
func (pr *proxied) end(resetBoth bool) {
	if !pr.ended.CompareAndSwap(false, true) {
		return
	}
	pr.rst(resetBoth, true)
	if sc := pr.srv.Load(); sc != nil {
		reset(sc.conn)
	}
	if resetBoth {
		reset(pr.client)
	} else {
		pr.client.Close()
	}
}

// closeGraceful ends the flow with a FIN to the client (TCP::close, drop,
// or a rule that answered by itself). What the client still sends is read
// and discarded for a moment, so that closing with unread bytes does not
// turn the FIN into a reset that could overtake the rule's answer. A TLS
// client is sent close_notify first; with client-ssl's alert-timeout the
// moment is that long, and a client that has not closed by then is
// reset, as on the flows' other TLS closes (awaitAlert).
func (pr *proxied) closeGraceful() {
	if !pr.ended.CompareAndSwap(false, true) {
		return
	}
	if sc := pr.srv.Load(); sc != nil {
		sc.conn.Close()
	}
	c := pr.client
	wait, alert := 2*time.Second, false
	var held *state.SSLCounters // taken now: the flow lets go of it as it retires
	if pr.ctls != nil && !pr.uncleanTo(rules.ClientSide) {
		pr.ctls.CloseWrite() // close_notify before the FIN
		if d := pr.snap.Cfg.TLS.ClientAlert; d > 0 {
			wait, alert, held = d, true, pr.cssl.Counters()
		}
	}
	if c.CloseWrite() != nil {
		c.Close()
		return
	}
	go func() {
		c.SetReadDeadline(time.Now().Add(wait))
		_, err := io.CopyN(io.Discard, c, 1<<20)
		if alert && errors.Is(err, os.ErrDeadlineExceeded) {
			// The client never answered close_notify (alert-timeout).
			if held != nil {
				held.AlertTimeouts.Add(1)
			}
			pr.because(rstcause.AlertTimeout)
			pr.rst(true, false)
			reset(c)
			return
		}
		c.Close()
	}()
}

// passFIN says whether a direction that read its source's FIN passes
// the half-close on to its destination: always with rules; otherwise
// only while the other direction still runs. When the other has read
// its FIN too, finish closes both sockets next and close(2) sends the
// FIN (or, with time-wait 0, the reset): counting the FINs, not the
// legs, keeps that so when the second FIN comes before the first leg
// counted itself finished.
func (pr *proxied) passFIN() bool {
	return pr.rs != nil || (pr.legsLeft.Load() != 1 && pr.eofs.Add(1) == 1)
}

func (pr *proxied) finishLeg() {
	if pr.legsLeft.Add(-1) == 0 {
		pr.finish(false)
	}
}

// finish releases the flow's counts and table entry; resetClient says how a
// flow that never got a server side is closed.
func (pr *proxied) finish(resetClient bool) {
	if pr.ended.CompareAndSwap(false, true) {
		if resetClient {
			pr.rst(true, false)
			reset(pr.client)
		} else {
			pr.client.Close()
		}
		if sc := pr.srv.Load(); sc != nil {
			sc.conn.Close()
		}
	}
	if t := pr.alert.Load(); t != nil {
		t.Stop()
	}
	if pr.rs != nil {
		pr.endRules()
		if pr.rs.srvOn.Load() {
			pr.joinSrvClones() // clone.go: closed with the flow's
		}
		if f := pr.rs.back.Swap(nil); f != nil {
			f.Close() // clone.go, startBackClones
		}
	}
	if b := pr.bwc.Swap(nil); b != nil {
		b.Release()
	}
	pr.retire()
}

// retire gives back what a closed flow held: its persistence record's
// refresh, its table entry, and the virtual's, pool's and member's counts.
func (fl *flow) retire() {
	if fl.clone != nil {
		fl.clone.Close()
	}
	fl.persistDone()
	if t := fl.lsn.Swap(nil); t != nil {
		t.Release()
	}
	if a := fl.snat.Load(); a != nil {
		if a = fl.snat.Swap(nil); a != nil {
			a.Release()
		}
	}
	if nf := fl.snap.Cfg.NetFlow; nf != nil { // netflow profile (dataplane/netflow)
		nf.Export(&fl.Flow)
	}
	fl.e.env.Table.Remove(&fl.Flow)
	fl.vs.Leave(fl.snap.Addr)
	fl.vs.Durs.Note(uint64(time.Since(fl.Created()) / time.Millisecond))
	fl.cssl.Release()
	if sc := fl.srv.Load(); sc != nil {
		sc.release()
	}
}

// release gives back the member's and pool's connection counts.
func (sc *serverConn) release() {
	sc.ssl.Release()
	if sc.xlat != nil {
		sc.xlat.Release()
		sc.xlat = nil
	}
	if sc.snat != nil {
		sc.snat.Release()
		sc.snat = nil
	}
	if m := sc.member; m != nil {
		sc.clock.Stop()
		m.Release()
		sc.pool.Stats.Close()
		if sc.fastest && sc.awaiting.Load() {
			m.Node.Outstanding.Add(-1)
		}
	}
}
