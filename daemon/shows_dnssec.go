package daemon

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane/gslb"
)

// dnssecCommands answer `show ltm dns dnssec zone` (each zone's DS
// records, what the parent zone must publish for the chain of trust) and
// `show ltm dns dnssec key` (each key's generations).
func dnssecCommands(h *gslbHook) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", dnssecZoneKind.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			o := showOpts(s, words)
			gc := h.config()
			for _, name := range profileNames(h.e, dnssecZoneKind, names) {
				v := render.DNSSECZoneView{Name: name}
				if gc != nil && gc.DNSSEC != nil {
					for _, ds := range gc.DNSSEC.DS(gslb.DNSName(name)) {
						v.DS = append(v.DS, strings.Join(strings.Fields(ds.String()), " "))
					}
				}
				v.Signing = len(v.DS) > 0
				if err := render.DNSSECZone(w, v, o); err != nil {
					return err
				}
			}
			return nil
		}},
		{"show", dnssecKeyKind.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			o := showOpts(s, words)
			for _, name := range profileNames(h.e, dnssecKeyKind, names) {
				var gens []render.DNSSECGeneration
				for _, g := range h.ring.Generations(name) {
					gens = append(gens, render.DNSSECGeneration{ID: g.ID, KeyTag: g.DNSKEY.KeyTag(), Created: g.Created, Expires: g.Expires, DNSKEY: fmt.Sprintf("DNSKEY %d %d %d %s", g.DNSKEY.Flags, g.DNSKEY.Protocol, g.DNSKEY.Algorithm, g.DNSKEY.PublicKey)})
				}
				if err := render.DNSSECKey(w, name, gens, o); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}
