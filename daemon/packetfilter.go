package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/pktfilter"
	"github.com/openltm/openltm/objects"
)

// Packet filters: net packet-filter objects, net packet-filter-trusted
// and the sys db keys packetfilter (enable puts the filters in force),
// packetfilter.defaultaction (what no filter decides) and
// packetfilter.established (enable: the open connections and flows are
// matched again whenever the filters change).
var (
	netPacketFilter    = schema.MustKind("net packet-filter")
	pfAction           = netPacketFilter.MustProp("action")
	pfOrder            = netPacketFilter.MustProp("order")
	pfRule             = netPacketFilter.MustProp("rule")
	pfLogging          = netPacketFilter.MustProp("logging")
	pfVLAN             = netPacketFilter.MustProp("vlan")
	pfRateClass        = netPacketFilter.MustProp("rate-class")
	netPacketTrusted   = schema.MustKind("net packet-filter-trusted")
	pfTrustedAddresses = netPacketTrusted.MustProp("ip-addresses")
	pfTrustedMACs      = netPacketTrusted.MustProp("mac-addresses")
	pfTrustedVLANs     = netPacketTrusted.MustProp("vlans")
)

const (
	dbPacketFilter        = "packetfilter"
	dbPacketFilterDefault = "packetfilter.defaultaction"
	dbPacketFilterEstab   = "packetfilter.established"
)

// packetFilterHook compiles every packet filter's rule at commit (a rule
// BIG-IP would refuse is refused, with its line and column inside the
// rule) and, while sys db packetfilter is enable, puts them in force on
// the plane: each new client connection and UDP flow of a virtual server
// is matched in order (dataplane/pktfilter).
type packetFilterHook struct {
	e   *Engine
	p   *dataplane.Plane
	cur pfState // what the plane runs
}

// pfState is one commit's packet filtering: the Set in force (nil while
// off), the names of the filters configured, whose counters are kept,
// and what the Set says (fp), so that established filtering matches the
// open connections again only when that changed.
type pfState struct {
	set   *pktfilter.Set
	names map[string]bool
	fp    string
}

// set puts st in service on the plane; with packetfilter.established
// enable and filtering that changed, the open connections and flows are
// matched again (dataplane.Plane.RecheckPacketFilter).
func (h *packetFilterHook) set(st pfState) {
	again := st.set != nil && st.set.Established && st.fp != h.cur.fp
	h.cur = st
	h.p.SetPacketFilter(st.set)
	h.p.PacketFilter().Forget(func(n string) bool { return st.names[n] })
	if !again {
		return
	}
	if n := h.p.RecheckPacketFilter(); n > 0 && h.e.logs != nil {
		h.e.logs.Log("local0.info", fmt.Sprintf("Packet filters (packetfilter.established enable): %d established connections and flows closed", n)) // [M] wording
	}
}

// pfFingerprint is what a Set does, as text: filters, VLANs, trusted
// lists, default and established.
func pfFingerprint(s *pktfilter.Set, rules map[string]string) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	for _, f := range s.Filters {
		fmt.Fprintf(&b, "%s|%d|%s|%q|%v|%v|%s;", f.Name, f.Order, f.Action, rules[f.Name], f.VLAN == nil, f.VLAN, f.RateClass)
	}
	fmt.Fprintf(&b, "%v|%v|%v|%v|%v", s.Default, s.Trusted, s.TrustedIf, s.TrustedMAC, s.Established)
	return b.String()
}

// pfVLANIfindexes is the interface indexes of net vlan name (a filter's
// vlan, a trusted vlan), or why the commit is refused: a VLAN that does
// not exist (01020036, as BIG-IP says it), an interface the host lacks.
func pfVLANIfindexes(cfg *objects.Config, name string) ([]int, error) {
	vo := cfg.Lookup(schema, []string{netVLAN.Key()}, name)
	if vo == nil {
		return nil, objects.NotFound(netVLAN, name)
	}
	out := []int{}
	for _, ifn := range vlanInterfaces(netVLANInterfaces.Str(vo)) {
		ifc, err := net.InterfaceByName(ifn)
		if err != nil {
			return nil, objects.Invalid("net vlan %s: interface %s does not exist on this system (openltm's VLAN interfaces are Linux interface names)", vo.Name, ifn)
		}
		out = append(out, ifc.Index)
	}
	return out, nil
}

// Prepare implements Hook.
func (h *packetFilterHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	warn := func(m string) {
		if opts.Warn != nil {
			opts.Warn(m)
		}
	}
	on, _, _ := dbSwitch(cfg, dbPacketFilter) // dbHook refuses other words
	set := &pktfilter.Set{Default: pktfilter.Accept}
	if o := cfg.Get(sysDB, dbPacketFilterDefault); o != nil {
		if a, ok := pktfilter.ParseAction(sysDBValue.Str(o)); ok && a != pktfilter.Continue {
			set.Default = a
		}
	}
	names, rules := map[string]bool{}, map[string]string{}
	for _, o := range cfg.Of(netPacketFilter) {
		names[o.Name] = true
		rule := pfRule.Str(o)
		var was *objects.Object
		if old != nil {
			was = old.Get(netPacketFilter, o.Name)
		}
		changed := was == nil || pfRule.Str(was) != rule || pfVLAN.Str(was) != pfVLAN.Str(o)
		expr, err := pktfilter.Compile(rule)
		var bad *pktfilter.Error
		var unsupported *pktfilter.Unsupported
		switch {
		case errors.As(err, &bad):
			e := objects.Invalid("The packet filter (%s) rule %q: %s; expected a tcpdump expression: host ADDR, net ADDR/LEN, port N, portrange N-M (after src or dst), tcp, udp, icmp, ip, ip6, proto N, joined by and, or, not and ( ).", o.Name, rule, bad)
			if changed {
				return nil, e
			}
			warn(e.Error() + "; kept from the running configuration, and not acted on")
			continue
		case errors.As(err, &unsupported):
			if changed {
				warn(fmt.Sprintf("net packet-filter %s: rule %q: %s; kept, and the filter does not act", o.Name, rule, unsupported))
			}
			continue
		case err != nil:
			return nil, err
		}
		var vlan []int // nil: every VLAN
		if v := pfVLAN.Str(o); v != "" && v != "none" {
			if vlan, err = pfVLANIfindexes(cfg, v); err != nil {
				return nil, err
			}
		}
		a, _ := pktfilter.ParseAction(pfAction.Str(o))
		class := ""
		if rc := pfRateClass.Str(o); rc != "" && rc != "none" {
			co := cfg.Lookup(schema, []string{netRateClass.Key()}, rc)
			if co == nil {
				return nil, objects.NotFound(netRateClass, rc)
			}
			class = co.Name
			if a == pktfilter.Discard || a == pktfilter.Reject {
				// F5: meaningless on a filter that discards or rejects.
				if changed || pfRateClass.Str(was) != rc || pfAction.Str(was) != pfAction.Str(o) {
					warn(fmt.Sprintf("net packet-filter %s: rate-class %s has no effect: the filter's action %s lets nothing in", o.Name, rc, a))
				}
				class = ""
			}
		}
		order := atoi(pfOrder.Str(o))
		set.Filters = append(set.Filters, &pktfilter.Filter{Name: o.Name, Order: order, Action: a, Expr: expr, Logging: pfLogging.Str(o) == "enabled", RateClass: class, VLAN: vlan})
		rules[o.Name] = rule
	}
	if o := cfg.Get(netPacketTrusted, ""); o != nil {
		if v := o.Props[pfTrustedAddresses.Name]; v != nil {
			for _, s := range v.List {
				if a, err := netip.ParseAddr(s); err == nil {
					set.Trusted = append(set.Trusted, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
				}
			}
		}
		if v := o.Props[pfTrustedVLANs.Name]; v != nil {
			for _, n := range v.List {
				ifs, err := pfVLANIfindexes(cfg, n)
				if err != nil {
					return nil, err
				}
				set.TrustedIf = append(set.TrustedIf, ifs...)
			}
		}
		if v := o.Props[pfTrustedMACs.Name]; v != nil {
			for _, s := range v.List {
				if m, err := net.ParseMAC(s); err == nil { // the reader refuses other words
					set.TrustedMAC = append(set.TrustedMAC, m)
				}
			}
		}
	}
	set.Established, _, _ = dbSwitch(cfg, dbPacketFilterEstab)
	if len(names) > 0 && !on {
		if wasOn, _, _ := dbSwitch(old, dbPacketFilter); old == nil || wasOn || len(old.Of(netPacketFilter)) < len(names) {
			warn("packet filters are kept and not in force: sys db packetfilter is disable (modify sys db packetfilter value enable)")
		}
	}
	if logs := h.e.logs; logs != nil {
		set.Log = func(line string) { logs.Log("local0.info", line) }
	}
	if !on {
		set = nil
	}
	return &settingChange[pfState]{get: func() pfState { return h.cur }, set: h.set, next: pfState{set: set, names: names, fp: pfFingerprint(set, rules)}}, nil
}

// packetFilterCommands answers show and reset-stats of net
// packet-filter from the plane's counters: the connections and UDP flows
// each filter matched (BIG-IP counts packets and bytes; openltm filters
// a connection or flow once, when it begins).
func packetFilterCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", netPacketFilter.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			cfg := e.Config()
			h := p.PacketFilter()
			on, _, _ := dbSwitch(cfg, dbPacketFilter)
			for _, name := range profileNames(e, netPacketFilter, names) {
				o := cfg.Get(netPacketFilter, name)
				if o == nil {
					continue
				}
				st := render.PacketFilterStats{Order: pfOrder.Str(o), Action: pfAction.Str(o), Matches: h.Stats(name).Matches, Acting: on && h.Acts(name)}
				if err := render.PacketFilter(w, name, st, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", netPacketFilter.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			ns := profileNames(e, netPacketFilter, names)
			if len(ns) == 0 {
				return nil
			}
			p.PacketFilter().Reset(ns...)
			return nil
		}},
	}
}
