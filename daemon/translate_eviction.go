package daemon

import (
	"strings"

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
	if t.evictions == nil {
		t.evictions = map[*objects.Object]*dataplane.EvictionPolicy{}
	}
	t.evictions[po] = p
	return p
}
