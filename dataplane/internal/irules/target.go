package irules

import (
	"fmt"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// Target is where a flow's rules send it, as the pool, member, node,
// forward, snat and LB::mode decisions set it: the part of a rule state
// that the L4 and UDP flows share (each embeds it).
type Target struct {
	// Changed is set by a pool, member or node decision not yet acted on.
	Changed bool
	Pool    *state.Pool
	Addr    netip.AddrPort // the member (with Pool) or node
	Node    bool
	SNAT    state.SNATChoice
	// SNATText is the snat or snatpool decision as the rule wrote it,
	// which LB::snat reads back.
	SNATText string
	LBMode   *state.ModeSpec // LB::mode for this flow's decisions
	// Xlate is the rule's translate choice, which replaces the
	// virtual's translate-address and translate-port when Set.
	Xlate Translation
	// Limits are the rule's LB::connlimit limits for the flow's member
	// choices (state.Chooser.Limits); the flow keeps its counts under
	// their keys (state.KeyHolds) beside it.
	Limits state.RuleLimits
}

// SetConnLimit implements rules.ConnLimiter.
func (t *Target) SetConnLimit(scope rules.LimitScope, limit int64, key string) error {
	n, k := t.limit(scope)
	*n, *k = limit, key
	return nil
}

// ConnLimit implements rules.ConnLimiter.
func (t *Target) ConnLimit(scope rules.LimitScope) int64 {
	n, _ := t.limit(scope)
	return *n
}

func (t *Target) limit(scope rules.LimitScope) (*int64, *string) {
	switch scope {
	case rules.LimitVirtual:
		return &t.Limits.Virtual, &t.Limits.VirtualKey
	case rules.LimitNode:
		return &t.Limits.Node, &t.Limits.NodeKey
	}
	return &t.Limits.Member, &t.Limits.MemberKey
}

// Translation is a rule's `translate address|port` choice for one flow.
type Translation struct{ Set, Addr, Port bool }

// Translation is rules.Translator's reading: the rule's choice, else
// the virtual's.
func (t *Target) Translation(cfg *config.Virtual) (addr, port bool) {
	if t.Xlate.Set {
		return t.Xlate.Addr, t.Xlate.Port
	}
	return cfg.TranslateAddress, cfg.TranslatePort
}

// Translate is where a server connection to the member at member goes
// for a client that reached local (state.Translate), with the rule's
// translate choice if any.
func (t *Target) Translate(cfg *config.Virtual, member, local netip.AddrPort) netip.AddrPort {
	if t.Xlate.Set {
		return state.TranslateAs(t.Xlate.Addr, t.Xlate.Port, member, local)
	}
	return state.Translate(cfg, member, local)
}

// SNATDecision is LB::snat's answer: the rule's snat or snatpool
// decision, else the virtual's source-address-translation (cfg).
func (t *Target) SNATDecision(cfg *config.Virtual) string {
	if t.SNAT.Set {
		return t.SNATText
	}
	return VirtualSNAT(cfg)
}

// VirtualSNAT is LB::snat's answer from a virtual's
// source-address-translation alone (a data path whose rules cannot
// change it).
func VirtualSNAT(cfg *config.Virtual) string {
	switch cfg.SNAT.Type {
	case config.SNATAutomap:
		return "automap"
	case config.SNATPool:
		return "snatpool " + cfg.SNAT.Pool
	}
	return "none"
}

// Decide records d when it is one of the decisions a Target holds; handled
// is false for the others (reject, drop, ...), which the flow decides.
// pools and virtual resolve names, local is the virtual's address (for
// forward), snatPool resolves a snatpool's addresses.
func (t *Target) Decide(d rules.Decision, pools state.Pools, virtual string, local netip.AddrPort, snatPool func(string) ([]netip.Addr, bool)) (handled bool, err error) {
	switch d.Kind {
	case rules.DecidePool, rules.DecideMember:
		pool := pools.Named(virtual, d.Pool)
		if pool == nil {
			return true, fmt.Errorf("no such pool: %s", d.Pool)
		}
		var addr netip.AddrPort
		if d.Kind == rules.DecideMember {
			m := state.MemberAt(pool, d.Addr)
			if m == nil {
				return true, fmt.Errorf("no such member %s in pool %s", d.Addr, pool.Name)
			}
			addr = m.Cfg.Load().Addr
		}
		t.Pool, t.Addr, t.Node, t.Changed = pool, addr, false, true
	case rules.DecideNode:
		t.Pool, t.Addr, t.Node, t.Changed = nil, d.Addr, true, true
	case rules.DecideForward:
		t.Pool, t.Addr, t.Node, t.Changed = nil, local, true, true
	case rules.DecideSnat:
		t.SNAT = state.SNATChoice{Set: true, Type: config.SNATPool, Addrs: []netip.Addr{d.Addr.Addr()}}
		t.SNATText = d.Addr.Addr().String()
	case rules.DecideSnatAuto:
		t.SNAT, t.SNATText = state.SNATChoice{Set: true, Type: config.SNATAutomap}, "automap"
	case rules.DecideSnatNone:
		t.SNAT, t.SNATText = state.SNATChoice{Set: true, Type: config.SNATNone}, "none"
	case rules.DecideSnatPool:
		addrs, ok := snatPool(d.Pool)
		if !ok {
			return true, fmt.Errorf("no such snatpool: %s", d.Pool)
		}
		if d.Addr.IsValid() {
			found := false
			for _, a := range addrs {
				found = found || a == d.Addr.Addr()
			}
			if !found {
				return true, fmt.Errorf("%s is not a member of snatpool %s", d.Addr.Addr(), d.Pool)
			}
			addrs = []netip.Addr{d.Addr.Addr()}
		}
		t.SNAT = state.SNATChoice{Set: true, Type: config.SNATPool, Addrs: addrs}
		t.SNATText = "snatpool " + d.Pool
		if d.Addr.IsValid() {
			t.SNATText += " member " + d.Addr.Addr().String()
		}
	case rules.DecideLBMode:
		spec, ok := state.Modes[config.LBMode(d.Mode)]
		if !ok || d.Mode == "" {
			return true, fmt.Errorf("LB::mode %s: not a load-balancing mode openltm runs", d.Mode)
		}
		t.LBMode = &spec
	default:
		return false, nil
	}
	return true, nil
}
