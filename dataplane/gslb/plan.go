package gslb

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/dnssec"
	"github.com/openltm/openltm/dataplane/dnszone"
	"github.com/openltm/openltm/rules"
)

// Status is a reported or probed up/down state.
type Status int32

// The statuses. StatusUnknown means nothing was reported (or probed) yet:
// the object counts as available, as BIG-IP balances to objects whose
// status is unknown (blue) while their checks have not answered.
const (
	StatusUnknown Status = iota
	StatusUp
	StatusDown
)

// String is the status as BIG-IP's availability words spell it.
func (s Status) String() string {
	switch s {
	case StatusUp:
		return "available"
	case StatusDown:
		return "offline"
	}
	return "unknown"
}

// VSMetrics is what the LTM side (BIG-IP's big3d over iQuery) reports for
// one virtual server.
type VSMetrics struct {
	// Status, when not StatusUnknown, overrides the monitor: StatusDown
	// takes the virtual server out whatever the probe says.
	Status Status
	// Connections is the current connection count.
	Connections int64
	// Bps is the current throughput, bits per second (in + out).
	Bps int64
	// PacketRate is packets per second.
	PacketRate int64
	// Capacity is how many nodes behind the virtual server are up, for
	// virtual-server-capacity; 0 means not reported.
	Capacity int
}

// HostMetrics is what a gtm server reports of itself (a bigip server
// over iQuery), for its resource limits. A figure below 0 is unknown.
type HostMetrics struct {
	// CPUUsage is the percent of the host's processors busy.
	CPUUsage int64
	// MemAvail is the host's available memory, kilobytes.
	MemAvail int64
	// Bps and Pps are the host's throughput: bits and packets per second,
	// in and out.
	Bps int64
	Pps int64
}

// LinkMetrics is what the link controller reports for one link.
type LinkMetrics struct {
	// Status StatusDown takes the link and every virtual server over it out.
	Status Status
	// InBps and OutBps are the current throughput, bits per second.
	InBps  int64
	OutBps int64
}

// Runtime state, keyed by object name, kept across Apply.

type vsRT struct {
	metrics atomic.Pointer[VSMetrics] // nil: never reported
	probe   atomic.Int32              // Status from the monitor
	why     atomic.Pointer[string]    // which monitor marked it down, and its error
	prober  atomic.Pointer[string]    // the device that probed it last (prober selection)
	picks   counter
	// downs counts the times it went down (probed or reported), for
	// manual-resume: a member whose sum of downs moved since its last
	// resume is held.
	downs atomic.Uint64
}

type linkRT struct {
	metrics atomic.Pointer[LinkMetrics]
	picks   counter
}

type hostRT struct {
	status  atomic.Int32                // Status reported by SetServerStatus
	metrics atomic.Pointer[HostMetrics] // set by SetServerMetrics
	downs   atomic.Uint64
	picks   counter
	iquery  atomic.Pointer[string] // set by SetServerIQuery
}

type poolRT struct {
	rr          atomic.Uint64 // one rotation for all readers, as users count it
	preferred   counter
	alternate   counter
	fallback    counter
	returnToDNS counter
	dropped     counter
}

type memberRT struct {
	probe atomic.Int32 // Status from the pool's or member's monitor
	why   atomic.Pointer[string]
	downs atomic.Uint64
	// resumed is the sum of the member's downs (its own, its virtual
	// server's and its server's) when it was last resumed: the plan that
	// turned manual-resume on or re-enabled it. Another down holds it.
	resumed   atomic.Uint64
	preferred counter
	alternate counter
	fallback  counter
}

type wipRT struct {
	rr            atomic.Uint64 // one rotation for all readers
	requests      counter
	requestsA     counter
	requestsOther counter
	resolved      counter
	persisted     counter
	preferred     counter
	alternate     counter
	fallback      counter
	returnedToDNS counter
	dropped       counter
	lastResort    counter
}

// The compiled, immutable form of a Config.

type plan struct {
	cfg      *Config
	settings Settings
	exact    map[string]*wideIP // A wide IPs by lower-case fqdn with the final dot
	wild     []wildName
	typed    [8]typedNames // the other types' names, by RRType.index (0 unused)
	wideIPs  []*wideIP     // sorted by name
	pools    map[string]*pool
	poolList []*pool
	hosts    map[string]*host
	hostList []*host
	links    map[string]*link
	linkList []*link
	dcs      map[string]*dc
	dcList   []*dc
	vss      map[string]*vs // "server:vs"
	// probers are the BIG-IP servers (devices that can probe), self the
	// one that is this device (nil: none is).
	probers []*host
	self    *host
	// me is the gtm server whoami and whereami name: self, else the
	// one whose addresses hold a listener's (nil: none).
	me      *host
	paths   []*probePath
	topo    []*topoRec
	regions map[string]*Region
	// geoTopo says whether a topology record matches on geolocation, so
	// that only then does scoring look addresses up.
	geoTopo bool
	zones   []*dnszone.Zone // longest origin first
	// signer signs answers under its zones (nil: none).
	signer *dnssec.Signer
	// listeners are the sockets the plan serves on.
	listeners map[listenerKey]Listener
	// listenRules are the rule programs of listeners with rules; anyRules
	// says whether any listener or wide IP has rules (the wire fast path
	// is taken only when none has).
	listenRules map[listenerKey]*rules.Program
	anyRules    bool
	// listenDNS are the listeners that log or serve zone transfers
	// (listener_dns.go); nil when none does.
	listenDNS map[listenerKey]*Listener
	// afterRules says whether a rule calls after: its UDP queries are
	// then answered each in a goroutine of its own (suspend.go).
	afterRules bool
	programs   []*rules.Program // every program, for RULE_INIT
	// apps are the distributed applications, by name (distapp.go).
	apps []*distApp
}

type wildName struct {
	pattern string
	w       *wideIP
}

type probePath struct {
	name string // the datacenter's or link's full path
	kind string // "datacenter" or "link"
	src  netip.Addr
}

type dc struct {
	cfg  *Datacenter
	name string
	path *probePath
}

type link struct {
	cfg  *Link
	name string
	dc   *dc
	rt   *linkRT
	path *probePath // nil when the link has no prober
	// routers are the router addresses its monitor probes (none without
	// a monitor).
	routers []*linkRouter
}

// linkRouter is one router address of a monitored link, with its
// probe's state (a vsRT, keyed "link NAME ADDR").
type linkRouter struct {
	addr netip.Addr
	rt   *vsRT
}

// routersDown says whether the link's monitor found every router
// address down (unknown counts as up, as for virtual servers).
func (l *link) routersDown() bool {
	for _, r := range l.routers {
		if Status(r.rt.probe.Load()) != StatusDown {
			return false
		}
	}
	return len(l.routers) > 0
}

type host struct {
	cfg     *Host
	name    string
	dc      *dc
	rt      *hostRT
	vss     []*vs
	probers *proberPolicy
}

type vs struct {
	cfg  *VirtualServer
	name string // server:vs
	host *host
	link *link
	rt   *vsRT
	addr netip.Addr
}

// path is the probe path measuring this virtual server's RTT to an LDNS.
func (v *vs) path() *probePath {
	if v.link != nil && v.link.path != nil {
		return v.link.path
	}
	return v.host.dc.path
}

type pool struct {
	cfg        *Pool
	name       string // Key(type, path)
	full       string // the full path
	typ        RRType
	names      []*nameMember // CNAME, MX, SRV, NAPTR, SVCB and HTTPS pools, by member-order
	alias      bool          // an SVCB or HTTPS pool in alias mode (SvcPriority 0): one record, as CNAME
	rt         *poolRT
	members    []*member // sorted by member-order
	mode       Mode
	alt        Mode
	fb         Mode
	ttl        uint32
	maxAnswers int
	qos        QoSWeights
	// verify says whether members' monitors and reported status count
	// (verify-member-availability, verify-vs-availability).
	verify bool
	// minUp is how many members must be available for the pool to be
	// (min-members-up-mode at-least or percent); 0: no minimum.
	minUp int
}

type member struct {
	cfg   PoolMember
	name  string // server:vs
	vs    *vs
	pool  *pool
	rt    *memberRT
	ratio int
}

type wideIP struct {
	cfg        *WideIP
	typ        RRType
	path       string // Key(type, full path): runtime state and persistence
	full       string // the full path
	name       string // DNS name, lower case, final dot
	rt         *wipRT
	pools      []wipPool // sorted by order
	mode       Mode
	lastResort *pool
	persistTTL time.Duration
	cidr4      int
	cidr6      int
	rules      *rules.Program // nil without rules
	dlog       DecisionLog    // load-balancing-decision-log-verbosity
	app        *distApp       // its distributed application (nil: none)
}

type wipPool struct {
	pool  *pool
	ratio int
}

// runtime maps, owned by Server; bind hands their entries to a plan.
type runtimes struct {
	vs      map[string]*vsRT
	link    map[string]*linkRT
	host    map[string]*hostRT
	pool    map[string]*poolRT
	member  map[string]*memberRT
	wideIP  map[string]*wipRT
	app     map[string]*appRT
	touched map[any]bool
}

func getRT[T any](m map[string]*T, key string, touched map[any]bool) *T {
	r := m[key]
	if r == nil {
		r = new(T)
		m[key] = r
	}
	touched[r] = true
	return r
}

// bind gives every object of p its runtime state from rt (made for the
// objects that are new), marking what the plan uses so that prune can
// drop the rest once p is in service. It is the only step of putting a
// plan in service that reads runtime state, so compile stays pure.
func (p *plan) bind(rt *runtimes) {
	for _, k := range p.linkList {
		k.rt = getRT(rt.link, k.name, rt.touched)
		for _, r := range k.routers {
			r.rt = getRT(rt.vs, "link "+k.name+" "+r.addr.String(), rt.touched)
		}
	}
	for _, h := range p.hostList {
		h.rt = getRT(rt.host, h.name, rt.touched)
		for _, v := range h.vss {
			v.rt = getRT(rt.vs, v.name, rt.touched)
		}
	}
	for _, pl := range p.poolList {
		pl.rt = getRT(rt.pool, pl.name, rt.touched)
		for _, m := range pl.members {
			m.rt = getRT(rt.member, pl.name+" "+m.name, rt.touched)
		}
		for _, m := range pl.names {
			m.rt = getRT(rt.member, pl.name+" "+m.target, rt.touched)
		}
	}
	for _, w := range p.wideIPs {
		w.rt = getRT(rt.wideIP, w.path, rt.touched)
	}
	for _, a := range p.apps {
		a.rt = getRT(rt.app, a.name, rt.touched)
	}
}

// prune drops the runtime state of objects the new plan no longer has.
func (rt *runtimes) prune() {
	prune := func(m any) {
		switch m := m.(type) {
		case map[string]*vsRT:
			for k, v := range m {
				if !rt.touched[v] {
					delete(m, k)
				}
			}
		case map[string]*linkRT:
			for k, v := range m {
				if !rt.touched[v] {
					delete(m, k)
				}
			}
		case map[string]*hostRT:
			for k, v := range m {
				if !rt.touched[v] {
					delete(m, k)
				}
			}
		case map[string]*poolRT:
			for k, v := range m {
				if !rt.touched[v] {
					delete(m, k)
				}
			}
		case map[string]*memberRT:
			for k, v := range m {
				if !rt.touched[v] {
					delete(m, k)
				}
			}
		case map[string]*wipRT:
			for k, v := range m {
				if !rt.touched[v] {
					delete(m, k)
				}
			}
		case map[string]*appRT:
			for k, v := range m {
				if !rt.touched[v] {
					delete(m, k)
				}
			}
		}
	}
	prune(rt.vs)
	prune(rt.link)
	prune(rt.host)
	prune(rt.pool)
	prune(rt.member)
	prune(rt.wideIP)
	prune(rt.app)
}

// VSKey is how a virtual server is named in metrics and shows:
// `<server full path>:<virtual server name>`, as a gtm pool member is.
func VSKey(server, vsName string) string { return server + ":" + vsName }

func defMode(m, def Mode) Mode {
	if m == "" {
		return def
	}
	return m
}

var poolLBModes = map[Mode]bool{RoundRobin: true, Ratio: true, Topology: true, GlobalAvailability: true}

var memberModes = map[Mode]bool{
	RoundRobin: true, Ratio: true, Topology: true, GlobalAvailability: true,
	StaticPersistence: true, ReturnToDNS: true, DropPacket: true, FallbackIP: true,
	None: true, LowestRoundTripTime: true, LeastConnections: true,
	KilobytesPerSecond: true, PacketRate: true, VirtualServerCapacity: true,
	VirtualServerScore: true, CompletionRate: true, CPU: true, FewestHops: true,
	QualityOfService: true,
}

// DNSName is the DNS name a wide IP path stands for: its last element,
// lower case, with the final dot.
func DNSName(fullPath string) string {
	return fqdn(path.Base(fullPath))
}

func fqdn(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// compile checks cfg and builds its plan. It reads nothing but cfg: the
// objects get their runtime state from bind when a Server puts the plan in
// service.
func compile(cfg *Config) (*plan, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	p := &plan{
		cfg:     cfg,
		exact:   map[string]*wideIP{},
		pools:   map[string]*pool{},
		hosts:   map[string]*host{},
		links:   map[string]*link{},
		dcs:     map[string]*dc{},
		vss:     map[string]*vs{},
		regions: cfg.Regions,
	}
	if p.regions == nil {
		p.regions = map[string]*Region{}
	}
	p.settings = resolveSettings(cfg.Settings)
	for _, name := range sortedKeys(cfg.Datacenters) {
		d := cfg.Datacenters[name]
		c := &dc{cfg: d, name: name}
		p.dcs[name] = c
		p.dcList = append(p.dcList, c)
	}
	for _, name := range sortedKeys(cfg.Links) {
		l := cfg.Links[name]
		d := p.dcs[l.Datacenter]
		if d == nil {
			return nil, fmt.Errorf("gtm link %s: datacenter %q does not exist", name, l.Datacenter)
		}
		k := &link{cfg: l, name: name, dc: d}
		if l.Prober.IsValid() {
			k.path = &probePath{name: name, kind: "link", src: l.Prober}
		}
		if l.Monitor.active() {
			for _, a := range l.RouterAddresses {
				k.routers = append(k.routers, &linkRouter{addr: a.Unmap()})
			}
		}
		p.links[name] = k
		p.linkList = append(p.linkList, k)
	}
	for _, name := range sortedKeys(cfg.Servers) {
		h := cfg.Servers[name]
		d := p.dcs[h.Datacenter]
		if d == nil {
			return nil, fmt.Errorf("gtm server %s: datacenter %q does not exist", name, h.Datacenter)
		}
		hs := &host{cfg: h, name: name, dc: d}
		seen := map[string]bool{}
		for _, v := range h.VirtualServers {
			if seen[v.Name] {
				return nil, fmt.Errorf("gtm server %s: virtual server %q defined twice", name, v.Name)
			}
			seen[v.Name] = true
			key := VSKey(name, v.Name)
			x := &vs{cfg: v, name: key, host: hs, addr: v.Destination.Addr().Unmap()}
			if !x.addr.IsValid() {
				return nil, fmt.Errorf("gtm server %s: virtual server %s has no destination address", name, v.Name)
			}
			if v.Link != "" {
				x.link = p.links[v.Link]
				if x.link == nil {
					return nil, fmt.Errorf("gtm server %s: virtual server %s: link %q does not exist", name, v.Name, v.Link)
				}
			}
			hs.vss = append(hs.vss, x)
			p.vss[key] = x
		}
		p.hosts[name] = hs
		p.hostList = append(p.hostList, hs)
	}
	if err := compileProbers(cfg, p); err != nil {
		return nil, err
	}
	// Datacenter probe paths: the configured prober, else the first
	// address of its first server that has one.
	for _, d := range p.dcList {
		src := d.cfg.Prober
		if !src.IsValid() {
			for _, h := range p.hostList {
				if h.dc == d && len(h.cfg.Addresses) > 0 {
					src = h.cfg.Addresses[0]
					break
				}
			}
		}
		d.path = &probePath{name: d.name, kind: "datacenter", src: src}
	}
	// Probe only the paths some virtual server is measured by.
	inUse := map[*probePath]bool{}
	for _, h := range p.hostList {
		for _, v := range h.vss {
			if x := v.path(); x != nil && x.src.IsValid() && !inUse[x] {
				inUse[x] = true
				p.paths = append(p.paths, x)
			}
		}
	}
	for _, name := range sortedKeys(cfg.Pools) {
		pc := cfg.Pools[name]
		pl := &pool{
			cfg:        pc,
			name:       name,
			full:       keyPath(name),
			typ:        defType(pc.Type),
			mode:       defMode(pc.Mode, RoundRobin),
			alt:        defMode(pc.Alternate, RoundRobin),
			fb:         defMode(pc.Fallback, ReturnToDNS),
			ttl:        pc.TTL,
			maxAnswers: pc.MaxAnswers,
		}
		for _, m := range []Mode{pl.mode, pl.alt, pl.fb} {
			if !memberModes[m] {
				return nil, typeErr("pool", pc.Type, pl.full, "unknown load balancing mode %q", m)
			}
		}
		if pl.ttl == 0 {
			pl.ttl = 30
		}
		if pl.maxAnswers <= 0 {
			pl.maxAnswers = 1
		}
		pl.verify = !pc.NoVerify && !p.settings.NoVerifyVS
		pl.qos = DefaultQoS
		if pc.QoS != nil {
			pl.qos = *pc.QoS
		}
		if pl.typ.index() < 0 {
			return nil, fmt.Errorf("gtm pool %s: %q is not a record type", pl.full, pc.Type)
		}
		if err := checkMinUp(pc); err != nil {
			return nil, typeErr("pool", pc.Type, pl.full, "%v", err)
		}
		for _, mc := range pc.Members {
			if pl.typ.named() {
				if mc.Target == "" {
					return nil, typeErr("pool", pc.Type, pl.full, "a member needs a domain name")
				}
				m := &nameMember{cfg: mc, target: fqdn(mc.Target), ratio: max(mc.Ratio, 1)}
				if pl.typ == TypeSVCB || pl.typ == TypeHTTPS {
					kv, err := svcbParams(&mc)
					if err != nil {
						return nil, typeErr("pool", pc.Type, pl.full, "member %s: %v", mc.Target, err)
					}
					m.svcb = kv
					if h := mc.SVCB.IPv4Hint; len(h) > 0 {
						m.addr = h[0]
					} else if h := mc.SVCB.IPv6Hint; len(h) > 0 {
						m.addr = h[0]
					}
					if alias := mc.Priority == 0; len(pl.names) == 0 {
						pl.alias = alias
					} else if alias != pl.alias {
						return nil, typeErr("pool", pc.Type, pl.full, "member %s: members in alias mode (priority 0) and in service mode (priority 1 and up) cannot share a pool", mc.Target)
					}
				}
				for _, x := range pl.names {
					if x.target == m.target {
						return nil, typeErr("pool", pc.Type, pl.full, "member %s is listed twice", mc.Target)
					}
				}
				pl.names = append(pl.names, m)
				continue
			}
			key := VSKey(mc.Server, mc.VirtualServer)
			v := p.vss[key]
			if v == nil {
				return nil, typeErr("pool", pc.Type, pl.full, "member %s: no such virtual server", key)
			}
			m := &member{cfg: mc, name: key, vs: v, pool: pl, ratio: mc.Ratio}
			if m.ratio <= 0 {
				m.ratio = 1
			}
			pl.members = append(pl.members, m)
		}
		sort.SliceStable(pl.members, func(i, j int) bool { return pl.members[i].cfg.Order < pl.members[j].cfg.Order })
		sort.SliceStable(pl.names, func(i, j int) bool { return pl.names[i].cfg.Order < pl.names[j].cfg.Order })
		pl.minUp = minUpOf(pc, len(pl.members)+len(pl.names))
		p.pools[name] = pl
		p.poolList = append(p.poolList, pl)
	}
	for _, name := range sortedKeys(cfg.WideIPs) {
		wc := cfg.WideIPs[name]
		w := &wideIP{
			cfg:        wc,
			typ:        defType(wc.Type),
			path:       name,
			full:       keyPath(name),
			name:       DNSName(keyPath(name)),
			mode:       defMode(wc.PoolLBMode, RoundRobin),
			persistTTL: wc.PersistTTL,
			cidr4:      wc.PersistCIDR4,
			cidr6:      wc.PersistCIDR6,
			dlog:       wc.DecisionLog,
		}
		if !poolLBModes[w.mode] {
			return nil, typeErr("wideip", wc.Type, w.full, "pool-lb-mode %q is not one of round-robin, ratio, topology, global-availability", w.mode)
		}
		if w.typ.index() < 0 {
			return nil, fmt.Errorf("gtm wideip %s: %q is not a record type", w.full, wc.Type)
		}
		if w.persistTTL <= 0 {
			w.persistTTL = time.Hour
		}
		if w.cidr4 <= 0 || w.cidr4 > 32 {
			w.cidr4 = 32
		}
		if w.cidr6 <= 0 || w.cidr6 > 128 {
			w.cidr6 = 128
		}
		type ord struct {
			wipPool
			order int
		}
		var ps []ord
		for _, wp := range wc.Pools {
			pl := p.pools[wp.Pool]
			if pl == nil {
				return nil, typeErr("wideip", wc.Type, w.full, "pool %q does not exist", wp.Pool)
			}
			if pl.typ != w.typ {
				return nil, typeErr("wideip", wc.Type, w.full, "pool %s is a pool %s", pl.full, pl.typ)
			}
			r := wp.Ratio
			if r <= 0 {
				r = 1
			}
			ps = append(ps, ord{wipPool{pl, r}, wp.Order})
		}
		for _, wp := range wc.CNAMEPools {
			pl := p.pools[wp.Pool]
			switch {
			case pl == nil:
				return nil, typeErr("wideip", wc.Type, w.full, "pools-cname: pool %q does not exist", wp.Pool)
			case pl.typ != TypeCNAME:
				return nil, typeErr("wideip", wc.Type, w.full, "pools-cname: pool %s is a pool %s", pl.full, pl.typ)
			case w.typ != TypeA && w.typ != TypeAAAA:
				return nil, typeErr("wideip", wc.Type, w.full, "only A and AAAA wide IPs have pools-cname")
			}
			ps = append(ps, ord{wipPool{pl, max(wp.Ratio, 1)}, wp.Order})
		}
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].order < ps[j].order })
		for _, x := range ps {
			w.pools = append(w.pools, x.wipPool)
		}
		if wc.LastResortPool != "" {
			w.lastResort = p.pools[wc.LastResortPool]
			if w.lastResort == nil {
				return nil, typeErr("wideip", wc.Type, w.full, "last-resort-pool %q does not exist", wc.LastResortPool)
			}
			if w.lastResort.typ != w.typ {
				return nil, typeErr("wideip", wc.Type, w.full, "last-resort-pool %s is a pool %s", w.lastResort.full, w.lastResort.typ)
			}
		}
		names := p.names(w.typ)
		if prev := names.exact[w.name]; prev != nil {
			return nil, typeErr("wideip", wc.Type, w.full, "name %s is already wide IP %s", w.name, prev.full)
		}
		names.exact[w.name] = w
		for _, a := range wc.Aliases {
			an := fqdn(a)
			if strings.ContainsAny(an, "*?") {
				names.wild = append(names.wild, wildName{an, w})
				continue
			}
			if prev := names.exact[an]; prev != nil && prev != w {
				return nil, typeErr("wideip", wc.Type, w.full, "alias %s is already a name of wide IP %s", an, prev.full)
			}
			names.exact[an] = w
		}
		if w.typ == TypeA {
			p.exact, p.wild = names.exact, names.wild
		}
		p.wideIPs = append(p.wideIPs, w)
	}
	p.compileNames()
	if err := p.compileApps(cfg); err != nil {
		return nil, err
	}
	if err := p.compileTopology(); err != nil {
		return nil, err
	}
	zs, err := compileZones(cfg.Zones)
	if err != nil {
		return nil, err
	}
	p.zones = zs
	p.signer = cfg.DNSSEC
	ls, err := compileListeners(cfg.Listeners)
	if err != nil {
		return nil, err
	}
	p.listeners, p.listenDNS = ls, listenersDNS(ls)
	p.me = p.whoami()
	if err := p.compileRules(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// compileRules makes the rule programs of listeners and wide IPs, and
// checks that the pools wide IP rules name exist.
func (p *plan) compileRules(cfg *Config) error {
	env := cfg.RuleEnv
	if env == nil {
		env = &rules.Env{}
	}
	for _, w := range p.wideIPs {
		if len(w.cfg.Rules) == 0 {
			continue
		}
		for _, r := range w.cfg.Rules {
			for _, ref := range r.Refs() {
				if ref.Kind == "pool" && p.pools[Key(w.typ, fullPath(ref.Name))] == nil {
					t := strings.ToLower(string(w.typ))
					return fmt.Errorf("gtm wideip %s %s: rule %s:%d:%d: gtm pool %s %s does not exist", t, w.path, r.Name, ref.Line, ref.Col, t, fullPath(ref.Name))
				}
			}
		}
		w.rules = rules.NewProgram(env, w.cfg.Rules...)
		p.programs = append(p.programs, w.rules)
		p.afterRules = p.afterRules || usesAfter(w.cfg.Rules)
	}
	for k, l := range p.listeners {
		if len(l.Rules) == 0 {
			continue
		}
		if p.listenRules == nil {
			p.listenRules = map[listenerKey]*rules.Program{}
		}
		pr := rules.NewProgram(env, l.Rules...)
		p.afterRules = p.afterRules || usesAfter(l.Rules)
		p.listenRules[k] = pr
		p.programs = append(p.programs, pr)
	}
	p.anyRules = len(p.programs) > 0
	return nil
}

// fullPath puts a bare object name in /Common, as rules write names.
func fullPath(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/Common/" + name
}

// compileListeners is what each enabled listener serves, by address and
// protocol; an address and protocol listed twice is refused.
func compileListeners(ls []Listener) (map[listenerKey]Listener, error) {
	want := map[listenerKey]Listener{}
	for _, l := range ls {
		if l.Disabled {
			continue
		}
		var protos []string
		switch l.Protocol {
		case "", "udp+tcp":
			protos = []string{"udp", "tcp"}
		case "udp", "tcp":
			protos = []string{l.Protocol}
		default:
			return nil, fmt.Errorf("gtm listener %s: ip-protocol %q is not udp or tcp", l.Name, l.Protocol)
		}
		for _, proto := range protos {
			k := listenerKey{netip.AddrPortFrom(l.Addr.Addr().Unmap(), l.Addr.Port()), proto}
			if _, dup := want[k]; dup {
				return nil, fmt.Errorf("gtm listener %s: %s %s is already a listener", l.Name, proto, k.addr)
			}
			want[k] = l
		}
	}
	return want, nil
}

func sortedKeys[T any](m map[string]T) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func resolveSettings(s Settings) Settings {
	if s.LDNSPrefix4 <= 0 || s.LDNSPrefix4 > 32 {
		s.LDNSPrefix4 = 24
	}
	if s.LDNSPrefix6 <= 0 || s.LDNSPrefix6 > 128 {
		s.LDNSPrefix6 = 64
	}
	if s.PathTTL <= 0 {
		s.PathTTL = 2400 * time.Second
	}
	if s.ProbeTimeout <= 0 {
		s.ProbeTimeout = 2 * time.Second
	}
	if s.ProbePort == 0 {
		s.ProbePort = 53
	}
	if s.ProbeProtocols == nil {
		s.ProbeProtocols = []string{"dns_dot", "tcp"}
	}
	if len(s.MetricsProtocols) > 0 {
		// metrics-collection-protocols first, then the LDNS probe
		// protocols not among them: one path measurement tries both.
		ps := append([]string(nil), s.MetricsProtocols...)
		for _, p := range s.ProbeProtocols {
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
		s.ProbeProtocols = ps
	}
	if s.MaxProbes <= 0 {
		s.MaxProbes = 64
	}
	if s.InactiveLDNSTTL <= 0 {
		s.InactiveLDNSTTL = 2419200 * time.Second
	}
	if s.InactivePathsTTL <= 0 {
		s.InactivePathsTTL = 604800 * time.Second
	}
	if s.StaticPersistCIDR4 <= 0 || s.StaticPersistCIDR4 > 32 {
		s.StaticPersistCIDR4 = 32
	}
	if s.StaticPersistCIDR6 <= 0 || s.StaticPersistCIDR6 > 128 {
		s.StaticPersistCIDR6 = 128
	}
	return s
}

// lookupName finds the wide IP answering for qname (lower case, final dot).
func (p *plan) lookupName(qname string) *wideIP {
	if w := p.exact[qname]; w != nil {
		return w
	}
	for _, wn := range p.wild {
		if wildMatch(wn.pattern, qname) {
			return wn.w
		}
	}
	return nil
}

// wildMatch matches BIG-IP alias wildcards: * any run of characters
// (dots included), ? one character.
func wildMatch(pat, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, -1
	for px < len(pat) || sx < len(s) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '?':
				if sx < len(s) {
					px++
					sx++
					continue
				}
			case '*':
				nextPx, nextSx = px, sx+1
				px++
				continue
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextSx > 0 && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}
