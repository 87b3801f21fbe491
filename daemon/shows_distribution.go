package daemon

import (
	"context"
	"io"
	"slices"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// showPool answers `show ltm pool`, and with the option `distribution`
// (openltm's own, in tmsh's style) explains each named pool's spread:
// members' shares of connections, requests and persistence records, where
// the traffic of its virtual servers comes from, and the findings that
// explain an uneven load with the change that fixes each.
func showPool(p *dataplane.Plane) RuntimeFunc {
	plain := showEach(p.Pools, func(v dataplane.PoolStats) string { return v.Name }, render.FieldFmt(render.Pool, render.PoolFields))
	return func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
		if !slices.Contains(words, "distribution") {
			return plain(ctx, s, names, words, w)
		}
		if len(names) == 0 {
			return objects.Invalid("show ltm pool distribution needs a pool name: show ltm pool <name> distribution")
		}
		o := showOpts(s, words)
		for _, st := range p.Pools() {
			if !nameMatch(names, st.Name) {
				continue
			}
			d, ok := p.Distribution(st.Name)
			if !ok {
				continue
			}
			if err := render.Distribution(w, d, o); err != nil {
				return err
			}
		}
		return nil
	}
}
