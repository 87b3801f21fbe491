package mrf

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DynamicRouter is a protocol whose clients name themselves as they
// connect (a Diameter CER's Origin-Host and Origin-Realm): with
// insertion, each such client connection becomes a route to itself by
// those names; with lookup, a request naming a host or realm one of
// those routes has goes on that client's connection before the static
// routes are looked at, its answer (read from the client) going back to
// whoever sent the request.
type DynamicRouter interface {
	// DynamicRoutes are the session profile's dynamic-route-insertion,
	// dynamic-route-lookup and dynamic-route-timeout (0: a route lives
	// as long as its connection).
	DynamicRoutes() (insert, lookup bool, ttl time.Duration)
	// Identity is the host and realm a client's message names it by
	// when it is the message that opens its side (a CER), in lower
	// case; ok false for any other message.
	Identity(data []byte) (host, realm string, ok bool)
	// Dest is the host and realm a request names as its destination
	// (views of data; nil: none).
	Dest(data []byte) (host, realm []byte)
}

// DynamicRoute is one route a client's connection made, as `show`
// lists it.
type DynamicRoute struct {
	Host, Realm string
	// Client is the address the client connected from (invalid: the
	// virtual did not say), by which an operator finds its connection.
	Client netip.Addr
	// Idle is how long since the client last sent anything; Left how
	// long the route lives on if the client sends nothing more (the
	// dynamic-route-timeout less Idle; -1: as long as its connection).
	Idle, Left time.Duration
}

// dynTable is a router's dynamic routes by host and by realm.
type dynTable struct {
	mu     sync.Mutex
	hosts  map[string]*dynRoute
	realms map[string][]*dynRoute
	rot    uint64
}

// dynRoute is a client connection as a route: back is the connection,
// seen as a peer connection the requests routed to it leave on.
type dynRoute struct {
	host, realm string
	sess        *Session
	back        *outgoing
	heard       atomic.Int64 // UnixNano of the client's last message
}

// live says whether d may still take requests at now: its connection is
// open and, with a ttl, the client sent something within it.
func (d *dynRoute) live(now int64, ttl time.Duration) bool {
	if d.back.isDead() {
		return false
	}
	return ttl <= 0 || now-d.heard.Load() < int64(ttl)
}

// DynamicRoutes are the router's dynamic routes still live, ordered by
// host, read under the table's lock (nothing on the message path).
func (r *Router) DynamicRoutes() []DynamicRoute {
	dr, ok := r.cfg.Proto.(DynamicRouter)
	if !ok {
		return nil
	}
	_, _, ttl := dr.DynamicRoutes()
	now := time.Now().UnixNano()
	t := &r.dynt
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]DynamicRoute, 0, len(t.hosts))
	for _, d := range t.hosts {
		if d.live(now, ttl) {
			idle, left := time.Duration(now-d.heard.Load()), time.Duration(-1)
			if ttl > 0 {
				left = ttl - idle
			}
			out = append(out, DynamicRoute{Host: d.host, Realm: d.realm, Client: d.back.addr.Addr(), Idle: idle, Left: left})
		}
	}
	slices.SortFunc(out, func(a, b DynamicRoute) int { return strings.Compare(a.Host, b.Host) })
	return out
}

// dynamicLearn runs on a message the session's protocol handled by
// itself: the client's capabilities exchange makes the route of its
// connection (dynamic-route-insertion), and any later one (a watchdog)
// shows the client alive.
func (s *Session) dynamicLearn(data []byte) {
	dr, ok := s.r.cfg.Proto.(DynamicRouter)
	if !ok || s.peer != nil {
		return
	}
	insert, _ := s.DynamicRouting()
	if d := s.dyn; d != nil {
		if !insert { // a rule turned insertion off: the route goes
			s.dynamicClose()
			s.dyn = nil
			return
		}
		d.heard.Store(time.Now().UnixNano())
		return
	}
	if host, realm, ok := dr.Identity(data); ok && host != "" {
		s.ident = [2]string{host, realm}
	}
	host, realm := s.ident[0], s.ident[1]
	if !insert || host == "" {
		return
	}
	ready := make(chan struct{})
	close(ready)
	o := &outgoing{r: s.r, key: connKey{peer: "dynamic " + host}, ready: ready, conn: sessConn{s}}
	if s.client.IsValid() {
		o.addr = netip.AddrPortFrom(s.client, 0)
	}
	d := &dynRoute{host: host, realm: realm, sess: s, back: o}
	d.heard.Store(time.Now().UnixNano())
	t := &s.r.dynt
	t.mu.Lock()
	if t.hosts == nil {
		t.hosts, t.realms = map[string]*dynRoute{}, map[string][]*dynRoute{}
	}
	if old := t.hosts[host]; old != nil {
		t.realms[old.realm] = without(t.realms[old.realm], old)
	}
	// The newest connection of a host is its route [M: F5 documents
	// the route, not a host connecting twice].
	t.hosts[host] = d
	if realm != "" {
		t.realms[realm] = append(t.realms[realm], d)
	}
	t.mu.Unlock()
	s.dyn = d
}

func without(ds []*dynRoute, d *dynRoute) []*dynRoute {
	for i, x := range ds {
		if x == d {
			return append(ds[:i:i], ds[i+1:]...)
		}
	}
	return ds
}

// dynamicIn runs on each message of a client whose connection is a
// dynamic route: it shows the client alive, and an answer to a request
// routed to it goes back to that request's sender (true: taken).
func (s *Session) dynamicIn(m *Message) bool {
	d := s.dyn
	d.heard.Store(time.Now().UnixNano())
	if !m.Answer || m.Bad {
		return false
	}
	p := s.r.cfg.Proto
	c := p.Classify(m.Data)
	o := d.back
	o.mu.Lock()
	req := o.keyed[c.Key]
	if req != nil && c.Final {
		delete(o.keyed, c.Key)
	}
	o.mu.Unlock()
	if req == nil {
		return false
	}
	s.r.C.FromPeers.Add(1)
	if c.Final {
		req.origin.inflight.Add(-1)
		s.r.C.Answered.Add(1)
		s.r.settle(req, m.Data)
	}
	a := &Message{Data: m.Data, Status: StatusRouted, Peer: o.key.peer, Member: o.addr, origin: req.origin,
		Instance: -1, Answer: true, Src: req.Dst, Dst: req.Src, Store: req.Store, Persist: req.Persist}
	p.Inbound(a, req)
	req.origin.deliver(a)
	return true
}

// dynamicPick is the client connection a request goes on by the dynamic
// routes (dynamic-route-lookup): the one whose host the request names
// as its Destination-Host, else one whose realm is its
// Destination-Realm (in turn), never the connection the request came
// from [M]; nil: none, the request is routed on.
func (s *Session) dynamicPick(m *Message) *outgoing {
	dr, ok := s.r.cfg.Proto.(DynamicRouter)
	if !ok {
		return nil
	}
	_, _, ttl := dr.DynamicRoutes()
	if _, lookup := s.DynamicRouting(); !lookup {
		return nil
	}
	t := &s.r.dynt
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.hosts) == 0 {
		return nil
	}
	host, realm := dr.Dest(m.Data)
	now := time.Now().UnixNano()
	var d *dynRoute
	if len(host) > 0 {
		if x := t.hosts[strings.ToLower(string(host))]; x != nil && x.sess != s && x.live(now, ttl) {
			d = x
		}
	}
	if d == nil && len(realm) > 0 {
		rs := t.realms[strings.ToLower(string(realm))]
		for i := range rs {
			x := rs[int((t.rot+uint64(i))%uint64(len(rs)))]
			if x.sess != s && x.live(now, ttl) {
				d = x
				t.rot++
				break
			}
		}
	}
	if d == nil {
		return nil
	}
	m.Peer, m.Member = d.back.key.peer, d.back.addr
	s.r.C.ConnsReused.Add(1)
	return d.back
}

// dynamicClose takes the session's route away as its connection ends;
// the requests routed to it and not answered are handled as when a peer
// connection closes (the session profile's retransmission-action).
func (s *Session) dynamicClose() {
	d := s.dyn
	t := &s.r.dynt
	t.mu.Lock()
	if t.hosts[d.host] == d {
		delete(t.hosts, d.host)
	}
	t.realms[d.realm] = without(t.realms[d.realm], d)
	if len(t.realms[d.realm]) == 0 {
		delete(t.realms, d.realm)
	}
	t.mu.Unlock()
	d.back.close()
}

// sessConn is a client's connection as the peer connection of its
// dynamic route: what is written goes to the client as the session's
// own messages do; the client's messages are read by its flow.
type sessConn struct{ s *Session }

func (c sessConn) Write(b []byte) (int, error) {
	c.s.wmu.Lock()
	defer c.s.wmu.Unlock()
	if err := c.s.write(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (c sessConn) Read([]byte) (int, error)         { return 0, net.ErrClosed }
func (c sessConn) Close() error                     { return nil }
func (c sessConn) LocalAddr() net.Addr              { return nil }
func (c sessConn) RemoteAddr() net.Addr             { return nil }
func (c sessConn) SetDeadline(time.Time) error      { return nil }
func (c sessConn) SetReadDeadline(time.Time) error  { return nil }
func (c sessConn) SetWriteDeadline(time.Time) error { return nil }

// DynamicRouting is the connection's dynamic-route insertion and lookup:
// the session profile's, unless a rule set its own
// (DIAMETER::dynamic_route_insertion, DIAMETER::dynamic_route_lookup).
func (s *Session) DynamicRouting() (insert, lookup bool) {
	if dr, ok := s.r.cfg.Proto.(DynamicRouter); ok {
		insert, lookup, _ = dr.DynamicRoutes()
	}
	v := s.dynSet.Load()
	if v&dynInsertSet != 0 {
		insert = v&dynInsertOn != 0
	}
	if v&dynLookupSet != 0 {
		lookup = v&dynLookupOn != 0
	}
	return insert, lookup
}

// SetDynamicRouting sets the connection's own dynamic-route insertion
// or lookup (which: "insertion" or "lookup"). Lookup applies to the
// requests routed from then on; insertion at the client's next message
// the virtual answers itself (its capabilities exchange, a watchdog),
// which then makes, or takes away, the connection's route [M: F5 names
// the per-connection setting, not when it takes effect].
func (s *Session) SetDynamicRouting(which string, on bool) {
	set, bit := uint32(dynLookupSet), uint32(dynLookupOn)
	if which == "insertion" {
		set, bit = dynInsertSet, dynInsertOn
	}
	for {
		old := s.dynSet.Load()
		v := old | set
		if on {
			v |= bit
		} else {
			v &^= bit
		}
		if s.dynSet.CompareAndSwap(old, v) {
			return
		}
	}
}

// The bits of Session.dynSet.
const (
	dynInsertSet = 1 << iota
	dynInsertOn
	dynLookupSet
	dynLookupOn
)
