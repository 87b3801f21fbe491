package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/snatobj"
	"github.com/openltm/openltm/objects"
)

// snatCommands answers show ltm snat and show ltm snat-translation: the
// server connections each SNAT object, and each translation address,
// was given since it was configured, and for an address with a
// connection-limit those holding it now, at most, and refused at the
// limit [M: BIG-IP's blocks also count bits and packets, and current
// and maximum connections of every address, which openltm does not keep
// for them, so those lines are not printed; the refused line is
// openltm's].
func snatCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", ltmSNAT.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, ltmSNAT, names) {
				n, _ := p.SNATConns(name)
				if err := drawSNATStats(w, "Ltm::SNAT", name, n, nil); err != nil {
					return err
				}
			}
			return nil
		}},
		{"show", ltmSNATXlat.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, x := range snatXlatNames(e.Config(), names) {
				name, a := x.name, x.addr
				n, _ := p.SNATTranslationConns(a)
				var lim *snatobj.Limited
				if l, ok := p.SNATTranslationLimit(a); ok {
					lim = &l
				}
				if err := drawSNATStats(w, "Ltm::SNAT Translation", name, n, lim); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}

// snatXlatNames is the translation addresses show ltm snat-translation
// lists, matching names (none: all): the ltm snat-translation objects,
// under their own names (xlat_1 as well as 10.1.1.1), and, as BIG-IP
// creates one for each, the addresses SNAT objects and snatpools name
// that no object stands for yet (a configuration committed before the
// objects were made) [M: listed, not created, until the next commit].
// A name is matched as written or by its address.
func snatXlatNames(cfg *objects.Config, names []string) []xlatShown {
	byAddr := map[netip.Addr]string{}
	add := func(n string) {
		if a, ok := objects.NodeAddr(n); ok {
			if _, had := byAddr[a]; !had {
				byAddr[a] = "/Common/" + a.String()
			}
		}
	}
	for _, o := range cfg.Of(ltmSNATXlat) {
		if a, ok := xlatAddr(o); ok {
			byAddr[a] = o.Name
		}
	}
	for _, o := range cfg.Of(ltmSNAT) {
		if x := snatObjXlat.Str(o); x != "" && x != "none" {
			add(x)
		}
	}
	for _, o := range cfg.Of(ltmSnatPool) {
		if v := snatPoolMembers.Get(o); v != nil {
			for _, m := range v.List {
				add(m) // a name (an ltm snat-translation's) is listed above
			}
		}
	}
	var out []xlatShown
	for a, n := range byAddr {
		if len(names) == 0 || slicesContainsMatch(names, n) || slicesContainsMatch(names, "/Common/"+a.String()) {
			out = append(out, xlatShown{n, a})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr.Less(out[j].addr) })
	return out
}

// xlatShown is one translation address show ltm snat-translation lists,
// under the name it prints.
type xlatShown struct {
	name string
	addr netip.Addr
}

// slicesContainsMatch: one of pats is n, n's address, or a glob
// matching n.
func slicesContainsMatch(pats []string, n string) bool {
	for _, p := range pats {
		if p == n || "/Common/"+p == n || globMatch(p, n) {
			return true
		}
		if a, err := netip.ParseAddr(p); err == nil && "/Common/"+a.String() == n {
			return true
		}
	}
	return false
}

// drawSNATStats prints one block [M: BIG-IP's layout, with the
// counters openltm keeps]; lim: a translation address's connection-limit
// lines (nil: none).
func drawSNATStats(w io.Writer, title, name string, conns uint64, lim *snatobj.Limited) error {
	rule := strings.Repeat("-", 44)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s: %s\n%s\n%-26s%s\n", rule, title, strings.TrimPrefix(name, "/Common/"), rule, "Traffic", "ServerSide")
	if lim != nil {
		fmt.Fprintf(&b, "  %-24s%d\n  %-24s%d\n", "Current Connections", lim.Cur, "Maximum Connections", lim.Max)
	}
	fmt.Fprintf(&b, "  %-24s%d\n", "Total Connections", conns)
	if lim != nil {
		fmt.Fprintf(&b, "  %-24s%d\n", "Refused (limit)", lim.Refused)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
