package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// Floating self IPs: a net self in a floating traffic group
// (`traffic-group traffic-group-1`) belongs to whichever device is active
// for it, as on BIG-IP: only that device uses it (as the SNAT automap
// address, as an iQuery listener), and the standbys leave it alone. Self
// IPs in traffic-group-local-only are each device's own and always used.

// floatingTrafficGroups are the cm traffic-group objects that float.
func floatingTrafficGroups(cfg *objects.Config) map[string]bool {
	floating := map[string]bool{}
	for _, o := range cfg.Of(cmTrafficGroup) {
		floating[shortName(o.Name)] = cmTGFloating.Effective(cfg, o) != "false"
	}
	return floating
}

// selfTrafficGroups returns the floating traffic group a self IP moves
// with, "" when it stays on the device.
func selfTrafficGroups(cfg *objects.Config) func(*objects.Object) string {
	floating := floatingTrafficGroups(cfg)
	return func(o *objects.Object) string {
		tg := shortName(netSelfTG.Effective(cfg, o))
		if tg == localOnlyTG || !floating[tg] {
			return ""
		}
		return tg
	}
}

// selfAddr is a self IP's address (its address is address/prefix).
func selfAddr(o *objects.Object) (netip.Addr, bool) {
	s := netSelfAddress.Str(o)
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Addr(), true
	}
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

// selfHeld reports whether this device uses a self IP now: always when it
// does not float or the device is not in a sync-failover group, else only
// while the device is active for its traffic group.
func (e *Engine) selfHeld(cfg *objects.Config) func(*objects.Object) bool {
	f := e.float.Load()
	tgOf := selfTrafficGroups(cfg)
	return func(o *objects.Object) bool {
		tg := tgOf(o)
		return f == nil || tg == "" || f.active[tg]
	}
}

// heldSelfIPs are the self IP addresses this device uses now, floating
// ones first: SNAT automap takes the first of the right family, and BIG-IP
// prefers a floating self IP so that return traffic follows a failover.
func (e *Engine) heldSelfIPs(cfg *objects.Config) []netip.Addr {
	held := e.selfHeld(cfg)
	tgOf := selfTrafficGroups(cfg)
	var floating, local []netip.Addr
	for _, o := range cfg.Of(netSelf) {
		a, ok := selfAddr(o)
		if !ok || !held(o) {
			continue
		}
		if tgOf(o) != "" {
			floating = append(floating, a)
		} else {
			local = append(local, a)
		}
	}
	return append(floating, local...)
}

// selfCommands is show net self: each self IP, its traffic group and the
// device that holds it.
func selfCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{{"show", "net self", func(_ context.Context, s *Session, names, _ []string, w io.Writer) error {
		return e.showSelf(names, w)
	}}}
}

func (e *Engine) showSelf(names []string, w io.Writer) error {
	cfg := e.Config()
	tgOf := selfTrafficGroups(cfg)
	held := e.selfHeld(cfg)
	me := e.selfName()
	owners := map[string]string{}
	if h := e.cluster.Load(); h != nil {
		h.mu.Lock()
		m := h.member
		h.mu.Unlock()
		if m != nil {
			for _, st := range m.FailoverStatus() {
				owners[st.Name] = st.Owner
			}
		}
	}
	bar := strings.Repeat("-", 64)
	fmt.Fprintf(w, "%s\nNet::Self IPs\n%s\n", bar, bar)
	fmt.Fprintf(w, "%-24s %-20s %-28s %-9s %s\n", "Name", "Address", "Traffic Group", "Floating", "Device")
	for _, o := range cfg.Of(netSelf) {
		if !nameMatch(names, o.Name) {
			continue
		}
		tg := shortName(netSelfTG.Effective(cfg, o))
		floating, device := "no", me
		if tgOf(o) != "" {
			floating = "yes"
			if !held(o) {
				device = owners[tg]
				if device == "" || device == me {
					device = "-" // nobody is active for it (yet)
				}
			}
		}
		fmt.Fprintf(w, "%-24s %-20s %-28s %-9s %s\n", shortName(o.Name), netSelfAddress.Str(o), tg, floating, device)
	}
	return nil
}

// virtualTrafficGroups maps each virtual server of dc to the traffic
// group of its address (its ltm virtual-address's, else
// traffic-group-1, BIG-IP's for a new virtual address), as rules'
// traffic_group reads it.
func virtualTrafficGroups(cfg *objects.Config, dc *dataplane.Config) map[string]string {
	if dc == nil {
		return nil
	}
	addrTG := map[netip.Addr]string{}
	for _, o := range cfg.Of(ltmVirtualAddr) {
		if a, err := netip.ParseAddr(objects.AddressOf(o)); err == nil {
			tg := vaddrTG.Effective(cfg, o)
			if !strings.HasPrefix(tg, "/") {
				tg = "/Common/" + tg
			}
			addrTG[a] = tg
		}
	}
	m := make(map[string]string, len(dc.Virtuals))
	for name, v := range dc.Virtuals {
		tg, ok := addrTG[v.Destination.Addr()]
		if !ok {
			tg = rules.DefaultTrafficGroup
		}
		m[name] = tg
	}
	return m
}
