package daemon

import (
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/daemon/render"
)

// evictionStats is show ltm eviction-policy for one policy: the virtual
// servers that name it and the connections it reset on them.
type evictionStats struct {
	Name     string
	Virtuals []string
	Evicted  uint64
	// SlowKilled is the slow flows its slow-flow throttling reset on
	// them (Slow Flows Killed [M]).
	SlowKilled uint64
}

// evictionPolicies is each ltm eviction-policy with what the virtual
// servers naming it now evicted (their Evicted Connections, since
// their last reset-stats) [M: BIG-IP keeps the policy's own counters;
// openltm adds up its virtuals', so a virtual that moves to another
// policy takes its count along].
func (h *planeHook) evictionPolicies() []evictionStats {
	cfg, _ := h.running()
	if cfg == nil {
		return nil
	}
	evicted, slow := map[string]uint64{}, map[string]uint64{}
	for _, v := range h.p.Virtuals() {
		evicted[v.Name], slow[v.Name] = v.Evicted, v.SlowKilled
	}
	byPolicy := map[string]*evictionStats{}
	var out []*evictionStats
	for _, po := range cfg.Of(ltmEvictionPolicy) {
		st := &evictionStats{Name: po.Name}
		byPolicy[po.Name] = st
		out = append(out, st)
	}
	for _, o := range cfg.Of(ltmVirtual) {
		name := virtualEvictionPolicy.Str(o)
		if name == "" || name == "none" {
			continue
		}
		po := cfg.Lookup(schema, []string{ltmEvictionPolicy.Key()}, name)
		if po == nil || byPolicy[po.Name] == nil {
			continue
		}
		st := byPolicy[po.Name]
		st.Virtuals = append(st.Virtuals, o.Name)
		st.Evicted += evicted[o.Name]
		st.SlowKilled += slow[o.Name]
	}
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
	_, err := fmt.Fprintf(w, "%s\nLtm::Eviction Policy: %s\n%s\n  %-22s%s\n  %-22s%d\n  %-22s%d\n", rule, strings.TrimPrefix(st.Name, "/Common/"), rule,
		"Virtual Servers", vs, "Evicted Connections", st.Evicted, "Slow Flows Killed", st.SlowKilled)
	return err
}
