package daemon

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// dnsCacheCommands answer show and reset-stats ltm profile dns and ltm
// dns cache [transparent|resolver|validating-resolver] [NAME...]: what
// an operator reads to size a cache. A cache no dns profile names shows
// zero. Its records are shows_dnsrecords.go's.
func dnsCacheCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	each := func(s *Session, words []string, fn func(kind string, o *objects.Object) error) error {
		kinds := []*objects.Kind{dnsCacheTransparent, dnsCacheResolver, dnsCacheValidating}
		if len(words) > 0 {
			switch words[0] {
			case "transparent":
				kinds, words = kinds[:1], words[1:]
			case "resolver":
				kinds, words = kinds[1:2], words[1:]
			case "validating-resolver":
				kinds, words = kinds[2:], words[1:]
			}
		}
		var names []string
		for _, w := range words {
			if !isShowOption(w) {
				names = append(names, objects.FullPath(s.Folder(), w))
			}
		}
		cfg := e.Config()
		for _, n := range names {
			if !strings.ContainsAny(n, "*?[") && !slices.ContainsFunc(kinds, func(k *objects.Kind) bool { return cfg.Get(k, n) != nil }) {
				return objects.NotFound(kinds[0], n)
			}
		}
		for _, k := range kinds {
			for _, name := range profileNames(e, k, names) {
				o := cfg.Get(k, name)
				if o == nil { // deleted by a commit since
					continue
				}
				if err := fn(k.Key()[len("ltm dns cache "):], o); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return []RuntimeCommand{
		{"show", profileDNS.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			o := showOpts(s, words)
			for _, name := range profileNames(e, profileDNS, names) {
				if err := render.DNSProfile(w, name, p.DNSProfileStats(name), o); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", profileDNS.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileDNS, names) {
				p.ResetDNSProfileStats(name)
			}
			return nil
		}},
		{"show", "ltm dns cache", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			o := showOpts(s, words)
			return each(s, words, func(kind string, c *objects.Object) error {
				st, used := p.DNSCacheStats(c.Name)
				if !used {
					st.MaxBytes = uint64(max(atoi(c.Kind.MustProp("msg-cache-size").Effective(e.Config(), c)), 0))
				}
				return render.DNSCache(w, kind, c.Name, st, o)
			})
		}},
		{"reset-stats", "ltm dns cache", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			return each(s, words, func(_ string, c *objects.Object) error {
				p.ResetDNSCacheStats(c.Name)
				return nil
			})
		}},
	}
}
