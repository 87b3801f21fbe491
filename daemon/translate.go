package daemon

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
	"github.com/openltm/openltm/rules/tcl"
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
	dc, skipped, kept, _ := translate(s, cfg, &ruleBinder{})
	return dc, append(skipped, kept...)
}

// translate returns, beside the dataplane's configuration, what was left
// out because it cannot run (skipped: a change may not add it) and what was
// left out because openltm does not act on it yet (kept: never refused);
// refused repeats the skipped things BIG-IP refuses even in a loaded file.
func translate(s *objects.Schema, cfg *objects.Config, rb *ruleBinder) (dc *dataplane.Config, skipped, kept, refused []string) {
	t := &translator{s: s, cfg: cfg, rules: rb, dc: &dataplane.Config{
		Virtuals: map[string]*dataplane.Virtual{}, Pools: map[string]*dataplane.Pool{},
		Nodes: map[string]*dataplane.Node{}, Monitors: map[string]*dataplane.Monitor{},
		SnatPools: map[string][]netip.Addr{},
	}}
	for _, m := range monitorRun {
		for _, o := range cfg.Of(m.kind) {
			t.monitor(o, dataplane.MonitorType(m.typ))
		}
	}
	for _, o := range cfg.Of(profileStream) {
		t.streamProfile(o) // translate_stream.go
	}
	for _, o := range cfg.Of(profileCompress) {
		t.compressProfile(o) // translate_compress.go
	}
	for _, o := range cfg.Of(profileWebAccel) {
		t.webAccelProfile(o) // translate_cache.go
	}
	for _, o := range cfg.Of(profileWebSocket) {
		t.webSocketProfile(o) // translate_websocket.go
	}
	for _, o := range cfg.Of(profileJSON) {
		t.jsonProfile(o) // translate_json.go
	}
	for _, o := range cfg.Of(profileXML) {
		t.xmlProfile(o) // translate_xml.go
	}
	t.htmlChecks() // translate_html.go
	for _, o := range cfg.Of(profileRewrite) {
		t.rewriteProfile(o) // translate_rewrite.go
	}
	for _, o := range cfg.Of(profileHTTP2) {
		t.http2Profile(o) // translate_http2.go
	}
	for _, o := range cfg.Of(profileRADIUS) {
		t.radiusProfile(o) // translate_radius.go
	}
	if rb != nil && rb.e != nil {
		rb.e.caches.prune(cfg.Of(profileWebAccel))
	}
	for _, o := range cfg.Of(ltmNode) {
		t.node(o)
	}
	xlatDisabled := t.snatTranslations() // translate_snat.go
	for _, o := range cfg.Of(ltmSnatPool) {
		t.snatPoolRouteDomains(o) // translate_natrd.go
		var addrs []netip.Addr
		if v := snatPoolMembers.Get(o); v != nil {
			for _, m := range v.List {
				if a, ok := snatPoolMemberAddr(t.s, t.cfg, m); ok && !xlatDisabled[a] {
					addrs = append(addrs, a)
				}
			}
		}
		t.dc.SnatPools[o.Name] = addrs
	}
	for _, o := range cfg.Of(netSelf) {
		if p, err := netip.ParsePrefix(netSelfAddress.Str(o)); err == nil {
			t.dc.SelfIPs = append(t.dc.SelfIPs, p.Addr())
		} else if a, err := netip.ParseAddr(netSelfAddress.Str(o)); err == nil {
			t.dc.SelfIPs = append(t.dc.SelfIPs, a)
		}
	}
	t.dc.NameServers = t.nameServers()
	t.dnsSearch()              // translate_fqdn.go
	t.externalDataGroupTypes() // translate_datagroup_ext.go
	if d := cfg.Get(defaultNodeMonitor, ""); d != nil {
		t.dc.DefaultNodeMonitor = t.rule(defaultNodeMonitorRule.Str(d))
	}
	for _, o := range cfg.Of(ltmPool) {
		t.pool(o)
	}
	t.policies()                // translate_policy.go
	t.bwcPolicies()             // translate_bwc.go
	t.rateClasses()             // translate_rateshaping.go
	t.lsnPools()                // translate_lsn.go
	t.snatObjects(xlatDisabled) // translate_snat.go
	for _, o := range cfg.Of(ltmVirtual) {
		t.virtual(o)
	}
	t.nats()             // translate_nat.go
	t.evictionContexts() // translate_eviction.go
	t.dohListeners()     // translate_doh.go
	t.lsnNotes()         // translate_lsn.go
	t.ownDests()         // translate_owndests.go
	t.servedKept()
	return t.dc, t.skipped, t.kept, t.refused
}

type translator struct {
	s       *objects.Schema
	cfg     *objects.Config
	dc      *dataplane.Config
	skipped []string
	// kept lists objects valid on a BIG-IP that openltm does not act on
	// yet (FQDN nodes), and settings it does not act on: they are never
	// refused. keptOn is the object of each (keep), so that a note on a
	// virtual the commit still serves says so (servedKept).
	kept   []string
	keptOn []*objects.Object
	// refused lists the skipped things a load may not keep either.
	refused []string
	rules   *ruleBinder
	// fqdn holds the FQDN nodes, so their members are kept, not refused.
	fqdn map[string]bool
	// profAttrs are the profiles' settings for PROFILE::<type>, made once
	// per profile however many virtuals share it (profileRefs).
	profAttrs map[*objects.Object]map[string]string
	// policy holds every ltm policy compiled, by name.
	policy map[string]*compiledPolicy
	// vaddrs are the virtual-address objects by address key, read when
	// one is not under its address's name (translate_vaddr.go).
	vaddrs map[string]*objects.Object
	// xmlProfiles are the xml profiles compiled, once each
	// (translate_xml.go).
	xmlProfiles map[*objects.Object]xmlCompiled
	// evictions are the eviction policies translated so far
	// (translate_eviction.go).
	evictions map[*objects.Object]*dataplane.EvictionPolicy
	// timerPolicies are the timer policies translated so far
	// (translate_timerpol.go).
	timerPolicies map[*objects.Object]*dataplane.TimerPolicy
	// rdReach is each route domain id's RouteDomainReach, made once per
	// commit on first use (translate_natrd.go).
	rdReach map[int][]int
}

// refuse records a combination BIG-IP refuses: the virtual is left out,
// and a load or commit that brings it is refused with the message. It
// returns false, for the translators' "was the virtual kept" results.
func (t *translator) refuse(format string, args ...any) bool {
	msg := fmt.Sprintf(format, args...)
	t.skipped = append(t.skipped, msg)
	t.refused = append(t.refused, msg)
	return false
}

// needsHTTPProfile refuses a virtual server that has a profile of kind
// (one that reads HTTP messages: html, xml, json, sse, rewrite, ...)
// but no http profile, as BIG-IP refuses the combination [M: its
// message is ours].
func (t *translator) needsHTTPProfile(o *objects.Object, kind *objects.Kind) bool {
	if p := t.profile(o, kind); p != nil && t.profile(o, profileHTTP) == nil {
		return t.refuse("profile %s (%s) requires an http profile on the virtual server (%s)", p.Name, strings.TrimPrefix(kind.Key(), "ltm profile "), o.Name)
	}
	return true
}

func (t *translator) keep(o *objects.Object, format string, args ...any) {
	t.kept = append(t.kept, about(o, format, args...))
	t.keptOn = append(t.keptOn, o)
}

// keptServed ends each kept note on a virtual server that the commit
// still serves (a setting or profile of it not acted on) with that
// word, so that the commit's warning does not say that the virtual
// carries no traffic (hook_plane.go says so of the other kept notes).
const keptServed = "; kept, not acted on"

// servedKept marks the kept notes on virtuals still in the dataplane's
// configuration (keptServed).
func (t *translator) servedKept() {
	for i, o := range t.keptOn {
		if o != nil && o.Kind.Key() == "ltm virtual" && t.dc.Virtuals[o.Name] != nil {
			t.kept[i] += keptServed
		}
	}
}

// note records a warning on o that leaves nothing out (a geo entry
// with no database to read it), for the commit that brings it to say;
// without an engine there is no commit to say it.
func (t *translator) note(o *objects.Object, format string, args ...any) {
	if t.rules != nil {
		t.rules.notes = append(t.rules.notes, about(o, format, args...))
	}
}

// about is a note on o, as skip and keep record it.
func about(o *objects.Object, format string, args ...any) string {
	return fmt.Sprintf("%s %s: %s", o.Kind.Key(), o.Name, fmt.Sprintf(format, args...))
}

func (t *translator) skip(o *objects.Object, format string, args ...any) {
	t.skipped = append(t.skipped, about(o, format, args...))
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// seconds reads a count of seconds; a count past maxSeconds is
// maxSeconds. Why: a larger one (9223372036854775807, say) multiplied
// into nanoseconds wrapped to a negative duration, and a monitor with
// such an interval was refused as "not positive".
func seconds(s string) time.Duration { return secondsOf(int64(atoi(s))) }

// secondsOf is seconds for a number already read.
func secondsOf(n int64) time.Duration {
	return time.Duration(min(n, maxSeconds)) * time.Second
}

// maxSeconds is the most a 32-bit count of seconds holds, about 136
// years: longer than any timeout needs, and added to today's time in
// nanoseconds far from overflowing.
const maxSeconds = math.MaxUint32

// rule turns a stored monitor rule into the dataplane's, keeping only the
// monitors it can run.
func (t *translator) rule(s string) dataplane.MonitorRule {
	var r dataplane.MonitorRule
	if strings.HasPrefix(s, "min ") {
		r.MinUp = atoi(strings.Fields(s)[1])
	}
	for _, n := range objects.MonitorNames(s) {
		if o := t.cfg.Lookup(t.s, specMonitor, n); o != nil && t.dc.Monitors[o.Name] != nil {
			r.Names = append(r.Names, o.Name)
		}
	}
	// Monitors openltm does not run (kept with a warning when loaded) do
	// not count: `min 1 of { https }` leaves the members unchecked, not
	// refused as "min 1 of 0".
	r.MinUp = min(r.MinUp, len(r.Names))
	return r
}

func (t *translator) monitor(o *objects.Object, typ dataplane.MonitorType) {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
	m := &dataplane.Monitor{
		Name: o.Name, Type: typ,
		Interval: seconds(e(monitorInterval)), Timeout: seconds(e(monitorTimeout)),
		TimeUntilUp: seconds(e(monitorTimeUntilUp)), UpInterval: seconds(e(monitorUpInterval)),
		ManualResume: e(monitorManualResume) == "enabled",
		Reverse:      e(monitorReverse) == "enabled",
	}
	if typ == dataplane.MonitorTCP || typ == dataplane.MonitorHTTP || typ == dataplane.MonitorHTTPS || typ == dataplane.MonitorHTTP2 || typ == dataplane.MonitorUDP {
		m.Send, m.Recv, m.RecvDisable = noneEmpty(e(monitorSend)), noneEmpty(e(monitorRecv)), noneEmpty(e(monitorRecvDisable))
		m.Send = unescapeSend(m.Send)
	}
	if typ == dataplane.MonitorDNS {
		if noneEmpty(e(dnsQName)) == "" {
			// F5's /Common/dns template names nothing to ask; a user's
			// monitor like it is kept, and said not to run.
			if !o.BuiltIn {
				t.keep(o, "a dns monitor without qname has nothing to query; not run")
			}
			return
		}
		m.DNS = &dataplane.DNSCheck{QName: noneEmpty(e(dnsQName)), QType: e(dnsQType), AcceptRcode: e(dnsAcceptRcode),
			AnswerContains: e(dnsAnswerContains), Recv: noneEmpty(e(dnsRecv))}
	}
	if !t.monitorExt(o, typ, m) || !t.monitorOpts(o, typ, m) { // translate_monitors.go, translate_monitors_opts.go
		return
	}
	if d := e(monitorDestination); d != "" && d != "*:*" && d != "*" {
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
	if v := nodeFQDN.Get(o); v != nil {
		t.fqdnNode(o, v) // translate_fqdn.go
		return
	}
	a, err := netip.ParseAddr(strings.SplitN(nodeAddress.Str(o), "%", 2)[0])
	if err != nil {
		t.skip(o, "address %q is not usable", nodeAddress.Str(o))
		return
	}
	if why := t.nodeRouteDomain(o); why != "" { // translate_natrd.go
		t.refuse("%s", about(o, "address %s", why))
		return
	}
	n := t.nodeSettings(o)
	n.Addr = a
	t.dc.Nodes[o.Name] = n
}

// nodeSettings translates what every node has, whether it has an address
// or follows an FQDN: admin states, limits, ratio and its own monitor.
func (t *translator) nodeSettings(o *objects.Object) *dataplane.Node {
	n := &dataplane.Node{
		Name:            o.Name,
		Session:         adminSession(nodeSession.Effective(t.cfg, o)),
		State:           adminState(nodeState.Effective(t.cfg, o)),
		ConnectionLimit: atoi(nodeConnectionLim.Effective(t.cfg, o)),
		RateLimit:       rateLimit(nodeRateLimit.Effective(t.cfg, o)),
		Ratio:           atoi(nodeRatio.Effective(t.cfg, o)),
		DynamicRatio:    atoi(nodeDynamicRatio.Effective(t.cfg, o)),
		Logging:         nodeLogging.Effective(t.cfg, o) == "enabled",
	}
	switch m := nodeMonitor.Effective(t.cfg, o); m {
	case "default", "":
	default:
		r := t.rule(m)
		n.Monitor = &r
	}
	return n
}

// adminSession and adminState map a node's or member's `session` and
// `state` settings, in the list forms BIG-IP also accepts, onto what a user
// sets (monitor-enabled is enabled; up/down are monitor results).
func adminSession(s string) dataplane.AdminSession {
	if s == "user-disabled" {
		return dataplane.SessionUserDisabled
	}
	return dataplane.SessionEnabled
}

func adminState(s string) dataplane.AdminState {
	if s == "user-down" {
		return dataplane.StateUserDown
	}
	return dataplane.StateUserUp
}

func (t *translator) pool(o *objects.Object) {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
	p := &dataplane.Pool{
		Name: o.Name, LBMode: dataplane.LBMode(e(poolLBMode)),
		Monitor:           t.rule(e(poolMonitor)),
		MinActiveMembers:  atoi(e(poolMinActive)),
		SlowRampTime:      seconds(e(poolSlowRamp)),
		ServiceDownAction: dataplane.ServiceDownAction(e(poolServiceDown)),
		ReselectTries:     atoi(e(poolReselectTries)),
		NoSNAT:            e(poolAllowSNAT) == "no",
		NoNAT:             e(poolAllowNAT) == "no",
	}
	t.poolQueue(o, p) // translate_connqueue.go
	t.poolToS(o, p)   // translate_tcpopts.go
	if v := poolMembers.Get(o); v != nil {
		for _, it := range v.Items {
			node, port, err := objects.SplitMember(it.Name)
			if err != nil {
				continue
			}
			n := t.dc.Nodes[node]
			if n == nil && t.fqdn[node] {
				continue // an FQDN node left out (t.skip said why)
			}
			if n == nil {
				t.skip(o, "member %s has no usable node", it.Name)
				continue
			}
			m := dataplane.Member{
				Node: node, Addr: netip.AddrPortFrom(n.Addr, uint16(port)),
				Ratio:           atoi(memberRatio.StrIn(it)),
				DynamicRatio:    atoi(memberDynamicRatio.StrIn(it)),
				PriorityGroup:   atoi(memberPriority.StrIn(it)),
				ConnectionLimit: atoi(memberConnLimit.StrIn(it)),
				RateLimit:       rateLimit(memberRateLimit.StrIn(it)),
				Session:         adminSession(memberSession.StrIn(it)),
				State:           adminState(memberState.StrIn(it)),
				Logging:         memberLogging.StrIn(it) == "enabled",
			}
			if mr := memberMonitor.StrIn(it); mr != "default" {
				m.Monitor = t.rule(mr)
			}
			if n.FQDN != nil {
				m.Addr = fqdnMember(node, port).Addr
				p.FQDNMembers = append(p.FQDNMembers, m)
				continue
			}
			p.Members = append(p.Members, m)
		}
	}
	t.dc.Pools[o.Name] = p
}

// profile finds the virtual's profile of one of the given kinds.
func (t *translator) profile(o *objects.Object, kinds ...*objects.Kind) *objects.Object {
	v := virtualProfiles.Get(o)
	if v == nil {
		return nil
	}
	for _, it := range v.Items {
		for _, k := range kinds {
			if p := t.cfg.Get(k, it.Name); p != nil {
				return p
			}
			if p := t.cfg.Lookup(t.s, []string{k.Key()}, it.Name); p != nil {
				return p
			}
		}
	}
	return nil
}

// profileRefs is o's profiles by type and full path, with their context
// and settings, for the PROFILE:: commands; a name no profile kind holds
// is left out (the reference check reports it). The default persistence
// profile is listed as type persist, as PROFILE::persist reads it.
func (t *translator) profileRefs(o *objects.Object) []rules.ProfileRef {
	v := virtualProfiles.Get(o)
	var out []rules.ProfileRef
	if v != nil {
		for _, it := range v.Items {
			if p := t.cfg.Lookup(t.s, virtualProfiles.Ref, it.Name); p != nil {
				ctx := ""
				if c := it.Props["context"]; c != nil {
					ctx = c.Str
				}
				out = append(out, rules.ProfileRef{Type: rules.ProfileType(strings.TrimPrefix(p.Kind.Key(), "ltm profile ")), Name: p.Name,
					Context: ctx, Attrs: t.profileAttrs(p)})
			}
		}
	}
	if name := defaultPersistName(o); name != "" {
		if p := t.cfg.Lookup(t.s, virtualPersist.Ref, name); p != nil {
			out = append(out, rules.ProfileRef{Type: "persist", Name: p.Name, Attrs: t.profileAttrs(p)})
		}
	}
	return out
}

// profileAttrs is a profile's settings as tmsh's list all-properties
// shows them, for PROFILE::<type> ATTR: each property as it applies
// (inherited, defaulted), lists and collections as Tcl lists, a nested
// block as a list of {name value} pairs [M]. Secret values (pass
// phrases) are left out: a rule has no business reading them. Virtuals
// sharing a profile share its map (read only).
func (t *translator) profileAttrs(p *objects.Object) map[string]string {
	if m, ok := t.profAttrs[p]; ok {
		return m
	}
	if t.profAttrs == nil {
		t.profAttrs = map[*objects.Object]map[string]string{}
	}
	cfg := t.cfg
	out := make(map[string]string, len(p.Kind.Props))
	t.profAttrs[p] = out
	for _, pr := range p.Kind.Props {
		if pr.Secret {
			continue
		}
		v := cfg.Effective(p, pr.Name)
		if v == nil {
			out[pr.Name] = ""
			continue
		}
		out[pr.Name] = attrText(v)
	}
	return out
}

// attrText is one value as a Tcl word.
func attrText(v *objects.Value) string {
	switch {
	case v.List != nil:
		return tcl.FormatList(v.List...)
	case v.Items != nil:
		names := make([]string, len(v.Items))
		for i, it := range v.Items {
			names[i] = it.Name
		}
		return tcl.FormatList(names...)
	case v.Sub != nil:
		keys := make([]string, 0, len(v.Sub.Props))
		for k := range v.Sub.Props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = tcl.FormatList(k, attrText(v.Sub.Props[k]))
		}
		return tcl.FormatList(pairs...)
	}
	return v.Str
}

func (t *translator) virtual(o *objects.Object) {
	if isInternal(o) {
		return // no listener: the adapt profiles naming it use its pool (translate_adapt.go)
	}
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
	v := &dataplane.Virtual{
		Name:             o.Name,
		Enabled:          e(virtualEnabled) != "disabled" && !maintenanceMode(t.cfg), // dbkeys.go
		Reject:           virtualReject.Str(o) == "reject",
		DownImmediate:    dataplane.ServiceDownAction(e(virtualDownImmediate)),
		ConnectionLimit:  atoi(e(virtualConnectionLimit)),
		TranslateAddress: e(virtualTranslateAddress) != "disabled",
		TranslatePort:    e(virtualTranslatePort) != "disabled",
		SNAT:             dataplane.SNAT{Type: dataplane.SNATNone},
		Profiles:         t.profileRefs(o),
		IPForward:        virtualIPForward.Str(o) == "ip-forward", // translate_anyport.go
	}
	t.virtualRate(o, v) // translate_ratelimit.go
	if d := virtualDestination.Str(o); d != "" {
		dst, err := objects.ParseDest(d)
		if err != nil {
			t.skip(o, "%v", err)
			return
		}
		v.Destination = dst.AddrPort()
		v.RouteDomain = dst.RD // its route domain's eviction context (translate_eviction.go)
		// A route domain that does not exist: refused (translate_natrd.go).
		if why := t.destRouteDomain(d, dst.RD); why != "" {
			t.refuse("%s", about(o, "destination %s", why))
			return
		}
	}
	if tmcName := virtualTMC.Str(o); tmcName != "" && tmcName != "none" {
		tmc := t.cfg.Lookup(t.s, specTMC, tmcName)
		if tmc == nil {
			t.skip(o, "traffic-matching-criteria %s does not exist", tmcName)
			return
		}
		if !t.trafficMatching(o, tmc, v) { // translate_tmc.go
			return
		}
	}
	// The parents' NATs and SNATs its clients may take (translate_natrd.go).
	v.RouteDomainReach = t.routeDomainReach(v.RouteDomain)
	if !v.Destination.Addr().IsValid() && len(v.FQDNs) == 0 {
		t.keep(o, "destination %s has no address to listen on", virtualDestination.Str(o))
		return
	}
	if v.Destination.Addr().IsUnspecified() && !t.wildcard(o, v) { // translate_anyport.go
		return
	}
	if !t.virtualNetwork(o, v) { // translate_anyport.go
		return
	}
	if src := e(virtualSource); src != "" {
		src, ok := t.virtualSourceRD(o, src, v.RouteDomain) // translate_natrd.go
		if !ok {
			return
		}
		if p, err := netip.ParsePrefix(src); err == nil && p.Bits() > 0 {
			v.Source = p
		}
	}
	if sat := virtualSNAT.Get(o); sat != nil && sat.Sub != nil {
		if tv := snatType.In(sat.Sub); tv != nil {
			v.SNAT.Type = dataplane.SNATType(tv.Str)
		}
		if pv := snatPool.In(sat.Sub); pv != nil && pv.Str != "none" && v.SNAT.Type == dataplane.SNATLSN {
			if !t.virtualLSN(o, v, pv.Str) { // translate_lsn.go
				return
			}
		} else if pv != nil && pv.Str != "none" {
			sp := t.cfg.Lookup(t.s, specSnatPool, pv.Str)
			if sp == nil {
				t.skip(o, "snatpool %s does not exist", pv.Str)
				return
			}
			v.SNAT.Pool = sp.Name
		}
	}
	t.virtualSourcePortSet(o, v) // translate_srcport.go
	if pn := virtualPool.Str(o); pn != "" && pn != "none" {
		p := t.cfg.Lookup(t.s, specPool, pn)
		if p == nil {
			t.skip(o, "pool %s does not exist", pn)
			return
		}
		v.Pool = p.Name
	}
	if !t.clonePools(o, v) { // translate_clone.go
		return
	}
	pre, ok := t.virtualPolicyRules(o) // translate_policy.go
	if !ok {
		return
	}
	authRules, ok := t.virtualAuth(o, v) // translate_auth.go
	if !ok {
		return
	}
	var clones []*rules.Rule // rules with clone pool (translate_ruleclone.go)
	if rv := virtualRules.Get(o); len(pre) > 0 || len(authRules) > 0 || rv != nil && len(rv.List) > 0 {
		names := authRules
		if rv != nil {
			names = append(names, rv.List...)
		}
		list, err := t.rules.attach(t.s, t.cfg, v, pre, names)
		if err != nil {
			t.attachError(o, err)
			return
		}
		if !t.httpNeeds(o, list) || !t.streamNeeds(o, list) || !t.compressNeeds(o, list) || !t.cacheNeeds(o, list) || !t.wsNeeds(o, list) || !t.jsonNeeds(o, list) || !t.xmlNeeds(o, list) || !t.mqttNeeds(o, list) || !t.fixNeeds(o, list) || !t.rtspNeeds(o, list) || !t.diameterNeeds(o, list) || !t.mrfNeeds(o, list) || !t.helloNeeds(o, list) || !t.sipNeeds(o, list) || !t.profileNeeds(o, list, profileSocks, "SOCKS", (*rules.Rule).SOCKSNeeds) { // translate_http.go, translate_stream.go, translate_compress.go, translate_cache.go, translate_websocket.go, translate_json.go, translate_xml.go, translate_mqtt.go, translate_fix.go, translate_rtsp.go, translate_diameter.go, translate_sni.go, translate_sip.go
			return
		}
		if !t.htmlNeeds(o, list) || !t.http3Rules(o, list) { // translate_html.go, translate_http3.go
			return
		}
		if !t.sseNeeds(o, list) { // translate_sse.go
			return
		}
		// translate_iiop.go
		t.iiopRules(o, list)
		if !t.profileNeeds(o, list, profileRewrite, "REWRITE", (*rules.Rule).RewriteNeeds) { // translate_rewrite.go
			return
		}
		t.dohRuleEvents(o, list) // translate_doh.go
		clones = cloningRules(list)
	}
	if !t.htmlNeedsHTTP(o) || !t.sseNeedsHTTP(o) { // translate_html.go, translate_sse.go
		return
	}
	if prof := t.profile(o, profileTCP, profileFastL4); prof != nil {
		switch it := profileIdle.Effective(t.cfg, prof); it {
		case "indefinite":
			v.IdleTimeout = -1
		default:
			v.IdleTimeout = seconds(it)
		}
		t.tcpOptions(o, v, prof) // translate_tcpopts.go
	}
	if !t.rewriteNeedsHTTP(o) || !t.ntlmNeedsHTTP(o) { // translate_rewrite.go, translate_fasthttp.go
		return
	}
	if !t.compressNeedsHTTP(o) || !t.webSocketNeedsHTTP(o) || !t.jsonNeedsHTTP(o) || !t.xmlNeedsHTTP(o) || !t.requestLogNeedsHTTP(o) || !t.adaptNeedsHTTP(o) || !t.udp(o, v) || !t.mblb(o, v) || !t.persist(o, v) || !t.tls(o, v) || !t.http2(o, v) || !t.http3(o, v) || !t.ftp(o, v) || !t.mqtt(o, v) || !t.fix(o, v) || !t.rtsp(o, v) || !t.diameter(o, v) || !t.mrf(o, v) || !t.starttls(o, v) || !t.socksProfile(o, v) || !t.ilxProfile(o, v) || !t.dnsProfile(o, v) || !t.vlans(o, v) { // translate_http3.go, translate_ftp.go, translate_mqtt.go, translate_fix.go, translate_rtsp.go, translate_diameter.go, translate_starttls.go, translate_ilx.go, translate_dns.go, translate_vlans.go
		return
	}
	t.ruleClones(o, v, clones) // translate_ruleclone.go

	t.virtualAddress(o, v)   // translate_vaddr.go
	t.virtualBWC(o, v)       // translate_bwc.go
	t.virtualRateClass(o, v) // translate_rateshaping.go
	t.netflow(o, v)          // translate_netflow.go
	t.virtualEviction(o, v)  // flow-eviction-policy (translate_eviction.go)
	t.virtualTimers(o, v)    // service-policy (translate_timerpol.go)
	if !t.anyPort(o, v) {    // translate_anyport.go
		return
	}
	t.virtualSourcePortUnread(o, v) // translate_srcport.go
	t.dc.Virtuals[o.Name] = v
}
