package daemon

import (
	"context"
	"io"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// lsnCommands answers show and reset-stats of ltm lsn-pool from the
// running pools (dataplane/lsn). A pool the dataplane does not run
// (refused at commit) shows zeros. show ... detail also lists the pool's
// PCP mappings one a line [M: BIG-IP documents no such listing].
func lsnCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", ltmLSNPool.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, ltmLSNPool, names) {
				o, lp := showOpts(s, words), p.LSNPool(name)
				if err := render.LSNPool(w, name, lp, o); err != nil {
					return err
				}
				// detail: the PCP server's mappings one a line [M].
				if o.Detail && lp != nil {
					if err := render.LSNPCPMappings(w, lp.PCPMappings(), time.Now(), o); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"reset-stats", ltmLSNPool.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, ltmLSNPool, names) {
				if lp := p.LSNPool(name); lp != nil {
					lp.ResetStats()
				}
			}
			return nil
		}},
	}
}
