// Package hsl is the sending side of iRules high-speed logging
// (HSL::open -proto UDP|TCP -pool P, HSL::send, and the log publishers'
// remote-high-speed-log destinations): one sender per pool, protocol and
// distribution, which balances messages over the pool's available members
// as BIG-IP does (or stays on one, or copies each to all), keeps TCP
// connections open and reconnects them, and never blocks the connection
// that runs the rule: HSL::send puts the message on a bounded queue, and a
// message that does not fit is dropped and counted.
package hsl

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Members returns a pool's members that may take traffic now, resolving
// the pool name as a rule writes it (bare names are in /Common); an error
// means the pool does not exist.
type Members func(pool string) ([]netip.AddrPort, error)

// Options configure a Hub.
type Options struct {
	// Members reads the pools' live member states (required).
	Members Members
	// Pick, when set, is the member the pool's load-balancing method
	// chooses now, as BIG-IP chooses HSL's members; without it (or when
	// its member fails) messages go round robin over Members.
	Pick func(pool string) (netip.AddrPort, bool)
	// Queue is the number of messages each sender holds before dropping
	// (0: DefaultQueue).
	Queue int
	// Logger receives connection failures and drop counts (rate limited).
	Logger *slog.Logger
	// DialTimeout bounds a TCP connect to a member (0: 1s).
	DialTimeout time.Duration
}

// Distribution is how a sender spreads messages over a pool's members,
// as a log destination's distribution setting asks (HSL::open -pool
// always balances).
type Distribution uint8

const (
	// Balanced sends each message to the member the pool's method picks.
	Balanced Distribution = iota
	// Adaptive stays on one member until it fails.
	Adaptive
	// Replicated sends every message to every available member.
	Replicated
)

// ParseDistribution reads a destination's distribution as tmsh writes it.
func ParseDistribution(s string) (Distribution, error) {
	switch s {
	case "balanced":
		return Balanced, nil
	case "adaptive", "":
		return Adaptive, nil
	case "replicated":
		return Replicated, nil
	}
	return 0, fmt.Errorf("distribution %q: must be adaptive, balanced or replicated", s)
}

func (d Distribution) String() string {
	switch d {
	case Adaptive:
		return "adaptive"
	case Replicated:
		return "replicated"
	}
	return "balanced"
}

// DefaultQueue is how many messages a sender queues per pool and protocol.
const DefaultQueue = 4096

// refresh is how long a sender uses one reading of the pool's members.
const refresh = 500 * time.Millisecond

// Hub holds the senders of every HSL handle rules opened.
type Hub struct {
	opts    Options
	mu      sync.Mutex
	senders sync.Map // handle -> *sender
	closed  bool
	wg      sync.WaitGroup
}

// New returns a hub reading members through o.Members.
func New(o Options) *Hub {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = time.Second
	}
	return &Hub{opts: o}
}

// Open implements HSL::open: it returns the handle of the pool's sender
// for proto (UDP or TCP), starting the sender on first use. The pool must
// exist.
func (h *Hub) Open(proto, pool string) (string, error) {
	return h.OpenDistributed(proto, pool, Balanced)
}

// OpenDistributed is Open for a log destination, whose distribution may
// be other than balanced: each distribution has its own sender.
func (h *Hub) OpenDistributed(proto, pool string, d Distribution) (string, error) {
	if proto != "UDP" && proto != "TCP" {
		return "", fmt.Errorf("HSL::open: bad protocol %q: must be UDP or TCP", proto)
	}
	handle := "hsl:" + proto + ":" + pool
	if d != Balanced {
		handle += "|" + d.String()
	}
	if _, ok := h.senders.Load(handle); ok {
		return handle, nil
	}
	if _, err := h.opts.Members(pool); err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", errors.New("HSL::open: the system is stopping")
	}
	if _, ok := h.senders.Load(handle); !ok {
		s := &sender{hub: h, proto: proto, pool: pool, dist: d, q: make(chan item, h.opts.Queue), done: make(chan struct{})}
		h.senders.Store(handle, s)
		h.wg.Add(1)
		go s.run()
	}
	return handle, nil
}

// Send implements HSL::send: it queues data without blocking and says
// whether it did; a message the queue cannot take is dropped and counted.
func (h *Hub) Send(handle string, data []byte) (bool, error) {
	v, ok := h.senders.Load(handle)
	if !ok {
		return false, fmt.Errorf("HSL::send: invalid handle %q (use the value HSL::open returned)", handle)
	}
	s := v.(*sender)
	select {
	case s.q <- item{data: data}:
		return true, nil
	default:
		s.droppedFull.Add(1)
		return false, nil
	}
}

// SendChecked is Send for a sender whose failures matter to the caller
// (a request-log profile that logs its errors elsewhere, or answers the
// client itself when the line cannot be logged): it says false, and
// queues nothing, when the line cannot go now, that is when the pool
// has no member available, when every member failed its last connect or
// write and none has taken a message since, or when the queue is full.
// A line queued that no member then takes is dropped and dropped is
// called with it, on the sender's goroutine (nil: nothing is called).
func (h *Hub) SendChecked(handle string, data []byte, dropped func([]byte)) bool {
	v, ok := h.senders.Load(handle)
	if !ok {
		return false
	}
	s := v.(*sender)
	if s.blocked.Load() {
		s.droppedNoMember.Add(1)
		return false
	}
	if ms, err := h.opts.Members(s.pool); err != nil || len(ms) == 0 {
		s.droppedNoMember.Add(1)
		return false
	}
	select {
	case s.q <- item{data: data, dropped: dropped}:
		return true
	default:
		s.droppedFull.Add(1)
		return false
	}
}

// Stats is one sender's counters.
type Stats struct {
	Proto, Pool string
	// Distribution is balanced for HSL::open -pool's senders.
	Distribution Distribution
	// Sent messages were written to a member; Queued wait now.
	Sent, Queued uint64
	// DroppedFull did not fit the queue; DroppedNoMember found no
	// available member (or none that took it).
	DroppedFull, DroppedNoMember uint64
	// Connects counts TCP connections made; Failures failed connects and
	// writes.
	Connects, Failures uint64
}

// Stats returns every sender's counters, by pool then protocol.
func (h *Hub) Stats() []Stats {
	var out []Stats
	h.senders.Range(func(_, v any) bool {
		s := v.(*sender)
		out = append(out, Stats{Proto: s.proto, Pool: s.pool, Distribution: s.dist, Sent: s.sent.Load(), Queued: uint64(len(s.q)),
			DroppedFull: s.droppedFull.Load(), DroppedNoMember: s.droppedNoMember.Load(),
			Connects: s.connects.Load(), Failures: s.failures.Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pool != out[j].Pool {
			return out[i].Pool < out[j].Pool
		}
		if out[i].Proto != out[j].Proto {
			return out[i].Proto < out[j].Proto
		}
		return out[i].Distribution < out[j].Distribution
	})
	return out
}

// Close stops every sender; queued messages are dropped.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.senders.Range(func(_, v any) bool {
		close(v.(*sender).done)
		return true
	})
	h.mu.Unlock()
	h.wg.Wait()
}

// item is one queued message, and what to do when no member takes it.
type item struct {
	data    []byte
	dropped func([]byte)
}

// recheckEvery is how often a blocked sender tries its pool's members.
const recheckEvery = 250 * time.Millisecond

// sender sends one pool's messages over one protocol.
type sender struct {
	hub         *Hub
	proto, pool string
	dist        Distribution
	q           chan item
	done        chan struct{}

	sent, droppedFull, droppedNoMember, connects, failures atomic.Uint64
	// blocked: the last message found no member to take it, and no
	// member has taken one since; SendChecked refuses while it is set,
	// and the sender tries the members again on its own (recheck).
	blocked atomic.Bool

	// Owned by run.
	members []netip.AddrPort
	read    time.Time
	next    int
	conns   map[netip.AddrPort]net.Conn
	// down holds members whose connect or write failed, until when they
	// are tried again.
	down map[netip.AddrPort]time.Time
	// reported is the drop count last logged.
	reported uint64
	// stay is the member an adaptive sender uses while it takes messages.
	stay netip.AddrPort
}

func (s *sender) run() {
	defer s.hub.wg.Done()
	s.conns = map[netip.AddrPort]net.Conn{}
	s.down = map[netip.AddrPort]time.Time{}
	defer func() {
		for _, c := range s.conns {
			c.Close()
		}
	}()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	var retry *time.Ticker
	var retryC <-chan time.Time
	for {
		if s.blocked.Load() != (retry != nil) {
			if retry == nil {
				retry = time.NewTicker(recheckEvery)
				retryC = retry.C
			} else {
				retry.Stop()
				retry, retryC = nil, nil
			}
		}
		select {
		case <-s.done:
			if retry != nil {
				retry.Stop()
			}
			return
		case <-tick.C:
			s.report()
		case <-retryC:
			s.recheck()
		case it := <-s.q:
			if s.send(it.data) {
				s.blocked.Store(false)
				continue
			}
			s.blocked.Store(true)
			if it.dropped != nil {
				it.dropped(it.data)
			}
		}
	}
}

// recheck is a blocked sender's look at its members: it is unblocked
// when one of them is available and not marked down, after a TCP
// connect to it succeeds (a UDP member cannot be asked without sending).
func (s *sender) recheck() {
	now := time.Now()
	ms, err := s.hub.opts.Members(s.pool)
	if err != nil {
		ms = nil
	}
	s.members, s.read = ms, now
	s.forget()
	for _, m := range s.members {
		if until, down := s.down[m]; down && now.Before(until) {
			continue
		}
		if s.proto == "UDP" || s.conns[m] != nil {
			s.blocked.Store(false)
			return
		}
		c, err := s.dial(m)
		if err != nil {
			s.fail(m, err)
			continue
		}
		s.conns[m] = c
		delete(s.down, m)
		s.blocked.Store(false)
		return
	}
}

// report logs drops since the last report, at most once per tick.
func (s *sender) report() {
	n := s.droppedFull.Load() + s.droppedNoMember.Load()
	if n == s.reported {
		return
	}
	s.hub.opts.Logger.Warn("HSL messages dropped", "pool", s.pool, "proto", s.proto,
		"dropped", n-s.reported, "queue-full", s.droppedFull.Load(), "no-member", s.droppedNoMember.Load())
	s.reported = n
}

// send writes msg to the next available member, trying each member at
// most once, and says whether one took it.
func (s *sender) send(msg []byte) bool {
	now := time.Now()
	if s.members == nil || now.Sub(s.read) > refresh {
		ms, err := s.hub.opts.Members(s.pool)
		if err != nil {
			ms = nil
		}
		s.members, s.read = ms, now
		s.forget()
	}
	switch s.dist {
	case Replicated:
		return s.replicate(now, msg)
	case Adaptive:
		if s.stay.IsValid() && s.offered(s.stay) {
			if until, down := s.down[s.stay]; !down || !now.Before(until) {
				if s.write(s.stay, msg) {
					s.sent.Add(1)
					return true
				}
			}
		}
		s.stay = netip.AddrPort{}
	}
	if pick := s.hub.opts.Pick; pick != nil {
		if m, ok := pick(s.pool); ok {
			if until, down := s.down[m]; !down || !now.Before(until) {
				if s.write(m, msg) {
					s.took(m)
					return true
				}
			}
		}
	}
	n := len(s.members)
	for i := 0; i < n; i++ {
		m := s.members[(s.next+i)%n]
		if until, ok := s.down[m]; ok && now.Before(until) {
			continue
		}
		if s.write(m, msg) {
			s.next = (s.next + i + 1) % n
			s.took(m)
			return true
		}
	}
	s.droppedNoMember.Add(1)
	return false
}

// took counts a message member m took; an adaptive sender stays on it.
func (s *sender) took(m netip.AddrPort) {
	s.sent.Add(1)
	if s.dist == Adaptive {
		s.stay = m
	}
}

// offered reports whether the pool still offers member m.
func (s *sender) offered(m netip.AddrPort) bool {
	for _, x := range s.members {
		if x == m {
			return true
		}
	}
	return false
}

// replicate writes msg to every available member; it is sent when one
// took it.
func (s *sender) replicate(now time.Time, msg []byte) bool {
	ok := false
	for _, m := range s.members {
		if until, down := s.down[m]; down && now.Before(until) {
			continue
		}
		if s.write(m, msg) {
			ok = true
		}
	}
	if ok {
		s.sent.Add(1)
		return true
	}
	s.droppedNoMember.Add(1)
	return false
}

// forget closes connections to members the pool no longer offers.
func (s *sender) forget() {
	keep := make(map[netip.AddrPort]bool, len(s.members))
	for _, m := range s.members {
		keep[m] = true
	}
	for m, c := range s.conns {
		if !keep[m] {
			c.Close()
			delete(s.conns, m)
		}
	}
}

// write sends msg to member m over its connection, connecting first when
// it has none; a connection that fails is made again once at once (the
// member may have restarted), and a member that cannot take msg is marked
// down for a second.
func (s *sender) write(m netip.AddrPort, msg []byte) bool {
	for attempt := 0; attempt < 2; attempt++ {
		c := s.conns[m]
		fresh := c == nil
		if fresh {
			var err error
			if c, err = s.dial(m); err != nil {
				s.fail(m, err)
				return false
			}
			s.conns[m] = c
		}
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Write(msg)
		if err == nil {
			delete(s.down, m)
			return true
		}
		c.Close()
		delete(s.conns, m)
		if fresh {
			s.fail(m, err)
			return false
		}
	}
	return false
}

// dial connects to m. A TCP connection gets a reader that closes it when
// the member closes its side, so the next message reconnects instead of
// writing into a connection nobody reads.
func (s *sender) dial(m netip.AddrPort) (net.Conn, error) {
	if s.proto == "UDP" {
		return net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(m))
	}
	c, err := net.DialTimeout("tcp", m.String(), s.hub.opts.DialTimeout)
	if err != nil {
		return nil, err
	}
	s.connects.Add(1)
	go func() {
		io.Copy(io.Discard, c)
		c.Close()
	}()
	return c, nil
}

func (s *sender) fail(m netip.AddrPort, err error) {
	s.failures.Add(1)
	if _, was := s.down[m]; !was {
		s.hub.opts.Logger.Warn("HSL member unreachable", "pool", s.pool, "proto", s.proto, "member", m.String(), "err", err)
	}
	s.down[m] = time.Now().Add(time.Second)
}
