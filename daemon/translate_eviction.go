package daemon

import (
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// A virtual's flow-eviction-policy (dataplane/evict).
var (
	ltmEvictionPolicy     = schema.MustKind("ltm eviction-policy")
	evictionHigh          = ltmEvictionPolicy.MustProp("high-water")
	evictionLow           = ltmEvictionPolicy.MustProp("low-water")
	evictionStrategies    = ltmEvictionPolicy.MustProp("strategies")
	virtualEvictionPolicy = ltmVirtual.MustProp("flow-eviction-policy")
	evictionSlow          = ltmEvictionPolicy.MustProp("slow-flow")
	netRouteDomain        = schema.MustKind("net route-domain")
	rdID                  = netRouteDomain.MustProp("id")
	rdConnectionLimit     = netRouteDomain.MustProp("connection-limit")
	rdEvictionPolicy      = netRouteDomain.MustProp("flow-eviction-policy")
	ltmConnection         = schema.MustKind("ltm global-settings connection")
	globalEvictionPolicy  = ltmConnection.MustProp("global-flow-eviction-policy")
)

// virtualEviction gives v its flow-eviction-policy. The policy acts
// against the virtual's connection-limit, as BIG-IP's does for a virtual
// server context; without a limit it is kept, and the commit says why
// [M: BIG-IP then measures the virtual against the system's capacity,
// which openltm does not count].
func (t *translator) virtualEviction(o *objects.Object, v *dataplane.Virtual) {
	name := virtualEvictionPolicy.Str(o)
	if name == "" || name == "none" {
		return
	}
	po := t.cfg.Lookup(t.s, []string{ltmEvictionPolicy.Key()}, name)
	if po == nil {
		return // a dangling reference the schema reports
	}
	if v.ConnectionLimit <= 0 {
		p := t.evictionPolicy(po)
		if p.Slow != nil {
			// slow-flow needs no limit: its throttling counts slow flows.
			t.note(o, "flow-eviction-policy %s: its slow-flow acts, but its high-water and low-water evict nothing: openltm measures them against the virtual server's connection-limit, and it has none", po.Name)
			v.Eviction = p
			return
		}
		t.note(o, "flow-eviction-policy %s is kept but evicts nothing: openltm measures a virtual server's high-water and low-water against its connection-limit, and it has none", po.Name)
		return
	}
	v.Eviction = t.evictionPolicy(po)
}

// evictionPolicy is po as the dataplane acts on it, translated once per
// commit however many virtuals name it.
func (t *translator) evictionPolicy(po *objects.Object) *dataplane.EvictionPolicy {
	if p := t.evictions[po]; p != nil {
		return p
	}
	p := &dataplane.EvictionPolicy{
		Name: po.Name,
		High: atoi(evictionHigh.Effective(t.cfg, po)),
		Low:  atoi(evictionLow.Effective(t.cfg, po)),
	}
	st := t.cfg.Effective(po, evictionStrategies.Name)
	on := func(s string) (bool, int) {
		if st == nil || st.Sub == nil || st.Sub.Props[s] == nil || st.Sub.Props[s].Sub == nil {
			return false, 0
		}
		b := st.Sub.Props[s].Sub.Props
		en := b["enabled"] != nil && b["enabled"].Str == "true"
		d := 0
		if b["delay"] != nil {
			d = atoi(b["delay"].Str)
		}
		return en, d
	}
	p.BiasIdle, _ = on("bias-idle")
	p.BiasOldest, _ = on("bias-oldest")
	var delay int
	p.BiasBytes, delay = on("bias-bytes")
	p.BytesDelay = secondsOf(int64(delay))
	if en, _ := on("low-priority-port"); en {
		var items []*objects.Item
		if v := st.Sub.Props["low-priority-port"].Sub.Props["ports"]; v != nil {
			items = v.Items
		}
		for _, it := range items {
			pn, proto := "0", "any"
			if v := it.Props["port-number"]; v != nil {
				pn = v.Str
			}
			if v := it.Props["protocol"]; v != nil {
				proto = v.Str
			}
			if n, err := objects.ParsePort(pn); err == nil && n > 0 {
				p.LowPorts = append(p.LowPorts, dataplane.EvictionLowPort{Port: uint16(n), Proto: proto})
			}
		}
	}
	if en, _ := on("low-priority-geographies"); en {
		if cs := st.Sub.Props["low-priority-geographies"].Sub.Props["countries"]; cs != nil && len(cs.List) > 0 {
			g := &dataplane.GeoMatch{Store: t.geoStore()}
			for _, c := range cs.List {
				g.Countries = append(g.Countries, strings.ToUpper(c))
			}
			p.LowGeo = g
		}
	}
	var fastDelay, slowDelay int
	p.BiasFast, fastDelay = on("bias-fast")
	p.BiasSlow, slowDelay = on("bias-slow")
	p.FastDelay, p.SlowDelay = secondsOf(int64(fastDelay)), secondsOf(int64(slowDelay))
	if en, _ := on("low-priority-virtual-server"); en {
		for _, n := range namesOf(st, "low-priority-virtual-server") {
			vo := t.lookupIn(ltmVirtual.Key(), n)
			if vo == nil {
				t.note(po, "low-priority-virtual-server: %s is not a virtual server, and is left out", n)
				continue
			}
			p.LowVirtuals = addName(p.LowVirtuals, vo.Name)
		}
	}
	if en, _ := on("low-priority-route-domain"); en {
		for _, n := range namesOf(st, "low-priority-route-domain") {
			id, ok := t.routeDomainID(n)
			if !ok {
				t.note(po, "low-priority-route-domain: %s is not a route domain, and is left out", n)
				continue
			}
			for _, vo := range t.cfg.Of(ltmVirtual) {
				// A virtual without a destination of its own (one on a
				// traffic-matching-criteria) is in route domain 0.
				if d, err := objects.ParseDest(virtualDestination.Str(vo)); err == nil && d.RD == id || err != nil && id == 0 {
					p.LowVirtuals = addName(p.LowVirtuals, vo.Name)
				}
			}
		}
	}
	if sf := t.cfg.Effective(po, evictionSlow.Name); sf != nil && sf.Sub != nil {
		get := func(k, def string) string {
			if v := sf.Sub.Props[k]; v != nil {
				return v.Str
			}
			return def
		}
		if get("enabled", "false") == "true" {
			p.Slow = &dataplane.EvictionSlowFlow{
				Threshold: uint64(atoi(get("threshold-bps", "32"))),
				Grace:     time.Duration(atoi(get("grace-period", "10"))) * time.Second,
				Throttle:  get("throttling", "disabled") == "enabled",
				Max:       atoi(get("maximum", "100")),
				Percent:   get("eviction-type", "percent") == "percent",
			}
		}
	}
	if t.evictions == nil {
		t.evictions = map[*objects.Object]*dataplane.EvictionPolicy{}
	}
	t.evictions[po] = p
	return p
}

func addName(m map[string]bool, n string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[n] = true
	return m
}

// routeDomainID is the id of the route domain named n: a net
// route-domain object's id, or, for one not in the configuration, the
// name itself when it is a number (route domain 0 exists on every
// BIG-IP) [M].
func (t *translator) routeDomainID(n string) (int, bool) {
	if o := t.lookupIn(netRouteDomain.Key(), n); o != nil {
		return atoi(rdID.Effective(t.cfg, o)), true
	}
	id, err := strconv.Atoi(strings.TrimPrefix(n, "/Common/"))
	return id, err == nil && id >= 0
}

// evictionContexts are the route domains with a connection-limit and
// the global flow-eviction-policy, as the dataplane acts on them: a
// route domain's connection-limit caps its virtual servers'
// connections together (refusing new clients past it, or, with a
// flow-eviction-policy, evicting at its high-water mark); the global
// policy measures every virtual server's connections against the
// system's capacity (globalCapacity).
func (t *translator) evictionContexts() {
	for _, o := range t.cfg.Of(netRouteDomain) {
		limit := atoi(rdConnectionLimit.Effective(t.cfg, o))
		pn := rdEvictionPolicy.Str(o)
		var pol *dataplane.EvictionPolicy
		if pn != "" && pn != "none" {
			if po := t.cfg.Lookup(t.s, []string{ltmEvictionPolicy.Key()}, pn); po != nil {
				pol = t.evictionPolicy(po)
			}
		}
		if limit <= 0 {
			if pol != nil {
				t.note(o, "flow-eviction-policy %s is kept but evicts nothing: openltm measures a route domain's high-water and low-water against its connection-limit, and it has none", pn)
			}
			continue
		}
		t.dc.EvictionContexts = append(t.dc.EvictionContexts, &dataplane.EvictionContext{
			Name: o.Name, RouteDomain: atoi(rdID.Effective(t.cfg, o)), Limit: limit, Policy: pol})
	}
	gn := globalEvictionPolicy.Default
	o := t.cfg.Get(ltmConnection, "")
	if o != nil {
		gn = globalEvictionPolicy.Effective(t.cfg, o)
	}
	if gn == "" || gn == "none" {
		return
	}
	po := t.cfg.Lookup(t.s, []string{ltmEvictionPolicy.Key()}, gn)
	if po == nil {
		if o != nil {
			t.note(o, "global-flow-eviction-policy %s is not an eviction policy: no global eviction", gn)
		}
		return
	}
	t.dc.EvictionContexts = append(t.dc.EvictionContexts, &dataplane.EvictionContext{
		Name: "global", Global: true, Limit: globalCapacity(), Policy: t.evictionPolicy(po)})
}

// globalCapacity is the global context's capacity [M: BIG-IP measures
// it against TMM's flow table, sized by its memory]: half of ltmd's
// open-file limit, as each proxied connection holds a client and a
// server socket, so that the global policy evicts before accept runs
// out of descriptors.
func globalCapacity() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == 0 {
		return 0
	}
	return int(min(r.Cur/2, 1<<30))
}

// namesOf is the names list of the strategy s of st.
func namesOf(st *objects.Value, s string) []string {
	if v := st.Sub.Props[s].Sub.Props["names"]; v != nil {
		return v.List
	}
	return nil
}

// lookupIn finds the object of kind named n in a policy's names list,
// which tmsh writes relative to /Common (v1) as well as in full.
func (t *translator) lookupIn(kind, n string) *objects.Object {
	if o := t.cfg.Lookup(t.s, []string{kind}, n); o != nil || strings.HasPrefix(n, "/") {
		return o
	}
	return t.cfg.Lookup(t.s, []string{kind}, "/Common/"+n)
}
