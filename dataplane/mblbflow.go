package dataplane

import (
	"context"
	"hash/fnv"
	"net"
	"net/netip"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/state"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/mblb"
)

// Message-based load balancing on the proxy: a virtual with the mblb
// profile hands each accepted client connection to its virtual's
// mblb.Engine instead of the L4 copy loops. The engine frames messages
// (declaratively, or through the virtual's iRules and TCP::notify) and asks
// this file, per message, which member takes it (the pool's balancing,
// member states, a rule's pool/member/node choice, persistence) and how to
// reach it (translation and SNAT). The connection table shows the client
// flow and every server connection as separate flows, as BIG-IP does for
// MBLB (seed 000: `client <-> vs <-> any6` and `any6 <-> vs <-> member`).

// mblbPlane is the plane's set of message balancing engines, one per
// virtual with an mblb profile, rebuilt only when the virtual's MBLB
// settings change.
type mblbPlane struct {
	mu  sync.Mutex
	cur atomic.Pointer[map[*state.Virtual]*mblbVS]
}

// mblbVS is one virtual's engine and what its callbacks need.
type mblbVS struct {
	p     *Plane
	vs    *state.Virtual
	cfg   MBLB
	idle  time.Duration
	ruled bool // the rules frame messages (TCP::notify)
	eng   *mblb.Engine

	legs sync.Map // *mblb.Leg -> *legFlow

	// suspects are members whose connection just failed: they are passed
	// over while another member can take the message, so that a dead
	// member costs one failed connect per second, not one per message,
	// until its monitor marks it down.
	smu      sync.Mutex
	suspects []suspect
	nsuspect atomic.Int32
}

type suspect struct {
	m     *state.Member
	until int64
}

// suspectFor is how long a failed member is passed over.
const suspectFor = time.Second

// sameMBLB reports whether a running engine can go on serving v.
func (mv *mblbVS) same(cfg *MBLB, idle time.Duration, ruled bool) bool {
	return mv.idle == idle && mv.ruled == ruled && reflect.DeepEqual(mv.cfg, *cfg)
}

// ruledBy reports whether r frames messages itself: rule framing needs a
// CLIENT_DATA handler (an iRules program, not a test hook).
func ruledBy(cfg *MBLB, r Rules) bool {
	return cfg.Request.Mode == mblb.Rule && Program(r) != nil && r.Handles(EventClientData)
}

// applyMBLB builds, keeps or retires the engines after a commit swapped in
// virtuals. The caller holds p.mu.
func (p *Plane) applyMBLB(virtuals map[string]*state.Virtual) {
	p.mblbs.mu.Lock()
	defer p.mblbs.mu.Unlock()
	// A copy: the published map is read without a lock (mblbFor) and
	// must never change.
	old := map[*state.Virtual]*mblbVS{}
	if cur := p.mblbs.cur.Load(); cur != nil {
		for v, mv := range *cur {
			old[v] = mv
		}
	}
	next := map[*state.Virtual]*mblbVS{}
	for _, v := range virtuals {
		snap := v.Snap.Load()
		cfg := snap.Cfg.MBLB
		if cfg == nil {
			continue
		}
		ruled := ruledBy(cfg, snap.Cfg.Rules)
		if mv := old[v]; mv != nil && mv.same(cfg, snap.Idle, ruled) {
			next[v] = mv
			delete(old, v)
			continue
		}
		mv, err := p.newMBLB(v, cfg, snap.Idle, ruled)
		if err != nil {
			p.log.Error("Virtual " + v.Name + ": message-based load balancing: " + err.Error())
			continue
		}
		next[v] = mv
	}
	for _, mv := range old {
		go mv.retire()
	}
	p.mblbs.cur.Store(&next)
}

// closeMBLB stops every engine (Plane.Close).
func (p *Plane) closeMBLB() {
	p.mblbs.mu.Lock()
	cur := p.mblbs.cur.Swap(nil)
	p.mblbs.mu.Unlock()
	if cur == nil {
		return
	}
	for _, mv := range *cur {
		mv.eng.Close()
	}
}

// mblbFor returns the running engine of vs, or nil.
func (p *Plane) mblbFor(vs *state.Virtual) *mblbVS {
	if cur := p.mblbs.cur.Load(); cur != nil {
		return (*cur)[vs]
	}
	return nil
}

// retire lets an engine replaced by a commit finish its clients (a
// profile change applies to new connections, as on BIG-IP), then closes
// it and its pooled connections.
func (mv *mblbVS) retire() {
	for mv.eng.Stats().Sessions > 0 {
		time.Sleep(200 * time.Millisecond)
	}
	mv.eng.Close()
}

// newMBLB starts the engine of one virtual.
func (p *Plane) newMBLB(vs *state.Virtual, cfg *MBLB, idle time.Duration, ruled bool) (*mblbVS, error) {
	mv := &mblbVS{p: p, vs: vs, cfg: *cfg, idle: idle, ruled: ruled}
	ec := mblb.Config{
		Pick:            mv.pick,
		Dial:            mv.dial,
		Request:         cfg.Request,
		Response:        cfg.Response,
		MaxMessageSize:  cfg.MaxMessageSize,
		MaxInFlight:     cfg.MaxInFlight,
		DisableRetry:    cfg.DisableRetry,
		ResponseTimeout: cfg.ResponseTimeout,
		IdleTimeout:     idle,
		ConnectTimeout:  p.opts.ConnectTimeout,
		Events: mblb.Events{
			LegOpened:    mv.legOpened,
			LegClosed:    mv.legClosed,
			MemberFailed: mv.memberFailed,
			Log:          func(msg string) { p.log.Info(msg) },
		},
	}
	ec.DialFD = mv.dialFD()
	if cfg.Request.Mode == mblb.Rule && !ruled {
		// No rule finds the boundaries: one read is one message.
		ec.Request, ec.Response = mblb.Framing{}, mblb.Framing{}
	}
	if oc := cfg.OneConnect; oc != nil {
		ec.OneConnect = &mblb.OneConnect{SourceMask: oc.SourceMask, MaxSize: oc.MaxSize,
			MaxAge: oc.MaxAge, MaxReuse: oc.MaxReuse, IdleTimeoutOverride: oc.IdleTimeoutOverride,
			// A rule's framing cannot be trusted with two clients' answers
			// in one read (seed 000's rule releases whatever arrived as one
			// response): a shared connection carries one message at a
			// time, as BIG-IP's HTTP OneConnect does. Declarative framing
			// knows its boundaries and pipelines.
			Exclusive: ec.Request.Mode == mblb.Rule}
	}
	eng, err := mblb.New(ec)
	if err != nil {
		return nil, err
	}
	mv.eng = eng
	return mv, nil
}

// mblbFlow is a client connection of a message-balanced virtual: a flow
// without server legs of its own (any6.any any6.any) whose messages the
// engine's session spreads over members.
type mblbFlow struct {
	flows.Flow
	mv   *mblbVS
	vs   *state.Virtual
	sess *mblb.Session
	rr   *mblbRules // nil without iRules
}

// Received implements mblb.Meter for the client side.
func (f *mblbFlow) Received(n int) {
	pk := state.Packets(n)
	f.BytesIn.Add(uint64(n))
	f.PktsIn.Add(pk)
	f.vs.Stats.In(n, pk)
}

// Sent implements mblb.Meter for the client side.
func (f *mblbFlow) Sent(n int) {
	pk := state.Packets(n)
	f.BytesOut.Add(uint64(n))
	f.PktsOut.Add(pk)
	f.vs.Stats.Out(n, pk)
}

// legFlow is one server connection in the connection table: its client
// side is any6.any (it belongs to no client, or to one client among
// many), its server side the SNAT address and the member.
type legFlow struct {
	flows.Flow
	leg flows.Leg
	m   *state.Member // nil for a node a rule named
}

// Received implements mblb.Meter for a server connection.
func (lf *legFlow) Received(n int) {
	pk := state.Packets(n)
	lf.leg.BytesIn.Add(uint64(n))
	lf.leg.PktsIn.Add(pk)
	lf.Touch(time.Now().UnixNano())
	if m := lf.m; m != nil {
		m.Stats.In(n, pk)
		m.Pool.Stats.In(n, pk)
		m.Node.Stats.In(n, pk)
	}
}

// Sent implements mblb.Meter for a server connection.
func (lf *legFlow) Sent(n int) {
	pk := state.Packets(n)
	lf.leg.BytesOut.Add(uint64(n))
	lf.leg.PktsOut.Add(pk)
	lf.Touch(time.Now().UnixNano())
	if m := lf.m; m != nil {
		m.Stats.Out(n, pk)
		m.Pool.Stats.Out(n, pk)
		m.Node.Stats.Out(n, pk)
	}
}

// serveMBLB runs one accepted client connection of a message-balanced
// virtual to its end, on goroutines. The virtual's connection count is
// already taken.
func (p *Plane) serveMBLB(vs *state.Virtual, snap *state.VirtualSnap, c *net.TCPConn) {
	mv := p.mblbFor(vs)
	if mv == nil {
		reset(c)
		vs.Stats.Close()
		return
	}
	f, opts := mv.newFlow(snap, rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr()))
	f.sess = mv.eng.NewSession(c, opts)
	s := f.sess
	f.Closer = func(reset bool) { s.Close(reset) }
	p.table.Add(&f.Flow)
	defer f.finish()
	if f.rr != nil && !f.rr.accepted() {
		return
	}
	s.Run()
}

// newFlow is the connection-table record of a new client of the virtual,
// and what its engine session needs to know of it.
func (mv *mblbVS) newFlow(snap *state.VirtualSnap, client, local netip.AddrPort) (*mblbFlow, mblb.ClientOptions) {
	f := &mblbFlow{mv: mv, vs: mv.vs}
	f.Client = client
	f.Local = local
	f.Virtual = mv.vs.Name
	f.Protocol = "tcp"
	f.IdleTimeout = snap.Idle
	opts := mblb.ClientOptions{Tag: f, Touch: f.Touch, Meter: f}
	src := mv.source(snap, f.Client, snap.Cfg.Destination)
	opts.Source = src.Addr()
	if Program(snap.Cfg.Rules) != nil {
		f.rr = newMBLBRules(f, snap)
		if mv.ruled {
			opts.Rule = f.rr
		}
	}
	return f, opts
}

// finish takes an ended client out of the table and the virtual's counts.
func (f *mblbFlow) finish() {
	if f.rr != nil {
		f.rr.end()
	}
	f.mv.p.table.Remove(&f.Flow)
	f.vs.Stats.Close()
	f.vs.Durs.Note(uint64(time.Since(f.Created()) / time.Millisecond))
}

// memberID numbers a member for the engine: stable across commits (the
// runtime's key is), and distinct from every node a rule may name.
func memberID(m *state.Member) mblb.MemberID {
	h := fnv.New64a()
	h.Write([]byte(m.Key))
	return mblb.MemberID(h.Sum64() &^ (1 << 63))
}

func nodeID(a netip.AddrPort) mblb.MemberID {
	h := fnv.New64a()
	b, _ := a.MarshalBinary()
	h.Write(b)
	return mblb.MemberID(h.Sum64() | 1<<63)
}

// member describes m to the engine and counts the message on it: Total
// Requests of a member of a message-balanced virtual are its messages.
func (mv *mblbVS) member(snap *state.VirtualSnap, m *state.Member) mblb.Member {
	m.Stats.Requests.Add(1)
	m.Pool.Stats.Requests.Add(1)
	m.Node.Stats.Requests.Add(1)
	return mblb.Member{ID: memberID(m), Addr: state.Translate(snap.Cfg, m.Cfg.Load().Addr, snap.Cfg.Destination), Pool: m.Pool.Name, Name: m.Name, Ref: m}
}

// pick is the engine's Pick: one member for one message.
func (mv *mblbVS) pick(c mblb.Choice) (mblb.Member, error) {
	snap := mv.vs.Snap.Load()
	pool := snap.Pool
	t := c.Target
	if t.Node && t.Member.IsValid() {
		a := t.Member
		if a.Port() == 0 {
			a = netip.AddrPortFrom(a.Addr(), snap.Cfg.Destination.Port())
		}
		if id := nodeID(a); !excludedID(c.Exclude, id) {
			return mblb.Member{ID: id, Addr: a, Name: a.String()}, nil
		}
		// The node the rule named failed this message: balance it instead.
	} else if t.Pool != "" {
		if named := mv.p.rulePools().Named(mv.vs.Name, t.Pool); named != nil {
			pool = named
		}
	}
	if pool == nil {
		return mblb.Member{}, mblb.ErrNoMember
	}
	ps := pool.Snap.Load()
	if ps == nil {
		return mblb.Member{}, mblb.ErrNoMember
	}
	var exclude []*state.Member
	if len(c.Exclude) > 0 {
		for _, m := range ps.Members {
			if excludedID(c.Exclude, memberID(m)) {
				exclude = append(exclude, m)
			}
		}
	}
	// `pool p member a p`: that member, unless it is forced offline, down
	// or already failed this message; then persistence: the rule's
	// `persist uie <key>` for this message, else a source-address profile
	// keyed on the client (mblbpersist.go); then the pool's balancing,
	// passing over members that just failed while others can take it.
	var named state.Target
	if !t.Node {
		named = state.Target{Addr: t.Member, Accept: state.AvailDisabled}
	}
	m, _, by := state.Choose(pool, named, func() (*state.Pool, *state.Member) { return mv.persistLookup(snap, pool, c) },
		exclude, state.Chooser{Avoid: mv.suspected()})
	if m == nil {
		return mblb.Member{}, mblb.ErrNoMember
	}
	if by == state.ByBalancing {
		mv.persistRecord(snap, pool, c, m)
	}
	return mv.member(snap, m), nil
}

func excludedID(list []mblb.MemberID, id mblb.MemberID) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

// suspected returns the members passed over while others can take a
// message, dropping those whose time is up.
func (mv *mblbVS) suspected() []*state.Member {
	if mv.nsuspect.Load() == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	var out []*state.Member
	mv.smu.Lock()
	keep := mv.suspects[:0]
	for _, s := range mv.suspects {
		if s.until > now {
			keep = append(keep, s)
			out = append(out, s.m)
		}
	}
	mv.suspects = keep
	mv.nsuspect.Store(int32(len(keep)))
	mv.smu.Unlock()
	return out
}

// memberFailed is the engine's report of a failed connect or connection.
func (mv *mblbVS) memberFailed(m mblb.Member, err error) {
	rt, ok := m.Ref.(*state.Member)
	if !ok {
		return
	}
	until := time.Now().Add(suspectFor).UnixNano()
	mv.smu.Lock()
	found := false
	for i := range mv.suspects {
		if mv.suspects[i].m == rt {
			mv.suspects[i].until, found = until, true
		}
	}
	if !found {
		mv.suspects = append(mv.suspects, suspect{m: rt, until: until})
	}
	mv.nsuspect.Store(int32(len(mv.suspects)))
	mv.smu.Unlock()
}

// source is the server side's source for a client of this virtual, as
// source-address-translation says.
func (mv *mblbVS) source(snap *state.VirtualSnap, client, dst netip.AddrPort) netip.AddrPort {
	return state.SNATSource(mv.vs, snap, client, snap.Cfg.Destination, dst, nil)
}

// dial is the engine's Dial: SNAT as the virtual says, keeping the
// client's port on the first server connection when it is free (seed 000
// §2.2 saw the first server flow reuse the client's source port and the
// second take another).
func (mv *mblbVS) dial(_ context.Context, client netip.AddrPort, m mblb.Member) (net.Conn, error) {
	snap := mv.vs.Snap.Load()
	c, err := mv.p.dial(mv.source(snap, client, m.Addr), m.Addr)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// legOpened puts a new server connection in the connection table and on
// its member's counters, and runs SERVER_CONNECTED for its client.
func (mv *mblbVS) legOpened(l *mblb.Leg) {
	lf := &legFlow{}
	snap := mv.vs.Snap.Load()
	lf.Local = snap.Cfg.Destination
	lf.Virtual = mv.vs.Name
	lf.Protocol = "tcp"
	lf.IdleTimeout = mv.idle
	lf.leg = flows.Leg{Client: l.Local, Server: l.Remote, Pool: l.Member.Pool, Member: l.Member.Name}
	if m, ok := l.Member.Ref.(*state.Member); ok {
		lf.m = m
		lf.leg.Owner = m
		m.Stats.TryOpen(0)
		m.Node.Stats.TryOpen(0)
		m.Pool.Stats.TryOpen(0)
	}
	lf.AddLeg(&lf.leg)
	lf.Closer = func(bool) { l.Abort() }
	l.Meter = lf
	mv.legs.Store(l, lf)
	mv.p.table.Add(&lf.Flow)
	if f, ok := l.Owner.(*mblbFlow); ok && f.rr != nil {
		f.rr.serverConnected(l)
	}
}

// legClosed takes a server connection out of the table and its counts.
func (mv *mblbVS) legClosed(l *mblb.Leg) {
	v, ok := mv.legs.LoadAndDelete(l)
	if !ok {
		return
	}
	lf := v.(*legFlow)
	mv.p.table.Remove(&lf.Flow)
	if m := lf.m; m != nil {
		m.Stats.Close()
		m.Node.Stats.Close()
		m.Pool.Stats.Close()
	}
}

// OneConnectStats sums `show ltm profile one-connect` for one profile
// over the message-balanced virtuals using it; ok is false when none does.
func (p *Plane) OneConnectStats(profile string) (st mblb.OneConnectStats, ok bool) {
	cur := p.mblbs.cur.Load()
	if cur == nil {
		return st, false
	}
	for _, mv := range *cur {
		if oc := mv.cfg.OneConnect; oc == nil || oc.Profile != profile {
			continue
		}
		s, has := mv.eng.OneConnectStats()
		if !has {
			continue
		}
		ok = true
		st.CurrentIdle += s.CurrentIdle
		st.Maximum += s.Maximum
		st.TotalReuses += s.TotalReuses
		st.New += s.New
	}
	return st, ok
}

// MBLBStats are a message-balanced virtual's engine counters.
type MBLBStats = mblb.Stats

// MBLBStats returns the engine counters of a message-balanced virtual.
func (p *Plane) MBLBStats(virtual string) (MBLBStats, bool) {
	cur := p.mblbs.cur.Load()
	if cur == nil {
		return MBLBStats{}, false
	}
	for vs, mv := range *cur {
		if vs.Name == virtual {
			return mv.eng.Stats(), true
		}
	}
	return MBLBStats{}, false
}

// MBLBProfileStats sums the engine counters of the message-balanced
// virtuals using one mblb profile; ok is false when none does.
func (p *Plane) MBLBProfileStats(profile string) (st MBLBStats, ok bool) {
	cur := p.mblbs.cur.Load()
	if cur == nil {
		return st, false
	}
	for _, mv := range *cur {
		if mv.cfg.Profile != profile {
			continue
		}
		ok = true
		s := mv.eng.Stats()
		st.Messages += s.Messages
		st.Responses += s.Responses
		st.Retries += s.Retries
		st.Oversize += s.Oversize
		st.Resets += s.Resets
		st.ServerFailures += s.ServerFailures
		st.Unsolicited += s.Unsolicited
		st.ServerConnsOpened += s.ServerConnsOpened
		st.Sessions += s.Sessions
		st.ServerConns += s.ServerConns
	}
	return st, ok
}
