// Package dataplane is openltm's runtime: virtual server listeners, the
// TCP proxy, load balancing, health monitors, member states, SNAT,
// statistics and the connection table. The daemon drives it through one
// entry point, Apply, with each committed configuration generation, and
// reads it through snapshot functions for `show` commands.
//
// This package is the façade and the wiring: Plane, Options, the
// configuration types (re-exported from internal/config) and Check, the
// shows, the persistence API, and Apply's steps that build the runtime
// objects (internal/state) and hand listeners to the L4 engines
// (internal/l4) and message-balanced virtuals to their engines
// (internal/mblbvs). Rules run through one adapter (internal/irules);
// raw socket calls live once in internal/rawsock.
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/natobj"
	"github.com/openltm/openltm/dataplane/pktfilter"
	"github.com/openltm/openltm/dataplane/snatobj"

	"github.com/openltm/openltm/dataplane/internal/icmpreject"
	"github.com/openltm/openltm/dataplane/internal/l4"
	"github.com/openltm/openltm/dataplane/internal/mblbvs"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/sklookup"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/internal/udp"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/dnsvs"
	"github.com/openltm/openltm/dataplane/doh"
	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/fqdn"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/lsn"
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
	// FQDNResolver resolves FQDN nodes; nil uses the configuration's name
	// servers, else the system resolver (fqdnnodes.go).
	FQDNResolver fqdn.Resolver
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
	// persist is the persistence table (persistence.go; the L4 flows'
	// use is in internal/l4/flowpersist.go); its zero value is ready.
	persist persist.Table
	// rates holds the rate-limit budgets that virtuals in modes source,
	// destination and source-destination share (state/ratelimit.go).
	rates state.RateTable
	// bwc is the running bandwidth controllers (dataplane/bwc): the
	// buckets virtuals' and rules' flows wait on.
	bwc bwc.Set
	// lsn is the running lsn pools (dataplane/lsn): the translations of
	// the virtuals with source-address-translation type lsn.
	lsn lsn.Set
	// snats counts the ltm snat objects' and translation addresses'
	// connections across commits (snatobj; snat.go).
	snats snatobj.Registry
	// nats counts the ltm nat objects' outbound connections across
	// commits (natobj; nat.go).
	nats natobj.Registry
	// natIn is, by ltm nat name, the inbound traffic of the NAT's
	// virtuals a commit took away while the NAT stayed configured
	// (disabled): show ltm nat adds it, so the counters go on from
	// there when it is enabled again (nat.go; under mu).
	natIn map[string]Traffic
	// snatArrival: a SNAT or NAT of the running commit has a VLAN list,
	// so every listener keeps its connections' arrival interfaces
	// (snat.go; under mu).
	snatArrival bool
	// rst reports the resets the flows send, while tm.rstcause.log is
	// on (SetResetCauseLog).
	rst rstcause.Log
	// sslLog logs failed client-ssl handshakes at sys db log.ssl.level
	// (SetSSLLog).
	sslLog state.SSLLog
	// pf is the packet filtering every virtual's snapshot points at
	// (SetPacketFilter; dataplane/pktfilter).
	pf pktfilter.Holder
	// unreach sends the ICMP port unreachables of rejected UDP
	// datagrams (pktfilter.go).
	unreach icmpreject.Sender
	// memberHook gets the members' status changes (memberstatus.go).
	memberHook memberHook

	mu        sync.Mutex // serializes Apply, Close and map reads
	closed    bool
	cfg       *Config
	virtuals  map[string]*state.Virtual
	pools     map[string]*state.Pool
	members   map[string]*state.Member
	nodes     map[string]*state.Node
	listeners map[netip.AddrPort]*l4.Listener
	// steer hands every port of the virtuals on every port to their
	// listeners while there are any (anyport.go); steerNow is the same,
	// for the flows that pass a port over (passPort).
	steer     *sklookup.Steer
	steerNow  atomic.Pointer[sklookup.Steer]
	poolIndex atomic.Pointer[state.Pools] // for rules, read per flow
	running   atomic.Pointer[Config]      // for rules (snatpools)
	mblbs     *mblbvs.Set                 // message-based virtuals' engines
	l4        *l4.Engine                  // listeners and the L4 flows

	// snatIndex is the running commit's snat-translation Index, for
	// message routing peer connections (l4 mrf.go HoldSNATAddr).
	snatIndex atomic.Pointer[snatobj.Index]

	// base is the running configuration as prepared, before its FQDN
	// nodes are expanded; fqdns follows their names (fqdnnodes.go).
	base  *Prepared
	fqdns map[string]*fqdnNode
	// vsFQDNs follows the names of virtuals' address lists, by virtual
	// and name (fqdnvirtual.go).
	vsFQDNs map[string]*fqdnNode
	// ownFQDNs follows the names of the plane's own destinations
	// (fqdnowndests.go), by name and family.
	ownFQDNs map[string]*fqdnNode
	// fqdnHold keeps the names' new addresses out of the expansion under
	// way, fqdnHeld says the last apply did (fqdngrowth.go); under p.mu.
	fqdnHold, fqdnHeld bool
	udp                *udp.Engine   // UDP virtuals' listeners and flows (udp.go)
	dns                *dnsvs.Engine // dns profiles' answers and caches (dns.go)
	doh                doh.Registry  // doh profiles' counters (doh.go)

	udpListeners udpSet
	// h3Listeners are the HTTP/3 virtuals' QUIC sockets (http3vs.go).
	h3Listeners map[netip.AddrPort]*h3Listener
	// vaddrs are the runtimes of the virtual addresses that act, by
	// name (vaddr.go).
	vaddrs map[string]*state.VAddr
	// slow runs the slow-flow checks of the eviction policies in use
	// (evict.go).
	slow slowMonitor
	// evictCounts are the eviction contexts' counts, by key (evict.go).
	evictCounts sync.Map
}

// New starts an empty dataplane.
func New(opts Options) *Plane {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = l4.DefaultConnectTimeout
	}
	p := &Plane{
		opts:      opts,
		log:       opts.Logger,
		table:     flows.NewTable(),
		cfg:       &Config{},
		virtuals:  map[string]*state.Virtual{},
		pools:     map[string]*state.Pool{},
		members:   map[string]*state.Member{},
		nodes:     map[string]*state.Node{},
		listeners: map[netip.AddrPort]*l4.Listener{},
		fqdns:     map[string]*fqdnNode{},
		vsFQDNs:   map[string]*fqdnNode{},
		ownFQDNs:  map[string]*fqdnNode{},

		udpListeners: udpSet{},
		h3Listeners:  map[netip.AddrPort]*h3Listener{},
	}
	p.udp = p.newUDP()
	p.dns = dnsvs.New(p.log)
	p.dns.SetPools(p.rulePools) // a rule's clone on a dns virtual (dnsvs/clone.go)
	p.dns.Table = p.table       // UDP queries waiting for a member
	p.lsn.Table = p.table       // the pools' inbound relays (dataplane/lsn)
	p.poolIndex.Store(&state.Pools{})
	p.mblbs = mblbvs.NewSet(mblbvs.Env{
		Table:          p.table,
		Log:            p.log,
		ConnectTimeout: opts.ConnectTimeout,
		Dial:           func(src, dst netip.AddrPort) (*net.TCPConn, error) { return p.l4.Dial(src, dst) },
		DialSide: func(src, dst netip.AddrPort, side *TCPSide) (*net.TCPConn, error) {
			return p.l4.DialSide(src, dst, side)
		},
		DialExact: func(src, dst netip.AddrPort, side *TCPSide) (*net.TCPConn, error) {
			return p.l4.DialExact(src, dst, side)
		},
		Pools:         p.poolIndex.Load,
		PersistFind:   p.persistFind,
		PersistLookup: p.PersistLookup,
		PersistSave:   p.PersistSave,
		PersistDelete: p.PersistDelete,
		Virtual:       p.virtualNamed,
		BWC:           &p.bwc,
		PersistDown:   p.persistDown,
		Rst:           &p.rst,
		SnatPool:      p.snatPoolNamed, // rules.go
		LSN:           &p.lsn,          // LSN::pool (internal/mblbvs/lsn.go)
		Pass:          p.passNode,      // a rule's node (anyport.go)
	})
	p.l4 = l4.New(l4.Env{
		Table:          p.table,
		Log:            p.log,
		ConnectTimeout: opts.ConnectTimeout,
		BusyPoll:       opts.BusyPoll,
		Pools:          p.rulePools,
		Running:        p.running.Load,
		Persist:        &p.persist,
		MBLB:           p.mblbs,
		Virtual:        p.virtualNamed,
		Rst:            &p.rst,
		BWC:            &p.bwc,
		LSN:            &p.lsn,
		Pass:           p.passPort,
		SNATIndex:      p.snatIndex.Load,
	})
	return p
}

// Apply brings the plane from what it runs to cfg, touching only what
// changed: listeners of unchanged destinations stay bound, flows go on,
// member states and counters are kept. old is the generation the daemon
// believes is running; the plane diffs against its own state, so old is
// only a hint and may be nil. On error nothing was changed.
//
// The steps: bind every new address (the only step that can fail), build
// the runtime objects of cfg reusing the running ones by name, reconcile
// their monitors, then swap the new generation in.
func (p *Plane) Apply(old, cfg *Config) error {
	pc, err := Prepare(cfg)
	if err != nil {
		return err
	}
	return p.ApplyPrepared(pc)
}

// Prepared is a configuration that passed Check, with its monitors
// compiled: what a commit prepares once, before it knows whether every
// other part of the commit accepts it, and then puts in service.
type Prepared struct {
	cfg   *Config
	specs map[string]*monitor.Spec
}

// Prepare checks cfg and compiles its monitors without touching the
// plane; nothing it does needs undoing.
func Prepare(cfg *Config) (*Prepared, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	cfg = withNATVirtuals(cfg) // nat.go
	if err := Check(cfg); err != nil {
		return nil, err
	}
	specs, err := compileMonitors(cfg)
	if err != nil {
		return nil, err
	}
	return &Prepared{cfg: cfg, specs: specs}, nil
}

// ApplyPrepared puts a prepared configuration in service: bind listeners
// (the step that can still fail, leaving the plane as it was), build the
// runtime objects, reconcile monitors, swap.
func (p *Plane) ApplyPrepared(pc *Prepared) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("dataplane is closed")
	}
	return p.applyLocked(pc)
}

// applyLocked is ApplyPrepared under p.mu, with the FQDN nodes expanded
// to the addresses they resolve to now (fqdnnodes.go).
func (p *Plane) applyLocked(pc *Prepared) error {
	cfg, specs := p.expandNames(pc.cfg), pc.specs // fqdngrowth.go
	b, err := p.bindListeners(cfg)
	if err != nil {
		return err
	}
	p.namesApplied()
	p.bwc.Apply(cfg.BWC)
	p.bwc.ApplyClasses(cfg.RateClasses) // bwc/class.go
	p.lsn.Apply(cfg.LSN)                // lsn.go
	p.buildRuntimes(cfg, b)
	p.reconcileMonitors(cfg, specs, b)
	p.swap(cfg, b)
	p.applyMRF(b) // mrfauto.go
	p.base = pc
	p.reconcileFQDN(pc.cfg)
	p.reconcileVirtualFQDN(pc.cfg) // fqdnvirtual.go
	p.reconcileOwnFQDN(pc.cfg)     // fqdnowndests.go
	return nil
}

// generation is what Apply builds for one configuration before it swaps
// it in.
type generation struct {
	want map[netip.AddrPort]string // every bound address: its virtual
	// shared are the other virtuals of a TCP listener's destination, told
	// apart by source, the longest first (sourceshare.go).
	shared map[netip.AddrPort][]string
	fresh  map[netip.AddrPort]*l4.Listener
	// remake are the running listeners whose mptcp changed: opened anew
	// at the swap (remakeListeners, tcpopts.go).
	remake   []netip.AddrPort
	nodes    map[string]*state.Node
	members  map[string]*state.Member
	pools    map[string]*state.Pool
	virtuals map[string]*state.Virtual
	snatIdx  *snatobj.Index      // the commit's snat-translation Index (mrf peer connections)
	adminUp  []*state.Member     // members the admin re-enabled
	stale    []*monitor.Instance // monitors to stop once swapped
	// The UDP virtuals' addresses and their new listeners (udp.go).
	wantUDP  map[netip.AddrPort]string
	freshUDP udpSet
	// The HTTP/3 virtuals' addresses and their new sockets (http3vs.go).
	wantH3  map[netip.AddrPort]string
	freshH3 map[netip.AddrPort]*h3Listener
	// lateH3 and lateUDP are addresses the other kind of socket holds
	// until the swap stops it: bound then (a virtual turned from plain
	// UDP into HTTP/3, or back).
	lateH3, lateUDP []netip.AddrPort
	// remakeUDP are running UDP listeners whose virtual's mask changed
	// (udp.go): stopped and bound anew at the swap.
	remakeUDP []netip.AddrPort
}

// bindListeners binds every address of cfg that is not bound yet. On
// error it closes what it bound and nothing has changed. The caller holds
// p.mu.
func (p *Plane) bindListeners(cfg *Config) (*generation, error) {
	b := &generation{want: map[netip.AddrPort]string{}, fresh: map[netip.AddrPort]*l4.Listener{}, shared: map[netip.AddrPort][]string{}}
	for name, v := range cfg.Virtuals {
		if v.IsUDP() {
			continue
		}
		aps, _ := v.Listeners()
		for _, ap := range aps {
			if _, ok := b.want[ap]; ok {
				shareListener(cfg, b.want, b.shared, ap, name) // sourceshare.go
				continue
			}
			b.want[ap] = name
		}
	}
	if err := p.openSteer(cfg); err != nil { // anyport.go
		return nil, fmt.Errorf("cannot listen on every port: %v", err)
	}
	for ap, name := range b.want {
		mptcp := cfg.Virtuals[name].ClientTCP.WantsMPTCP()
		if l := p.listeners[ap]; l != nil {
			if l.MPTCP != mptcp {
				b.remake = append(b.remake, ap) // tcpopts.go
			}
			continue
		}
		l, err := p.l4.Listen(bindAt(ap, cfg.Virtuals[name]), mptcp) // anyport.go
		if err != nil {
			for _, l := range b.fresh {
				l.CloseUnstarted()
			}
			return nil, fmt.Errorf("virtual %s: cannot listen on %s: %v", name, ap, rawsock.UnwrapOp(err))
		}
		b.fresh[ap] = l
	}
	if err := p.bindUDP(cfg, b); err != nil {
		for _, l := range b.fresh {
			l.CloseUnstarted()
		}
		return nil, err
	}
	if err := p.bindH3(cfg, b); err != nil {
		for _, l := range b.fresh {
			l.CloseUnstarted()
		}
		for _, l := range b.freshUDP {
			l.CloseUnstarted()
		}
		return nil, err
	}
	return b, nil
}

// buildRuntimes makes the nodes, members, pools and virtuals of cfg,
// reusing the running runtimes by name so that counters and monitor state
// survive the commit. Nothing running sees them until swap. The caller
// holds p.mu.
func (p *Plane) buildRuntimes(cfg *Config, b *generation) {
	b.nodes = map[string]*state.Node{}
	nodeFor := func(name string, addr netip.Addr) *state.Node {
		if n := b.nodes[name]; n != nil {
			return n
		}
		nc := cfg.Nodes[name]
		if nc == nil {
			nc = &Node{Name: name, Addr: addr}
		}
		n := p.nodes[name]
		if n == nil {
			n = &state.Node{Name: name, Watch: state.NewWatch("Node " + name + " address " + nc.Addr.String())}
			n.Watch.Logf = p.logStatus
			n.Watch.Trace = p.logProbe
			n.Watch.Changed = func(o, s state.MonStatus) { p.nodeChanged(n, o, s) }
		}
		n.Cfg.Store(nc)
		b.nodes[name] = n
		return n
	}
	for name, nc := range cfg.Nodes {
		nodeFor(name, nc.Addr)
	}
	b.members = map[string]*state.Member{}
	b.pools = map[string]*state.Pool{}
	for name, pc := range cfg.Pools {
		pr := p.pools[name]
		if pr == nil {
			pr = &state.Pool{Name: name}
		}
		mode := state.Modes[pc.LBMode]
		snap := &state.PoolSnap{Cfg: pc, Alg: mode.Alg, ByNode: mode.ByNode}
		for i := range pc.Members {
			mc := &pc.Members[i]
			mname := mc.Name()
			key := name + " " + mname
			m := p.members[key]
			if m == nil {
				m = &state.Member{Key: key, Pool: pr, Name: mname,
					Watch: state.NewWatch("Pool " + name + " member " + mname)}
				m.Node = nodeFor(mc.Node, mc.Addr.Addr())
				m.Watch.Logf = p.logStatus
				m.Watch.Trace = p.logProbe
				m.Watch.Changed = func(o, s state.MonStatus) { p.memberChanged(m, o, s) }
			} else {
				nodeFor(mc.Node, mc.Addr.Addr()) // same name, same runtime
				if prev := m.Cfg.Load(); prev != nil && (prev.Session == SessionUserDisabled || prev.State == StateUserDown) &&
					mc.Session != SessionUserDisabled && mc.State != StateUserDown {
					b.adminUp = append(b.adminUp, m)
				}
			}
			m.Cfg.Store(mc)
			b.members[key] = m
			snap.Members = append(snap.Members, m)
		}
		b.pools[name] = pr
		pr.Snap.Store(snap)
	}
	b.virtuals = map[string]*state.Virtual{}
	vaddrs := map[string]*state.VAddr{}
	dnsServices := p.prepareDNS(cfg) // dns.go
	dohStats := p.prepareDoH(cfg)    // doh.go
	// The ltm nat objects' table (nat.go).
	nats := p.nats.Build(cfg.NATs)
	for name := range cfg.Virtuals {
		// Every virtual of the commit first, so that the eviction
		// contexts and counts (evict.go) see them all.
		v := p.virtuals[name]
		if v == nil {
			v = &state.Virtual{Name: name}
		}
		b.virtuals[name] = v
	}
	ctxs, slowWatches := p.evictContexts(cfg, b.virtuals)                                                            // evict.go
	snats, snatPoolStats, snatIdx := p.snats.Build(cfg.SNATs, cfg.SnatPools, cfg.SNATTranslations, cfg.SNATSettings) // snat.go
	b.snatIdx = snatIdx
	xlatArrival := snats.Arrival() || nats.Arrival()
	for name, vc := range cfg.Virtuals {
		v := b.virtuals[name]
		snap := &state.VirtualSnap{Cfg: vc, Idle: l4.IdleTimeout(vc.IdleTimeout), SelfIPs: cfg.SelfIPs, EvMask: config.EventMask(vc.Rules),
			ClientSSL: v.Prof.ClientSSLOf(vc.TLS), SSLLog: &p.sslLog, PF: &p.pf}
		if vc.IsUDP() {
			snap.Idle = udp.IdleTimeout(vc.IdleTimeout)
		}
		snap.SYN = readsSYN(vc) // tcpopts.go
		if vc.Pool != "" {
			snap.Pool = b.pools[vc.Pool]
		}
		if vc.SNAT.Type == SNATPool {
			snap.SnatPool, snap.SnatPoolStats = cfg.SnatPools[vc.SNAT.Pool], snatPoolStats[vc.SNAT.Pool]
		}
		if vc.NAT == "" {
			snap.SNATs, snap.NATs, snap.SNATArrival = snats, nats, xlatArrival
		}
		snap.SNATIndex = snatIdx
		snap.Automap = state.AutomapOf(vc, cfg.SelfIPs, snatIdx) // automap's translation resolved
		if vc.MRF != nil {
			snap.SNATPools = snatPoolStats // a transport-config's snatpool (l4 mrf.go)
		}
		snap.Rate = v.RateFor(vc, &p.rates)
		snap.Clone = v.CloneSet(vc, b.pools, p.opts.ConnectTimeout)
		snap.BWC = p.bwc.Policy(vc.BWC)
		if cls := p.bwc.Class(vc.RateClass); cls != nil { // rate-class
			if snap.BWC == nil {
				snap.BWC = cls
			} else {
				snap.RateClass = cls
			}
		}
		if vc.SNAT.Type == SNATLSN {
			snap.LSN = p.lsn.Pool(vc.SNAT.Pool)
		}
		snap.Addr = p.vaddrOf(vc, vaddrs)        // vaddr.go
		snap.Evict = p.evictorOf(vc, b.virtuals) // evict.go
		snap.Contexts = ctxs[name]
		if vc.Eviction.NeedsRates() { // slow-flow, bias-fast, bias-slow
			pol := vc.Eviction
			slowWatches = append(slowWatches, slowWatch{pol: pol, vs: b.virtuals, virtual: v, ctr: p.evictCounter(VirtualContext(name)), in: func(f *flows.Flow) bool { return f.Virtual == name }})
		}
		if vc.DNS != nil {
			snap.DNS = dnsServices[vc.DNS]
		}
		if vc.DoH != nil {
			snap.DNS = p.dohService(vc, dnsServices, dohStats) // doh.go
		}
		v.Snap.Store(snap)
	}
	p.slow.set(p.table, slowWatches) // evict.go
	p.vaddrs = vaddrs
}

// reconcileMonitors starts the monitor instances cfg asks for, keeps the
// unchanged ones, collects those to stop, and restarts slow ramp and
// manual-resume holds of members the admin re-enabled. The caller holds
// p.mu.
func (p *Plane) reconcileMonitors(cfg *Config, specs map[string]*monitor.Spec, b *generation) {
	for _, m := range b.members {
		mc := m.Cfg.Load()
		rule, pc := mc.Monitor, cfg.Pools[m.Pool.Name]
		if rule.IsZero() {
			rule = pc.Monitor
		}
		addr := mc.Addr
		m.Watch.SetLogging(mc.Logging)
		b.stale = append(b.stale, m.Watch.Update(rule, specs, func(mon string) netip.AddrPort {
			return probeTarget(cfg.Monitors[mon], addr)
		})...)
	}
	for _, n := range b.nodes {
		nc := n.Cfg.Load()
		rule := cfg.DefaultNodeMonitor
		if nc.Monitor != nil {
			rule = *nc.Monitor
		}
		n.Watch.SetLogging(nc.Logging)
		b.stale = append(b.stale, n.Watch.Update(rule, specs, func(mon string) netip.AddrPort {
			return probeTarget(cfg.Monitors[mon], netip.AddrPortFrom(nc.Addr, 0))
		})...)
	}
	for key, m := range p.members {
		if b.members[key] == nil {
			b.stale = append(b.stale, m.Watch.StopAll()...)
		}
	}
	for name, n := range p.nodes {
		if b.nodes[name] == nil {
			b.stale = append(b.stale, n.Watch.StopAll()...)
		}
	}
	now := time.Now().UnixNano()
	for _, m := range b.adminUp {
		m.RampStart.Store(now)
		m.Watch.Resume()
	}
}

// swapListeners moves a generation's listeners into running: the fresh
// ones join (returned as started), every one wanted points at its (new)
// virtual, the others leave (returned as retired). vs is the listener's
// virtual pointer. TCP and UDP listeners go through it alike.
func swapListeners[L any](running, fresh map[netip.AddrPort]L, want map[netip.AddrPort]string, virtuals map[string]*state.Virtual, vs func(L) *atomic.Pointer[state.Virtual]) (started, retired []L) {
	started = make([]L, 0, len(fresh))
	for ap, l := range fresh {
		running[ap] = l
		vs(l).Store(virtuals[want[ap]])
		started = append(started, l)
	}
	for ap, l := range running {
		if name, ok := want[ap]; ok {
			vs(l).Store(virtuals[name])
			continue
		}
		retired = append(retired, l)
		delete(running, ap)
	}
	return started, retired
}

// swap makes b the running generation: listeners go to their (new)
// owners and start, the ones cfg dropped stop, the message-based engines
// follow, stale monitors stop, and flows of removed virtuals follow their
// pool's service-down-action. The caller holds p.mu.
func (p *Plane) swap(cfg *Config, b *generation) {
	p.snatArrival = snatArrival(cfg) // snat.go: before the listeners' options
	p.remakeListeners(cfg, b)        // tcpopts.go
	started, retired := swapListeners(p.listeners, b.fresh, b.want, b.virtuals, func(l *l4.Listener) *atomic.Pointer[state.Virtual] { return &l.VS })
	p.setAlts(b)                // sourceshare.go
	p.listenerOpts(cfg, b.want) // tcpopts.go
	p.l4.Stop(retired)
	p.l4.Start(started)
	p.retireH3(b) // http3vs.go: before the UDP listeners bind an address one held
	p.swapUDP(b)
	p.syncSteer(cfg, b) // anyport.go
	removedVirtuals := map[string]*state.Virtual{}
	for name, v := range p.virtuals {
		if b.virtuals[name] == nil {
			removedVirtuals[name] = v
		}
	}
	p.keepNATInbound(cfg, removedVirtuals) // nat.go
	oldPools := p.pools
	p.virtuals, p.pools, p.members, p.nodes, p.cfg = b.virtuals, b.pools, b.members, b.nodes, cfg
	syncConnQueues(oldPools, b.pools) // connqueue.go
	index := state.Pools(b.pools)
	p.poolIndex.Store(&index)
	p.running.Store(cfg)
	p.snatIndex.Store(b.snatIdx)
	p.mblbs.Apply(b.virtuals, b.members)
	p.swapH3(b) // after the engines: a QUIC client is one of its virtual's engine
	stale := b.stale
	go func() {
		for _, in := range stale {
			in.Stop()
		}
	}()
	// A removed virtual's flows follow its pool's service-down-action.
	for _, v := range removedVirtuals {
		s := v.Snap.Load()
		if s.Pool == nil {
			continue
		}
		if act := s.Pool.Snap.Load().Cfg.ServiceDownAction; act != "" && act != DownNone {
			for _, f := range p.table.Matching(flows.Filter{Virtual: v.Name}) {
				f.Abort()
			}
		}
	}
}

// Close stops accepting, resets every flow and stops the monitors.
func (p *Plane) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.slow.close()
	all := make([]*l4.Listener, 0, len(p.listeners))
	for ap, l := range p.listeners {
		all = append(all, l)
		delete(p.listeners, ap)
	}
	p.l4.Stop(all)
	p.closeSteer() // anyport.go
	clear(p.udpListeners)
	h3 := p.takeH3()
	var stale []*monitor.Instance
	for _, m := range p.members {
		stale = append(stale, m.Watch.StopAll()...)
	}
	for _, n := range p.nodes {
		stale = append(stale, n.Watch.StopAll()...)
	}
	watches := p.stopFQDN()
	p.mu.Unlock()
	for _, in := range stale {
		in.Stop()
	}
	for _, w := range watches {
		w.Stop()
	}
	p.l4.WaitAccepts()
	p.table.Each(func(f *flows.Flow) bool { f.Abort(); return true })
	for _, l := range h3 {
		l.l.Close()
	}
	p.mblbs.Close()
	p.l4.Close()
	p.udp.Close()
	p.unreach.Close()
	p.bwc.Close() // the policies' measurement logs
	p.lsn.Close() // the lsn pools' inbound listeners
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
		s := &monitor.Spec{Name: name, Type: monitor.Type(m.Type), Interval: m.Interval, Timeout: m.Timeout,
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
		if d := m.DNS; d != nil {
			q := &monitor.DNSQuery{Name: d.QName, AcceptRcode: d.AcceptRcode, AnswerContains: d.AnswerContains}
			if q.Type, err = monitor.ParseQType(d.QType); err != nil {
				return nil, fmt.Errorf("monitor %s: %v", name, err)
			}
			if d.Recv != "" && d.Recv != "none" {
				if q.Recv, err = netip.ParseAddr(d.Recv); err != nil {
					return nil, fmt.Errorf("monitor %s: recv %q is not an address", name, d.Recv)
				}
			}
			s.DNS = q
		}
		compileExtMonitor(m, s)  // monitors_ext.go
		compileMonitorOpts(m, s) // monitor_compile.go
		if err := s.Check(); err != nil {
			return nil, fmt.Errorf("monitor %s: %v", name, err)
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

// logProbe writes a probe's trace line (a monitor with debug yes).
func (p *Plane) logProbe(line string) {
	p.log.Info(line)
}

// memberChanged reacts to a member's monitor verdict: slow ramp on coming
// up, service-down-action on going down.
func (p *Plane) memberChanged(m *state.Member, old, now state.MonStatus) {
	defer p.tellMemberStatus(m, old, now)
	switch now {
	case state.MonUp:
		if old == state.MonDown {
			m.RampStart.Store(time.Now().UnixNano())
		}
		state.KickAll() // room for queued connections (connqueue.go)
	case state.MonDown:
		p.serviceDown(func(o *state.Member) bool { return o == m })
	}
}

func (p *Plane) nodeChanged(n *state.Node, old, now state.MonStatus) {
	defer p.tellNodeStatus(n, old, now)
	switch now {
	case state.MonUp:
		state.KickAll() // room for queued connections (connqueue.go)
		if old == state.MonDown {
			p.mu.Lock()
			for _, m := range p.members {
				if m.Node == n {
					m.RampStart.Store(time.Now().UnixNano())
				}
			}
			p.mu.Unlock()
		}
	case state.MonDown:
		p.serviceDown(func(o *state.Member) bool { return o.Node == n })
	}
}

// serviceDown applies each affected member's pool service-down-action to
// the flows on it. reset and reselect reset both sides (a stream proxy
// cannot move a half-sent byte stream to another server); drop closes the
// server side and lets the client go without a reset.
func (p *Plane) serviceDown(hit func(*state.Member) bool) {
	p.table.Each(func(f *flows.Flow) bool {
		for _, l := range f.Legs() {
			m, ok := l.Owner.(*state.Member)
			if !ok || !hit(m) {
				continue
			}
			s := m.Pool.Snap.Load()
			if s == nil {
				continue
			}
			switch s.Cfg.ServiceDownAction {
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
	m.Watch.Resume()
	return true
}

// rulePools is the running commit's pool index (state.Pools), read per flow.
func (p *Plane) rulePools() state.Pools { return *p.poolIndex.Load() }

// SetResetCauseLog turns the reset-cause log (sys db tm.rstcause.log) on,
// with sink taking each reset's line as BIG-IP's ltm log words it
// ("01230140:6: RST sent from ..."), or off with nil. While it is off a
// reset costs one atomic load more.
func (p *Plane) SetResetCauseLog(sink func(line string)) { p.rst.Set(sink) }

// SetSSLLog logs the client-ssl handshakes that fail, as BIG-IP's tmm
// does at sys db log.ssl.level: lines of syslog severity level and below
// (4, warning: `01260013:4: SSL Handshake failed for TCP ...`; 7, debug:
// the reason too) go to sink with their severity; nil stops them. A
// handshake that succeeds costs nothing, a failed one a level check.
func (p *Plane) SetSSLLog(level int, sink func(sev int, line string)) { p.sslLog.Set(level, sink) }

// PacketFilter is the plane's packet filtering, for its counters (show
// and reset-stats of net packet-filter).
func (p *Plane) PacketFilter() *pktfilter.Holder { return &p.pf }

// SetRejectRate limits the resets sent to clients that virtual servers
// refuse (disabled, foreign source, connection and rate limits, reject
// virtuals, service down) to max a second, as sys db tm.maxrejectrate
// limits BIG-IP's (0 sends none; negative lifts the limit). A client
// refused over the limit is closed without a reset; warn takes the
// 011e0001 line of each second over it. Under the limit a refusal costs
// a clock read and two atomic adds; an admitted connection nothing.
func (p *Plane) SetRejectRate(max int64, warn func(line string)) { p.rst.SetRejectRate(max, warn) }
