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
// dns cache [transparent|resolver|validating-resolver] [NAME...], and
// show and delete ltm dns cache records (msg, rrset, all, key): what an operator reads to size a cache and clears to
// make it ask again. A cache no dns profile names shows zero.
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
	// records reads `msg|rrset|all cache NAME`: the records of the named
	// cache [M: BIG-IP's filters (owner, type) are not taken].
	records := func(s *Session, words []string) (string, error) {
		if len(words) != 3 || !slices.Contains([]string{"msg", "rrset", "all", "key"}, words[0]) || words[1] != "cache" {
			return "", &objects.SyntaxError{Msg: "expected msg|rrset|all|key cache NAME", Expected: []string{"msg", "rrset", "all", "key"}}
		}
		name := objects.FullPath(s.Folder(), words[2])
		if e.Config().Get(dnsCacheTransparent, name) == nil && e.Config().Get(dnsCacheResolver, name) == nil && e.Config().Get(dnsCacheValidating, name) == nil {
			return "", objects.NotFound(dnsCacheTransparent, name)
		}
		return name, nil
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
		{"show", "ltm dns cache records", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			name, err := records(s, words)
			if err != nil {
				return err
			}
			if words[0] == "key" { // a validating resolver's key cache
				return render.DNSCacheKeys(w, name, p.DNSCacheKeys(name), showOpts(s, nil))
			}
			return render.DNSCacheRecords(w, name, p.DNSCacheRecords(name), showOpts(s, nil))
		}},
		{"delete", "ltm dns cache records", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			name, err := records(s, words)
			if err != nil {
				return err
			}
			if words[0] == "key" {
				p.FlushDNSCacheKeys(name)
				return nil
			}
			p.FlushDNSCache(name)
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
