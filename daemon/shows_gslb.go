package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// gslbShowArgs reads the words after `show gtm wideip|pool`: an optional
// record type `a`, names (full paths, globs allowed) and display options.
// A name that matches no object is BIG-IP's not-found error.
func gslbShowArgs(s *Session, kind *objects.Kind, words []string) (names []string, opts render.Options, err error) {
	opts.Folder = s.Folder()
	if len(words) > 0 && words[0] == "a" {
		words = words[1:]
	}
	for _, w := range words {
		switch {
		case w == "raw":
			opts.Raw = true
		case w == "members":
			opts.Members = true
		case isShowOption(w):
		case w == "aaaa" || w == "cname" || w == "mx" || w == "naptr" || w == "srv":
			return nil, opts, objects.Invalid("gtm %s records are not served by openltm: only A wide IPs and pools", w)
		default:
			n := objects.FullPath(s.Folder(), w)
			if !strings.ContainsAny(n, "*?[") && s.e.Config().Get(kind, n) == nil {
				return nil, opts, objects.NotFound(kind, n)
			}
			names = append(names, n)
		}
	}
	return names, opts, nil
}

// registerGSLBRuntime installs the GSLB's runtime commands.
func registerGSLBRuntime(e *Engine, g *gslb.Server) { e.RegisterRuntime(gslbCommands(g)) }

// gslbCommands answers `show gtm ...` from the GSLB server's snapshots, and
// `delete gtm persist` from its persistence table.
func gslbCommands(g *gslb.Server) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "gtm wideip", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			names, o, err := gslbShowArgs(s, gtmWideIPA, words)
			if err != nil {
				return err
			}
			for _, x := range g.WideIPs() {
				if nameMatch(names, x.Name) {
					if err := render.GTMWideIP(w, x, o); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"show", "gtm pool", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			names, o, err := gslbShowArgs(s, gtmPoolA, words)
			if err != nil {
				return err
			}
			for _, x := range g.Pools() {
				if nameMatch(names, x.Name) {
					if err := render.GTMPool(w, x, o); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"show", "gtm server", showEach(g.Servers, func(x gslb.ServerStats) string { return x.Name }, render.GTMServer)},
		{"show", "gtm link", showEach(g.Links, func(x gslb.LinkStats) string { return x.Name }, render.GTMLink)},
		{"show", "gtm datacenter", showEach(g.Datacenters, func(x gslb.DatacenterStats) string { return x.Name }, render.GTMDatacenter)},
		// delete gtm persist [target-name WIDEIP] [local-dns ADDR]: BIG-IP's
		// filter names for the wide IP and the LDNS; none deletes every record.
		{"delete", "gtm persist", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			var wideIP string
			var ldns netip.Addr
			for i := 0; i < len(words); i += 2 {
				if i+1 >= len(words) {
					return &objects.SyntaxError{Msg: fmt.Sprintf("%q needs a value", words[i]), Expected: []string{"target-name NAME", "local-dns ADDRESS"}}
				}
				switch words[i] {
				case "target-name":
					wideIP = objects.FullPath(s.Folder(), words[i+1])
				case "local-dns":
					a, err := netip.ParseAddr(words[i+1])
					if err != nil {
						return objects.Invalid("%q is not an IP address", words[i+1])
					}
					ldns = a
				default:
					return &objects.SyntaxError{Msg: fmt.Sprintf("%q unknown property", words[i]), Expected: []string{"target-name", "local-dns"}}
				}
			}
			g.DeletePersistRecords(wideIP, ldns)
			return nil
		}},
		{"show", "gtm persist", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			return render.GTMPersist(w, g.PersistRecords(), time.Now(), showOpts(s, words))
		}},
		{"show", "gtm ldns", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			return render.GTMLDNS(w, g.LDNSRecords(), showOpts(s, words))
		}},
	}
}
