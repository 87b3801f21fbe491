package daemon

import (
	"context"
	"io"
	"path"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// mblbCommands answers the shows of message-based load balancing and
// OneConnect (show ltm profile one-connect, show ltm profile mblb, show
// ltm profile iiop).
func mblbCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "ltm profile one-connect", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileOneConnect, names) {
				st, _ := p.OneConnectStats(name)
				if err := render.OneConnectProfile(w, name, st, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"show", "ltm profile mblb", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileMBLB, names) {
				st, _ := p.MBLBProfileStats(name)
				if err := render.MBLBProfile(w, name, st, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"show", "ltm profile iiop", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileIIOP, names) {
				st, _ := p.MBLBProfileStats(name)
				if err := render.IIOPProfile(w, name, st, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}

// profileNames is the profiles a show covers: those named (patterns
// included), or every profile of the kind.
func profileNames(e *Engine, k *objects.Kind, names []string) []string {
	var out []string
	for _, o := range e.Config().Of(k) {
		if len(names) == 0 {
			out = append(out, o.Name)
			continue
		}
		for _, pat := range names {
			if pat == o.Name || globMatch(pat, o.Name) {
				out = append(out, o.Name)
				break
			}
		}
	}
	return out
}

func globMatch(pat, name string) bool {
	if !strings.ContainsAny(pat, "*?[") {
		return false
	}
	ok, _ := path.Match(pat, name)
	return ok
}
