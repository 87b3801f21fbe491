package daemon

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// cipherCommands answers show ltm cipher group: what each group resolves
// to, in its ordering, with the key-exchange groups its rules allow. It
// is what BIG-IP's `tmm --clientciphers` tells of a cipher string, asked
// of the group by name [M: the layout is openltm's]. Go's TLS picks the
// suite by its own preference whatever the order (see
// dataplane/tlsprof/README.md), so the order printed is the group's
// list, not a negotiation order.
func cipherCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{{"show", "ltm cipher group", func(_ context.Context, s *Session, names, words []string, w io.Writer) error {
		if len(words) > 0 {
			return synErr(nil, nil, "show ltm cipher group takes group names only (%q)", words[0])
		}
		cfg := e.Config()
		t := &translator{s: e.schema, cfg: cfg, rules: &ruleBinder{e: e}}
		objs, err := s.named(cfg.Of(cipherGroupKind), names, "cipher group")
		if err != nil {
			return err
		}
		bar := strings.Repeat("-", 60)
		for _, o := range objs {
			fmt.Fprintf(w, "%s\nLtm::Cipher Group: %s\n%s\n", bar, o.Name, bar)
			g, err := t.cipherGroup(o, o.Name)
			if err == nil {
				var suites, groups []string
				if suites, groups, err = g.Describe(); err == nil {
					ord := g.Ordering
					if ord == "" {
						ord = "default"
					}
					fmt.Fprintf(w, "  Ordering   %s\n  DH Groups  %s\n  Ciphers\n", ord, strings.Join(groups, ":"))
					for i, n := range suites {
						fmt.Fprintf(w, "  %3d  %s\n", i+1, n)
					}
					continue
				}
			}
			fmt.Fprintf(w, "  Error      %v\n", err)
		}
		return nil
	}}}
}
