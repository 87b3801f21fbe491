package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/aaa"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The iRules' AAA:: commands send their RADIUS requests through an
// internal virtual server with a `pem profile radius-aaa` (the only PEM
// kind openltm acts on): its shared-secret signs them, its pool holds the
// RADIUS servers, its rules run RADIUS_AAA_AUTH_REQUEST and the other
// RADIUS_AAA_* events over them. A radius-aaa profile on a virtual server
// that is not internal does nothing there, and is kept with a warning.

var profileRadiusAAA = schema.MustKind("pem profile radius-aaa")

// aaaRules are an internal virtual server's rules as its AAA exchanges
// run them; the program is set when the translation goes in service.
type aaaRules struct {
	prog atomic.Pointer[rules.Program]
}

// Request implements aaa.Hooks.
func (r *aaaRules) Request(acct bool, pkt []byte) ([]byte, error) {
	ev := rules.RADIUSAAAAuthRequest
	if acct {
		ev = rules.RADIUSAAAAcctRequest
	}
	return r.run(ev, pkt, netip.AddrPort{})
}

// Response implements aaa.Hooks.
func (r *aaaRules) Response(acct bool, pkt []byte, server netip.AddrPort) ([]byte, error) {
	ev := rules.RADIUSAAAAuthResponse
	if acct {
		ev = rules.RADIUSAAAAcctResponse
	}
	return r.run(ev, pkt, server)
}

func (r *aaaRules) run(ev rules.Event, pkt []byte, server netip.AddrPort) ([]byte, error) {
	p := r.prog.Load()
	if p == nil {
		return pkt, nil
	}
	m := rules.AAAMessage{Packet: pkt, Server: server}
	if err := p.RunAAA(ev, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ev, err)
	}
	return m.Packet, nil
}

// aaaSet is a translation's AAA services: by internal virtual server
// (full path), the pool each balances over, and the rule lists start
// builds programs of.
type aaaSet struct {
	services map[string]*aaa.Service
	pools    map[*aaa.Service]string
	rules    map[*aaaRules]ruleList
}

// aaaServices translates the internal virtual servers with a radius-aaa
// profile; kept are the warnings on radius-aaa profiles elsewhere.
func (e *Engine) aaaServices(cfg *objects.Config, b *ruleBinder) (set aaaSet, kept []string) {
	set = aaaSet{services: map[string]*aaa.Service{}, pools: map[*aaa.Service]string{}, rules: map[*aaaRules]ruleList{}}
	t := &translator{s: e.schema, cfg: cfg}
	for _, vs := range cfg.Of(ltmVirtual) {
		p := t.profile(vs, profileRadiusAAA)
		if p == nil {
			continue
		}
		if !isInternal(vs) {
			kept = append(kept, fmt.Sprintf("ltm virtual %s: profile %s (radius-aaa) acts only on an internal virtual server, which AAA::auth_send and AAA::acct_send name; openltm keeps it here without acting on it", vs.Name, p.Name))
			continue
		}
		eff := func(name string) string { return profileRadiusAAA.MustProp(name).Effective(cfg, p) }
		secs := func(name string, def int) time.Duration {
			n, err := strconv.Atoi(eff(name))
			if err != nil || n <= 0 {
				n = def
			}
			return time.Duration(n) * time.Second
		}
		svc := &aaa.Service{Name: vs.Name, Secret: []byte(noneEmpty(eff("shared-secret"))), Password: noneEmpty(eff("password")),
			Retransmit: secs("retransmission-timeout", 5), Transaction: secs("transaction-timeout", 30)}
		if pn := virtualPool.Str(vs); pn != "" && pn != "none" {
			if pool := cfg.Lookup(e.schema, specPool, pn); pool != nil {
				set.pools[svc] = pool.Name
			}
		}
		if ar, rl := aaaRulesOf(e.schema, cfg, b, vs); ar != nil {
			svc.Hooks = ar
			set.rules[ar] = rl
		}
		set.services[vs.Name] = svc
	}
	return set, kept
}

// aaaRulesOf compiles an internal virtual server's rules for its AAA
// exchanges: nil when none of them has a RADIUS_AAA_* event. A rule
// that does not compile leaves the exchanges without rules (the
// virtual's own commit reports it).
func aaaRulesOf(s *objects.Schema, cfg *objects.Config, b *ruleBinder, vs *objects.Object) (*aaaRules, ruleList) {
	rv := virtualRules.Get(vs)
	if rv == nil || len(rv.List) == 0 {
		return nil, ruleList{}
	}
	var list []*rules.Rule
	var key strings.Builder
	handles := false
	for _, n := range rv.List {
		r, key1, err := b.compileNamed(s, cfg, n)
		if err != nil {
			return nil, ruleList{}
		}
		for _, ev := range []rules.Event{rules.RADIUSAAAAuthRequest, rules.RADIUSAAAAuthResponse, rules.RADIUSAAAAcctRequest, rules.RADIUSAAAAcctResponse} {
			handles = handles || r.Handles(ev)
		}
		list = append(list, r)
		key.WriteString(key1)
	}
	if !handles {
		return nil, ruleList{}
	}
	return &aaaRules{}, ruleList{key: key.String(), list: list}
}

// aaaService is rules.Env.AAA: the internal virtual server by full path,
// or by name in /Common.
func (rt *ruleRuntime) aaaService(name string) (*aaa.Service, bool) {
	m := rt.aaa.Load()
	if m == nil {
		return nil, false
	}
	if !strings.HasPrefix(name, "/") {
		name = "/Common/" + name
	}
	svc, ok := (*m)[name]
	return svc, ok
}

// startAAA puts a translation's AAA services in service: each balances
// over its pool through the dataplane attached then.
func (rt *ruleRuntime) startAAA(set aaaSet) {
	for svc, pool := range set.pools {
		svc.Pick = func() (netip.AddrPort, bool) {
			if p := rt.flows.p.Load(); p != nil {
				return p.PoolPick(pool)
			}
			return netip.AddrPort{}, false
		}
	}
	m := set.services
	if m == nil {
		m = map[string]*aaa.Service{}
	}
	rt.aaa.Store(&m)
}
