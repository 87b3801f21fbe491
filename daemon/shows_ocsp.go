package daemon

import (
	"context"
	"io"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// ocspStaplingCommands answers show ltm clientssl ocsp-stapling-responses
// [PROFILE ...] (the OCSP answers the client-ssl profiles of the running
// virtual servers staple now) and show ltm serverssl ocsp-responses
// [PROFILE ...] (those their server-ssl profiles checked the members'
// certificates by), read from the dataplane's shared cache
// (dataplane/tlsprof) without asking any responder.
func ocspStaplingCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	show := func(target string, kind *objects.Kind, server bool, list func() []dataplane.StapledOCSP) RuntimeCommand {
		return RuntimeCommand{"show", target, func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			names, opts, err := ocspShowArgs(s, "show "+target, kind, words)
			if err != nil {
				return err
			}
			var rs []dataplane.StapledOCSP
			for _, r := range list() {
				if nameMatch(names, r.Profile) {
					rs = append(rs, r)
				}
			}
			return render.OCSPAnswers(w, rs, server, opts)
		}}
	}
	return []RuntimeCommand{
		show("ltm clientssl ocsp-stapling-responses", profileClientSSL, false, p.OCSPStapling),
		show("ltm serverssl ocsp-responses", profileServerSSL, true, p.OCSPMembers),
	}
}

// ocspShowArgs reads an OCSP show's words: profile names or patterns
// (one that names no profile of kind is refused, as BIG-IP refuses it),
// field-fmt, and raw (these shows have no counters to scale, so it
// changes nothing, as for tmsh's other shows without counters).
func ocspShowArgs(s *Session, cmd string, kind *objects.Kind, words []string) (names []string, opts render.Options, err error) {
	opts.Folder = s.Folder()
	for _, wd := range words {
		switch {
		case wd == "field-fmt":
			opts.FieldFmt = true
		case wd == "raw":
			opts.Raw = true
		case isShowOption(wd):
			return nil, opts, synErr(nil, []string{cmd + " [PROFILE ...] [field-fmt] [raw]"}, "%q is not an option of %s (field-fmt, raw)", wd, cmd)
		default:
			n := objects.FullPath(s.Folder(), wd)
			if !strings.ContainsAny(n, "*?[") && s.e.Config().Get(kind, n) == nil {
				return nil, opts, objects.NotFound(kind, n)
			}
			names = append(names, n)
		}
	}
	return names, opts, nil
}
