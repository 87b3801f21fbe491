package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/aaa"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/dataplane/syslog"
	"github.com/openltm/openltm/hoststat"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// ruleCache compiles each rule body once: a commit recompiles only the
// rules whose text changed, and the dataplane gets the compiled form.
type ruleCache struct {
	mu sync.Mutex
	m  map[string]*rules.Rule // name + "\x00" + body
	// rt is what the compiled rules run with.
	rt ruleRuntime
}

func (c *ruleCache) compile(name, body string) (*rules.Rule, error) {
	key := name + "\x00" + body
	c.mu.Lock()
	r := c.m[key]
	c.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := rules.Compile(name, body)
	if err != nil {
		ce := &objects.ConfigError{Code: "01070151", Msg: "Rule [" + name + "] error: " + err.Error()}
		var ue *rules.UnsupportedError
		if errors.As(err, &ue) {
			return nil, &notActedOnRule{ce}
		}
		return nil, ce
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*rules.Rule{}
	}
	c.m[key] = r
	c.mu.Unlock()
	return r, nil
}

// lookup returns the compiled rule of that name and text, nil when it was
// never compiled or did not compile.
func (c *ruleCache) lookup(name, body string) *rules.Rule {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name+"\x00"+body]
}

// notActedOnRule is a rule valid on a BIG-IP that uses F5 commands or
// events openltm does not implement yet: it is kept (with a warning), and
// the virtual servers using it carry no traffic.
type notActedOnRule struct{ *objects.ConfigError }

// keptRuleError is a rule list that cannot run because a rule uses F5
// commands openltm lacks: valid on a BIG-IP, so what carries it is kept
// with a warning (and no traffic), not refused.
type keptRuleError struct{ error }

// ruleNotActedOn reports whether a rule's compile error is only that it
// uses F5 commands or events openltm lacks (from the engine's cache or
// the compiler itself), and returns the note on what carries the rule.
func ruleNotActedOn(name string, err error) (string, bool) {
	var na *notActedOnRule
	var ue *rules.UnsupportedError
	if errors.As(err, &na) || errors.As(err, &ue) {
		return fmt.Sprintf("rule %s uses F5 commands or events openltm does not implement yet", name), true
	}
	return "", false
}

// attachError notes why a virtual could not have its rules: kept for a
// rule openltm does not act on yet, skipped (refused from tmsh) for one
// that is wrong.
func (t *translator) attachError(o *objects.Object, err error) {
	var kr *keptRuleError
	if errors.As(err, &kr) {
		t.keep(o, "%v", err)
		return
	}
	t.skip(o, "%v", err)
}

// prune drops compiled rules the configuration no longer has.
func (c *ruleCache) prune(cfg *objects.Config) {
	keep := map[string]bool{}
	for _, o := range cfg.Of(ltmRule) {
		keep[o.Name+"\x00"+ruleDefinition.Str(o)] = true
	}
	for _, o := range cfg.Of(gtmRule) {
		keep[o.Name+"\x00"+gtmRuleDefinition.Str(o)] = true
	}
	c.mu.Lock()
	for key := range c.m {
		if !keep[key] {
			delete(c.m, key)
		}
	}
	c.mu.Unlock()
}

// rulesHook refuses a commit whose iRules do not compile, naming the rule,
// line and column, as BIG-IP refuses them when they are saved, and keeps
// the engine's compiled rules to those of the running configuration.
type rulesHook struct{ e *Engine }

// Prepare implements Hook. A rule that does not compile is refused, from a
// command or a file alike, as BIG-IP refuses it (a Tcl error, a command F5
// does not have or has disabled); a rule that only uses F5 commands or
// events openltm does not implement yet is kept with a warning, and the
// virtual servers using it carry no traffic. A rule that already failed in
// the running configuration does not block unrelated changes, and what
// was stored is brought up at start whatever it holds. The rules compiled
// here are those the dataplane's translation attaches.
func (h rulesHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	for _, k := range []*objects.Kind{ltmRule, gtmRule} {
		def := ruleDefinition
		if k == gtmRule {
			def = gtmRuleDefinition
		}
		for _, o := range cfg.Of(k) {
			if err := h.check(old, k, def, o, opts); err != nil {
				return nil, err
			}
		}
	}
	return rulesChange{h, cfg}, nil
}

// check compiles one rule; see Prepare for what is refused and kept.
func (h rulesHook) check(old *objects.Config, k *objects.Kind, def *objects.Prop, o *objects.Object, opts CommitOptions) error {
	_, err := h.e.rules.compile(o.Name, def.Str(o))
	if err == nil {
		return nil
	}
	if prev := old.Get(k, o.Name); prev != nil && def.Str(prev) == def.Str(o) {
		return nil
	}
	var kept *notActedOnRule
	if !errors.As(err, &kept) && old != nil {
		return err
	}
	if opts.Warn != nil {
		opts.Warn(err.Error() + "; kept, and virtual servers using it carry no traffic")
	}
	return nil
}

// rulesChange drops, once cfg runs, the compiled rules it no longer has.
type rulesChange struct {
	h   rulesHook
	cfg *objects.Config
}

// Commit implements Change.
func (c rulesChange) Commit() error {
	c.h.e.rules.prune(c.cfg)
	return nil
}

// Abort implements Change. The compile cache needs no undoing: a rule it
// dropped is compiled again when a configuration has it.
func (c rulesChange) Abort() {}

// ruleRuntime is what the running iRules share across virtual servers: one
// Env (the log, the data groups of the running configuration, the session
// table and the static:: variables) and one program per distinct rule
// list, so that a commit that does not touch a virtual's rules keeps its
// program and does not run RULE_INIT again.
type ruleRuntime struct {
	mu  sync.Mutex
	env *rules.Env
	// geo is the geolocation databases in use (whereis, GTM topology;
	// geoip.go).
	geo geoip.Store
	dgs atomic.Pointer[map[string]*rules.DataGroup]
	// ifiles are the running configuration's ltm ifiles.
	ifiles atomic.Pointer[ifileSet]
	// vsAddrs are the running configuration's virtual servers'
	// addresses, by full path: a sideband `connect` may name one.
	vsAddrs atomic.Pointer[map[string]netip.AddrPort]
	// resolvers are the running configuration's net dns-resolvers
	// (RESOLVER::name_lookup), from resolverSet, which keeps a
	// resolver's cache while its settings stay.
	resolvers   atomic.Pointer[map[string]*fwdproxy.Resolver]
	resolverSet resolverCache
	// vlanTags are the running configuration's VLAN tags by interface
	// index, for LINK::vlan_id.
	vlanTags atomic.Pointer[map[int]int]
	// vsTGs are their addresses' traffic groups (traffic_group).
	vsTGs atomic.Pointer[map[string]string]
	// vsClasses are their traffic classes (LB::class).
	vsClasses atomic.Pointer[map[string][]rules.TrafficClass]
	// vsFloat are the floating traffic groups of their addresses ("":
	// none), and float and cpu the engine's, for HA::status and cpu
	// usage (hook_rules_ha.go).
	vsFloat atomic.Pointer[map[string]string]
	float   *atomic.Pointer[floatState]
	cpu     *hoststat.LoadAverages
	// hsl is what HSL::open and HSL::send reach.
	hsl hslSwitch
	// flows is what FLOWTABLE::count and FLOWTABLE::limit read.
	flows flowSwitch
	// dest receives rules' log lines besides ltmd's log (nil: only there).
	dest  *syslog.Dest
	progs map[string]*rules.Program
	// statsDefs are the statistics profiles in service (their fields),
	// which an undone commit puts back.
	statsDefs map[string][]string
	// auth are the auth profiles in service (hook_auth.go).
	auth atomic.Pointer[authRuntime]
	// ilx is what ILX::init, ILX::call and ILX::notify reach (ilx.go).
	ilx ilxSwitch
	// aaa are the internal virtual servers AAA::auth_send and
	// AAA::acct_send reach (translate_aaa.go).
	aaa atomic.Pointer[map[string]*aaa.Service]
}

// statsProfiles are the statistics profiles of cfg: each one's named
// fields (field1 to field32 that are not none), in order.
func statsProfiles(cfg *objects.Config) map[string][]string {
	out := map[string][]string{}
	for _, o := range cfg.Of(profileStatistics) {
		var fields []string
		for i := 1; i <= 32; i++ {
			if v := cfg.EffectiveStr(o, "field"+strconv.Itoa(i)); v != "" && v != "none" {
				fields = append(fields, v)
			}
		}
		out[o.Name] = fields
	}
	return out
}

// statsEnv is the store of the statistics profiles' values, for the
// shows.
func (rt *ruleRuntime) statsEnv(log *slog.Logger) *rules.StatsProfiles {
	return rt.sharedEnv(log).Stats
}

// sharedEnv is environment under the runtime's lock, for other runtimes
// (the GSLB's DNS rules).
func (rt *ruleRuntime) sharedEnv(log *slog.Logger) *rules.Env {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.environment(log)
}

// environment returns the shared Env, made on first use.
func (rt *ruleRuntime) environment(log *slog.Logger) *rules.Env {
	if rt.env != nil {
		return rt.env
	}
	empty := map[string]*rules.DataGroup{}
	rt.dgs.Store(&empty)
	rt.ifiles.Store(&ifileSet{})
	noVS := map[string]netip.AddrPort{}
	rt.vsAddrs.Store(&noVS)
	noRes := map[string]*fwdproxy.Resolver{}
	rt.resolvers.Store(&noRes)
	noTags := map[int]int{}
	rt.vlanTags.Store(&noTags)
	noTGs := map[string]string{}
	rt.vsTGs.Store(&noTGs)
	noClasses := map[string][]rules.TrafficClass{}
	rt.vsClasses.Store(&noClasses)
	noFloat := map[string]string{}
	rt.vsFloat.Store(&noFloat)
	rt.auth.Store(&authRuntime{})
	rt.env = &rules.Env{
		Auth: rt.authService, // hook_auth.go
		ILX:  &rt.ilx,        // ilx.go
		AAA:  rt.aaaService,  // translate_aaa.go
		TrafficGroup: func(virtual string) string {
			if tg, ok := (*rt.vsTGs.Load())[virtual]; ok {
				return tg
			}
			return rules.DefaultTrafficGroup
		},
		HSL:    &rt.hsl,
		IPFIX:  ipfixSwitch{&rt.hsl},
		IFile:  func(name string) (*rules.IFile, bool) { return rt.ifiles.Load().lookup(name) },
		IFiles: func() []string { return rt.ifiles.Load().names },
		Log: func(facility, line string) {
			logRule(log, facility, line)
			if rt.dest != nil {
				rt.dest.Log(facility, line)
			}
		},
		LogRemote: func(to netip.AddrPort, facility, line string) {
			if rt.dest != nil {
				rt.dest.LogTo(to, facility, line)
			}
		},
		Table: rules.NewTable(), Statics: statics(),
		Stats: rules.NewStatsProfiles(), IStats: rules.NewIStats(),
		Resolver: rules.DNSResolver{}, FlowTable: &rt.flows, Geo: geoLocator{&rt.geo},
		VLANTag: func(ifindex int) (int, bool) {
			tag, ok := (*rt.vlanTags.Load())[ifindex]
			return tag, ok
		},
		TrafficClasses: func(virtual string) []rules.TrafficClass { return (*rt.vsClasses.Load())[virtual] },
		VirtualAddr: func(name string) (netip.AddrPort, bool) {
			ap, ok := (*rt.vsAddrs.Load())[name]
			return ap, ok
		},
		// A sideband connect to a destination a rule computed: passed
		// over by the wildcards' steering (dataplane anyport.go).
		PassOver: func(dst netip.AddrPort, udp bool) func() {
			if p := rt.flows.p.Load(); p != nil {
				return p.PassOver(dst, udp)
			}
			return func() {}
		},
		NetResolver: func(name string) (rules.MsgResolver, bool) {
			r, ok := (*rt.resolvers.Load())[name]
			return r, ok
		},
		DataGroup: func(name string) (*rules.DataGroup, bool) {
			m := *rt.dgs.Load()
			if dg, ok := m[name]; ok {
				return dg, true
			}
			if !strings.HasPrefix(name, "/") {
				dg, ok := m["/Common/"+name]
				return dg, ok
			}
			return nil, false
		},
	}
	rt.env.HAStatus, rt.env.CPUUsage = rt.haStatus, rt.cpuUsage // hook_rules_ha.go
	rt.env.LSN = lsnTables{&rt.flows}                           // hook_lsn_rules.go
	return rt.env
}

// logRule writes a rule's log line at the level its facility names
// (local0.err, local0.warning, local0.debug; anything else is info).
func logRule(log *slog.Logger, facility, line string) {
	lvl := slog.LevelInfo
	_, sev, _ := strings.Cut(facility, ".")
	switch sev {
	case "emerg", "alert", "crit", "err", "error":
		lvl = slog.LevelError
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "debug":
		lvl = slog.LevelDebug
	}
	log.Log(context.Background(), lvl, line)
}

// program returns the program for a rule list, building it (and running
// its RULE_INIT) when the list or a rule's text is new.
func (rt *ruleRuntime) program(log *slog.Logger, key string, list []*rules.Rule) *rules.Program {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if p := rt.progs[key]; p != nil {
		return p
	}
	p := rules.NewProgram(rt.environment(log), list...)
	// A RULE_INIT failure is logged by the engine; the rules still run, as
	// on BIG-IP, with whatever RULE_INIT managed to set.
	p.Init()
	if rt.progs == nil {
		rt.progs = map[string]*rules.Program{}
	}
	rt.progs[key] = p
	return p
}

// keep drops the programs the running configuration no longer uses
// (flows that still run one keep it alive).
func (rt *ruleRuntime) keep(used map[string]bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for k := range rt.progs {
		if !used[k] {
			delete(rt.progs, k)
		}
	}
}

// dataGroupSet is a configuration's internal data groups as `class`
// commands see them, and those left out.
type dataGroupSet struct {
	m      map[string]*rules.DataGroup
	unused []unusedDataGroup
}

// unusedDataGroup is a data group whose records do not fit its type.
type unusedDataGroup struct {
	name string
	err  error
}

// dataGroups reads the internal data groups; one whose keys do not fit its
// type is left out (class commands then say it is missing), and logged
// when the configuration goes in service.
func dataGroups(s *objects.Schema, cfg *objects.Config) dataGroupSet {
	out := dataGroupSet{m: map[string]*rules.DataGroup{}}
	for _, o := range cfg.Of(dataGroupInternal) {
		typ := dataGroupTypeOf(dataGroupType.Effective(cfg, o))
		var recs []rules.Record
		if v := dataGroupRecords.Get(o); v != nil {
			for _, it := range v.Items {
				r := rules.Record{Key: it.Name}
				if d := dataGroupRecordData.In(it); d != nil {
					r.Value = d.Str
				}
				recs = append(recs, r)
			}
		}
		dg, err := rules.NewDataGroup(o.Name, typ, recs)
		if err != nil {
			out.unused = append(out.unused, unusedDataGroup{o.Name, err})
			continue
		}
		out.m[o.Name] = dg
	}
	return out
}

// ruleList is one virtual's compiled rules, in list order, and the key
// its program is shared under (every rule's name and text).
type ruleList struct {
	key  string
	list []*rules.Rule
}

// ruleBinder attaches rules to virtual servers during one translation.
// With an engine it compiles through the engine's cache and only records
// each virtual's list: the programs are built (and RULE_INIT run) when the
// translation goes in service, so translating for a check runs nothing.
// Without an engine (Translate) rules are compiled and their programs
// built at once, with an Env of their own.
type ruleBinder struct {
	e       *Engine
	pending map[*dataplane.Virtual]ruleList
	env     *rules.Env // standalone only
	// icap are the internal virtual servers' rule lists for their ICAP
	// exchanges (translate_icaprules.go), built by start as pending's
	// are; icapBy finds each internal virtual's by name (nil: none).
	icap   map[*icapRules]ruleList
	icapBy map[string]*icapRules
	// pcp are the pcp profiles' rules for the lsn pools' PCP servers
	// (translate_pcprules.go), built by start as pending's are; pcpBy
	// finds each by the rule's name.
	pcp   map[*pcpRules]ruleList
	pcpBy map[string]*pcpRules
	// notes are the translation's warnings on what runs (translate.go).
	notes []string
	// auth are the virtual servers' auth profiles (translate_auth.go).
	auth authSet
	// sflow are the http virtuals' sFlow settings (hook_sflow.go).
	sflow []sflowVirtual
}

// compileNamed compiles the rule named n (through the engine's cache
// when there is an engine) and gives its part of a rule list's key. A
// rule that only uses what openltm lacks is a *keptRuleError carrying
// the note; any other failure says the rule does not compile.
func (b *ruleBinder) compileNamed(s *objects.Schema, cfg *objects.Config, n string) (*rules.Rule, string, error) {
	o := cfg.Lookup(s, specRule, n)
	if o == nil {
		return nil, "", fmt.Errorf("rule %s does not exist", n)
	}
	def := ruleDefinition.Str(o)
	var r *rules.Rule
	var err error
	if b.e != nil {
		r, err = b.e.rules.compile(o.Name, def)
	} else {
		r, err = rules.Compile(o.Name, def)
	}
	if err != nil {
		if note, ok := ruleNotActedOn(o.Name, err); ok {
			return nil, "", &keptRuleError{errors.New(note)}
		}
		return nil, "", fmt.Errorf("rule %s does not compile", o.Name)
	}
	return r, o.Name + "\x00" + def + "\x01", nil
}

// attach gives v its policies' rules (pre, run first) and the rule list
// names, or says why it cannot have them; it returns the compiled rules.
func (b *ruleBinder) attach(s *objects.Schema, cfg *objects.Config, v *dataplane.Virtual, pre []*compiledPolicy, names []string) ([]*rules.Rule, error) {
	list := make([]*rules.Rule, 0, len(pre)+len(names))
	var key strings.Builder
	named := make([]*rules.Rule, 0, len(names))
	var namedKey strings.Builder
	recording := false
	for _, n := range names {
		r, key1, err := b.compileNamed(s, cfg, n)
		if err != nil {
			return nil, err
		}
		named = append(named, r)
		namedKey.WriteString(key1)
		recording = recording || r.UsesPolicyCommands()
	}
	for _, p := range pre {
		r, tcl := p.rule, p.c.Tcl
		if recording { // the iRules ask which policy rules matched (POLICY::)
			var err error
			if r, tcl, err = p.recording(); err != nil {
				return nil, fmt.Errorf("policy %s does not compile: %v", p.info.Name, err)
			}
		}
		list = append(list, r)
		key.WriteString(r.Name + "\x00" + tcl + "\x01")
	}
	list = append(list, named...)
	key.WriteString(namedKey.String())
	if b.e != nil {
		b.pending[v] = ruleList{key: key.String(), list: list}
		return list, nil
	}
	if b.env == nil {
		b.env = &rules.Env{Log: func(f, l string) { logRule(slog.Default(), f, l) }}
	}
	p := rules.NewProgram(b.env, list...)
	p.Init()
	v.Rules = dataplane.NewRules(p)
	return list, nil
}

// ltmTranslation is one configuration translated for the dataplane, with
// what its rules need to run: made once per commit, in the check, and put
// in service as it is.
type ltmTranslation struct {
	dc *dataplane.Config
	// sflow is the sFlow receivers and data sources (hook_sflow.go).
	sflow   *sflowPlan
	skipped []string
	// kept is what openltm does not act on yet; warned of, never refused.
	kept []string
	// notes are warnings on what runs as configured (a geo entry with
	// no database loaded): said by the commit that brings them.
	notes []string
	// refused is what BIG-IP refuses whatever the source (a rule's HTTP
	// events on a virtual without an http profile): also in skipped, it
	// is refused by a load too, where skipped things are kept.
	refused []string
	// rules are the rule lists of dc's virtual servers, whose programs
	// start builds.
	rules map[*dataplane.Virtual]ruleList
	// icap are the internal virtual servers' rule lists for their ICAP
	// exchanges, whose programs start builds too.
	icap map[*icapRules]ruleList
	// pcp are the pcp profiles' rules (translate_pcprules.go).
	pcp map[*pcpRules]ruleList
	dgs dataGroupSet
	// vlanTags are the net vlans' tags by interface index.
	vlanTags map[int]int
	// ifiles are the ltm ifiles `ifile` commands read.
	ifiles ifileSet
	// stats are the statistics profiles' fields (STATS::), by profile.
	stats map[string][]string
	// logs are the log publishers HSL::open -publisher opens.
	logs logTranslation
	// resolvers are the net dns-resolvers RESOLVER::name_lookup asks,
	// by full path.
	resolvers map[string]fwdproxy.ResolverConfig
	// tgs are the traffic groups of dc's virtual servers' addresses,
	// which traffic_group answers.
	tgs map[string]string
	// classes are the virtuals' traffic classes (trafficclass.go).
	classes map[string][]rules.TrafficClass
	// floats are the virtual servers' floating traffic groups
	// (HA::status).
	floats map[string]string
	// auth are the virtual servers' auth profiles, which AUTH::start
	// opens sessions with (translate_auth.go).
	auth authSet
	// aaa are the internal virtual servers with a radius-aaa profile
	// (translate_aaa.go).
	aaa aaaSet
}

// translate is Translate with the engine's compiled rules, and without
// building programs or running anything: start does that when the
// translation goes in service.
func (e *Engine) translate(cfg *objects.Config) *ltmTranslation {
	b := &ruleBinder{e: e, pending: map[*dataplane.Virtual]ruleList{}}
	dc, skipped, kept, refused := translate(e.schema, cfg, b)
	e.dropStandby(cfg, dc) // hook_cluster.go: floating addresses of a standby
	for v := range b.pending {
		if dc.Virtuals[v.Name] != v {
			delete(b.pending, v) // left out after its rules were attached
		}
	}
	logs := logPublishers(cfg) // translate_logpub.go
	skipped, refused, kept = append(skipped, logs.refused...), append(refused, logs.refused...), append(kept, logs.kept...)
	dgs := dataGroups(e.schema, cfg)
	e.externalDataGroups(cfg, &dgs)          // translate_datagroup_ext.go
	aaaSet, aaaKept := e.aaaServices(cfg, b) // translate_aaa.go
	kept = append(kept, aaaKept...)
	sfp, sfRefused := sflowPlanOf(cfg, b.sflow) // hook_sflow.go
	skipped, refused = append(skipped, sfRefused...), append(refused, sfRefused...)
	return &ltmTranslation{aaa: aaaSet, dc: dc, skipped: skipped, kept: kept, notes: b.notes, refused: refused, rules: b.pending, icap: b.icap, pcp: b.pcp, dgs: dgs, ifiles: e.ifiles(cfg), stats: statsProfiles(cfg), logs: logs,
		resolvers: e.netResolvers(cfg), vlanTags: vlanTags(cfg), tgs: virtualTrafficGroups(cfg, dc), classes: virtualTrafficClasses(cfg), floats: virtualFloats(cfg, dc), auth: b.auth, sflow: sfp}
}

// netResolvers are cfg's net dns-resolvers as rules ask them; one whose
// settings do not read is left out (RESOLVER::name_lookup naming it is
// a Tcl error), as the explicit proxy refuses it where it names it.
func (e *Engine) netResolvers(cfg *objects.Config) map[string]fwdproxy.ResolverConfig {
	out := map[string]fwdproxy.ResolverConfig{}
	for _, r := range cfg.Of(dnsResolver) {
		rc, err := resolverConfig(func(p *objects.Prop) string {
			if v := cfg.Effective(r, p.Name); v != nil {
				return v.Str
			}
			return dnsResolverDefaults[p.Name]
		}, dnsResolverZones.Get(r))
		if err != nil {
			continue
		}
		rc.Name, rc.RootHints = r.Name, e.opts.RootHints
		out[r.Name] = rc
	}
	return out
}

// start readies the rules of a translation about to go in service: it
// makes its data groups what `class` commands see, gives each virtual the
// running program of its rule list (building it, and running its
// RULE_INIT, when the list or a rule's text is new) and drops the
// programs no virtual uses. The returned function puts the data groups
// and programs back as they were, for a commit that is undone; the
// programs it had dropped run their RULE_INIT again, as rules loaded
// again do.
func (rt *ruleRuntime) start(log *slog.Logger, tr *ltmTranslation) (undo func()) {
	rt.mu.Lock()
	rt.environment(log)
	prevProgs := make(map[string]*rules.Program, len(rt.progs))
	for k, p := range rt.progs {
		prevProgs[k] = p
	}
	rt.mu.Unlock()
	prevDGs := rt.dgs.Load()
	for _, u := range tr.dgs.unused {
		log.Warn("data group not usable by rules", "data-group", u.name, "err", u.err)
	}
	m := tr.dgs.m
	rt.dgs.Store(&m)
	prevIfiles := rt.ifiles.Load()
	ifs := tr.ifiles
	rt.ifiles.Store(&ifs)
	prevTGs := rt.vsTGs.Load()
	tgs := tr.tgs
	rt.vsTGs.Store(&tgs)
	prevClasses := rt.vsClasses.Load()
	classes := tr.classes
	rt.vsClasses.Store(&classes)
	prevFloats := rt.vsFloat.Load()
	floats := tr.floats
	rt.vsFloat.Store(&floats)
	prevVS := rt.vsAddrs.Load()
	vs := map[string]netip.AddrPort{}
	if tr.dc != nil {
		for name, v := range tr.dc.Virtuals {
			vs[name] = v.Destination
		}
	}
	rt.vsAddrs.Store(&vs)
	prevRes := rt.resolvers.Load()
	res := make(map[string]*fwdproxy.Resolver, len(tr.resolvers))
	for name, rc := range tr.resolvers {
		res[name] = rt.resolverSet.get(rc)
	}
	rt.resolvers.Store(&res)
	prevTags := rt.vlanTags.Load()
	tags := tr.vlanTags
	rt.vlanTags.Store(&tags)
	prevPubs := rt.hsl.pubs.Load()
	if tr.logs.pubs != nil {
		tr.logs.pubs.Local = rt.env.Log
		rt.hsl.pubs.Store(tr.logs.pubs)
		if x := rt.hsl.ipfix.Load(); x != nil {
			x.retain(tr.logs.pubs) // hook_ipfix.go
		}
	}
	prevElements := rt.hsl.elements.Load()
	rt.hsl.elements.Store(tr.logs.elements)
	prevAuth := rt.auth.Load()
	rt.auth.Store(newAuthRuntime(tr.auth, prevAuth, rt.env.Log)) // hook_auth.go
	prevStats := rt.statsDefs
	rt.env.Stats.Define(tr.stats)
	rt.statsDefs = tr.stats
	used := make(map[string]bool, len(tr.rules))
	for v, rl := range tr.rules {
		v.Rules = dataplane.NewRules(rt.program(log, rl.key, rl.list))
		used[rl.key] = true
	}
	for ir, rl := range tr.icap {
		ir.prog.Store(rt.program(log, rl.key, rl.list))
		used[rl.key] = true
	}
	for pr, rl := range tr.pcp {
		pr.prog.Store(rt.program(log, rl.key, rl.list))
		used[rl.key] = true
	}
	for ar, rl := range tr.aaa.rules {
		ar.prog.Store(rt.program(log, rl.key, rl.list))
		used[rl.key] = true
	}
	prevAAA := rt.aaa.Load()
	rt.startAAA(tr.aaa) // translate_aaa.go
	rt.keep(used)
	return func() {
		rt.dgs.Store(prevDGs)
		rt.ifiles.Store(prevIfiles)
		rt.vsAddrs.Store(prevVS)
		rt.resolvers.Store(prevRes)
		rt.vlanTags.Store(prevTags)
		rt.vsTGs.Store(prevTGs)
		rt.vsClasses.Store(prevClasses)
		rt.vsFloat.Store(prevFloats)
		rt.hsl.pubs.Store(prevPubs)
		rt.hsl.elements.Store(prevElements)
		rt.auth.Store(prevAuth)
		rt.aaa.Store(prevAAA)
		rt.env.Stats.Define(prevStats)
		rt.statsDefs = prevStats
		rt.mu.Lock()
		rt.progs = prevProgs
		rt.mu.Unlock()
		for k, p := range prevProgs {
			if !used[k] {
				p.Init()
			}
		}
	}
}

// statics is the rules' static:: namespace with static::tcl_platform's
// tmmVersion set to the version openltm's configuration files carry, so
// that rules testing it take the branch for that BIG-IP version.
func statics() *rules.Statics {
	s := rules.NewStatics()
	s.SetPlatform(rules.Platform{TMMVersion: objects.Version})
	return s
}
