package dataplane

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/fqdn"
)

// FQDN nodes: the plane follows the name of every node written with an
// fqdn block (package fqdn) and runs, beside what the configuration
// names, one ephemeral node per address and one ephemeral member per
// address in each pool that lists the node, named as BIG-IP names them
// (/Common/_auto_10.1.1.1, /Common/_auto_10.1.1.1:80). When the answer
// changes, the running configuration is applied again with the new
// addresses: members that stay keep their flows, counters and monitor
// state, as for any commit.

// fqdnNode is one followed name.
type fqdnNode struct {
	key string // spec and resolver: a change restarts the watch
	w   *fqdn.Watcher

	mu  sync.Mutex
	cur fqdn.Update

	// applied are the addresses the running configuration put in
	// service, pending those of the apply under way (inService); both
	// under the plane's p.mu.
	applied, pending []netip.Addr
}

func (n *fqdnNode) addrs() []netip.Addr {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur.Addrs
}

// FQDNStatus is an FQDN node's resolution, for `show ltm node`.
type FQDNStatus struct {
	// Name is the name the node follows.
	Name string
	// Status is fqdn-checking, fqdn-up, fqdn-up-no-addr or fqdn-down.
	Status string
	// Addrs are the addresses in service.
	Addrs []netip.Addr
	// LastError is why the last query failed ("" after an answer).
	LastError string
	// Next is when the name is asked again.
	Next time.Time
}

// resolverFor is how names are resolved: the plane's resolver when its
// options give one, else the configuration's name servers, else the
// system's resolver.
func (p *Plane) resolverFor(cfg *Config) (fqdn.Resolver, string) {
	if p.opts.FQDNResolver != nil {
		return p.opts.FQDNResolver, "options"
	}
	if len(cfg.NameServers) > 0 {
		key := "servers " + strings.Join(cfg.NameServers, ",")
		if len(cfg.DNSSearch) > 0 {
			// A change of the search list asks every name again.
			key += " search " + strings.Join(cfg.DNSSearch, ",") + " ndots " + strconv.Itoa(cfg.DNSNDots)
		}
		return &fqdn.Server{Addrs: slices.Clone(cfg.NameServers), Search: slices.Clone(cfg.DNSSearch), NDots: cfg.DNSNDots}, key
	}
	return &fqdn.System{}, "system"
}

// reconcileFQDN starts following the FQDN nodes of cfg that are new or
// changed and stops the others. The caller holds p.mu.
func (p *Plane) reconcileFQDN(cfg *Config) {
	res, rkey := p.resolverFor(cfg)
	want := map[string]fqdnWant{}
	for name, n := range cfg.Nodes {
		if n == nil || n.FQDN == nil {
			continue
		}
		f := n.FQDN
		fam, _ := fqdn.ParseFamily(f.Family)
		spec := fqdn.Spec{Name: f.Name, Family: fam, Interval: f.Interval, DownInterval: f.DownInterval, Autopopulate: f.Autopopulate}
		key := rkey + "\x00" + f.Name + "\x00" + fam.String() + "\x00" + f.Interval.String() + "\x00" + f.DownInterval.String()
		if f.Autopopulate {
			key += "\x00auto"
		}
		want[name] = fqdnWant{spec: spec, key: key}
	}
	p.reconcileWatches(p.fqdns, want, res)
}

// fqdnWant is a name a reconcile follows: how, and the key (spec and
// resolver) whose change restarts its watch.
type fqdnWant struct {
	spec fqdn.Spec
	key  string
	res  fqdn.Resolver // nil: the reconcile's
}

// reconcileWatches makes the watches in have follow want, by the same
// names: a new or changed one starts (its answers re-apply the
// configuration when they change addresses), the others stop, off the
// caller's lock. FQDN nodes and virtuals' address-list names share it.
// The caller holds p.mu.
func (p *Plane) reconcileWatches(have map[string]*fqdnNode, want map[string]fqdnWant, res fqdn.Resolver) {
	var stale []*fqdn.Watcher
	for name, wt := range want {
		if old := have[name]; old != nil {
			if old.key == wt.key {
				continue
			}
			stale = append(stale, old.w)
		}
		fn := &fqdnNode{key: wt.key, cur: fqdn.Update{Name: wt.spec.Name, Status: fqdn.Checking}}
		r := res
		if wt.res != nil {
			r = wt.res
		}
		fn.w = fqdn.Watch(wt.spec, r, func(u fqdn.Update) {
			fn.mu.Lock()
			fn.cur = u
			fn.mu.Unlock()
			if len(u.Added) > 0 || len(u.Removed) > 0 {
				go p.fqdnChanged()
			}
		})
		have[name] = fn
	}
	for name, fn := range have {
		if _, ok := want[name]; !ok {
			stale = append(stale, fn.w)
			delete(have, name)
		}
	}
	if len(stale) > 0 {
		go func() {
			for _, w := range stale {
				w.Stop()
			}
		}()
	}
}

// fqdnChanged applies the running configuration again with the addresses
// the names resolve to now.
func (p *Plane) fqdnChanged() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.base == nil {
		return
	}
	if err := p.applyLocked(p.base); err != nil {
		p.log.Error("FQDN nodes: cannot apply the new addresses: " + err.Error())
	}
}

// expandFQDN is cfg with the FQDN nodes replaced by their ephemeral nodes
// and the FQDN members by their ephemeral members, for the addresses in
// service now. A configuration without FQDN nodes is returned as it is.
// The caller holds p.mu.
func (p *Plane) expandFQDN(cfg *Config) *Config {
	has := false
	for _, n := range cfg.Nodes {
		if n != nil && n.FQDN != nil {
			has = true
			break
		}
	}
	if !has {
		return cfg
	}
	out := *cfg
	out.Nodes = make(map[string]*Node, len(cfg.Nodes))
	auto := map[string][]netip.Addr{} // FQDN node → addresses in service
	for name, n := range cfg.Nodes {
		if n == nil || n.FQDN == nil {
			out.Nodes[name] = n
			continue
		}
		var addrs []netip.Addr
		if fn := p.fqdns[name]; fn != nil {
			addrs = p.inService(fn)
		}
		auto[name] = addrs
		for _, a := range addrs {
			en := *n
			en.Name, en.Addr, en.FQDN = ephemeralNode(name, a), a, nil
			if out.Nodes[en.Name] == nil {
				out.Nodes[en.Name] = &en
			}
		}
	}
	out.Pools = make(map[string]*Pool, len(cfg.Pools))
	for name, pc := range cfg.Pools {
		if pc == nil || len(pc.FQDNMembers) == 0 {
			out.Pools[name] = pc
			continue
		}
		np := *pc
		np.Members = slices.Clone(pc.Members)
		seen := map[netip.AddrPort]bool{}
		for _, m := range np.Members {
			seen[m.Addr] = true
		}
		for _, tm := range pc.FQDNMembers {
			for _, a := range auto[tm.Node] {
				em := tm
				em.Node = ephemeralNode(tm.Node, a)
				em.Addr = netip.AddrPortFrom(a, tm.Addr.Port())
				if !seen[em.Addr] {
					seen[em.Addr] = true
					np.Members = append(np.Members, em)
				}
			}
		}
		out.Pools[name] = &np
	}
	return &out
}

// ephemeralNode names the node of an address of FQDN node fqdnNode, in
// its folder: /Common/_auto_10.1.1.1.
func ephemeralNode(fqdnNode string, a netip.Addr) string {
	folder := "/Common"
	if i := strings.LastIndexByte(fqdnNode, '/'); i > 0 {
		folder = fqdnNode[:i]
	}
	return folder + "/" + fqdn.NodeName(a)
}

// FQDNNodes returns the resolution of every FQDN node, by name.
func (p *Plane) FQDNNodes() map[string]FQDNStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]FQDNStatus, len(p.fqdns))
	for name, fn := range p.fqdns {
		fn.mu.Lock()
		u := fn.cur
		fn.mu.Unlock()
		out[name] = FQDNStatus{Name: u.Name, Status: string(u.Status), Addrs: slices.Clone(u.Addrs), LastError: u.LastError, Next: u.Next}
	}
	return out
}

// stopFQDN stops every watch (Close). The caller holds p.mu.
func (p *Plane) stopFQDN() []*fqdn.Watcher {
	var ws []*fqdn.Watcher
	for name, fn := range p.fqdns {
		ws = append(ws, fn.w)
		delete(p.fqdns, name)
	}
	for name, fn := range p.vsFQDNs {
		ws = append(ws, fn.w)
		delete(p.vsFQDNs, name)
	}
	for name, fn := range p.ownFQDNs {
		ws = append(ws, fn.w)
		delete(p.ownFQDNs, name)
	}
	return ws
}
