package daemon

import (
	"fmt"
	"slices"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// A virtual server's clone-pools.
var (
	virtualClonePools = ltmVirtual.MustProp("clone-pools")
	clonePoolContext  = virtualClonePools.Sub.MustProp("context")
)

// clonePools sets v's clone pools from o. A pool that does not exist is
// reported by the engine's reference check (01020036); a clone pool that
// is the virtual's default pool is refused: the members would get each
// connection twice, once as the flow and once as its copy. false leaves
// the virtual out.
func (t *translator) clonePools(o *objects.Object, v *dataplane.Virtual) bool {
	cv := virtualClonePools.Get(o)
	if cv == nil || len(cv.Items) == 0 {
		return true
	}
	for _, it := range cv.Items {
		p := t.cfg.Lookup(t.s, specPool, it.Name)
		if p == nil {
			t.skip(o, "clone pool %s does not exist", it.Name)
			return false
		}
		if p.Name == v.Pool {
			msg := fmt.Sprintf("01070734:3: Configuration error: The clone pool (%s) is the default pool of the virtual server (%s); a clone pool must be another pool.", p.Name, o.Name)
			t.skipped = append(t.skipped, msg)
			t.refused = append(t.refused, msg)
			return false
		}
		v.Clone = append(v.Clone, dataplane.ClonePool{Pool: p.Name, Server: clonePoolContext.StrIn(it) == "serverside"})
	}
	return true
}

// cloneWarnings lists the virtuals of dc whose clone pools get no copy:
// a UDP virtual's datagrams are not mirrored (BIG-IP accepts the pools
// there, so they are kept, not refused).
func cloneWarnings(dc *dataplane.Config) []string {
	var out []string
	for name, v := range dc.Virtuals {
		if len(v.Clone) > 0 && v.IsUDP() {
			out = append(out, fmt.Sprintf("ltm virtual %s: clone-pools on a UDP virtual server: openltm mirrors TCP byte streams only; kept, and no copy is sent", name))
		}
	}
	slices.Sort(out)
	return out
}

// warnClone warns of what cloneWarnings finds, once: not again for what
// the running configuration had already.
func warnClone(old *objects.Config, h *planeHook, tr *ltmTranslation, warn func(string)) {
	had := map[string]bool{}
	if old != nil {
		if runCfg, runTr := h.running(); runCfg == old && runTr != nil {
			for _, w := range cloneWarnings(runTr.dc) {
				had[w] = true
			}
		}
	}
	for _, w := range cloneWarnings(tr.dc) {
		if !had[w] {
			warn(w)
		}
	}
}
