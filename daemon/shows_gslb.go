package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// gslbShowArgs reads the words after `show gtm wideip|pool` (and
// reset-stats): an optional record type (a, aaaa, cname, mx, srv, naptr,
// svcb, https), names (full paths, globs allowed) and display options. A name that
// matches no object of the type (of any type when none is given) is
// BIG-IP's not-found error. keys are the objects' gslb.Key for the type
// given, or their paths when no type is.
func gslbShowArgs(s *Session, pool bool, words []string) (typ gslb.RRType, names []string, opts render.Options, err error) {
	opts.Folder = s.Folder()
	if len(words) > 0 {
		for _, t := range gslb.Types {
			if words[0] == string(t) {
				typ, words = t, words[1:]
				break
			}
		}
	}
	for _, w := range words {
		switch {
		case w == "raw":
			opts.Raw = true
		case w == "members":
			opts.Members = true
		case w == "field-fmt":
			opts.FieldFmt = true
		case isShowOption(w):
		default:
			n := objects.FullPath(s.Folder(), w)
			if !strings.ContainsAny(n, "*?[") && !gtmTypedExists(s, pool, typ, n) {
				k := gtmTyped[0].wideip
				if pool {
					k = gtmTyped[0].pool
				}
				return typ, nil, opts, objects.NotFound(k, n)
			}
			names = append(names, n)
		}
	}
	return typ, names, opts, nil
}

// gtmTypedExists reports whether a pool or wide IP of the type (of any
// type when typ is "") has the path.
func gtmTypedExists(s *Session, pool bool, typ gslb.RRType, name string) bool {
	cfg := s.e.Config()
	for _, k := range gtmTyped {
		if typ != "" && k.t != typ {
			continue
		}
		kind := k.wideip
		if pool {
			kind = k.pool
		}
		if cfg.Get(kind, name) != nil {
			return true
		}
	}
	return false
}

// typeMatch reports whether an object of type t is shown for the type a
// show asked for ("" for every type).
func typeMatch(want, t gslb.RRType) bool { return want == "" || want == t }

// registerGSLBRuntime installs the GSLB's runtime commands.
func registerGSLBRuntime(e *Engine, h *gslbHook) {
	e.RegisterRuntime(gslbCommands(h))
	e.RegisterRuntime(dnssecCommands(h))
}

// gslbCommands answers `show gtm ...` from the GSLB server's snapshots, and
// `delete gtm persist|ldns|path` from its persistence and LDNS tables.
func gslbCommands(h *gslbHook) []RuntimeCommand {
	g := h.s
	return []RuntimeCommand{
		{"show", "gtm wideip", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			typ, names, o, err := gslbShowArgs(s, false, words)
			if err != nil {
				return err
			}
			for _, x := range h.wideIPs() {
				if typeMatch(typ, x.Type) && nameMatch(names, x.Name) {
					if err := render.GTMWideIP(w, x, o); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"show", "gtm pool", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			typ, names, o, err := gslbShowArgs(s, true, words)
			if err != nil {
				return err
			}
			for _, x := range g.Pools() {
				if typeMatch(typ, x.Type) && nameMatch(names, x.Name) {
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
		{"show", "gtm region", showEach(g.Regions, func(x gslb.RegionStats) string { return x.Name }, render.GTMRegion)},
		{"show", "gtm distributed-app", showEach(g.DistApps, func(x gslb.DistAppStats) string { return x.Name }, render.GTMDistApp)},
		{"show", "gtm listener", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			if err := showEach(g.Listeners, func(x gslb.ListenerStats) string { return x.Name }, render.GTMListener)(ctx, s, names, words, w); err != nil {
				return err
			}
			if len(names) > 0 {
				return nil
			}
			return render.GTMCounters(w, g.Counters(), showOpts(s, words))
		}},
		{"show", "gtm topology", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			return render.GTMTopology(w, g.Topology(), showOpts(s, words))
		}},
		{"reset-stats", "gtm wideip", gslbResetTyped(g, false)},
		{"reset-stats", "gtm pool", gslbResetTyped(g, true)},
		{"reset-stats", "gtm server", gslbReset(g, gslb.StatsServer)},
		{"reset-stats", "gtm link", gslbReset(g, gslb.StatsLink)},
		{"reset-stats", "gtm datacenter", gslbReset(g, gslb.StatsDatacenter)},
		{"reset-stats", "gtm listener", gslbReset(g, gslb.StatsListener)},
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
			addrs, err := ldnsArgs(words, true)
			if err != nil {
				return err
			}
			return render.GTMLDNS(w, ldnsOf(g.LDNSRecords(), addrs), showOpts(s, words))
		}},
		// show gtm path [ADDRESS ...]: the probe paths' measurements to
		// each LDNS (to the LDNSes holding the addresses given).
		{"show", "gtm path", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			addrs, err := ldnsArgs(words, true)
			if err != nil {
				return err
			}
			return render.GTMPath(w, ldnsOf(g.LDNSRecords(), addrs), time.Now(), showOpts(s, words))
		}},
		// delete gtm ldns [all | ADDRESS ...]: forget LDNSes (requests,
		// measurements); they are probed afresh when they ask again.
		{"delete", "gtm ldns", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			addrs, err := ldnsArgs(words, false)
			if err != nil {
				return err
			}
			if len(addrs) == 0 {
				g.DeleteLDNS(netip.Addr{})
			}
			for _, a := range addrs {
				g.DeleteLDNS(a)
			}
			return nil
		}},
		// delete gtm path [all | ADDRESS ...]: forget the measurements,
		// keep the LDNSes; their next query that needs a round trip
		// probes them again.
		{"delete", "gtm path", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			addrs, err := ldnsArgs(words, false)
			if err != nil {
				return err
			}
			if len(addrs) == 0 {
				g.DeletePaths(netip.Addr{})
			}
			for _, a := range addrs {
				g.DeletePaths(a)
			}
			return nil
		}},
	}
}

// ldnsArgs reads the LDNS addresses of show|delete gtm ldns|path: none
// or `all` for every LDNS [M: BIG-IP's selector words for these tables
// are not documented; openltm takes addresses, as delete gtm persist's
// local-dns does]. A show's options (raw, detail ...) pass.
func ldnsArgs(words []string, show bool) ([]netip.Addr, error) {
	var out []netip.Addr
	for i, wd := range words {
		if show && isShowOption(wd) {
			continue
		}
		if wd == "all" && len(words) == 1 {
			return nil, nil
		}
		a, err := netip.ParseAddr(wd)
		if err != nil {
			expected := []string{"an LDNS IP address"}
			if i == 0 && !show {
				expected = append([]string{"all"}, expected...)
			}
			return nil, &objects.SyntaxError{Msg: fmt.Sprintf("%q is not an IP address", wd), Expected: expected}
		}
		out = append(out, a)
	}
	return out, nil
}

// ldnsOf keeps the LDNS records whose prefix holds one of addrs (every
// record when there are none).
func ldnsOf(recs []gslb.LDNSRecord, addrs []netip.Addr) []gslb.LDNSRecord {
	if len(addrs) == 0 {
		return recs
	}
	out := recs[:0]
	for _, r := range recs {
		for _, a := range addrs {
			if r.Prefix.Contains(a.Unmap()) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// gslbReset clears the counters of the named objects of a kind, or of
// all of them.
func gslbReset(g *gslb.Server, kind gslb.StatsKind) RuntimeFunc {
	return func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
		if len(names) == 0 {
			g.ResetStats(kind, "")
		}
		for _, n := range names {
			g.ResetStats(kind, n)
		}
		return nil
	}
}

// gslbResetTyped is reset-stats gtm wideip|pool [TYPE] [names]: the
// type, when given, limits the reset to that type's objects.
func gslbResetTyped(g *gslb.Server, pool bool) RuntimeFunc {
	kind := gslb.StatsWideIP
	if pool {
		kind = gslb.StatsPool
	}
	return func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
		typ, names, _, err := gslbShowArgs(s, pool, words)
		if err != nil {
			return err
		}
		for _, t := range gslb.Types {
			if !typeMatch(typ, t) {
				continue
			}
			if len(names) == 0 {
				if typ == "" {
					g.ResetStats(kind, "")
					return nil
				}
				for _, x := range resetKeys(g, pool, t) {
					g.ResetStats(kind, x)
				}
				continue
			}
			for _, n := range names {
				g.ResetStats(kind, gslb.Key(t, n))
			}
		}
		return nil
	}
}

// resetKeys are the keys of every wide IP or pool of a type.
func resetKeys(g *gslb.Server, pool bool, t gslb.RRType) []string {
	var out []string
	if pool {
		for _, x := range g.Pools() {
			if x.Type == t {
				out = append(out, gslb.Key(t, x.Name))
			}
		}
		return out
	}
	for _, x := range g.WideIPs() {
		if x.Type == t {
			out = append(out, gslb.Key(t, x.Name))
		}
	}
	return out
}

// wideIPs is every configured wide IP's statistics: the server's, and
// for each one it does not serve (kept from a loaded file with a
// reference to nothing, say) a block with no requests whose reason says
// why, so a show does not silently leave it out.
func (h *gslbHook) wideIPs() []gslb.WideIPStats {
	stats := h.s.WideIPs()
	h.mu.Lock()
	cfg, skipped := h.cfg, h.skipped
	h.mu.Unlock()
	if cfg == nil {
		return stats
	}
	served := make(map[string]bool, len(stats))
	for _, x := range stats {
		served[string(x.Type)+" "+x.Name] = true
	}
	added := false
	for _, k := range gtmTyped {
		var why map[string]string
		for _, o := range cfg.Of(k.wideip) {
			if served[string(k.t)+" "+o.Name] {
				continue
			}
			if why == nil {
				why = notesIn(k.wideip.Key(), skipped)
			}
			reason := why[o.Name]
			if reason == "" {
				reason = "not in the running GSLB"
			}
			st := gslb.WideIPStats{Name: o.Name, Type: k.t,
				Status: gslb.ObjectStatus{Availability: gslb.Unknown, State: "enabled", Reason: "openltm does not serve it: " + reason}}
			if disabled(o) {
				st.Status.State = "disabled"
			}
			stats = append(stats, st)
			added = true
		}
	}
	if added {
		slices.SortStableFunc(stats, func(a, b gslb.WideIPStats) int {
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
			return strings.Compare(string(a.Type), string(b.Type))
		})
	}
	return stats
}
