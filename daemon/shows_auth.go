package daemon

import (
	"context"
	"io"

	"github.com/openltm/openltm/daemon/render"
)

// authCommands answers show and reset-stats of ltm auth profiles from
// the profiles in service (hook_auth.go): a profile no virtual server
// uses, or one whose type openltm keeps only, has no statistics and is
// left out.
func authCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "ltm auth profile", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			o := showOpts(s, words)
			in := e.rules.rt.authProfiles()
			for _, name := range profileNames(e, authProfileKind, names) {
				if p := in[name]; p != nil {
					if err := render.AuthProfile(w, name, p.Stats(), o); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"reset-stats", "ltm auth profile", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			in := e.rules.rt.authProfiles()
			for _, name := range profileNames(e, authProfileKind, names) {
				if p := in[name]; p != nil {
					p.ResetStats()
				}
			}
			return nil
		}},
	}
}
