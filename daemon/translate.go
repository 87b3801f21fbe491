package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// Translate turns the stored configuration into the dataplane's resolved
// form: references become names that exist, defaults-from chains are
// walked, enums and durations parsed. Objects whose references dangle
// (kept by a partial load) are left out, with the reason in skipped, so the
// dataplane never sees a reference it cannot follow; so are virtual servers
// whose rules are missing or do not compile. Rules are compiled and their
// programs built afresh on each call; the engine's own translation reuses
// its compiled rules and running programs.
func Translate(s *objects.Schema, cfg *objects.Config) (dc *dataplane.Config, skipped []string) {
	return translate(s, cfg, &ruleBinder{})
}

func translate(s *objects.Schema, cfg *objects.Config, rb *ruleBinder) (dc *dataplane.Config, skipped []string) {
	t := &translator{s: s, cfg: cfg, rules: rb, dc: &dataplane.Config{
		Virtuals: map[string]*dataplane.Virtual{}, Pools: map[string]*dataplane.Pool{},
		Nodes: map[string]*dataplane.Node{}, Monitors: map[string]*dataplane.Monitor{},
		SnatPools: map[string][]netip.Addr{},
	}}
	for _, m := range []string{"tcp", "tcp-half-open", "http", "gateway-icmp"} {
		for _, o := range cfg.Of(s.Kind("ltm monitor " + m)) {
			t.monitor(o, dataplane.MonitorType(m))
		}
	}
	for _, o := range cfg.Of(s.Kind("ltm node")) {
		t.node(o)
	}
	for _, o := range cfg.Of(s.Kind("ltm snatpool")) {
		var addrs []netip.Addr
		if v := o.Get("members"); v != nil {
			for _, m := range v.List {
				if a, ok := objects.NodeAddr(m); ok {
					addrs = append(addrs, a)
				}
			}
		}
		t.dc.SnatPools[o.Name] = addrs
	}
	for _, o := range cfg.Of(s.Kind("net self")) {
		if p, err := netip.ParsePrefix(o.Str("address")); err == nil {
			t.dc.SelfIPs = append(t.dc.SelfIPs, p.Addr())
		} else if a, err := netip.ParseAddr(o.Str("address")); err == nil {
			t.dc.SelfIPs = append(t.dc.SelfIPs, a)
		}
	}
	if d := cfg.Get(s.Kind("ltm default-node-monitor"), ""); d != nil {
		t.dc.DefaultNodeMonitor = t.rule(d.Str("rule"))
	}
	for _, o := range cfg.Of(s.Kind("ltm pool")) {
		t.pool(o)
	}
	for _, o := range cfg.Of(s.Kind("ltm virtual")) {
		t.virtual(o)
	}
	return t.dc, t.skipped
}

type translator struct {
	s       *objects.Schema
	cfg     *objects.Config
	dc      *dataplane.Config
	skipped []string
	rules   *ruleBinder
}

func (t *translator) skip(o *objects.Object, format string, args ...any) {
	t.skipped = append(t.skipped, fmt.Sprintf("%s %s: %s", o.Kind.Key(), o.Name, fmt.Sprintf(format, args...)))
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func seconds(s string) time.Duration {
	return time.Duration(atoi(s)) * time.Second
}

// rule turns a stored monitor rule into the dataplane's, keeping only the
// monitors it can run.
func (t *translator) rule(s string) dataplane.MonitorRule {
	var r dataplane.MonitorRule
	if strings.HasPrefix(s, "min ") {
		r.MinUp = atoi(strings.Fields(s)[1])
	}
	for _, n := range objects.MonitorNames(s) {
		if o := t.cfg.Lookup(t.s, []string{"ltm monitor "}, n); o != nil && t.dc.Monitors[o.Name] != nil {
			r.Names = append(r.Names, o.Name)
		}
	}
	return r
}

func (t *translator) monitor(o *objects.Object, typ dataplane.MonitorType) {
	e := func(n string) string { return t.cfg.EffectiveStr(o, n) }
	m := &dataplane.Monitor{
		Name: o.Name, Type: typ,
		Interval: seconds(e("interval")), Timeout: seconds(e("timeout")),
		TimeUntilUp: seconds(e("time-until-up")), UpInterval: seconds(e("up-interval")),
		ManualResume: e("manual-resume") == "enabled",
		Reverse:      e("reverse") == "enabled",
	}
	if typ == dataplane.MonitorTCP || typ == dataplane.MonitorHTTP {
		m.Send, m.Recv, m.RecvDisable = noneEmpty(e("send")), noneEmpty(e("recv")), noneEmpty(e("recv-disable"))
		m.Send = unescapeSend(m.Send)
	}
	if d := e("destination"); d != "" && d != "*:*" && d != "*" {
		if host, port, ok := strings.Cut(d, ":"); ok {
			a, _ := netip.ParseAddr(host)
			p, _ := objects.ParsePort(port)
			m.Destination = netip.AddrPortFrom(a, uint16(p))
		}
	}
	t.dc.Monitors[o.Name] = m
}

func noneEmpty(s string) string {
	if s == "none" {
		return ""
	}
	return s
}

// unescapeSend turns the \r \n \t escapes BIG-IP stores literally in send
// strings into the bytes the probe writes.
func unescapeSend(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\r`, "\r", `\n`, "\n", `\t`, "\t", `\\`, `\`)
	return r.Replace(s)
}

func (t *translator) node(o *objects.Object) {
	a, err := netip.ParseAddr(strings.SplitN(o.Str("address"), "%", 2)[0])
	if err != nil {
		t.skip(o, "address %q is not usable", o.Str("address"))
		return
	}
	n := &dataplane.Node{
		Name: o.Name, Addr: a,
		Session:         dataplane.Session(sessionOf(t.cfg.EffectiveStr(o, "session"))),
		State:           dataplane.AdminState(stateOf(t.cfg.EffectiveStr(o, "state"))),
		ConnectionLimit: atoi(t.cfg.EffectiveStr(o, "connection-limit")),
		Ratio:           atoi(t.cfg.EffectiveStr(o, "ratio")),
	}
	switch m := t.cfg.EffectiveStr(o, "monitor"); m {
	case "default", "":
	default:
		r := t.rule(m)
		n.Monitor = &r
	}
	t.dc.Nodes[o.Name] = n
}

// sessionOf and stateOf map the list forms BIG-IP also accepts onto what a
// user sets (monitor-enabled is enabled; up/down are monitor results).
func sessionOf(s string) string {
	if s == "user-disabled" {
		return string(dataplane.SessionUserDisabled)
	}
	return string(dataplane.SessionEnabled)
}

func stateOf(s string) string {
	if s == "user-down" {
		return string(dataplane.StateUserDown)
	}
	return string(dataplane.StateUserUp)
}

func (t *translator) pool(o *objects.Object) {
	e := func(n string) string { return t.cfg.EffectiveStr(o, n) }
	p := &dataplane.Pool{
		Name: o.Name, LBMode: dataplane.LBMode(e("load-balancing-mode")),
		Monitor:           t.rule(e("monitor")),
		MinActiveMembers:  atoi(e("min-active-members")),
		SlowRampTime:      seconds(e("slow-ramp-time")),
		ServiceDownAction: dataplane.ServiceDownAction(e("service-down-action")),
		ReselectTries:     atoi(e("reselect-tries")),
	}
	if v := o.Get("members"); v != nil {
		for _, it := range v.Items {
			node, port, err := objects.SplitMember(it.Name)
			if err != nil {
				continue
			}
			n := t.dc.Nodes[node]
			if n == nil {
				t.skip(o, "member %s has no usable node", it.Name)
				continue
			}
			get := func(name, def string) string {
				if pv := it.Props[name]; pv != nil {
					return pv.Str
				}
				return def
			}
			m := dataplane.Member{
				Node: node, Addr: netip.AddrPortFrom(n.Addr, uint16(port)),
				Ratio:           atoi(get("ratio", "1")),
				PriorityGroup:   atoi(get("priority-group", "0")),
				ConnectionLimit: atoi(get("connection-limit", "0")),
				Session:         dataplane.Session(sessionOf(get("session", "user-enabled"))),
				State:           dataplane.AdminState(stateOf(get("state", "user-up"))),
			}
			if mr := get("monitor", "default"); mr != "default" {
				m.Monitor = t.rule(mr)
			}
			p.Members = append(p.Members, m)
		}
	}
	t.dc.Pools[o.Name] = p
}

// profile finds the virtual's profile of one of the given kinds.
func (t *translator) profile(o *objects.Object, kinds ...string) *objects.Object {
	v := o.Get("profiles")
	if v == nil {
		return nil
	}
	for _, it := range v.Items {
		for _, k := range kinds {
			if p := t.cfg.Get(t.s.Kind(k), it.Name); p != nil {
				return p
			}
			if p := t.cfg.Lookup(t.s, []string{k}, it.Name); p != nil {
				return p
			}
		}
	}
	return nil
}

func (t *translator) virtual(o *objects.Object) {
	e := func(n string) string { return t.cfg.EffectiveStr(o, n) }
	v := &dataplane.Virtual{
		Name:             o.Name,
		Enabled:          e("enabled") != "disabled",
		ConnectionLimit:  atoi(e("connection-limit")),
		TranslateAddress: e("translate-address") != "disabled",
		TranslatePort:    e("translate-port") != "disabled",
		SNAT:             dataplane.SNAT{Type: dataplane.SNATNone},
	}
	if d := o.Str("destination"); d != "" {
		dst, err := objects.ParseDest(d)
		if err != nil {
			t.skip(o, "%v", err)
			return
		}
		v.Destination = dst.AddrPort()
	}
	if tmcName := o.Str("traffic-matching-criteria"); tmcName != "" && tmcName != "none" {
		tmc := t.cfg.Lookup(t.s, []string{"ltm traffic-matching-criteria"}, tmcName)
		if tmc == nil {
			t.skip(o, "traffic-matching-criteria %s does not exist", tmcName)
			return
		}
		if a, err := netip.ParseAddr(strings.SplitN(t.cfg.EffectiveStr(tmc, "destination-address-inline"), "/", 2)[0]); err == nil {
			v.Destination = netip.AddrPortFrom(a, 0)
		}
		for _, part := range strings.Split(t.cfg.EffectiveStr(tmc, "destination-port-inline"), ",") {
			lo, hi, ok := strings.Cut(strings.TrimSpace(part), "-")
			if !ok {
				hi = lo
			}
			l, err1 := objects.ParsePort(lo)
			h, err2 := objects.ParsePort(hi)
			if err1 != nil || err2 != nil || l > h {
				t.skip(o, "destination-port-inline %q is not a port range", part)
				return
			}
			if l == 0 && h == 0 {
				continue
			}
			v.PortRanges = append(v.PortRanges, dataplane.PortRange{Low: uint16(l), High: uint16(h)})
		}
	}
	if v.Destination.Port() == 0 && len(v.PortRanges) == 0 {
		t.skip(o, "destination %s listens on every port, which openltm does not do (use traffic-matching-criteria with destination-port-inline ranges)", o.Str("destination"))
		return
	}
	if !v.Destination.Addr().IsValid() || v.Destination.Addr().IsUnspecified() {
		t.skip(o, "destination %s has no address to listen on (wildcard virtual servers are not supported)", o.Str("destination"))
		return
	}
	if src := e("source"); src != "" {
		if p, err := netip.ParsePrefix(src); err == nil && p.Bits() > 0 {
			v.Source = p
		}
	}
	if sat := o.Get("source-address-translation"); sat != nil && sat.Sub != nil {
		if tv := sat.Sub.Props["type"]; tv != nil {
			v.SNAT.Type = dataplane.SNATType(tv.Str)
		}
		if pv := sat.Sub.Props["pool"]; pv != nil && pv.Str != "none" {
			sp := t.cfg.Lookup(t.s, []string{"ltm snatpool"}, pv.Str)
			if sp == nil {
				t.skip(o, "snatpool %s does not exist", pv.Str)
				return
			}
			v.SNAT.Pool = sp.Name
		}
	}
	if pn := o.Str("pool"); pn != "" && pn != "none" {
		p := t.cfg.Lookup(t.s, []string{"ltm pool"}, pn)
		if p == nil {
			t.skip(o, "pool %s does not exist", pn)
			return
		}
		v.Pool = p.Name
	}
	if rv := o.Get("rules"); rv != nil && len(rv.List) > 0 {
		if err := t.rules.attach(t.s, t.cfg, v, rv.List); err != nil {
			t.skip(o, "%v", err)
			return
		}
	}
	if prof := t.profile(o, "ltm profile tcp", "ltm profile fastl4"); prof != nil {
		switch it := t.cfg.EffectiveStr(prof, "idle-timeout"); it {
		case "indefinite":
			v.IdleTimeout = -1
		default:
			v.IdleTimeout = seconds(it)
		}
	}
	if !t.mblb(o, v) || !t.persist(o, v) {
		return
	}
	t.dc.Virtuals[o.Name] = v
}
