package daemon

import (
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// evictionStats is show ltm eviction-policy for one policy: the virtual
// servers, route domains and global context that name it, and what it
// did there.
type evictionStats struct {
	Name         string
	Virtuals     []string
	RouteDomains []string
	Global       bool
	Evicted      uint64
	// SlowKilled is the slow flows its slow-flow throttling reset (Slow
	// Flows Killed [M]).
	SlowKilled uint64
	// Refused is the clients its contexts turned away, full with nothing
	// left to evict (Refused Connections [M]).
	Refused uint64
}

// evictionPolicies is each ltm eviction-policy with the contexts that
// use it now and what they evicted since ltmd started [M: BIG-IP keeps
// the policy's own counters; openltm adds up the contexts that use it
// now, so a virtual server that moves to another policy takes its
// count along, and reset-stats ltm virtual does not zero it].
func (h *planeHook) evictionPolicies() []evictionStats {
	cfg, _ := h.running()
	if cfg == nil {
		return nil
	}
	counts := h.p.EvictionContextCounts()
	byPolicy := map[string]*evictionStats{}
	var out []*evictionStats
	for _, po := range cfg.Of(ltmEvictionPolicy) {
		st := &evictionStats{Name: po.Name}
		byPolicy[po.Name] = st
		out = append(out, st)
	}
	use := func(name, key string, add func(st *evictionStats)) {
		if name == "" || name == "none" {
			return
		}
		po := cfg.Lookup(schema, []string{ltmEvictionPolicy.Key()}, name)
		if po == nil || byPolicy[po.Name] == nil {
			return
		}
		st := byPolicy[po.Name]
		add(st)
		c := counts[key]
		st.Evicted += c[0]
		st.SlowKilled += c[1]
		st.Refused += c[2]
	}
	for _, o := range cfg.Of(ltmVirtual) {
		use(virtualEvictionPolicy.Str(o), dataplane.VirtualContext(o.Name), func(st *evictionStats) { st.Virtuals = append(st.Virtuals, o.Name) })
	}
	for _, o := range cfg.Of(netRouteDomain) {
		use(rdEvictionPolicy.Str(o), dataplane.RouteDomainContext(o.Name), func(st *evictionStats) { st.RouteDomains = append(st.RouteDomains, o.Name) })
	}
	g := globalEvictionPolicy.Default
	if o := cfg.Get(ltmConnection, ""); o != nil {
		g = globalEvictionPolicy.Effective(cfg, o)
	}
	use(g, dataplane.GlobalContext, func(st *evictionStats) { st.Global = true })
	res := make([]evictionStats, len(out))
	for i, st := range out {
		res[i] = *st
	}
	return res
}

// drawEviction prints one policy's block [M: BIG-IP's layout].
func drawEviction(w io.Writer, st evictionStats, o render.Options) error {
	rule := strings.Repeat("-", 66)
	vs := "none"
	if len(st.Virtuals) > 0 {
		vs = strings.Join(st.Virtuals, " ")
	}
	rds := "none"
	if len(st.RouteDomains) > 0 {
		rds = strings.Join(st.RouteDomains, " ")
	}
	global := "no"
	if st.Global {
		global = "yes"
	}
	_, err := fmt.Fprintf(w, "%s\nLtm::Eviction Policy: %s\n%s\n  %-22s%s\n  %-22s%s\n  %-22s%s\n  %-22s%d\n  %-22s%d\n  %-22s%d\n", rule, strings.TrimPrefix(st.Name, "/Common/"), rule,
		"Virtual Servers", vs, "Route Domains", rds, "Global", global, "Evicted Connections", st.Evicted, "Slow Flows Killed", st.SlowKilled, "Refused Connections", st.Refused)
	return err
}
