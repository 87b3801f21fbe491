// Package dataplane is openltm's runtime: virtual server listeners, the
// TCP proxy, load balancing, health monitors, member states, SNAT,
// statistics and the connection table. The daemon drives it through one
// entry point, Apply, with each committed configuration generation, and
// reads it through snapshot functions for `show` commands.
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/dataplane/persist"
)

// Options configure a Plane.
type Options struct {
	// Logger receives BIG-IP-worded lines (monitor status changes, rule
	// errors); nil means slog.Default().
	Logger *slog.Logger
	// ConnectTimeout bounds a server-side connect; 0 means 5 s.
	ConnectTimeout time.Duration
	// BusyPoll is how long an event loop goes on polling after its last
	// events before it sleeps; 0 sleeps at once. ltmd runs with
	// DefaultBusyPoll. See evloop.Loop.SetBusyPoll for the trade.
	BusyPoll time.Duration
}

// DefaultBusyPoll is ltmd's busy-poll time: long enough to span a
// member's or a client's answer on this host (tens of microseconds), short
// enough that a quiet loop is asleep within a fraction of a millisecond.
const DefaultBusyPoll = 200 * time.Microsecond

// Plane is a running dataplane. All methods are safe for concurrent use.
type Plane struct {
	opts  Options
	log   *slog.Logger
	table *flows.Table
	// persist is the persistence table (persistence.go); its zero value
	// is ready.
	persist persist.Table

	mu        sync.Mutex // serializes Apply, Close and map reads
	closed    bool
	cfg       *Config
	virtuals  map[string]*vsRT
	pools     map[string]*poolRT
	members   map[string]*memberRT
	nodes     map[string]*nodeRT
	listeners map[netip.AddrPort]*listener
	poolIndex atomic.Pointer[map[string]*poolRT] // for rules, read per flow
	running   atomic.Pointer[Config]             // for rules (snatpools)
	accepts   sync.WaitGroup
	mblbs     mblbPlane // message-based virtuals' engines
	loops     loopSet   // where listeners accept and plain flows run
}

// New starts an empty dataplane.
func New(opts Options) *Plane {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 5 * time.Second
	}
	p := &Plane{
		opts:      opts,
		log:       opts.Logger,
		table:     flows.NewTable(),
		cfg:       &Config{},
		virtuals:  map[string]*vsRT{},
		pools:     map[string]*poolRT{},
		members:   map[string]*memberRT{},
		nodes:     map[string]*nodeRT{},
		listeners: map[netip.AddrPort]*listener{},
	}
	empty := map[string]*poolRT{}
	p.poolIndex.Store(&empty)
	return p
}

// listener is one bound address:port; the virtual that owns it can change
// between commits without closing the socket.
type listener struct {
	addr netip.AddrPort
	vs   atomic.Pointer[vsRT]
	listenSys
}

// Apply brings the plane from what it runs to cfg, touching only what
// changed: listeners of unchanged destinations stay bound, flows go on,
// member states and counters are kept. old is the generation the daemon
// believes is running; the plane diffs against its own state, so old is
// only a hint and may be nil. On error nothing was changed.
func (p *Plane) Apply(old, cfg *Config) error {
	_ = old
	if cfg == nil {
		cfg = &Config{}
	}
	if err := Check(cfg); err != nil {
		return err
	}
	specs, err := compileMonitors(cfg)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("dataplane is closed")
	}

	// 1. Bind every new address first: the only step that can fail.
	want := map[netip.AddrPort]string{}
	for name, v := range cfg.Virtuals {
		ports, _ := v.ports()
		for _, port := range ports {
			want[netip.AddrPortFrom(v.Destination.Addr(), port)] = name
		}
	}
	fresh := map[netip.AddrPort]*listener{}
	for ap, name := range want {
		if p.listeners[ap] != nil {
			continue
		}
		l, err := p.listen(ap)
		if err != nil {
			for _, l := range fresh {
				l.closeUnstarted()
			}
			return fmt.Errorf("virtual %s: cannot listen on %s: %v", name, ap, rawsock.UnwrapOp(err))
		}
		fresh[ap] = l
	}

	// 2. Nodes, members, pools and virtuals: reuse runtimes by name.
	var stale []*monitor.Instance
	nodes := map[string]*nodeRT{}
	nodeFor := func(name string, addr netip.Addr) *nodeRT {
		if n := nodes[name]; n != nil {
			return n
		}
		nc := cfg.Nodes[name]
		if nc == nil {
			nc = &Node{Name: name, Addr: addr}
		}
		n := p.nodes[name]
		if n == nil {
			n = &nodeRT{name: name, watch: newWatch("Node " + name + " address " + nc.Addr.String())}
			n.watch.logf = p.logStatus
			n.watch.changed = func(o, s monStatus) { p.nodeChanged(n, o, s) }
		}
		n.cfg.Store(nc)
		nodes[name] = n
		return n
	}
	for name, nc := range cfg.Nodes {
		nodeFor(name, nc.Addr)
	}
	members := map[string]*memberRT{}
	pools := map[string]*poolRT{}
	var adminUp []*memberRT
	for name, pc := range cfg.Pools {
		pr := p.pools[name]
		if pr == nil {
			pr = &poolRT{name: name}
		}
		mode := lbModes[pc.LBMode]
		snap := &poolSnap{cfg: pc, alg: mode.alg, byNode: mode.byNode}
		for i := range pc.Members {
			mc := &pc.Members[i]
			mname := mc.Name()
			key := name + " " + mname
			m := p.members[key]
			if m == nil {
				m = &memberRT{key: key, pool: pr, name: mname,
					watch: newWatch("Pool " + name + " member " + mname)}
				m.node = nodeFor(mc.Node, mc.Addr.Addr())
				m.watch.logf = p.logStatus
				m.watch.changed = func(o, s monStatus) { p.memberChanged(m, o, s) }
			} else {
				nodeFor(mc.Node, mc.Addr.Addr()) // same name, same runtime
				if prev := m.cfg.Load(); prev != nil && (prev.Session == SessionUserDisabled || prev.State == StateUserDown) &&
					mc.Session != SessionUserDisabled && mc.State != StateUserDown {
					adminUp = append(adminUp, m)
				}
			}
			m.cfg.Store(mc)
			members[key] = m
			snap.members = append(snap.members, m)
		}
		pools[name] = pr
		pr.snap.Store(snap)
	}
	virtuals := map[string]*vsRT{}
	for name, vc := range cfg.Virtuals {
		v := p.virtuals[name]
		if v == nil {
			v = &vsRT{name: name}
		}
		snap := &vsSnap{cfg: vc, idle: idleTimeout(vc.IdleTimeout), selfIPs: cfg.SelfIPs, evMask: eventMask(vc.Rules)}
		if vc.Pool != "" {
			snap.pool = pools[vc.Pool]
		}
		if vc.SNAT.Type == SNATPool {
			snap.snatPool = cfg.SnatPools[vc.SNAT.Pool]
		}
		v.snap.Store(snap)
		virtuals[name] = v
	}

	// 3. Monitors: start new instances, keep unchanged ones.
	for _, m := range members {
		mc := m.cfg.Load()
		rule, pc := mc.Monitor, cfg.Pools[m.pool.name]
		if rule.IsZero() {
			rule = pc.Monitor
		}
		addr := mc.Addr
		stale = append(stale, m.watch.update(rule, specs, func(mon string) netip.AddrPort {
			return probeTarget(cfg.Monitors[mon], addr)
		})...)
	}
	for _, n := range nodes {
		nc := n.cfg.Load()
		rule := cfg.DefaultNodeMonitor
		if nc.Monitor != nil {
			rule = *nc.Monitor
		}
		stale = append(stale, n.watch.update(rule, specs, func(mon string) netip.AddrPort {
			return probeTarget(cfg.Monitors[mon], netip.AddrPortFrom(nc.Addr, 0))
		})...)
	}
	for key, m := range p.members {
		if members[key] == nil {
			stale = append(stale, m.watch.stopAll()...)
		}
	}
	for name, n := range p.nodes {
		if nodes[name] == nil {
			stale = append(stale, n.watch.stopAll()...)
		}
	}
	now := time.Now().UnixNano()
	for _, m := range adminUp {
		m.rampStart.Store(now)
		m.watch.resume()
	}

	// 4. Swap: listeners to their (new) owners, then retire what left.
	started := make([]*listener, 0, len(fresh))
	for ap, l := range fresh {
		p.listeners[ap] = l
		l.vs.Store(virtuals[want[ap]])
		started = append(started, l)
	}
	var retired []*listener
	for ap, l := range p.listeners {
		if name, ok := want[ap]; ok {
			l.vs.Store(virtuals[name])
			continue
		}
		retired = append(retired, l)
		delete(p.listeners, ap)
	}
	p.stopListeners(retired)
	p.startListeners(started)
	removedVirtuals := map[string]*vsRT{}
	for name, v := range p.virtuals {
		if virtuals[name] == nil {
			removedVirtuals[name] = v
		}
	}
	p.virtuals, p.pools, p.members, p.nodes, p.cfg = virtuals, pools, members, nodes, cfg
	p.poolIndex.Store(&pools)
	p.running.Store(cfg)
	p.applyMBLB(virtuals)
	go func() {
		for _, in := range stale {
			in.Stop()
		}
	}()
	// A removed virtual's flows follow its pool's service-down-action.
	for _, v := range removedVirtuals {
		s := v.snap.Load()
		if s.pool == nil {
			continue
		}
		if act := s.pool.snap.Load().cfg.ServiceDownAction; act != "" && act != DownNone {
			for _, f := range p.table.Matching(flows.Filter{Virtual: v.name}) {
				f.Abort()
			}
		}
	}
	return nil
}

// Close stops accepting, resets every flow and stops the monitors.
func (p *Plane) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	all := make([]*listener, 0, len(p.listeners))
	for ap, l := range p.listeners {
		all = append(all, l)
		delete(p.listeners, ap)
	}
	p.stopListeners(all)
	var stale []*monitor.Instance
	for _, m := range p.members {
		stale = append(stale, m.watch.stopAll()...)
	}
	for _, n := range p.nodes {
		stale = append(stale, n.watch.stopAll()...)
	}
	p.mu.Unlock()
	for _, in := range stale {
		in.Stop()
	}
	p.accepts.Wait()
	p.table.Each(func(f *flows.Flow) bool { f.Abort(); return true })
	p.closeMBLB()
	p.stopLoops()
}

// probeTarget is where a monitor probes a member (or node, port 0): the
// monitor's destination with `*` parts taken from the member.
func probeTarget(m *Monitor, member netip.AddrPort) netip.AddrPort {
	addr, port := member.Addr(), member.Port()
	if m != nil {
		if m.Destination.Addr().IsValid() && !m.Destination.Addr().IsUnspecified() {
			addr = m.Destination.Addr()
		}
		if m.Destination.Port() != 0 {
			port = m.Destination.Port()
		}
	}
	return netip.AddrPortFrom(addr, port)
}

func compileMonitors(cfg *Config) (map[string]*monitor.Spec, error) {
	out := make(map[string]*monitor.Spec, len(cfg.Monitors))
	for name, m := range cfg.Monitors {
		if m == nil {
			continue
		}
		s := &monitor.Spec{Type: monitor.Type(m.Type), Interval: m.Interval, Timeout: m.Timeout,
			TimeUntilUp: m.TimeUntilUp, UpInterval: m.UpInterval, ManualResume: m.ManualResume,
			Send: m.Send, Reverse: m.Reverse}
		var err error
		if m.Recv != "" {
			if s.Recv, err = regexp.Compile(m.Recv); err != nil {
				return nil, fmt.Errorf("monitor %s: recv: %v", name, err)
			}
		}
		if m.RecvDisable != "" {
			if s.RecvDisable, err = regexp.Compile(m.RecvDisable); err != nil {
				return nil, fmt.Errorf("monitor %s: recv-disable: %v", name, err)
			}
		}
		out[name] = s
	}
	return out, nil
}

func (p *Plane) logStatus(down bool, line string) {
	lvl := slog.LevelInfo
	if down {
		lvl = slog.LevelWarn
	}
	p.log.Log(context.Background(), lvl, line)
}

// memberChanged reacts to a member's monitor verdict: slow ramp on coming
// up, service-down-action on going down.
func (p *Plane) memberChanged(m *memberRT, old, now monStatus) {
	switch now {
	case monUp:
		if old == monDown {
			m.rampStart.Store(time.Now().UnixNano())
		}
	case monDown:
		p.serviceDown(func(o *memberRT) bool { return o == m })
	}
}

func (p *Plane) nodeChanged(n *nodeRT, old, now monStatus) {
	switch now {
	case monUp:
		if old == monDown {
			p.mu.Lock()
			for _, m := range p.members {
				if m.node == n {
					m.rampStart.Store(time.Now().UnixNano())
				}
			}
			p.mu.Unlock()
		}
	case monDown:
		p.serviceDown(func(o *memberRT) bool { return o.node == n })
	}
}

// serviceDown applies each affected member's pool service-down-action to
// the flows on it. reset and reselect reset both sides (a stream proxy
// cannot move a half-sent byte stream to another server); drop closes the
// server side and lets the client go without a reset.
func (p *Plane) serviceDown(hit func(*memberRT) bool) {
	p.table.Each(func(f *flows.Flow) bool {
		for _, l := range f.Legs() {
			m, ok := l.Owner.(*memberRT)
			if !ok || !hit(m) {
				continue
			}
			s := m.pool.snap.Load()
			if s == nil {
				continue
			}
			switch s.cfg.ServiceDownAction {
			case DownReset, DownReselect:
				f.Abort()
			case DownDrop:
				f.Drop()
			}
			break
		}
		return true
	})
}

// ResumeMember lifts a manual-resume hold on a pool member (the admin's
// re-enable); it reports whether the member exists.
func (p *Plane) ResumeMember(pool, member string) bool {
	p.mu.Lock()
	m := p.members[pool+" "+member]
	p.mu.Unlock()
	if m == nil {
		return false
	}
	m.watch.resume()
	return true
}

func sortStrings(s []string) { sort.Strings(s) }
