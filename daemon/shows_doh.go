package daemon

import (
	"context"
	"io"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// dohCommands answer show and reset-stats ltm profile doh-server and
// doh-proxy [NAME...]: the DoH requests the virtuals using each profile
// took, the answers they sent and the requests that got none.
func dohCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	var out []RuntimeCommand
	for _, k := range []struct {
		proxy bool
		title string
	}{{false, "Ltm::DoH Server Profile"}, {true, "Ltm::DoH Proxy Profile"}} {
		kind := profileDoHServer
		if k.proxy {
			kind = profileDoHProxy
		}
		out = append(out,
			RuntimeCommand{"show", kind.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
				o := showOpts(s, words)
				for _, name := range profileNames(e, kind, names) {
					if err := render.DoHProfile(w, k.title, name, p.DoHStats(DoHStatsKey(k.proxy, name)), o); err != nil {
						return err
					}
				}
				return nil
			}},
			RuntimeCommand{"reset-stats", kind.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
				for _, name := range profileNames(e, kind, names) {
					p.ResetDoHStats(DoHStatsKey(k.proxy, name))
				}
				return nil
			}})
	}
	return out
}
