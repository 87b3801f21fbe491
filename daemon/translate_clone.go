package daemon

import (
	"fmt"

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
