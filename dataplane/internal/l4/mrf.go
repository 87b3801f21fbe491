package l4

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/snatobj"
	"github.com/openltm/openltm/rules"
)

// A generic protocol and router profile on a plain TCP virtual make its
// flows clients of the virtual's message router (dataplane/mrf), served
// on goroutines by serveMRF: the client's stream is cut into messages on
// the protocol's message-terminator, each message runs
// GENERICMESSAGE_INGRESS and MR_INGRESS and is routed (MR::message route,
// else the router's routes, else the virtual's pool) to a peer over a
// connection its connection-mode shares across the virtual's clients or
// keeps for this one; answers, and messages a rule sends back
// (MR::return), run MR_EGRESS and GENERICMESSAGE_EGRESS before they reach
// the client; a message that could not be delivered runs MR_FAILED
// (MR::retry routes it again, up to max-retries). Peer connections are
// opened from the host's own address, or as the peer's transport-config
// says (its source-address-translation and tcp profile), or from a
// translation of the virtual's lsn pool (DialLSN), and are not
// flows of the connection table: they outlive the client connections
// that use them [M]. A message over max-message-size resets the client.
// The virtual's counts (mrf.Counters) live in its profile counters, so
// a commit that makes a new router keeps them.

// serveMRF runs a client connection of a message-routing virtual; head is
// what an earlier virtual read of it (handoff.go).
func (pr *proxied) serveMRF(head []byte) {
	defer pr.finishLeg()
	cfg := pr.snap.Cfg.MRF
	r := cfg.RouterFor(func() *mrf.Router { return pr.e.mrfRouter(pr.vs.Name, cfg, &pr.vs.Prof.MRF) })
	var w msgWriter
	write := func(b []byte) error {
		if !w.write(pr, false, nil, b) {
			return net.ErrClosed
		}
		return nil
	}
	var hooks mrf.Hooks
	var mh *mrfHooks
	if pr.rs != nil {
		if prog := irules.Program(pr.rules); prog != nil && (irules.HandlesMRF(prog) || mqttHandled(prog)) {
			mh = &mrfHooks{pr: pr, prog: prog, r: r, transport: "virtual " + pr.vs.Name, proto: irules.MRFProtocol(cfg), clones: prog.Clones()}
			hooks = mh
		}
	}
	s := r.NewSession(write, hooks)
	defer s.Close()
	// The client's address keys source-address persistence, and names
	// the client of a dynamic route (show ... detail): once a
	// connection, only for those.
	if _, dyn := cfg.Proto.(mrf.DynamicRouter); (dyn || cfg.Persist == mrf.PersistSrcAddr) && pr.client != nil {
		s.SetClient(rawsock.AddrPortOf(pr.client.RemoteAddr()).Addr())
	}
	if cfg.Translates() { // an lsn pool: the client is the subscriber of the peer connections its messages open
		s.SetSubscriber(pr.Client)
	}
	var src io.Reader = pr.client
	if len(head) > 0 {
		src = io.MultiReader(bytes.NewReader(head), pr.client)
	}
	rd := mrf.Reader{R: src, Term: cfg.Term, Max: cfg.Max}
	if cfg.Proto != nil {
		rd.F = cfg.Proto.NewFramer()
	}
	for {
		data, err := pr.readMsg(pr.client, rd.Next) // msgflow.go
		if err != nil {
			switch {
			case err == errIdle:
			case errors.Is(err, io.EOF):
				if mh, ok := hooks.(*mrfHooks); ok {
					mh.shutdown(s)
				}
				// The answers still due go out before the FIN.
				d := pr.IdleTimeout()
				if d <= 0 {
					d = mrfDrainMax
				}
				s.Drain(d)
				pr.closeGraceful()
			default:
				if errors.Is(err, mrf.ErrTooLarge) {
					r.C.Oversized.Add(1)
				}
				pr.end(true)
			}
			return
		}
		pr.countRead(len(data)+len(cfg.Term), true, nil)
		if pr.clone != nil {
			// clone.go: each message as the client sent it, to clientside
			// and serverside pools alike (no one member gets it) [M].
			pr.clone.Both(data)
			pr.clone.Both(cfg.Term)
		}
		if handled, ok := s.Local(data); handled {
			if !ok {
				s.Drain(mrfLocalDrain)
				pr.closeGraceful()
				return
			}
			continue
		}
		m := s.Message(data)
		if mh != nil && mh.clones {
			// A clone in its ingress events starts from it (clone.go).
			mh.inHand.Store(&mrfInHand{m: m, raw: data, term: cfg.Term})
		}
		ok := s.Handle(m)
		if mh != nil && mh.clones {
			mh.inHand.Store(nil)
		}
		if !ok {
			return
		}
	}
}

// mrfRouters are the running routers by engine and virtual: a commit
// that leaves a virtual's message routing as it was keeps its router and
// peer connections; one that changes it closes the old router's
// connections (their requests in flight fail) [M].
var mrfRouters = struct {
	sync.Mutex
	m map[mrfKey]*mrf.Router
}{m: map[mrfKey]*mrf.Router{}}

type mrfKey struct {
	e       *Engine
	virtual string
}

// MRFRouter is the router of virtual under cfg, counting in c: the one
// a UDP virtual's flows share (internal/udp/mrf.go), kept and closed
// with the TCP virtuals' (MRFApply).
func (e *Engine) MRFRouter(virtual string, cfg *mrf.Config, c *mrf.Counters) *mrf.Router {
	return cfg.RouterFor(func() *mrf.Router { return e.mrfRouter(virtual, cfg, c) })
}

// mrfRouter is the router of virtual under cfg.
func (e *Engine) mrfRouter(virtual string, cfg *mrf.Config, c *mrf.Counters) *mrf.Router {
	k := mrfKey{e, virtual}
	mrfRouters.Lock()
	defer mrfRouters.Unlock()
	old := mrfRouters.m[k]
	if old != nil && old.Config().Same(cfg) {
		return old
	}
	if old != nil {
		go old.Close()
	}
	r := mrf.NewRouter(cfg, &mrfEnv{e: e, virtual: virtual}, c)
	mrfRouters.m[k] = r
	return r
}

// mrfEnv gives the router the virtual's pools and member connections.
type mrfEnv struct {
	e       *Engine
	virtual string
}

func (x *mrfEnv) pool(name string) *state.Pool {
	if x.e.env.Pools == nil || name == "" {
		return nil
	}
	return x.e.env.Pools().Named(x.virtual, name)
}

// Pick chooses a member of pool for a new peer connection by the pool's
// method, skipping members already tried for the message.
func (x *mrfEnv) Pick(pool string, avoid []netip.AddrPort) (netip.AddrPort, bool) {
	p := x.pool(pool)
	if p == nil {
		return netip.AddrPort{}, false
	}
	var skip []*state.Member
	for _, a := range avoid {
		if m := state.MemberAt(p, a); m != nil {
			skip = append(skip, m)
		}
	}
	m, _, _ := state.Choose(p, state.Target{}, nil, skip, state.Chooser{})
	if m == nil {
		return netip.AddrPort{}, false
	}
	return m.Cfg.Load().Addr, true
}

// Dial opens a peer connection from src (a transport-config's SNAT)
// with its tcp settings, counted on the member while it lasts.
func (x *mrfEnv) Dial(pool string, addr netip.AddrPort, src netip.Addr, tcp *sockopt.Side) (net.Conn, func(), error) {
	return x.dial(pool, addr, true, func() (net.Conn, error) {
		var from netip.AddrPort
		if src.IsValid() {
			from = netip.AddrPortFrom(src, 0)
		}
		return x.e.DialSide(from, addr, tcp)
	})
}

// snatAddr is the running commit's Addr of a, an address of the
// snatpool pool (a transport-config's), as the virtual's snapshot has
// it; nil when the virtual or the pool is gone (a commit removed them):
// the address is then given uncounted. A walk over the pool's
// addresses, per peer connection.
func (x *mrfEnv) snatAddr(pool string, a netip.Addr) *snatobj.Addr {
	snap := x.snap()
	if snap == nil {
		return nil
	}
	for _, ad := range snap.SNATPools[pool] {
		if ad.Addr == a {
			return ad
		}
	}
	return nil
}

// snap is the router's virtual's running snapshot; nil when the
// virtual is gone.
func (x *mrfEnv) snap() *state.VirtualSnap {
	if x.e.env.Virtual == nil {
		return nil
	}
	v := x.e.env.Virtual(x.virtual)
	if v == nil {
		return nil
	}
	return v.Snap.Load()
}

// HoldSNATAddr counts and holds a, the source of a peer connection no
// snatpool gave (a rule's MR::message snat, a transport-config's
// automap, a connection back), through the commit's snatobj.Index when
// its ltm snat-translation sets a connection-limit or an idle timeout
// (mrf.SNATAddrHolder): false when a holds its limit (counted refused);
// an address with an ltm snat-translation without a setting is counted,
// not held. With no ltm snat-translation anywhere, the Index is nil: an
// atomic load and a nil test, nothing counted.
func (x *mrfEnv) HoldSNATAddr(a netip.Addr) (mrf.SourceHold, bool) {
	if x.e.env.SNATIndex == nil {
		return nil, true
	}
	idx := x.e.env.SNATIndex()
	if idx == nil {
		return nil, true
	}
	h, err := idx.Take(a, true, true)
	if err != nil {
		return nil, false
	}
	if h == nil {
		return nil, true
	}
	return h, true
}

// HoldSNAT counts a peer connection given a, an address of the
// transport-config's snatpool pool, against its ltm snat-translation,
// holding it when that has a limit or an idle timeout (mrf.SNATHolder):
// false when it holds its connection-limit.
func (x *mrfEnv) HoldSNAT(pool string, a netip.Addr) (mrf.SourceHold, bool) {
	ad := x.snatAddr(pool, a)
	if ad == nil {
		return nil, true
	}
	h, ok := ad.Give()
	if h == nil {
		return nil, ok
	}
	return h, true
}

// RefusedSNAT counts a peer connection refused while a was full.
func (x *mrfEnv) RefusedSNAT(pool string, a netip.Addr) {
	if ad := x.snatAddr(pool, a); ad != nil {
		ad.Refuse()
	}
}

// DialUDP opens a UDP flow to a peer's member from src (a
// transport-config's SNAT; invalid: the host's choice), counted on the
// member while it lasts, as Dial's connections are.
func (x *mrfEnv) DialUDP(pool string, addr netip.AddrPort, src netip.Addr) (net.Conn, func(), error) {
	return x.dial(pool, addr, false, func() (net.Conn, error) {
		var laddr *net.UDPAddr
		if src.IsValid() {
			laddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
		}
		return net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(addr))
	})
}

// DialLSN opens a peer connection (a UDP flow when udp) from a
// translation of via's lsn pool for via's subscriber, counted on the
// member as Dial's and DialUDP's are; done gives the translation back
// with the member's place. The pool counts a translation it cannot give
// (errLSN), and the message fails as for a member that cannot be
// reached.
func (x *mrfEnv) DialLSN(via mrf.LSNVia, pool string, addr netip.AddrPort, tcp *sockopt.Side, udp bool) (net.Conn, func(), error) {
	var lp *lsn.Pool
	if x.e.env.LSN != nil {
		lp = x.e.env.LSN.Pool(via.Pool)
	}
	if lp == nil {
		return nil, nil, errLSN // the pool is gone (a commit that removed it)
	}
	var t *lsn.Translation
	c, done, err := x.dial(pool, addr, !udp, func() (net.Conn, error) {
		if udp {
			c, tr, err := dialUDPTranslated(lp, via.Subscriber, addr) // lsn.go
			t = tr
			return c, err
		}
		c, tr, err := x.e.dialTranslated(lp, via.Subscriber, addr, nil, tcp)
		t = tr
		return c, err
	})
	if err != nil {
		return nil, nil, err
	}
	return c, func() {
		done()
		t.Release()
	}, nil
}

// dial opens a peer connection with open, on a place reserved on
// pool's member at addr (none when addr is not one of its members);
// the returned func gives the place back when the connection ends. A
// connected stream counts as the member's connect success (connected),
// a UDP flow does not.
func (x *mrfEnv) dial(pool string, addr netip.AddrPort, connected bool, open func() (net.Conn, error)) (net.Conn, func(), error) {
	var m *state.Member
	p := x.pool(pool)
	if p != nil {
		m = state.MemberAt(p, addr)
	}
	if m != nil && !m.Reserve() {
		return nil, nil, errMemberFull
	}
	c, err := open()
	if err != nil {
		if m != nil {
			m.ConnectFailed()
			m.Release()
		}
		return nil, nil, err
	}
	done := func() {}
	if m != nil {
		if connected {
			m.ConnectSucceeded()
		}
		p.Stats.TryOpen(0)
		done = func() {
			m.Release()
			p.Stats.Close()
		}
	}
	return c, done, nil
}

// errMemberFull is a member at its connection limit.
var errMemberFull = errors.New("member at its connection limit")

// mrfHooks runs the GENERICMESSAGE_ and MR_ events of one client
// connection, under its rules' lock (answers and failures come from the
// peers' goroutines).
type mrfHooks struct {
	pr        *proxied
	prog      *rules.Program
	r         *mrf.Router
	transport string
	proto     string
	// clones: a rule has a clone command; inHand is then the client's
	// message the goroutine reading the client is handling, whose
	// ingress events may start a clone from it (clone.go, beginMsg):
	// the session may run a message's ingress on a peer's goroutine
	// too, which must not.
	clones bool
	inHand atomic.Pointer[mrfInHand]
}

// mrfInHand is the client's message being handled, as it was read.
type mrfInHand struct {
	m         *mrf.Message
	raw, term []byte
}

// Ingress runs a client's message through its protocol's event
// (GENERICMESSAGE_INGRESS, SIP_REQUEST, DIAMETER_INGRESS), then
// MR_INGRESS.
func (h *mrfHooks) Ingress(m *mrf.Message) bool {
	var in *mrfInHand
	if h.clones {
		if in = h.inHand.Load(); in != nil && in.m != m {
			in = nil
		}
	}
	return h.run(m, in, irules.MRFIngress(h.proto)...)
}

// Egress runs a message going to the client through MR_EGRESS, then its
// protocol's event (GENERICMESSAGE_EGRESS, SIP_RESPONSE, DIAMETER_EGRESS).
func (h *mrfHooks) Egress(m *mrf.Message) bool {
	return h.run(m, nil, irules.MRFEgress(h.proto)...)
}

func (h *mrfHooks) Failed(m *mrf.Message) bool { return h.run(m, nil, rules.MRFailed) }

// run runs evs in turn over m, stopping once the message is dropped or
// sent back; false when the rule ended the connection. An MQTT DATA
// event runs only after the event before it asked for it (MQTT::collect
// over a PUBLISH). in is the client's message as read when m is it, on
// the goroutine reading the client: a clone starts from it.
func (h *mrfHooks) run(m *mrf.Message, in *mrfInHand, evs ...rules.Event) bool {
	pr, rs := h.pr, h.pr.rs
	collect := false
	for _, ev := range evs {
		data := ev == rules.MQTTClientData || ev == rules.MQTTServerData
		if data && !collect {
			continue
		}
		collect = false
		if !h.prog.Handles(ev) {
			continue
		}
		rs.mu.Lock()
		if rs.done {
			rs.mu.Unlock()
			return false
		}
		sess := pr.RuleSession(h.prog)
		rs.ev = config.Event(ev.String())
		if in != nil {
			rs.beginMsg(in.raw, in.term, true) // clone.go
		}
		sess.BeginMR(m, h.r, h.transport)
		var err error
		end := false
		switch ev {
		case rules.SIPRequest, rules.SIPResponse:
			sess.BeginSIP(m.Data)
			err = sess.Run(ev)
			end = !irules.MRFSIPOutcome(m, sess.EndSIP())
		case rules.DiameterIngress, rules.DiameterEgress:
			sess.BeginDiameterWith(m.Data, h.diamCtx(m))
			err = sess.Run(ev)
			end = !mrfDiameterOutcome(m, sess.EndDiameter())
		default:
			if h.proto == irules.MRFDiameter {
				// The DIAMETER:: commands read the message in the MR_
				// events too.
				sess.BeginDiameterWith(m.Data, h.diamCtx(m))
				err = sess.Run(ev)
				end = !mrfDiameterOutcome(m, sess.EndDiameter())
			} else if h.proto == irules.MRFMQTT {
				end, collect, err = h.runMQTT(sess, ev, m)
			} else {
				err = sess.Run(ev)
			}
		}
		sess.EndMR()
		made := sess.TakeMRMade()
		v, detach := rs.verdict, rs.detach
		rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
		var late []lateClone
		if in != nil {
			late = rs.endMsg()
		}
		rs.mu.Unlock()
		// Only the goroutine reading the client copies the flow's
		// clones (pr.clone.Both above): no lock.
		pr.startMsgClones(late, nil)
		if !pr.applyRule(config.Event(ev.String()), err, v, detach) || end {
			if end {
				pr.end(false)
			}
			return false
		}
		for _, x := range made {
			if o := x.Originator(); o != nil && !o.Handle(x) {
				return false
			}
		}
		if m.Drop || m.Return {
			break
		}
	}
	return true
}

// runMQTT runs an MR_ or MQTT_ event over an MQTT router's packet with
// the MQTT:: commands reading and editing it, as on the mqtt profile's
// flows, and applies what the rule asked: its edits (the packet encoded
// again), MQTT::drop, MQTT::respond (in the client's packet's events --
// MQTT_CLIENT_INGRESS, MQTT_CLIENT_DATA, MR_INGRESS, MQTT_SERVER_EGRESS
// -- to the client at once [M: in the broker's packet's events on the
// client's connection it is left out; a transport-config's rules on the
// broker connection answer the broker there, mrfpeer.go]),
// MQTT::insert's packets (around this one toward the client in the
// broker's packet's events; after it toward the broker in the client's
// [M: one before it would take its place as the packet the broker's
// answer is matched to, so it is left out]) and MQTT::disconnect (the
// connection ends). end: the connection is to end; collect: the rule
// asked for the DATA event over a PUBLISH (MQTT::collect).
func (h *mrfHooks) runMQTT(sess *rules.ConnState, ev rules.Event, m *mrf.Message) (end, collect bool, err error) {
	o, collect, parsed, err := runMQTTPacket(sess, ev, m)
	if !parsed {
		return false, false, err
	}
	ingress := ev == rules.MRIngress || ev == rules.MQTTClientIngress || ev == rules.MQTTClientData || ev == rules.MQTTServerEgress
	if ingress {
		for _, b := range o.Respond {
			if s := m.Originator(); s != nil && s.Send(b) != nil {
				return true, false, err
			}
		}
		for _, b := range o.After {
			m.Data = append(m.Data, b...)
		}
	} else {
		surroundMQTT(m, o.Before, o.After)
	}
	return o.Disconnect, collect, err
}

// runMQTTPacket runs ev over the MQTT packet m carries, for an MQTT
// router's client connection and its broker connections alike: the
// session's protocol version follows a CONNECT, the rule's edits are
// encoded back into m, its drop marks m; collect: the rule asked for
// the DATA event over a PUBLISH. parsed is false when m is no MQTT
// packet (or MQTT::disable is in force): the event ran without one.
func runMQTTPacket(sess *rules.ConnState, ev rules.Event, m *mrf.Message) (o rules.MQTTOutcome, collect, parsed bool, err error) {
	sess.SetMQTT()
	st := sess.MQTT()
	p, derr := mqtt.Decode(m.Data, st.Version)
	if derr != nil || st.Disabled {
		return o, false, false, sess.Run(ev)
	}
	if p.Type == mqtt.CONNECT {
		st.Version = p.ProtocolVersion
	}
	sess.BeginMQTT(p)
	err = sess.Run(ev)
	o = sess.EndMQTT()
	if o.Edited {
		m.Data = p.Encode(nil, st.Version)
	}
	m.Drop = m.Drop || o.Drop
	return o, o.Collect && p.Type == mqtt.PUBLISH, true, err
}

// surroundMQTT puts the packets a rule inserted before and after m's
// own into m, which goes on as one write.
func surroundMQTT(m *mrf.Message, before, after [][]byte) {
	if len(before)+len(after) == 0 {
		return
	}
	var b []byte
	for _, x := range before {
		b = append(b, x...)
	}
	b = append(b, m.Data...)
	for _, x := range after {
		b = append(b, x...)
	}
	m.Data = b
}

// shutdown runs MQTT_CLIENT_SHUTDOWN as the client's side of an MQTT
// router's connection closes: the packets the rule inserts (MQTT::insert)
// go to the client's broker (s.ToPeer) before its connection is
// closed.
func (h *mrfHooks) shutdown(s *mrf.Session) {
	if h.proto != irules.MRFMQTT || !h.prog.Handles(rules.MQTTClientShutdown) {
		return
	}
	pr, rs := h.pr, h.pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return
	}
	sess := pr.RuleSession(h.prog)
	sess.SetMQTT()
	rs.ev = config.Event(rules.MQTTClientShutdown.String())
	sess.BeginMQTT(nil)
	err := sess.Run(rules.MQTTClientShutdown)
	o := sess.EndMQTT()
	v, detach := rs.verdict, rs.detach
	rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
	rs.mu.Unlock()
	if !pr.applyRule(config.Event(rules.MQTTClientShutdown.String()), err, v, detach) {
		return
	}
	for _, b := range append(o.Before, o.After...) {
		s.ToPeer(b)
	}
}

// diamCtx is what the DIAMETER:: commands know of m beyond its bytes:
// the key the session profile persists a request by (DIAMETER::persist).
func (h *mrfHooks) diamCtx(m *mrf.Message) rules.DiameterContext {
	ctx := rules.DiameterContext{ClientSide: true, PersistTTL: h.r.Config().PersistTTL, Routed: true}
	if o := m.Originator(); o != nil && m.Request && h.r.Config().Persist != mrf.PersistNone {
		ctx.PersistKey = o.PersistKeyOf(m)
	}
	if ctx.PersistTTL <= 0 {
		ctx.PersistTTL = mrf.DefaultPersistTTL
	}
	return ctx
}

// mrfDiameterOutcome applies what DIAMETER_INGRESS or DIAMETER_EGRESS
// did to m: its edits, DIAMETER::drop, DIAMETER::persist (a key; reset:
// the record of the message's key forgotten), DIAMETER::respond (the
// rule's answer to the client) and DIAMETER::disconnect (false: the
// client's connection closes).
func mrfDiameterOutcome(m *mrf.Message, out rules.DiameterOutcome) bool {
	if out.Edited {
		m.Data = out.Raw
	}
	if out.Drop {
		m.Drop = true
	}
	if out.Persist != "" {
		m.Persist = out.Persist // the router's persistence records
	}
	if o := m.Originator(); out.PersistReset && o != nil {
		if k := o.PersistKeyOf(m); k != "" {
			o.Router().Unpersist(k)
		}
	}
	mrfDiameterPersist(m, out) // mrf_diam.go
	for _, r := range out.Respond {
		if s := m.Originator(); s != nil && s.Send(r) != nil {
			return false
		}
	}
	return !out.Disconnect
}

// mrfLocalDrain bounds how long a client that asked to disconnect (a
// Diameter DPR) waits for the answers still due to it.
const mrfLocalDrain = 5 * time.Second

// mrfDrainMax bounds how long a closed client waits for its answers
// when the virtual has no idle timeout.
const mrfDrainMax = 5 * time.Minute

// MRFApply follows a configuration just applied: cfgs are the message
// routing of the virtuals that have it, counts their counters. A virtual
// that no longer routes messages has its router closed (its peer
// connections with it); one whose peers are kept connected
// (auto-initialization) has its router made now, which opens them.
func (e *Engine) MRFApply(cfgs map[string]*mrf.Config, counts map[string]*mrf.Counters) {
	mrfRouters.Lock()
	for k, r := range mrfRouters.m {
		if k.e == e && cfgs[k.virtual] == nil {
			delete(mrfRouters.m, k)
			go r.Close()
		}
	}
	mrfRouters.Unlock()
	for name, cfg := range cfgs {
		if cfg.AutoInit() {
			cfg.RouterFor(func() *mrf.Router { return e.mrfRouter(name, cfg, counts[name]) }).AutoInit()
		}
	}
}

// MRFRunning is the router a virtual's messages go to now (nil: none
// made yet), for show: its tables are read under their own locks.
func (e *Engine) MRFRunning(virtual string) *mrf.Router {
	mrfRouters.Lock()
	defer mrfRouters.Unlock()
	return mrfRouters.m[mrfKey{e, virtual}]
}
