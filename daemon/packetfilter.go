package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/pktfilter"
	"github.com/openltm/openltm/objects"
)

// Packet filters: net packet-filter objects, net packet-filter-trusted
// and the sys db keys packetfilter (enable puts the filters in force),
// packetfilter.defaultaction (what no filter decides) and
// packetfilter.established (kept: openltm filters a connection once).
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
)

const (
	dbPacketFilter        = "packetfilter"
	dbPacketFilterDefault = "packetfilter.defaultaction"
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
// off) and the names of the filters configured, whose counters are kept.
type pfState struct {
	set   *pktfilter.Set
	names map[string]bool
}

// set puts st in service on the plane.
func (h *packetFilterHook) set(st pfState) {
	h.cur = st
	h.p.SetPacketFilter(st.set)
	h.p.PacketFilter().Forget(func(n string) bool { return st.names[n] })
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
	names := map[string]bool{}
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
		if v := pfVLAN.Str(o); v != "" && v != "none" {
			continue // kept with the passive row's warning: it does not act
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
		set.Filters = append(set.Filters, &pktfilter.Filter{Name: o.Name, Order: order, Action: a, Expr: expr, Logging: pfLogging.Str(o) == "enabled", RateClass: class})
	}
	if o := cfg.Get(netPacketTrusted, ""); o != nil {
		if v := o.Props[pfTrustedAddresses.Name]; v != nil {
			for _, s := range v.List {
				if a, err := netip.ParseAddr(s); err == nil {
					set.Trusted = append(set.Trusted, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
				}
			}
		}
	}
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
	return &settingChange[pfState]{get: func() pfState { return h.cur }, set: h.set, next: pfState{set: set, names: names}}, nil
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
