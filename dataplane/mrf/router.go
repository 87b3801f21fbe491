package mrf

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// Env is what the router needs of the dataplane: a member of a pool for a
// new connection, and the connection.
type Env interface {
	// Pick chooses a member of pool (its balancing method), none of
	// avoid; false when none is available.
	Pick(pool string, avoid []netip.AddrPort) (netip.AddrPort, bool)
	// Dial connects to a peer's member (pool is the peer's, "" for a
	// host a rule named) from src (invalid: the host's choice) with a
	// transport-config's tcp settings (nil: the kernel's); done is
	// called once the connection is closed.
	Dial(pool string, addr netip.AddrPort, src netip.Addr, tcp *sockopt.Side) (c net.Conn, done func(), err error)
}

// DatagramDialer is an Env that also opens UDP flows to peers, for
// peers whose transport is UDP (a transport-config with a udp profile,
// or a UDP virtual's own): Dial's, with no tcp settings. Without it
// such a peer cannot be connected.
type DatagramDialer interface {
	DialUDP(pool string, addr netip.AddrPort, src netip.Addr) (c net.Conn, done func(), err error)
}

// errNoUDP is a UDP peer of a router whose Env opens no UDP flows.
var errNoUDP = errors.New("udp peers are not supported here")

// LSNDialer is an Env whose peer connections may leave from a
// large-scale NAT translation: DialLSN is Dial (udp false) and DialUDP
// (udp true) from a translation of via's lsn pool for via's subscriber,
// the translation given back by done. Without it a peer connection
// that should translate cannot be opened.
type LSNDialer interface {
	DialLSN(via LSNVia, pool string, addr netip.AddrPort, tcp *sockopt.Side, udp bool) (c net.Conn, done func(), err error)
}

// LSNVia is the lsn pool a new peer connection translates through and
// the subscriber it translates for: the client whose message opened it
// (Session.SetSubscriber), else the virtual's address, port 0, for a
// connection no client's message opened (auto-initialization, a shared
// connection's unsolicited message) [M].
type LSNVia struct {
	Pool       string
	Subscriber netip.AddrPort
}

// errNoLSN is a peer connection to translate on a router whose Env
// cannot.
var errNoLSN = errors.New("lsn translation is not supported here")

// lsnVia is the lsn pool a new peer connection for m translates through
// (Pool "": none): none when a rule gave m a source (MR::message snat),
// else the transport-config's lsn pool (source-address-translation type
// lsn), else, when the transport-config has no source-address-translation
// of its own, the virtual's. A router without an lsn pool anywhere pays
// a string comparison per connection opened.
func (r *Router) lsnVia(tc *Transport, m *Message, dst netip.Addr) LSNVia {
	if m.SNATAutomap && r.cfg.Local.IsValid() && r.cfg.Local.Is4() == dst.Is4() || m.SNAT.IsValid() && m.SNAT.Is4() == dst.Is4() {
		return LSNVia{}
	}
	pool := r.cfg.LSN
	if tc != nil && tc.SNAT != "" {
		pool = ""
		if tc.SNAT == SNATLSN {
			pool = tc.LSN
		}
	}
	if pool == "" {
		return LSNVia{}
	}
	v := LSNVia{Pool: pool, Subscriber: netip.AddrPortFrom(r.cfg.Local, 0)}
	if s := m.Originator(); s != nil && s.sub.IsValid() {
		v.Subscriber = s.sub
	}
	return v
}

// Hooks run the iRules events of a client connection's messages; each
// reads and changes the message (Drop, Return, Retry, routes). false: the
// connection was ended by the rule.
type Hooks interface {
	Ingress(m *Message) bool
	Egress(m *Message) bool
	Failed(m *Message) bool
}

// Counters are a virtual's message counts, kept across the routers its
// commits make (show ltm message-routing generic protocol|router). Each
// is one atomic add on the message path.
type Counters struct {
	// The protocol's: messages read from clients (Received) and written
	// to them (Delivered), written to peers (Sent) and read from them
	// (FromPeers); Oversized the streams reset for a message past
	// max-message-size.
	Received, Delivered, Sent, FromPeers, Oversized atomic.Uint64
	// The router's: messages routed to a peer, answers taken back to
	// their originators, peers' messages with no request waiting
	// (routed as a client's), messages dropped, failed (MR_FAILED),
	// routed again (MR::retry) and sent back (MR::return); PendingFull
	// the failures past max-pending-messages or max-pending-bytes; peer
	// connections opened, reused and that could not be opened.
	Routed, Answered, Unsolicited, Dropped, Failed, Retried, Returned, PendingFull atomic.Uint64
	ConnsOpened, ConnsReused, ConnsFailed                                          atomic.Uint64
	// A protocol's: messages it answered by itself (Local: capabilities
	// exchanges, watchdogs, keep-alives, requests past their hops) and
	// failed requests it answered (FailAnswered).
	Local, FailAnswered atomic.Uint64
	// The watchdog's (Config.Watchdog): probes sent to quiet peer
	// connections, probes left unanswered, and the connections closed
	// for them.
	WatchdogSent, WatchdogFailed, WatchdogClosed atomic.Uint64
}

// ResetProtocol zeroes the protocol's counts (reset-stats ltm
// message-routing generic protocol).
func (c *Counters) ResetProtocol() {
	for _, x := range []*atomic.Uint64{&c.Received, &c.Delivered, &c.Sent, &c.FromPeers, &c.Oversized,
		&c.WatchdogSent, &c.WatchdogFailed, &c.WatchdogClosed} {
		x.Store(0)
	}
}

// ResetRouter zeroes the router's counts (reset-stats ltm
// message-routing generic router).
func (c *Counters) ResetRouter() {
	for _, x := range []*atomic.Uint64{&c.Routed, &c.Answered, &c.Unsolicited, &c.Dropped, &c.Failed, &c.Retried,
		&c.Returned, &c.PendingFull, &c.ConnsOpened, &c.ConnsReused, &c.ConnsFailed, &c.Local, &c.FailAnswered} {
		x.Store(0)
	}
}

// Router routes the messages of every client connection of a virtual and
// keeps the connections to peers that their connection-mode shares.
type Router struct {
	cfg *Config
	env Env
	// addrHold is env as a SNATAddrHolder (nil: it is none), asked once
	// (snathold.go).
	addrHold SNATAddrHolder
	// C counts the router's messages (the virtual's, shared with the
	// routers of its earlier commits).
	C *Counters

	mu     sync.Mutex
	shared map[connKey]*outgoing
	// persists are the peers (and members) persistence keys were routed
	// to (SIP::persist, DIAMETER::persist), by key.
	persists map[string]persistRec
	dyn      map[string]*Peer
	routes   []*Route // GENERICMESSAGE::route add
	rot      map[string]uint64
	// hosts are the shared peer connections by the identity their
	// handshake gave (a Diameter CEA's Origin-Host, lower case), for
	// requests that name their destination host (HostProtocol).
	hosts  map[string]*outgoing
	closed bool
	// stop ends the auto-initialization keeper (nil: none runs).
	stop chan struct{}
	// dynt are the routes client connections made (dynamic.go).
	dynt dynTable
}

type connKey struct {
	peer     string
	instance int
	addr     netip.AddrPort
}

// NewRouter makes the router of cfg, counting in c (nil: its own).
func NewRouter(cfg *Config, env Env, c *Counters) *Router {
	if c == nil {
		c = new(Counters)
	}
	r := &Router{cfg: cfg, env: env, C: c, shared: map[connKey]*outgoing{}, dyn: map[string]*Peer{}, rot: map[string]uint64{}}
	r.addrHold, _ = env.(SNATAddrHolder) // snathold.go
	return r
}

// Config is the router's configuration.
func (r *Router) Config() *Config { return r.cfg }

// AddPeer defines a peer on the fly (MR::peer); it shadows a configured
// peer of the same name for the router's life.
func (r *Router) AddPeer(p *Peer) {
	if p.Conns < 1 {
		p.Conns = 1
	}
	r.mu.Lock()
	r.dyn[p.Name] = p
	r.mu.Unlock()
}

// Peer finds a peer by name: one made by MR::peer, then a configured
// one (full path, or a bare name in /Common).
func (r *Router) Peer(name string) *Peer {
	r.mu.Lock()
	p := r.dyn[name]
	r.mu.Unlock()
	if p != nil {
		return p
	}
	if p = r.cfg.Peers[name]; p == nil && len(name) > 0 && name[0] != '/' {
		p = r.cfg.Peers["/Common/"+name]
	}
	return p
}

// AddRoute adds a route on the fly (GENERICMESSAGE::route add),
// replacing one with the same addresses; it wins a tie with a static
// route [M].
func (r *Router) AddRoute(rt *Route) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.routes {
		if x.Src == rt.Src && x.Dst == rt.Dst {
			r.routes[i] = rt
			return
		}
	}
	r.routes = append(r.routes, rt)
}

// DeleteRoute removes the route added for src and dst; false when there
// was none.
func (r *Router) DeleteRoute(src, dst string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.routes {
		if x.Src == src && x.Dst == dst {
			r.routes = append(r.routes[:i:i], r.routes[i+1:]...)
			return true
		}
	}
	return false
}

// Lookup is the route a message from src to dst takes: the best of the
// static routes and those added on the fly.
func (r *Router) Lookup(src, dst string) *Route {
	keys := RouteKeys{src, dst}
	best, score := lookup(nil, -1, r.cfg.Routes, nil, &keys)
	r.mu.Lock()
	best, _ = lookup(best, score, r.routes, nil, &keys)
	r.mu.Unlock()
	return best
}

// route is the route message m takes: by its source and destination
// addresses (the generic protocol), else by its protocol's route fields.
func (r *Router) route(m *Message) *Route {
	p := r.cfg.Proto
	if p == nil {
		return r.Lookup(m.Src, m.Dst)
	}
	if len(r.cfg.Routes) == 0 {
		return nil
	}
	keys := p.RouteKeys(m)
	best, _ := lookup(nil, -1, r.cfg.Routes, p, &keys)
	return best
}

// AutoInit opens the connections of the peers with auto-initialization
// (every instance of number-connections) and keeps them open: each
// peer's auto-initialization-interval, the ones that closed are opened
// again, until Close. Per-client peers are left out [M: a connection
// made before any client has no client to serve]. Calling it again does
// nothing.
func (r *Router) AutoInit() {
	ps := r.cfg.autoPeers()
	if len(ps) == 0 {
		return
	}
	r.mu.Lock()
	if r.stop != nil || r.closed {
		r.mu.Unlock()
		return
	}
	r.stop = make(chan struct{})
	stop := r.stop
	r.mu.Unlock()
	go r.keep(ps, stop)
}

// keep opens the missing connections of ps at once, then each peer's
// interval (the shortest of theirs), until stop.
func (r *Router) keep(ps []*Peer, stop chan struct{}) {
	every := ps[0].AutoInit
	for _, p := range ps {
		every = min(every, p.AutoInit)
	}
	s := &Session{r: r}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, p := range ps {
			for i := range max(p.Conns, 1) {
				k := connKey{peer: p.Name, instance: i}
				r.mu.Lock()
				o := r.shared[k]
				r.mu.Unlock()
				if o != nil {
					continue
				}
				s.conn(p, &Message{Instance: i})
			}
		}
		t.Reset(every)
	}
}

// Close ends every shared connection.
func (r *Router) Close() {
	r.mu.Lock()
	if r.stop != nil && !r.closed {
		close(r.stop)
	}
	r.closed = true
	var os []*outgoing
	for _, o := range r.shared {
		os = append(os, o)
	}
	r.mu.Unlock()
	for _, o := range os {
		o.close()
	}
}

// persistRec is where a persistence key's messages go, and until when.
type persistRec struct {
	peer *Peer
	addr netip.AddrPort
	// instance is the connection of the peer's number-connections the
	// key's first message went on, so that its later ones take the same.
	instance int
	exp      time.Time
}

// maxPersists bounds the router's persistence records; past it, about
// half are forgotten.
const maxPersists = 1 << 16

// DefaultPersistTTL is a persistence record's life when the rule names
// none [M: the sip and diameter profiles' persist-timeout default].
const DefaultPersistTTL = 180 * time.Second

// persisted is the record of m's persistence key, when it has a live
// one (and no rule routed it otherwise).
func (r *Router) persisted(m *Message) (persistRec, bool) {
	if m.Persist == "" || m.RouteHost.IsValid() || m.RoutePool != "" || len(m.RoutePeers) > 0 || m.PersistMode != PersistUse {
		return persistRec{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.persists[m.Persist]
	if ok && time.Now().After(rec.exp) {
		delete(r.persists, m.Persist)
		ok = false
	}
	return rec, ok
}

// persist records that m's key goes where m went.
func (r *Router) persist(m *Message, o *outgoing) {
	if !r.persistWanted(m) {
		return
	}
	ttl := m.PersistTTL
	if ttl <= 0 {
		ttl = DefaultPersistTTL
	}
	p := r.Peer(m.Peer)
	if p == nil {
		// The virtual's pool (its member pinned), or a rule's host or
		// pool: that member.
		p = &Peer{Name: m.Peer, Conns: 1, Pool: r.cfg.DefaultPool}
		if m.Peer != "" {
			p.Pool, p.Host = "", o.addr
		}
	}
	r.mu.Lock()
	if r.persists == nil {
		r.persists = map[string]persistRec{}
	}
	if len(r.persists) >= maxPersists {
		n := len(r.persists) / 2
		for k := range r.persists {
			if n == 0 {
				break
			}
			delete(r.persists, k)
			n--
		}
	}
	r.persists[m.Persist] = persistRec{peer: p, addr: o.addr, instance: o.key.instance, exp: time.Now().Add(ttl)}
	r.mu.Unlock()
}

// unpersist forgets key's record (SIP::persist reset; a peer that
// cannot be reached).
func (r *Router) unpersist(key string) {
	r.mu.Lock()
	delete(r.persists, key)
	r.mu.Unlock()
}

// Unpersist forgets the record of a persistence key.
func (r *Router) Unpersist(key string) { r.unpersist(key) }

// Session is one client connection of the router.
type Session struct {
	r     *Router
	hooks Hooks
	write func([]byte) error
	// peer, for the session of a shared peer connection, is that
	// connection: its unsolicited messages are routed as a client's and
	// their answers go back on it.
	peer *outgoing
	// client is the client's address (SetClient), for persist-key
	// Src-Addr.
	client netip.Addr
	// sub is the client's address and port (SetSubscriber), the
	// subscriber of the peer connections its messages open through an
	// lsn pool.
	sub netip.AddrPort

	mu    sync.Mutex
	own   map[connKey]*outgoing
	ended bool
	buf   []byte
	wmu   sync.Mutex
	// inflight counts the session's requests waiting for an answer.
	inflight atomic.Int64
	// id is MR::flow_id's: the session's number among the process's.
	id uint64
	// stick, with a Sticky protocol (or the generic protocol's
	// disable-parser), is the peer connection the client's messages all
	// go on once its first was routed.
	stick *outgoing
	// seq numbers the session's messages
	// (GENERICMESSAGE::message request_sequence_number).
	seq atomic.Uint64
	// The connection's own settings its rules make (MRState): see
	// SetPortMatch, SetConnectBackPort and SetEquivalent.
	ignorePort, matchPort bool
	backPort              uint16
	equiv                 []string
	// dyn is the dynamic route the client's connection made (nil:
	// none; dynamic.go), ident the host and realm its capabilities
	// exchange named, dynSet a rule's own insertion and lookup.
	dyn    *dynRoute
	ident  [2]string
	dynSet atomic.Uint32
	// rin counts the client's requests for the ingress rate limits
	// (ratelimit.go).
	rin rateWindow
}

// Drain waits, up to d, until no request of the session waits for its
// answer: a client that closed its side still gets the answers due.
func (s *Session) Drain(d time.Duration) {
	deadline := time.Now().Add(d)
	for s.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// NewSession starts serving a client connection: write sends framed
// bytes to it; hooks may be nil (no rule events).
func (r *Router) NewSession(write func([]byte) error, hooks Hooks) *Session {
	return &Session{r: r, hooks: hooks, write: write, id: sessionIDs.Add(1), ignorePort: r.cfg.IgnorePort}
}

// sessionIDs numbers the sessions (MR::flow_id).
var sessionIDs atomic.Uint64

// ID is the session's number, unique in the process: MR::flow_id.
func (s *Session) ID() uint64 { return s.id }

// Make is a message a rule made (GENERICMESSAGE::message create) as
// though the client had sent data to dst: the host routes it with
// Handle once the event that made it ran.
func (s *Session) Make(data []byte, dst string) *Message {
	m := s.Message(data)
	m.Dst, m.Made = dst, true
	return m
}

// Router is the session's router.
func (s *Session) Router() *Router { return s.r }

// SetClient says which address the session's client connects from, for
// persistence by source address (persist-key Src-Addr).
func (s *Session) SetClient(a netip.Addr) { s.client = a.Unmap() }

// SetSubscriber says which address and port the session's client
// connects from, for the peer connections its messages open through an
// lsn pool (LSNVia); set by the host only when the router translates
// (Config.Translates).
func (s *Session) SetSubscriber(a netip.AddrPort) {
	s.sub = netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// Close ends the session's own (per-client) peer connections; answers
// still due to it are dropped.
func (s *Session) Close() {
	s.mu.Lock()
	s.ended = true
	own := s.own
	s.own = nil
	s.mu.Unlock()
	for _, o := range own {
		o.close()
	}
	if s.dyn != nil {
		s.dynamicClose()
	}
}

// Message makes a message of the client's data (copied) as the protocol
// reads it.
func (s *Session) Message(data []byte) *Message {
	m := &Message{Data: append([]byte(nil), data...), Request: !s.r.cfg.NoResponse && !s.r.cfg.DisableParser, Status: StatusUnprocessed,
		MaxRetries: s.r.cfg.MaxRetries, Instance: -1, origin: s, ReqSeq: s.seq.Add(1)}
	if p := s.r.cfg.Proto; p != nil {
		c := p.Classify(data)
		m.Request = !c.Answer && !c.OneWay && !c.Bad
		m.Answer, m.Bad = c.Answer, c.Bad
	}
	return m
}

// Local answers a client's message its protocol handles by itself (a
// capabilities exchange, a watchdog, a keep-alive, a request past its
// hops): handled true, and ok false when the connection is to end.
func (s *Session) Local(data []byte) (handled, ok bool) {
	p := s.r.cfg.Proto
	if p == nil {
		return false, true
	}
	s.wmu.Lock()
	reply, handled, end := p.Local(s.buf[:0], data, false)
	if handled { // counted before the answer leaves, which may be read at once
		s.r.C.Received.Add(1)
		s.r.C.Local.Add(1)
		s.dynamicLearn(data)
	}
	var err error
	if reply != nil {
		s.buf = reply
		err = s.write(reply)
	}
	s.wmu.Unlock()
	return handled, err == nil && !end
}

// Send writes a message to the session's client as it is, with no event
// (a rule's own answer: SIP::respond, DIAMETER::respond).
func (s *Session) Send(data []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.write(data)
	if err == nil {
		s.r.C.Delivered.Add(1)
	}
	return err
}

// Handle runs a client's message through the ingress events and routes
// it; false when the connection is to end. A protocol's message that
// answers nothing the virtual sent, or cannot be read, is dropped [M].
func (s *Session) Handle(m *Message) bool {
	s.r.C.Received.Add(1)
	if s.dyn != nil && s.dynamicIn(m) {
		return true
	}
	if m.Answer && !m.Bad && s.stuck(m) {
		return true
	}
	if m.Answer || m.Bad {
		s.r.C.Dropped.Add(1)
		return true
	}
	if s.limited(m, &s.rin, true) { // ratelimit.go
		return true
	}
	return s.handle(m)
}

func (s *Session) handle(m *Message) bool {
	if s.hooks != nil && !s.hooks.Ingress(m) {
		return false
	}
	return s.after(m)
}

// after does what the last event asked of m.
func (s *Session) after(m *Message) bool {
	switch {
	case m.Drop:
		m.Status = StatusDropped
		s.r.C.Dropped.Add(1)
		return true
	case m.Return:
		m.Return = false
		s.r.C.Returned.Add(1)
		return s.deliver(m)
	}
	s.route(m)
	return true
}

// deliver sends m to the session's client through the egress events.
func (s *Session) deliver(m *Message) bool {
	s.mu.Lock()
	ended := s.ended && !s.r.cfg.ConnectBack
	back := s.ended && s.r.cfg.ConnectBack && !s.r.cfg.UDP && s.peer == nil
	s.mu.Unlock()
	if ended {
		s.r.C.Dropped.Add(1)
		return false
	}
	if back {
		return s.connectBack(m) // connectback.go
	}
	if s.hooks != nil {
		if !s.hooks.Egress(m) {
			return false
		}
		if m.Drop {
			s.r.C.Dropped.Add(1)
			return true
		}
	}
	s.wmu.Lock()
	s.buf = Frame(s.buf[:0], m.Data, s.r.cfg.Term)
	err := s.write(s.buf)
	s.wmu.Unlock()
	if err != nil && s.backOnFail(m) {
		return s.connectBack(m) // connectback.go
	}
	if err == nil && s.peer == nil {
		s.r.C.Delivered.Add(1)
	}
	return err == nil
}

// errNoRoute is a message no route, rule or pool takes.
var errNoRoute = errors.New("no route")

// route sends m to its peer; on failure the message fails (MR_FAILED).
func (s *Session) route(m *Message) {
	var o *outgoing
	var err error
	if s.r.cfg.Persist != PersistNone && !m.Answer {
		s.persistKey(m)
	}
	if s.r.cfg.stuck() {
		s.mu.Lock()
		o = s.stick
		s.mu.Unlock()
		if o != nil && !o.isDead() {
			m.Peer, m.Member, m.Status = o.key.peer, o.addr, StatusRouted
			s.r.C.Routed.Add(1)
			o.send(m, s.r.cfg.Term)
			return
		}
	}
	rec, pinned := s.r.persisted(m)
	if pinned {
		m.pinned = rec.addr
		inst := m.Instance
		if inst < 0 {
			m.Instance = rec.instance
		}
		o, err = s.conn(rec.peer, m)
		m.Instance = inst
		if err != nil {
			s.r.unpersist(m.Persist)
			pinned = false
		}
	}
	if !pinned {
		if o, err = s.pick(m); err != nil {
			s.fail(m, err)
			return
		}
	}
	if m.Persist != "" {
		s.r.persist(m, o)
	}
	if s.r.cfg.stuck() {
		s.mu.Lock()
		s.stick = o
		s.mu.Unlock()
	}
	if s.limited(m, &o.rout, false) { // ratelimit.go
		return
	}
	m.Status = StatusRouted
	s.r.C.Routed.Add(1)
	if !o.send(m, s.r.cfg.Term) {
		// the connection's end failed m with the others in flight
		return
	}
}

// persistKey gives request m, when no rule gave it one, the key of the
// session profile's persistence (its Call-ID, the client's address, its
// persist-avp), and the profile's persist-timeout.
func (s *Session) persistKey(m *Message) {
	if m.Persist == "" {
		m.Persist = s.profileKey(m)
	}
	if m.Persist != "" && m.PersistTTL == 0 {
		m.PersistTTL = s.r.cfg.PersistTTL
	}
}

// profileKey is the key the session profile's persistence gives m ("":
// none).
func (s *Session) profileKey(m *Message) string {
	switch s.r.cfg.Persist {
	case PersistCallID:
		if c, ok := s.r.cfg.Proto.(CallIDer); ok {
			if id := c.CallID(m.Data); len(id) > 0 {
				return string(id)
			}
		}
	case PersistSrcAddr:
		if s.client.IsValid() {
			return s.client.String()
		}
	case PersistAVP:
		if k, ok := s.r.cfg.Proto.(PersistKeyer); ok {
			if v := k.PersistKey(m.Data); len(v) > 0 {
				return string(v)
			}
		}
	}
	return ""
}

// PersistKeyOf is the key request m is persisted by: a rule's
// (DIAMETER::persist KEY), else the session profile's; "" none. For
// DIAMETER::persist, which reads it before m is routed.
func (s *Session) PersistKeyOf(m *Message) string {
	if m.Persist != "" || m.Answer || s.r.cfg.Persist == PersistNone {
		return m.Persist
	}
	return s.profileKey(m)
}

// lost is request m whose peer connection closed before its answer
// came: routed again (LostRetransmit, up to MaxRetransmit times), or
// answered by the virtual (LostBusy, LostUnable), as the session
// profile's retransmission-action says; else it fails (MR_FAILED).
func (s *Session) lost(m *Message) {
	switch a := s.r.cfg.OnLost; a {
	case LostRetransmit:
		if m.retransmits < s.r.cfg.MaxRetransmit {
			m.retransmits++
			s.r.C.Retried.Add(1)
			s.route(m)
			return
		}
	case LostBusy, LostUnable:
		if la, ok := s.r.cfg.Proto.(LostAnswerer); ok && m.Request {
			if ans := la.LostAnswer(m, a == LostBusy); ans != nil {
				s.r.settle(m, nil)
				m.Status = StatusConnFailed
				s.r.C.Failed.Add(1)
				s.r.C.FailAnswered.Add(1)
				s.deliver(&Message{Data: ans, Status: m.Status, Peer: m.Peer, origin: s, Instance: -1, Answer: true, Store: m.Store})
				return
			}
		}
	}
	s.fail(m, net.ErrClosed)
}

// fail runs MR_FAILED for m and does what it asked: route again
// (MR::retry, up to max-retries), send it back (MR::return), or drop it.
func (s *Session) fail(m *Message, err error) {
	s.r.settle(m, nil)
	switch {
	case errors.Is(err, errNoRoute):
		m.Status = StatusNoRoute
	case errors.Is(err, errPending):
		m.Status = StatusPendingFull
		s.r.C.PendingFull.Add(1)
	default:
		m.Status = StatusConnFailed
	}
	s.r.C.Failed.Add(1)
	if s.hooks != nil {
		m.Retry, m.Return, m.Drop = false, false, false
		if !s.hooks.Failed(m) {
			return
		}
	}
	switch {
	case m.Retry && m.Retries < m.MaxRetries:
		m.Retry = false
		m.Retries++
		s.r.C.Retried.Add(1)
		s.route(m)
	case m.Return:
		m.Return = false
		s.r.C.Returned.Add(1)
		s.deliver(m)
	default:
		// The protocol's own answer (Diameter's
		// DIAMETER_UNABLE_TO_DELIVER, SIP's generated response), when
		// it has one and the request wanted an answer.
		if p := s.r.cfg.Proto; p != nil && m.Request && !m.Drop {
			if ans := p.Failed(m); ans != nil {
				s.r.C.FailAnswered.Add(1)
				s.deliver(&Message{Data: ans, Status: m.Status, Peer: m.Peer, origin: s, Instance: -1, Answer: true, Store: m.Store})
				return
			}
		}
		s.r.C.Dropped.Add(1)
	}
}

// pick is the connection m goes out on: by the rule's route, else the
// route table, else the virtual's pool.
func (s *Session) pick(m *Message) (*outgoing, error) {
	r := s.r
	switch {
	case m.RouteHost.IsValid():
		if o := s.anyPort(m); o != nil {
			return o, nil
		}
		return s.conn(&Peer{Name: "host " + m.RouteHost.String(), Host: m.RouteHost, Conns: 1}, m)
	case m.RoutePool != "":
		return s.conn(&Peer{Name: "pool " + m.RoutePool, Pool: m.RoutePool, Conns: 1}, m)
	case len(m.RoutePeers) > 0:
		var ps []*Peer
		for _, n := range m.RoutePeers {
			if p := r.Peer(n); p != nil {
				ps = append(ps, p)
			}
		}
		return s.among(ps, m.RouteRatio, "rule", m)
	}
	if o, ok, err := s.nextHop(m); ok { // nexthop.go
		return o, err
	}
	if o := s.dynamicPick(m); o != nil {
		return o, nil
	}
	if o := s.byHost(m); o != nil {
		return o, nil
	}
	if rt := r.route(m); rt != nil {
		return s.among(rt.Peers, rt.Ratio, rt.Name, m)
	}
	if r.cfg.DefaultPool != "" {
		// Each message balanced over the pool's members, one shared
		// connection per member [M].
		return s.conn(&Peer{Name: "", Pool: r.cfg.DefaultPool, Conns: 1}, m)
	}
	return nil, errNoRoute
}

// byHost is the open shared peer connection whose peer is the host m
// names as its destination (a Diameter Destination-Host), nil when none
// is, or the protocol names no hosts.
func (s *Session) byHost(m *Message) *outgoing {
	hp, ok := s.r.cfg.Proto.(HostProtocol)
	if !ok {
		return nil
	}
	h := hp.DestHost(m.Data)
	if len(h) == 0 {
		return nil
	}
	s.r.mu.Lock()
	o := s.r.hosts[string(h)]
	if o == nil && len(s.r.hosts) > 0 {
		o = s.r.hosts[strings.ToLower(string(h))]
	}
	s.r.mu.Unlock()
	if o == nil || o.isDead() {
		return nil
	}
	m.Peer, m.Member = o.key.peer, o.addr
	s.r.C.ConnsReused.Add(1)
	return o
}

// among picks a peer of ps (sequential: the first not tried yet; ratio:
// weighted rotation) and its connection, trying the next peers when one
// cannot be connected.
func (s *Session) among(ps []*Peer, ratio bool, key string, m *Message) (*outgoing, error) {
	if len(ps) == 0 {
		return nil, errNoRoute
	}
	order := ps
	if ratio {
		total := 0
		for _, p := range ps {
			total += max(p.Ratio, 1)
		}
		s.r.mu.Lock()
		n := s.r.rot[key]
		s.r.rot[key]++
		s.r.mu.Unlock()
		at := int(n % uint64(total))
		start := 0
		for i, p := range ps {
			if at < max(p.Ratio, 1) {
				start = i
				break
			}
			at -= max(p.Ratio, 1)
		}
		order = append(append([]*Peer(nil), ps[start:]...), ps[:start]...)
	}
	var last error = errNoRoute
	for _, p := range order {
		if tried(m.tried, p.Name) && len(m.tried) < len(ps) {
			continue
		}
		o, err := s.conn(p, m)
		if err == nil {
			return o, nil
		}
		last = err
	}
	return nil, last
}

func tried(xs []string, n string) bool {
	for _, x := range xs {
		if x == n {
			return true
		}
	}
	return false
}

// errNoMember is a peer whose pool has no member to connect to.
var errNoMember = errors.New("no member available")

// errPending is a message past the router's max-pending-messages or
// max-pending-bytes while its peer connection opens.
var errPending = errors.New("too many messages pending")

// conn is a connection to peer p for m: an existing one its
// connection-mode allows, or a new one.
func (s *Session) conn(p *Peer, m *Message) (*outgoing, error) {
	r := s.r
	m.Peer = p.Name
	if m.tried == nil {
		m.tried = m.triedBuf[:0]
	}
	m.tried = append(m.tried, p.Name)
	conns := max(p.Conns, 1)
	k := connKey{peer: p.Name}
	if p.Name == "" { // the default pool: one connection per member
		addr, ok := m.pinned, m.pinned.IsValid()
		if !ok {
			addr, ok = r.env.Pick(p.Pool, m.attempted)
		}
		if !ok {
			return nil, errNoMember
		}
		k.addr = addr
	} else if m.Instance >= 0 {
		k.instance = m.Instance % conns
	} else if conns > 1 {
		r.mu.Lock()
		k.instance = int(r.rot["\x00"+p.Name] % uint64(conns))
		r.rot["\x00"+p.Name]++
		r.mu.Unlock()
	}
	perClient := p.Mode == PerClient || r.cfg.stuck()
	for {
		s.mu.Lock()
		r.mu.Lock()
		if r.closed || s.ended {
			r.mu.Unlock()
			s.mu.Unlock()
			return nil, net.ErrClosed
		}
		var o *outgoing
		if perClient {
			o = s.own[k]
		} else {
			o = r.shared[k]
		}
		if o == nil && m.ExistingOnly {
			r.mu.Unlock()
			s.mu.Unlock()
			return nil, errNoConn // clone.go
		}
		if o == nil {
			o = &outgoing{r: r, key: k, ready: make(chan struct{}), waiting: 1, waitBytes: len(m.Data)}
			if perClient {
				if s.own == nil {
					s.own = map[connKey]*outgoing{}
				}
				s.own[k] = o
				o.owner = s
			} else {
				r.shared[k] = o
			}
			r.mu.Unlock()
			s.mu.Unlock()
			if err := o.open(p, m); err != nil {
				r.C.ConnsFailed.Add(1)
				return nil, err
			}
			r.C.ConnsOpened.Add(1)
			return o, nil
		}
		r.mu.Unlock()
		s.mu.Unlock()
		select {
		case <-o.ready:
		default:
			if !o.wait(len(m.Data)) {
				return nil, errPending
			}
			<-o.ready
			o.unwait(len(m.Data))
		}
		if o.err == nil && !o.isDead() {
			r.C.ConnsReused.Add(1)
			m.Member = o.addr
			return o, nil
		}
		if o.err != nil {
			return nil, o.err
		}
		// dead: it left the maps; loop to open another
	}
}

// outgoing is a connection to a peer's member.
type outgoing struct {
	r     *Router
	key   connKey
	owner *Session // per-client: the one session it serves
	ready chan struct{}
	err   error
	conn  net.Conn
	done  func()
	addr  netip.AddrPort
	// host is the identity the peer gave in the handshake ("": none).
	host string

	wmu  sync.Mutex
	wbuf []byte

	// sess routes the peer's unsolicited messages (shared connections).
	sess *Session

	mu   sync.Mutex
	pend []*Message
	// keyed are the requests in flight by the key their answers carry
	// (a protocol's), seq the last request's number on the connection.
	keyed map[uint64]*Message
	seq   uint64
	pbufs [2][]byte
	rd    *Reader
	dead  bool
	last  time.Time
	// link is the connection as its protocol sees it (UDP, its local
	// address); idle its idle time (the transport's, else the
	// router's); heard when the peer last sent anything (UDP: requests
	// in flight with nothing heard for udpAnswerMax fail).
	link      Link
	idle      time.Duration
	heard     time.Time
	answerMax time.Duration // udpAnswerMax as the flow opened
	// waiting and waitBytes are the messages, and their bytes, waiting
	// for the connection to open (the one that opens it included).
	waiting, waitBytes int

	// The watchdog's state (Config.Watchdog), the reading goroutine's
	// alone: when the peer was last heard from (or probed), whether a
	// probe waits for its reply, and the probes in a row left
	// unanswered.
	dogHeard time.Time
	probing  bool
	misses   int

	// rout counts the requests leaving on the connection for the
	// egress rate limits (ratelimit.go).
	rout rateWindow
	// hooks run its transport-config's rules (nil: none; set as it
	// opens, before anyone else sees it; peerrules.go).
	hooks PeerHooks
}

// wait counts a message of n bytes waiting for o to open; false when it
// would pass the router's pending bounds [M: the message that opens the
// connection is always let through].
func (o *outgoing) wait(n int) bool {
	cfg := o.r.cfg
	o.mu.Lock()
	defer o.mu.Unlock()
	if cfg.MaxPending > 0 && o.waiting >= cfg.MaxPending || cfg.MaxPendingBytes > 0 && o.waitBytes+n > cfg.MaxPendingBytes {
		return false
	}
	o.waiting++
	o.waitBytes += n
	return true
}

func (o *outgoing) unwait(n int) {
	o.mu.Lock()
	o.waiting--
	o.waitBytes -= n
	o.mu.Unlock()
}

// open connects o to a member of p (m's attempted members avoided);
// whoever waits on o learns the outcome.
func (o *outgoing) open(p *Peer, m *Message) error {
	defer func() {
		o.mu.Lock()
		o.waiting--
		o.waitBytes -= len(m.Data)
		o.mu.Unlock()
		close(o.ready)
	}()
	addr := p.Host
	if o.key.addr.IsValid() {
		addr = o.key.addr
	}
	if !addr.IsValid() {
		a, ok := o.r.env.Pick(p.Pool, m.attempted)
		if !ok {
			o.err = errNoMember
			o.unlist()
			return o.err
		}
		addr = a
	}
	m.Member = addr
	m.attempted = append(m.attempted, addr)
	tc := p.TC
	if tc == nil && p.Transport != "" {
		if tc = o.r.cfg.Transports[p.Transport]; tc == nil && p.Transport[0] != '/' {
			tc = o.r.cfg.Transports["/Common/"+p.Transport]
		}
	}
	var tcp *sockopt.Side
	udp, idle := o.r.cfg.UDP, o.r.cfg.Idle
	if tc != nil {
		tcp = tc.TCP
		switch {
		case tc.UDP:
			udp = true
		case tcp != nil:
			udp = false
		}
		if tc.Idle != 0 {
			idle = tc.Idle
		}
	}
	if t := o.r.cfg.Timers; t != nil { // the virtual's timer policy, for the peer's protocol and port
		proto := 6
		if udp {
			proto = 17
		}
		if d, ok := t.Idle(proto, addr.Port()); ok {
			idle = d
		}
	}
	var c net.Conn
	var done func()
	var err error
	if via := o.r.lsnVia(tc, m, addr.Addr()); via.Pool != "" {
		err = errNoLSN
		if ld, ok := o.r.env.(LSNDialer); ok {
			c, done, err = ld.DialLSN(via, p.Pool, addr, tcp, udp)
		}
	} else {
		var src netip.Addr
		var hold SourceHold
		if h, ok := tc.holds(m, o.r.cfg.Local, addr.Addr(), o.r.env); ok { // snathold.go
			src, hold, err = tc.sourceHeld(h, addr.Addr())
		} else {
			src = m.source(tc, o.r.cfg.Local, addr.Addr()) // clone.go
			hold, err = o.r.holdAddr(src)                  // snathold.go
		}
		switch {
		case err != nil:
		case udp:
			err = errNoUDP
			if dd, ok := o.r.env.(DatagramDialer); ok {
				c, done, err = dd.DialUDP(p.Pool, addr, src)
			}
		default:
			c, done, err = o.r.env.Dial(p.Pool, addr, src, tcp)
		}
		if err != nil && hold != nil {
			hold.Release()
		}
		if err == nil {
			done, idle = withHold(done, hold), heldIdle(idle, hold, udp)
		}
	}
	if err != nil {
		o.err = err
		o.unlist()
		return err
	}
	o.idle, o.answerMax = max(idle, 0), udpAnswerMax
	o.link.UDP = udp
	o.link.Local = addrPortOf(c.LocalAddr())
	rd := &Reader{R: idleReader{o}, Term: o.r.cfg.Term, Max: o.r.cfg.Max, Datagram: udp}
	if p := o.r.cfg.Proto; p != nil && !udp {
		// The handshake reads the connection itself, bounded; what it
		// leaves in the reader's buffer is read after it.
		rd.F, rd.R = p.NewFramer(), c
		hs := o.r.cfg.Handshake
		if hs <= 0 {
			hs = DefaultHandshake
		}
		c.SetDeadline(time.Now().Add(hs))
		var err error
		if hp, ok := p.(HostProtocol); ok {
			o.host, err = hp.OpenHost(c, rd)
		} else {
			err = p.Open(c, rd)
		}
		c.SetDeadline(time.Time{})
		rd.R = idleReader{o}
		if err != nil {
			c.Close()
			if done != nil {
				done()
			}
			o.err = err
			o.unlist()
			return err
		}
	}
	if h := o.peerHooks(tc, addrPortOf(c.LocalAddr()), addr, udp); h != nil { // peerrules.go
		if !h.Opened() {
			h.Closed()
			c.Close()
			if done != nil {
				done()
			}
			o.err = errRuleClosed
			o.unlist()
			return o.err
		}
		o.hooks = h
	}
	o.mu.Lock()
	if o.dead { // closed (the router, its session) while it opened
		o.mu.Unlock()
		c.Close()
		if done != nil {
			done()
		}
		o.err = net.ErrClosed
		return o.err
	}
	o.conn, o.done, o.addr, o.rd = c, done, addr, rd
	o.last = time.Now()
	o.heard, o.dogHeard = o.last, o.last
	if o.owner == nil {
		o.sess = &Session{r: o.r, write: o.writeBack, peer: o}
		if o.hooks != nil {
			o.sess.hooks = o.hooks // the peer's own messages run its rules
		}
	}
	o.mu.Unlock()
	if o.host != "" && o.owner == nil {
		o.r.mu.Lock()
		if o.r.hosts == nil {
			o.r.hosts = map[string]*outgoing{}
		}
		o.r.hosts[o.host] = o
		o.r.mu.Unlock()
	}
	go o.read()
	return nil
}

// unlist takes o out of the router's (or its session's) connections.
func (o *outgoing) unlist() {
	r := o.r
	if o.owner != nil {
		o.owner.mu.Lock()
		if o.owner.own[o.key] == o {
			delete(o.owner.own, o.key)
		}
		o.owner.mu.Unlock()
		return
	}
	r.mu.Lock()
	if r.shared[o.key] == o {
		delete(r.shared, o.key)
	}
	if o.host != "" && r.hosts[o.host] == o {
		delete(r.hosts, o.host)
	}
	r.mu.Unlock()
}

func (o *outgoing) isDead() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dead
}

// send writes m; a request is kept in flight until its answer. false
// when the connection failed (m failed with it).
func (o *outgoing) send(m *Message, term []byte) bool {
	if o.hooks != nil {
		if !o.egress(m) { // peerrules.go
			m.origin.fail(m, errRuleClosed)
			o.close()
			return false
		}
		if m.Drop {
			m.Status = StatusDropped
			o.r.C.Dropped.Add(1)
			return true
		}
	}
	o.wmu.Lock()
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		o.wmu.Unlock()
		m.origin.fail(m, net.ErrClosed)
		return false
	}
	var out []byte
	if o.link.UDP && len(o.pend) == 0 && len(o.keyed) == 0 {
		o.heard = time.Now() // the wait for an answer starts
	}
	if p := o.r.cfg.Proto; p != nil {
		o.seq++
		var key uint64
		if lp, ok := p.(LinkProtocol); ok {
			out, key = lp.OutboundOn(&o.link, &o.pbufs, m, o.seq)
		} else {
			out, key = p.Outbound(&o.pbufs, m, o.seq)
		}
		if m.Request {
			if o.keyed == nil {
				o.keyed = map[uint64]*Message{}
			}
			o.keyed[key] = m
			m.origin.inflight.Add(1)
		}
	} else if m.Request {
		o.pend = append(o.pend, m)
		m.origin.inflight.Add(1)
	}
	o.last = time.Now()
	o.mu.Unlock()
	if out == nil {
		o.wbuf = Frame(o.wbuf[:0], m.Data, term)
		out = o.wbuf
	}
	_, err := o.conn.Write(out)
	o.wmu.Unlock()
	if err == nil {
		o.r.C.Sent.Add(1)
	}
	if err != nil {
		if !m.Request {
			m.origin.fail(m, err)
		}
		o.close()
		return false
	}
	return true
}

// writeBack sends framed bytes to the peer: the answers to its
// unsolicited messages.
func (o *outgoing) writeBack(b []byte) error {
	o.wmu.Lock()
	defer o.wmu.Unlock()
	_, err := o.conn.Write(b)
	if err == nil {
		o.r.C.Sent.Add(1)
	}
	return err
}

// read takes the peer's messages: each answers the oldest request in
// flight; with none, a per-client connection's message goes to its
// client [M], and a shared one's is routed as a client's message is
// (F5: every message is routed), its answer coming back on this
// connection.
func (o *outgoing) read() {
	rd := o.rd
	for {
		data, err := rd.Next()
		if err != nil {
			o.close()
			return
		}
		if o.r.cfg.Proto != nil {
			if !o.readProto(data) {
				o.close()
				return
			}
			continue
		}
		o.mu.Lock()
		var req *Message
		if len(o.pend) > 0 {
			req = o.pend[0]
			o.pend[0] = nil
			o.pend = o.pend[1:]
		}
		o.last = time.Now()
		o.mu.Unlock()
		o.r.C.FromPeers.Add(1)
		dst := o.owner
		if req != nil {
			dst = req.origin
			dst.inflight.Add(-1)
		}
		if dst == nil {
			o.r.C.Unsolicited.Add(1)
			if !o.sess.handle(o.sess.Message(data)) {
				o.close()
				return
			}
			continue
		}
		a := &Message{Data: append([]byte(nil), data...), Status: StatusRouted, Peer: o.key.peer, Member: o.addr, origin: dst, Instance: -1}
		if req != nil {
			a.Src, a.Dst, a.Store, a.CloneOfRequest = req.Dst, req.Src, req.Store, req.CloneID
			o.r.C.Answered.Add(1)
		} else {
			o.r.C.Unsolicited.Add(1)
		}
		if o.hooks != nil {
			if !o.ingress(a) { // peerrules.go
				o.close()
				return
			}
			if a.Drop {
				o.r.C.Dropped.Add(1)
				continue
			}
		}
		dst.deliver(a)
	}
}

// readProto takes one message of a protocol's peer: what the protocol
// answers by itself (a watchdog), an answer to the request in flight
// with its key (to that request's originator; a provisional one leaves
// the request in flight), else a request of the peer's, routed as a
// client's is. An answer to nothing in flight is dropped. false when the
// connection is to close.
func (o *outgoing) readProto(data []byte) bool {
	p := o.r.cfg.Proto
	o.r.C.FromPeers.Add(1)
	o.wmu.Lock()
	reply, handled, end := p.Local(o.wbuf[:0], data, true)
	var err error
	if reply != nil {
		o.wbuf = reply
		_, err = o.conn.Write(reply)
	}
	o.wmu.Unlock()
	if handled {
		o.r.C.Local.Add(1)
		if end {
			o.left(data) // peerleave.go
		}
		return err == nil && !end
	}
	c := p.Classify(data)
	o.mu.Lock()
	o.last = time.Now()
	if !c.Answer || c.Bad {
		o.mu.Unlock()
		if !c.Bad && o.owner != nil && sticky(p) {
			o.r.C.Unsolicited.Add(1)
			a := &Message{Data: append([]byte(nil), data...), Status: StatusRouted, Peer: o.key.peer, Member: o.addr,
				origin: o.owner, Instance: -1}
			if o.hooks != nil {
				// The broker's own packet runs the connection's rules.
				if !o.ingress(a) { // peerrules.go
					return false
				}
				if a.Drop {
					o.r.C.Dropped.Add(1)
					return true
				}
			}
			o.owner.deliver(a)
			return true
		}
		if c.Bad || o.sess == nil {
			o.r.C.Dropped.Add(1)
			return true
		}
		o.r.C.Unsolicited.Add(1)
		return o.sess.handle(o.sess.Message(data))
	}
	req := o.keyed[c.Key]
	if req != nil && c.Final {
		delete(o.keyed, c.Key)
	}
	o.mu.Unlock()
	if req == nil {
		o.r.C.Dropped.Add(1)
		return true
	}
	if c.Final {
		req.origin.inflight.Add(-1)
		if o.retryOn(p, req, data) {
			return true
		}
		o.r.C.Answered.Add(1)
		o.r.settle(req, data)
	}
	a := &Message{Data: append([]byte(nil), data...), Status: StatusRouted, Peer: o.key.peer, Member: o.addr, origin: req.origin,
		Instance: -1, Answer: true, Src: req.Dst, Dst: req.Src, Store: req.Store, Persist: req.Persist, CloneOfRequest: req.CloneID}
	if o.hooks != nil {
		// The peer's side sees the answer as the peer sent it.
		if !o.ingress(a) { // peerrules.go
			return false
		}
		if a.Drop {
			o.r.C.Dropped.Add(1)
			return true
		}
	}
	p.Inbound(a, req)
	req.origin.deliver(a)
	return true
}

// retryOn routes req again, instead of giving it answer data, when its
// protocol says the answer asks for that (AnswerRetrier) and the
// retransmission-action is retransmit with max-retransmissions left; the
// peers it went to are tried last. It runs apart from the connection's
// reader, which a new peer connection must not hold up.
func (o *outgoing) retryOn(p Protocol, req *Message, data []byte) bool {
	cfg := o.r.cfg
	if cfg.OnLost != LostRetransmit || req.retransmits >= cfg.MaxRetransmit {
		return false
	}
	ar, ok := p.(AnswerRetrier)
	if !ok || !ar.RetryOn(data) {
		return false
	}
	req.retransmits++
	o.r.C.Retried.Add(1)
	if req.Persist != "" {
		o.r.unpersist(req.Persist) // not back to the peer that declined
	}
	go req.origin.route(req)
	return true
}

// DefaultHandshake bounds a protocol's handshake on a new peer
// connection when the config names no bound (Diameter's
// handshake-timeout default).
const DefaultHandshake = 10 * time.Second

// udpAnswerMax is how long a UDP peer flow with requests in flight may
// stay silent before it is closed and they fail: SIP's transaction
// timeout over UDP (64*T1, RFC 3261 §17.1.1.2) [M: BIG-IP documents no
// value].
var udpAnswerMax = 32 * time.Second

// idleReader reads the peer's connection, closing it once it has stayed
// idle with no request in flight for its idle time; a UDP flow also
// once it has been silent for udpAnswerMax with requests in flight (a
// datagram has no connection whose end would fail them). It runs the
// protocol's watchdog on the connection too.
type idleReader struct{ o *outgoing }

// errWatchdog ends a peer connection whose watchdog probes went
// unanswered.
var errWatchdog = errors.New("peer did not answer its watchdog")

func (ir idleReader) Read(p []byte) (int, error) {
	o := ir.o
	idle, wd := o.idle, o.r.cfg.Watchdog
	var dog Watchdogger
	if wd > 0 {
		if dog, _ = o.r.cfg.Proto.(Watchdogger); dog == nil {
			wd = 0
		}
	}
	wait := idle
	if o.link.UDP && (wait == 0 || wait > o.answerMax) {
		wait = o.answerMax
	}
	for {
		step := wait
		if wd > 0 {
			next := max(time.Until(o.dogHeard.Add(wd)), time.Millisecond)
			if step == 0 || next < step {
				step = next
			}
		}
		if step > 0 {
			o.conn.SetReadDeadline(time.Now().Add(step))
		}
		n, err := o.conn.Read(p)
		if n > 0 && wd > 0 {
			// Whatever the peer sends shows it alive (RFC 3539 3.4.1).
			o.dogHeard, o.probing, o.misses = time.Now(), false, 0
		}
		if err == nil || n > 0 {
			if o.link.UDP {
				o.mu.Lock()
				o.heard = time.Now()
				o.mu.Unlock()
			}
			return n, err
		}
		if step == 0 || !errors.Is(err, timeoutErr) {
			return n, err
		}
		if wd > 0 && time.Since(o.dogHeard) >= wd && !o.probe(dog) {
			return 0, errWatchdog
		}
		if wait == 0 {
			continue
		}
		o.mu.Lock()
		inflight := len(o.pend) > 0 || len(o.keyed) > 0
		quiet := idle > 0 && !inflight && time.Since(o.last) >= idle
		mute := o.link.UDP && inflight && time.Since(o.heard) >= o.answerMax
		o.mu.Unlock()
		if quiet || mute {
			return 0, io.EOF
		}
	}
}

// probe is the watchdog's turn on a connection the peer has been quiet
// on for the watchdog time: the last probe, when it waits still, counts
// a failure; false once max-watchdog-failures are reached (the
// connection is to close), else a new probe is sent.
func (o *outgoing) probe(dog Watchdogger) bool {
	c := o.r.C
	if o.probing {
		o.misses++
		c.WatchdogFailed.Add(1)
		if o.misses >= max(o.r.cfg.MaxWatchdogFailures, 1) {
			c.WatchdogClosed.Add(1)
			return false
		}
	}
	o.wmu.Lock()
	o.wbuf = dog.Watchdog(o.wbuf[:0])
	_, err := o.conn.Write(o.wbuf)
	o.wmu.Unlock()
	if err != nil {
		return false
	}
	c.WatchdogSent.Add(1)
	c.Sent.Add(1)
	o.dogHeard, o.probing = time.Now(), true
	return true
}

// close ends o: every request still in flight fails (MR_FAILED on its
// originator).
func (o *outgoing) close() {
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		return
	}
	o.dead = true
	pend := o.pend
	o.pend = nil
	for _, m := range o.keyed {
		pend = append(pend, m)
	}
	o.keyed = nil
	sess, conn, done := o.sess, o.conn, o.done // set by open under mu
	o.mu.Unlock()
	o.unlist()
	if o.hooks != nil {
		o.hooks.Closed()
	}
	if sess != nil {
		sess.Close()
	}
	if conn != nil {
		conn.Close()
	}
	if done != nil {
		done()
	}
	for _, m := range pend {
		if m != nil && m.origin != nil {
			m.origin.inflight.Add(-1)
			m.origin.lost(m)
		}
	}
}

// ToPeer writes data as it is on the peer connection a Sticky
// protocol's session is bound to (an MQTT client's broker): packets a
// rule adds as the client leaves (MQTT_CLIENT_SHUTDOWN). false: there
// is none open, or it failed.
func (s *Session) ToPeer(data []byte) bool {
	s.mu.Lock()
	o := s.stick
	s.mu.Unlock()
	if o == nil || o.isDead() {
		return false
	}
	if o.writeBack(data) != nil {
		o.close()
		return false
	}
	return true
}

// stuck sends a client's answer (to a message its server sent it) on the
// session's own peer connection, as it is, when its protocol is Sticky
// and the connection is open: true when it went (or was lost with the
// connection).
func (s *Session) stuck(m *Message) bool {
	p := s.r.cfg.Proto
	if p == nil || !sticky(p) {
		return false
	}
	s.mu.Lock()
	o := s.stick
	s.mu.Unlock()
	if o == nil || o.isDead() {
		return false
	}
	if s.hooks != nil && !s.hooks.Ingress(m) {
		return true
	}
	if m.Drop {
		s.r.C.Dropped.Add(1)
		return true
	}
	if o.writeBack(m.Data) != nil {
		o.close()
	}
	return true
}
