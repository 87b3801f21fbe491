package daemon

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// monitorCommands answers `show ltm monitor TYPE [NAME ...]` for every
// monitor type: each monitor's running instances (destination, object,
// state and the last probe's error), the first thing an operator looks at
// when a member is marked down.
func monitorCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	var out []RuntimeCommand
	for _, k := range schema.Kinds() {
		if !strings.HasPrefix(k.Key(), "ltm monitor ") {
			continue
		}
		k := k
		out = append(out, RuntimeCommand{"show", k.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			if len(names) == 0 {
				for _, o := range e.Config().Of(k) {
					names = append(names, o.Name)
				}
			}
			probes := p.MonitorProbes(names)
			now, o := time.Now(), showOpts(s, words)
			for _, n := range names {
				var mine []dataplane.MonitorProbe
				for _, pr := range probes {
					if pr.Monitor == n {
						mine = append(mine, pr)
					}
				}
				if err := render.Monitor(w, n, mine, now, o); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	return out
}
