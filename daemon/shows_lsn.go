package daemon

import (
	"context"
	"io"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// lsnCommands answers show and reset-stats of ltm lsn-pool from the
// running pools (dataplane/lsn). A pool the dataplane does not run
// (refused at commit) shows zeros.
func lsnCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", ltmLSNPool.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, ltmLSNPool, names) {
				if err := render.LSNPool(w, name, p.LSNPool(name), showOpts(s, words)); err != nil {
					return err
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
