package daemon

import (
	"context"
	"io"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// bwcCommands answers show and reset-stats of net bwc policy from the
// running bandwidth controllers' counters (dataplane/bwc). A policy the
// dataplane does not run (refused at commit) shows zeros.
func bwcCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", netBWCPolicy.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, netBWCPolicy, names) {
				st, _ := p.BWCStats(name)
				if err := render.BWCPolicy(w, name, st, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", netBWCPolicy.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, netBWCPolicy, names) {
				p.ResetBWCStats(name)
			}
			return nil
		}},
	}
}
