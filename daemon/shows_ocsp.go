package daemon

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// ocspStaplingCommands answers show ltm clientssl ocsp-stapling-responses
// [PROFILE ...]: the OCSP answers the client-ssl profiles of the running
// virtual servers staple now, read from the dataplane's shared cache
// (dataplane/tlsprof) without asking any responder.
func ocspStaplingCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{{"show", "ltm clientssl ocsp-stapling-responses", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
		var names []string
		for _, wd := range words {
			if isShowOption(wd) {
				continue
			}
			n := objects.FullPath(s.Folder(), wd)
			if !strings.ContainsAny(n, "*?[") && s.e.Config().Get(profileClientSSL, n) == nil {
				return objects.NotFound(profileClientSSL, n)
			}
			names = append(names, n)
		}
		for _, r := range p.OCSPStapling() {
			if !nameMatch(names, r.Profile) {
				continue
			}
			if err := drawStapledOCSP(w, r, s.Folder()); err != nil {
				return err
			}
		}
		return nil
	}}}
}

// drawStapledOCSP prints one stapled answer [M: BIG-IP's layout is not
// documented; this one follows its other show blocks: a title naming the
// profile and certificate, then one line per fact, times in UTC].
func drawStapledOCSP(w io.Writer, r dataplane.StapledOCSP, folder string) error {
	rule := strings.Repeat("-", 72)
	when := func(t time.Time) string {
		if t.IsZero() {
			return "none"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	or := func(v, none string) string {
		if v == "" {
			return none
		}
		return v
	}
	vs := make([]string, len(r.Virtuals))
	for i, v := range r.Virtuals {
		vs[i] = objects.RelPath(folder, v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nLtm::ClientSSL OCSP Stapling Response: %s %s\n%s\n", rule, objects.RelPath(folder, r.Profile), objects.RelPath(folder, r.Cert), rule)
	line := func(k, v string) { fmt.Fprintf(&b, "  %-20s%s\n", k, v) }
	line("Virtual Servers", strings.Join(vs, " "))
	line("Subject", r.Subject)
	line("Serial Number", r.Serial)
	line("Validator", r.Validator)
	line("Responder", or(r.Responder, "none yet"))
	line("Status", or(r.Status, "none"))
	line("This Update", when(r.ThisUpdate))
	line("Next Update", when(r.NextUpdate))
	line("Fetched", when(r.Fetched))
	line("Expires", when(r.Expires))
	line("Renewal", when(r.Renew))
	line("Last Error", or(r.Err, "none"))
	_, err := io.WriteString(w, b.String())
	return err
}
