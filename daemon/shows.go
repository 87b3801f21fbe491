package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// registerPlaneRuntime installs the dataplane's runtime commands: its own, and
// those of MBLB and persistence.
func registerPlaneRuntime(e *Engine, h *planeHook) {
	p := h.p
	e.RegisterRuntime(planeCommands(h))
	e.RegisterRuntime(mblbCommands(e, p))
	e.RegisterRuntime(persistCommands(p))
	e.RegisterRuntime(profileStatsCommands(e, p)) // shows_profiles.go
	e.RegisterRuntime(http3StatsCommands(e))      // translate_http3.go
	e.RegisterRuntime(netflowCommands(e))         // hook_netflow.go
	e.RegisterRuntime(sflowCommands(e))           // hook_sflow.go
	e.RegisterRuntime(monitorCommands(e, p))      // shows_monitor.go
	e.RegisterRuntime(dnsCacheCommands(e, p))     // shows_dns.go
	e.RegisterRuntime(dnsRecordsCommands(e, p))   // shows_dnsrecords.go
	e.RegisterRuntime(dohCommands(e, p))          // shows_doh.go
	e.RegisterRuntime(bwcCommands(e, p))          // shows_bwc.go
	e.RegisterRuntime(packetFilterCommands(e, p)) // packetfilter.go
	e.RegisterRuntime(rateClassCommands(e, p))    // shows_rateshaping.go
	e.RegisterRuntime(mrfRouteCommands())         // shows_mrf.go
	e.RegisterRuntime(lsnCommands(e, p))          // shows_lsn.go
	e.RegisterRuntime(snatCommands(e, p))         // shows_snat.go
	e.RegisterRuntime(natCommands(e, p))          // shows_nat.go
	e.RegisterRuntime(ocspStaplingCommands(e, p)) // shows_ocsp.go
}

// planeCommands answers show and reset-stats of virtual servers, pools and
// nodes, and show and delete sys connection, from the dataplane.
func planeCommands(h *planeHook) []RuntimeCommand {
	p := h.p
	reset := func(kind dataplane.StatsKind) RuntimeFunc {
		return func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			if len(names) == 0 {
				p.ResetStats(kind, "")
				return nil
			}
			for _, n := range names {
				p.ResetStats(kind, n)
			}
			return nil
		}
	}
	return []RuntimeCommand{
		{"show", "ltm virtual", showEach(h.virtuals, func(v dataplane.VirtualStats) string { return v.Name }, render.FieldFmt(render.Virtual, render.VirtualFields))},
		{"show", "ltm pool", showPool(p)}, // shows_distribution.go
		{"show", "ltm node", showEach(p.Nodes, func(v dataplane.NodeStats) string { return v.Name }, render.FieldFmt(render.Node, render.NodeFields))},
		{"show", "ltm virtual-address", showEach(h.virtualAddresses, func(v render.VirtualAddressStats) string { return v.Name }, render.VirtualAddress)},
		{"show", "ltm eviction-policy", showEach(h.evictionPolicies, func(v evictionStats) string { return v.Name }, drawEviction)}, // shows_eviction.go
		{"reset-stats", "ltm virtual", reset(dataplane.StatsVirtual)},
		{"reset-stats", "ltm pool", reset(dataplane.StatsPool)},
		{"reset-stats", "ltm node", reset(dataplane.StatsNode)},
		{"reset-stats", "ltm virtual-address", func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			return h.resetVirtualAddresses(names)
		}},
		{"show", "sys connection", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			f, all, err := connFilter(words)
			if err != nil {
				return err
			}
			cw := render.NewConnectionWriter(w, all)
			var werr error
			p.Connections(f, func(c *dataplane.Connection) bool {
				if ctx.Err() != nil {
					werr = ctx.Err()
					return false
				}
				werr = cw.Write(c)
				return werr == nil
			})
			if cerr := cw.Close(); werr == nil {
				werr = cerr
			}
			return werr
		}},
		{"delete", "sys connection", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			f, _, err := connFilter(words)
			if err != nil {
				return err
			}
			p.DeleteConnections(f)
			return nil
		}},
	}
}

// showOpts reads the display options of a show (raw, members) and the
// session's folder, for names printed relative to it.
func showOpts(s *Session, words []string) render.Options {
	o := render.Options{Folder: s.Folder()}
	for _, w := range words {
		switch w {
		case "raw":
			o.Raw = true
		case "members":
			o.Members = true
		case "detail":
			o.Detail = true
		case "field-fmt":
			o.FieldFmt = true
		}
	}
	return o
}

// nameMatch reports whether a show of names (full paths or globs) covers
// n; no names covers everything.
func nameMatch(names []string, n string) bool {
	if len(names) == 0 {
		return true
	}
	for _, pat := range names {
		if ok, _ := path.Match(pat, n); ok || pat == n {
			return true
		}
	}
	return false
}

// showEach is the common show: take the runtime's snapshots, keep those the
// command names, draw each in BIG-IP's layout.
func showEach[T any](snaps func() []T, name func(T) string, draw func(io.Writer, T, render.Options) error) RuntimeFunc {
	return func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
		o := showOpts(s, words)
		for _, x := range snaps() {
			if !nameMatch(names, name(x)) {
				continue
			}
			if err := draw(w, x, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// connFilter reads show/delete sys connection's filter words.
func connFilter(words []string) (dataplane.ConnFilter, bool, error) {
	var f dataplane.ConnFilter
	all := false
	addr := func(dst *netip.Addr, v string) error {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return objects.Invalid("%q is not an IP address", v)
		}
		*dst = a
		return nil
	}
	port := func(dst *uint16, v string) error {
		n, err := objects.ParsePort(v)
		if err != nil {
			return objects.Invalid("%v", err)
		}
		*dst = uint16(n)
		return nil
	}
	valid := []string{"cs-client-addr", "cs-client-port", "cs-server-addr", "cs-server-port",
		"ss-client-addr", "ss-client-port", "ss-server-addr", "ss-server-port", "protocol", "all-properties"}
	for i := 0; i < len(words); i++ {
		k := words[i]
		if k == "all-properties" {
			all = true
			continue
		}
		if i+1 >= len(words) {
			return f, all, &objects.SyntaxError{Msg: fmt.Sprintf("%q needs a value", k), Expected: valid}
		}
		v := words[i+1]
		i++
		var err error
		switch k {
		case "cs-client-addr":
			err = addr(&f.CSClientAddr, v)
		case "cs-server-addr":
			err = addr(&f.CSServerAddr, v)
		case "ss-client-addr":
			err = addr(&f.SSClientAddr, v)
		case "ss-server-addr":
			err = addr(&f.SSServerAddr, v)
		case "cs-client-port":
			err = port(&f.CSClientPort, v)
		case "cs-server-port":
			err = port(&f.CSServerPort, v)
		case "ss-client-port":
			err = port(&f.SSClientPort, v)
		case "ss-server-port":
			err = port(&f.SSServerPort, v)
		case "protocol":
			f.Protocol = v
		case "age":
			_, err = strconv.Atoi(v)
		default:
			return f, all, &objects.SyntaxError{Msg: fmt.Sprintf("%q unknown property", k), Expected: valid}
		}
		if err != nil {
			return f, all, err
		}
	}
	return f, all, nil
}

// virtuals is every configured virtual server's statistics: the plane's,
// and for each one it does not run (kept with a warning: a wildcard
// destination, a persistence kind openltm lacks; or left out on a standby
// device) a block with no traffic whose reason says why, so a show does
// not silently leave it out.
func (h *planeHook) virtuals() []dataplane.VirtualStats {
	stats := h.p.Virtuals()
	cfg, tr := h.running()
	if cfg == nil {
		return stats
	}
	run := make(map[string]bool, len(stats))
	for _, v := range stats {
		run[v.Name] = true
	}
	var why map[string]string
	added := false
	for _, o := range cfg.Of(ltmVirtual) {
		if run[o.Name] {
			if tmc := virtualTMC.Str(o); tmc != "" && tmc != "none" {
				for i := range stats {
					if stats[i].Name == o.Name {
						stats[i].Destination = criteriaDestination(stats[i].Destination)
					}
				}
			}
			continue
		}
		if why == nil {
			why = notes(tr, ltmVirtual.Key())
		}
		reason := why[o.Name]
		switch {
		case reason != "":
		case h.e.float.Load() != nil:
			// Left out by dropStandby, without a note.
			reason = "its traffic group is not active on this device"
		default:
			reason = "not in the running dataplane"
		}
		reason = "openltm does not run it: " + reason
		if isInternal(o) { // translate_adapt.go
			reason = "An internal virtual server: it listens nowhere; adapt profiles send to its pool"
		}
		st := dataplane.VirtualStats{Name: o.Name, Destination: virtualDestination.Str(o),
			Status: dataplane.Status{Availability: dataplane.Unknown, State: "enabled", Reason: reason}}
		if d, err := objects.ParseDest(st.Destination); err == nil {
			st.Destination = dataplane.JoinPort(d.AddrPort().Addr().String(), d.AddrPort().Port())
		}
		if tmc := virtualTMC.Str(o); tmc != "" && tmc != "none" {
			st.Destination = criteriaDestination(st.Destination)
		}
		if virtualEnabled.Effective(cfg, o) == "disabled" {
			st.Status.State = "disabled"
		}
		stats = append(stats, st)
		added = true
	}
	if added {
		slices.SortFunc(stats, func(a, b dataplane.VirtualStats) int { return strings.Compare(a.Name, b.Name) })
	}
	return stats
}

// notes are the translation's first note (kept or skipped) on each object
// of one kind, by name: why the plane does not run it.
func notes(tr *ltmTranslation, kind string) map[string]string {
	if tr == nil {
		return map[string]string{}
	}
	return notesIn(kind, tr.kept, tr.skipped)
}

// notesIn is notes over lists of a translation's notes ("KIND NAME: why").
func notesIn(kind string, lists ...[]string) map[string]string {
	out := map[string]string{}
	for _, list := range lists {
		for _, n := range list {
			rest, ok := strings.CutPrefix(n, kind+" ")
			if !ok {
				continue
			}
			name, reason, ok := strings.Cut(rest, ": ")
			if _, seen := out[name]; ok && !seen {
				out[name] = reason
			}
		}
	}
	return out
}

// Reasons of a virtual address's status, in the words of the pool's.
const (
	reasonVAAvailable = "The virtual address is available"
	reasonVADown      = "The children virtual server(s) are down"
	reasonVAUnknown   = "The children virtual server(s) either don't have service checking enabled, or service check results are not available yet"
	reasonVANone      = "The virtual address has no virtual servers"
)

// addressVirtuals is the running virtual servers' statistics by the key
// of their address (objects.AddressKey).
func (h *planeHook) addressVirtuals(cfg *objects.Config) map[string][]dataplane.VirtualStats {
	byAddr := map[string][]dataplane.VirtualStats{}
	for _, v := range h.virtuals() {
		if o := cfg.Get(ltmVirtual, v.Name); o != nil {
			if key, _, ok := objects.VirtualServerAddress(o); ok {
				byAddr[key] = append(byAddr[key], v)
			}
		}
	}
	return byAddr
}

// resetVirtualAddresses is reset-stats ltm virtual-address: an address's
// traffic is its virtual servers', so it notes where each of them stands
// and shows counts from there (the virtual servers' own counters are not
// reset, as on BIG-IP); the connections its connection-limit refused are
// zeroed.
func (h *planeHook) resetVirtualAddresses(names []string) error {
	cfg, _ := h.running()
	if cfg == nil {
		return nil
	}
	byAddr := h.addressVirtuals(cfg)
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	h.vaMu.Lock()
	defer h.vaMu.Unlock()
	if h.vaZero == nil {
		h.vaZero = map[string]map[string]dataplane.Traffic{}
	}
	have := map[string]bool{}
	for _, a := range cfg.Of(ltmVirtualAddr) {
		have[a.Name] = true
	}
	for _, n := range names {
		if !have[n] {
			return objects.NotFound(ltmVirtualAddr, n) // nothing reset
		}
	}
	for _, a := range cfg.Of(ltmVirtualAddr) {
		if len(names) > 0 && !want[a.Name] {
			continue
		}
		z := map[string]dataplane.Traffic{}
		for _, v := range byAddr[objects.AddressKey(a)] {
			z[v.Name] = v.ClientSide
		}
		h.vaZero[a.Name] = z
	}
	for n := range h.vaZero {
		if !have[n] {
			delete(h.vaZero, n) // an address deleted since
		}
	}
	h.p.ResetVirtualAddressCounts(names)
	return nil
}

// virtualAddresses is each ltm virtual-address with its virtual servers'
// status rolled up (available when one is, offline when all are, else
// unknown) and their client-side traffic added up. Maximum connections is
// the sum of the virtuals' maxima, which may not have been reached at
// once: openltm keeps no count per address.
func (h *planeHook) virtualAddresses() []render.VirtualAddressStats {
	cfg, _ := h.running()
	if cfg == nil {
		return nil
	}
	byAddr := h.addressVirtuals(cfg)
	counts := h.p.VirtualAddressCounts() // shows_vaddr.go
	h.vaMu.Lock()
	defer h.vaMu.Unlock()
	var out []render.VirtualAddressStats
	for _, a := range cfg.Of(ltmVirtualAddr) {
		st := render.VirtualAddressStats{Name: a.Name, Addr: objects.AddressOf(a), Status: dataplane.Status{State: "enabled"}}
		if vaddrEnabled.Effective(cfg, a) == "no" {
			st.Status.State = "disabled"
		}
		vs := byAddr[objects.AddressKey(a)]
		avail, offline := false, len(vs) > 0
		for _, v := range vs {
			t := v.ClientSide
			if z, ok := h.vaZero[a.Name][v.Name]; ok {
				t = t.Since(z)
			}
			st.ClientSide.Add(t)
			avail = avail || v.Status.Availability == dataplane.Available
			offline = offline && v.Status.Availability == dataplane.Offline
		}
		switch {
		case len(vs) == 0:
			st.Status.Availability, st.Status.Reason = dataplane.Unknown, reasonVANone
		case avail:
			st.Status.Availability, st.Status.Reason = dataplane.Available, reasonVAAvailable
		case offline:
			st.Status.Availability, st.Status.Reason = dataplane.Offline, reasonVADown
		default:
			st.Status.Availability, st.Status.Reason = dataplane.Unknown, reasonVAUnknown
		}
		addressCounts(&st, counts[a.Name]) // shows_vaddr.go
		out = append(out, st)
	}
	return out
}

// criteriaDestination is the destination show prints for a virtual
// built from a traffic-matching-criteria: BIG-IP's such virtual carries
// the wildcard destination of its family, the criteria holding the
// addresses and ports [M]; printing the first of many addresses with
// port 0 would name a listener that may not exist. dest is what the
// plane shows (an IPv6 address is joined to its port by a dot).
func criteriaDestination(dest string) string {
	if strings.Count(dest, ":") > 1 {
		return "::.any"
	}
	return "0.0.0.0:any"
}
