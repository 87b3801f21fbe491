package gslb

import (
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Dependency is a distributed application's dependency-level: the kind of
// place (data center, server or link) all of its wide IPs must be able to
// answer from for any of them to answer from it.
type Dependency string

// The dependency levels, as tmsh spells them.
const (
	DependNone       Dependency = "none"
	DependDatacenter Dependency = "datacenter"
	DependServer     Dependency = "server"
	DependLink       Dependency = "link"
)

// DistApp is a `gtm distributed-app`: wide IPs that answer from the same
// place, so that the names of one application (www, api, static) send a
// client to one data center, server or link.
type DistApp struct {
	// Name is the full path.
	Name string
	// WideIPs are the application's wide IPs, by Key(type, full path).
	WideIPs []string
	// Dependency is dependency-level; "" is none.
	Dependency Dependency
	// Disabled is the application's disabled: its wide IPs return to DNS
	// as disabled wide IPs do [M: F5 documents disabling an application
	// as taking its wide IPs out of service; openltm answers them as it
	// answers a disabled wide IP].
	Disabled bool
	// Persistence keeps an LDNS on the data center its first answer for
	// any of the application's wide IPs came from, for every one of them,
	// for PersistTTL after its last query.
	Persistence bool
	PersistTTL  time.Duration
	// DisabledContexts are disabled-contexts: the data centers, servers
	// and links the application is disabled in. Its wide IPs do not
	// answer with a virtual server there (as if it were down for them),
	// while the application answers from the other places; tmsh:
	// `disabled-contexts { dc1 { type datacenter } lc2 { type server } }`
	// [M: F5's reference names the property only; the form follows how
	// bigip_gtm.conf writes a collection of named items].
	DisabledContexts []DistAppContext
}

// DistAppContext is one place a distributed application is disabled in.
type DistAppContext struct {
	// Kind is datacenter, server or link (DependDatacenter, DependServer,
	// DependLink).
	Kind Dependency
	// Name is the data center's, server's or link's full path.
	Name string
}

// maxAppPlaces bounds the places (data centers, servers or links) one
// application's members are spread over, so that a query's availability
// mask stays a fixed array on the stack.
const maxAppPlaces = 256

// distApp is a compiled DistApp.
type distApp struct {
	cfg   *DistApp
	name  string
	wides []*wideIP
	rt    *appRT
	// place is each member's place index for the dependency level (a
	// member without one, say a virtual server with no link under
	// dependency-level link, is absent: it depends on nothing).
	place  map[*member]int
	places int
	// cache is the mask as of an availability generation (see
	// Server.avail): queries between two changes share one computation.
	cache atomic.Pointer[appMaskAt]
	// computed counts mask computations (tests).
	computed atomic.Uint64
	// off are the members of its wide IPs in a disabled context: they do
	// not answer for the application (nil when it has none).
	off map[*member]bool
}

type appMaskAt struct {
	gen  uint64
	mask appMask
}

type appRT struct {
	requests  counter
	persisted counter
	moved     counter
}

// appMask is one query's view of where the application can answer.
type appMask [maxAppPlaces / 64]uint64

func (m *appMask) set(i int)      { m[i>>6] |= 1 << (i & 63) }
func (m *appMask) has(i int) bool { return m[i>>6]&(1<<(i&63)) != 0 }

// placeOf is a member's place under the dependency level (nil: none).
func placeOf(dep Dependency, m *member) any {
	switch dep {
	case DependDatacenter:
		return m.vs.host.dc
	case DependServer:
		return m.vs.host
	case DependLink:
		if m.vs.link != nil {
			return m.vs.link
		}
	}
	return nil
}

// compileApps resolves the applications' wide IPs. A wide IP belongs to
// one application at most [M: BIG-IP's GUI offers a wide IP to one
// application; openltm refuses a second].
func (p *plan) compileApps(cfg *Config) error {
	if len(cfg.DistApps) == 0 {
		return nil
	}
	byKey := map[string]*wideIP{}
	for _, w := range p.wideIPs {
		byKey[w.path] = w
	}
	for _, name := range sortedKeys(cfg.DistApps) {
		c := cfg.DistApps[name]
		switch c.Dependency {
		case "", DependNone, DependDatacenter, DependServer, DependLink:
		default:
			return fmt.Errorf("distributed-app %s: dependency-level %q is not none, datacenter, server or link", name, c.Dependency)
		}
		a := &distApp{cfg: c, name: name, place: map[*member]int{}}
		idx := map[any]int{}
		for _, k := range c.WideIPs {
			w := byKey[k]
			if w == nil {
				return fmt.Errorf("distributed-app %s: the wide IP %s does not exist", name, k)
			}
			if w.app != nil {
				return fmt.Errorf("distributed-app %s: the wide IP %s already belongs to distributed-app %s", name, k, w.app.name)
			}
			w.app = a
			a.wides = append(a.wides, w)
			for _, wp := range w.pools {
				for _, m := range wp.pool.members {
					pl := placeOf(c.Dependency, m)
					if pl == nil {
						continue
					}
					i, ok := idx[pl]
					if !ok {
						i = len(idx)
						if i >= maxAppPlaces {
							return fmt.Errorf("distributed-app %s: its members are in more than %d places", name, maxAppPlaces)
						}
						idx[pl] = i
					}
					a.place[m] = i
				}
			}
		}
		a.places = len(idx)
		if err := p.appContexts(a); err != nil {
			return err
		}
		p.apps = append(p.apps, a)
	}
	return nil
}

// appContexts resolves the application's disabled-contexts into the
// members they take out. A context naming nothing is refused.
func (p *plan) appContexts(a *distApp) error {
	for _, c := range a.cfg.DisabledContexts {
		var in func(m *member) bool
		switch c.Kind {
		case DependDatacenter:
			if p.dcs[c.Name] == nil {
				return fmt.Errorf("distributed-app %s: disabled-contexts: the datacenter %s does not exist", a.name, c.Name)
			}
			in = func(m *member) bool { return m.vs.host.dc.name == c.Name }
		case DependServer:
			if p.hosts[c.Name] == nil {
				return fmt.Errorf("distributed-app %s: disabled-contexts: the server %s does not exist", a.name, c.Name)
			}
			in = func(m *member) bool { return m.vs.host.name == c.Name }
		case DependLink:
			if p.links[c.Name] == nil {
				return fmt.Errorf("distributed-app %s: disabled-contexts: the link %s does not exist", a.name, c.Name)
			}
			in = func(m *member) bool { return m.vs.link != nil && m.vs.link.name == c.Name }
		default:
			return fmt.Errorf("distributed-app %s: disabled-contexts: %s %q is not a datacenter, server or link", a.name, c.Name, c.Kind)
		}
		for _, w := range a.wides {
			if w.typ.named() {
				continue
			}
			for _, wp := range w.pools {
				for _, m := range wp.pool.members {
					if in(m) {
						if a.off == nil {
							a.off = map[*member]bool{}
						}
						a.off[m] = true
					}
				}
			}
		}
	}
	return nil
}

// depends says whether the dependency level restricts answers.
func (a *distApp) depends() bool {
	return a.cfg.Dependency != "" && a.cfg.Dependency != DependNone && a.places > 0
}

// mask is where every enabled wide IP of the application has an available
// virtual server: the places it can answer from. A wide IP without
// address pools (a CNAME or MX wide IP) constrains nothing.
func (a *distApp) mask() appMask {
	a.computed.Add(1)
	var all appMask
	for i := 0; i < a.places; i++ {
		all.set(i)
	}
	for _, w := range a.wides {
		if w.cfg.Disabled || w.typ.named() {
			continue
		}
		var up appMask
		for _, wp := range w.pools {
			if wp.pool.cfg.Disabled {
				continue
			}
			for _, m := range wp.pool.members {
				i, ok := a.place[m]
				if !ok || a.off[m] {
					continue
				}
				if ok, _ := memberState(m); ok {
					up.set(i)
				}
			}
		}
		for i := range all {
			all[i] &= up[i]
		}
	}
	return all
}

// maskAt is mask as of availability generation gen: the cached one when
// nothing changed since it was computed. gen is read before computing, so
// a change during the computation makes the next query compute again.
func (a *distApp) maskAt(gen uint64) appMask {
	if c := a.cache.Load(); c != nil && c.gen == gen {
		return c.mask
	}
	m := a.mask()
	a.cache.Store(&appMaskAt{gen: gen, mask: m})
	return m
}

// appAllows says whether the application lets m answer this query: its
// place is one every wide IP of the application can answer from. It
// computes the query's mask once.
func (rq *request) appAllows(m *member) bool {
	a := rq.app
	i, ok := a.place[m]
	if !ok {
		return true
	}
	if !rq.appMasked {
		rq.appMask, rq.appMasked = a.maskAt(rq.appGen), true
	}
	return rq.appMask.has(i)
}

// appFilter narrows a pool's available members to those the application
// allows: the places its dependency level leaves, then the data center
// its persistence holds the LDNS on, when a member there is left.
func (rq *request) appFilter(out []*member) []*member {
	a := rq.app
	n := len(out)
	if a.off != nil {
		k := 0
		for _, m := range out {
			if !a.off[m] {
				out[k] = m
				k++
			}
		}
		out = out[:k]
	}
	if a.depends() {
		k := 0
		for _, m := range out {
			if rq.appAllows(m) {
				out[k] = m
				k++
			}
		}
		out = out[:k]
	}
	if a.cfg.Persistence && len(out) > 0 {
		if dc := rq.appPersistDC(); dc != "" {
			k := 0
			for _, m := range out {
				if m.vs.host.dc.name == dc {
					out[k] = m
					k++
				}
			}
			if k > 0 {
				rq.appHeld = true
				out = out[:k]
			} else {
				a.rt.moved.Inc(rq.shard)
			}
		}
	}
	rq.appCut = len(out) < n
	return out
}

// appStart readies a query of a wide IP of an application; false when
// the application is disabled: the query returns to DNS.
func (s *Server) appStart(rq *request, w *wideIP, d *decision) bool {
	a := w.app
	a.rt.requests.Inc(rq.shard)
	if a.cfg.Disabled {
		d.out = outReturnToDNS
		return false
	}
	rq.app, rq.appWide, rq.appTable = a, w, &s.appPersist
	if a.depends() {
		rq.appGen = s.avail.Load()
	}
	return true
}

// appKey is an application persistence record's key: the application
// and the LDNS masked by the asking wide IP's persist-cidr.
type appKey struct {
	app  string
	ldns netip.Prefix
}

type appRec struct {
	dc      string
	expires int64 // unix nanoseconds
}

// appPersist is the application persistence table: which data center
// each LDNS is held on, per application.
type appPersist struct {
	mu sync.Mutex
	m  map[appKey]appRec
}

func (rq *request) appPersistKey() appKey {
	w := rq.appWide
	return appKey{rq.app.name, maskAddr(rq.client, w.cidr4, w.cidr6)}
}

// appPersistDC is the data center the LDNS is held on ("" for none), once
// per query.
func (rq *request) appPersistDC() string {
	if rq.appDCRead {
		return rq.appDC
	}
	rq.appDCRead = true
	k := rq.appPersistKey()
	now := rq.now.UnixNano()
	t := rq.appTable
	t.mu.Lock()
	r, ok := t.m[k]
	t.mu.Unlock()
	if ok && r.expires > now {
		rq.appDC = r.dc
	}
	return rq.appDC
}

// appRecord holds the LDNS on the answer's data center for the
// application's ttl-persistence.
func (s *Server) appRecord(rq *request, d *decision) {
	if d.member == nil {
		return
	}
	if rq.appHeld {
		rq.app.rt.persisted.Inc(rq.shard)
	}
	k := rq.appPersistKey()
	r := appRec{dc: d.member.vs.host.dc.name, expires: rq.now.Add(rq.app.cfg.PersistTTL).UnixNano()}
	t := &s.appPersist
	t.mu.Lock()
	if t.m == nil {
		t.m = map[appKey]appRec{}
	}
	t.m[k] = r
	t.mu.Unlock()
}

// sweep drops expired application persistence records.
func (t *appPersist) sweep(now time.Time) {
	n := now.UnixNano()
	t.mu.Lock()
	for k, r := range t.m {
		if r.expires <= n {
			delete(t.m, k)
		}
	}
	t.mu.Unlock()
}

// DistAppStats is `show gtm distributed-app <name>`.
type DistAppStats struct {
	Name       string
	Status     ObjectStatus
	Dependency Dependency
	WideIPs    []string // "name type", as tmsh lists them
	// DisabledContexts are "datacenter /Common/dc1", "server ...",
	// "link ...", in configuration order.
	DisabledContexts []string
	// Requests counts the queries its wide IPs decided; Persisted those
	// its persistence kept on a data center, Moved those whose held data
	// center could no longer answer [M: F5 does not document the
	// counters of this show].
	Requests  uint64
	Persisted uint64
	Moved     uint64
}

// Reasons of an application's status [M: BIG-IP's wording is not
// documented].
const (
	reasonAppDisabled = "The distributed application is disabled"
	reasonAppNoPlace  = "No place has every wide IP of the application available"
	reasonAppWideIP   = "A wide IP of the application is unavailable"
	reasonAppContexts = "A wide IP of the application is available only where the application is disabled"
)

// answersOutsideContexts says whether every enabled address wide IP of
// the application has an available member outside its disabled
// contexts: else the application cannot answer for it.
func (a *distApp) answersOutsideContexts() bool {
	for _, w := range a.wides {
		if w.cfg.Disabled || w.typ.named() {
			continue
		}
		found := false
		for _, wp := range w.pools {
			if wp.pool.cfg.Disabled {
				continue
			}
			for _, m := range wp.pool.members {
				if ok, _ := memberState(m); ok && !a.off[m] {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// DistApps snapshots every distributed application, sorted by name.
func (s *Server) DistApps() []DistAppStats {
	p := s.plan.Load()
	out := make([]DistAppStats, 0, len(p.apps))
	for _, a := range p.apps {
		ok, why := true, reasonAvailable
		for _, w := range a.wides {
			if up, _ := wideIPState(w); !up {
				ok, why = false, reasonAppWideIP
				break
			}
		}
		if ok && a.off != nil && !a.answersOutsideContexts() {
			ok, why = false, reasonAppContexts
		}
		if ok && a.depends() {
			m := a.maskAt(s.avail.Load())
			if m == (appMask{}) {
				ok, why = false, reasonAppNoPlace
			}
		}
		if a.cfg.Disabled {
			ok, why = false, reasonAppDisabled
		}
		st := status(ok, why, a.cfg.Disabled, false)
		if !ok && !a.cfg.Disabled {
			st.Availability = Offline
		}
		dep := a.cfg.Dependency
		if dep == "" {
			dep = DependNone
		}
		x := DistAppStats{Name: a.name, Status: st, Dependency: dep,
			Requests: a.rt.requests.Load(), Persisted: a.rt.persisted.Load(), Moved: a.rt.moved.Load()}
		for _, w := range a.wides {
			x.WideIPs = append(x.WideIPs, w.full+" "+string(defType(w.typ)))
		}
		sort.Strings(x.WideIPs)
		for _, c := range a.cfg.DisabledContexts {
			x.DisabledContexts = append(x.DisabledContexts, string(c.Kind)+" "+c.Name)
		}
		out = append(out, x)
	}
	return out
}
