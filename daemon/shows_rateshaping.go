package daemon

import (
	"context"
	"io"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// rateClassCommands answers show and reset-stats of net rate-shaping
// class from the running classes' counters (dataplane/bwc/class.go). A
// class the dataplane does not run (refused at commit) shows zeros.
func rateClassCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", netRateClass.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, netRateClass, names) {
				st, r, c, _ := p.RateClassStats(name)
				if err := render.RateClass(w, name, st, r, c, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", netRateClass.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, netRateClass, names) {
				p.ResetRateClassStats(name)
			}
			return nil
		}},
	}
}
