package daemon

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// TranslateGSLB turns the stored gtm objects into the GSLB server's
// resolved configuration. It mirrors Translate for the LTM side: an object
// whose reference dangles (kept by a partial load) is left out with the
// reason in skipped, and so is whatever hangs on it (a pool member whose
// virtual server was left out); a value the GSLB cannot act on at all (a
// destination without an address, a fallback-ip that is not an address)
// is an error, and the whole configuration is refused.
func TranslateGSLB(s *objects.Schema, cfg *objects.Config) (gc *gslb.Config, skipped []string, err error) {
	gc, skipped, kept, err := translateGSLB(s, cfg, rules.Compile)
	return gc, append(skipped, kept...), err
}

// translateGSLB is TranslateGSLB with the compiler of the rules wide IPs
// and listeners name: the engine passes its cache, so a rule the rules
// hook compiled for this commit is not compiled again.
// kept lists what is left out for an F5 feature openltm does not act on
// yet (a rule using a command it lacks): warned of, never refused.
func translateGSLB(s *objects.Schema, cfg *objects.Config, compile func(name, body string) (*rules.Rule, error)) (gc *gslb.Config, skipped, kept []string, err error) {
	t := &gslbTranslator{s: s, cfg: cfg, compile: compile, gc: &gslb.Config{
		Datacenters: map[string]*gslb.Datacenter{}, Links: map[string]*gslb.Link{},
		Servers: map[string]*gslb.Host{}, Pools: map[string]*gslb.Pool{},
		WideIPs: map[string]*gslb.WideIP{}, Regions: map[string]*gslb.Region{},
	}}
	steps := []func(){t.settings, t.datacenters, t.links, t.servers, t.probers, t.pools, t.wideIPs, t.distApps, t.regions, t.topology, t.listeners, t.zones}
	for _, step := range steps {
		step()
		if t.err != nil {
			return nil, t.skipped, t.kept, t.err
		}
	}
	return t.gc, t.skipped, t.kept, nil
}

type gslbTranslator struct {
	s       *objects.Schema
	compile func(name, body string) (*rules.Rule, error)
	cfg     *objects.Config
	gc      *gslb.Config
	skipped []string
	kept    []string
	err     error
}

func (t *gslbTranslator) skip(o *objects.Object, format string, args ...any) {
	t.skipped = append(t.skipped, about(o, format, args...))
}

// fail records the first error, worded as BIG-IP's configuration errors.
func (t *gslbTranslator) fail(format string, args ...any) {
	if t.err == nil {
		t.err = objects.Invalid(format, args...)
	}
}

// e is the effective value of a property (its default when unset).
func (t *gslbTranslator) e(o *objects.Object, p *objects.Prop) string { return p.Effective(t.cfg, o) }

func disabled(o *objects.Object) bool { return gtmEnabled.Str(o) == "disabled" }

// limit is a limit's value when its -status is enabled, else 0 (none).
func limit(value, status string) int64 {
	if status != "enabled" {
		return 0
	}
	return int64(atoi(value))
}

// ref resolves a reference property's value to the object's full path;
// ok is false when it names something that does not exist.
func (t *gslbTranslator) ref(spec []string, name string) (string, bool) {
	if name == "" || name == "none" {
		return "", true
	}
	o := t.cfg.Lookup(t.s, spec, name)
	if o == nil {
		return "", false
	}
	return o.Name, true
}

func (t *gslbTranslator) settings() {
	st := &t.gc.Settings
	if o := t.cfg.Get(gtmLBSettings, ""); o != nil {
		st.TopologyOrderOnly = t.e(o, gtmTopologyLongest) == "no"
		st.TopologyDenyZeroScores = t.e(o, gtmTopologyZero) == "no"
		st.NoVerifyVS = t.e(o, gtmVerifyVS) == "no"
		st.IgnorePathTTL = t.e(o, gtmIgnorePathTTL) == "yes"
		st.RespectFallback = t.e(o, gtmRespectFallback) == "yes"
	}
	if o := t.cfg.Get(gtmMetrics, ""); o != nil {
		st.PathTTL = seconds(t.e(o, metricsPathTTL))
		st.ProbeTimeout = seconds(t.e(o, metricsProbeTimeout))
		st.ProbePort = uint16(atoi(t.e(o, metricsProbePort)))
		st.LDNSPrefix4 = atoi(t.e(o, metricsPrefix4))
		st.MaxProbes = atoi(t.e(o, metricsMaxProbes))
		st.InactiveLDNSTTL = seconds(t.e(o, metricsInactiveLDNS))
		st.InactivePathsTTL = seconds(t.e(o, metricsInactivePaths))
		if v := metricsProbeProtos.Get(o); v != nil && len(v.List) > 0 {
			st.ProbeProtocols = []string{}
			for _, p := range v.List {
				if p == "dns_dot" || p == "dns_rev" || p == "tcp" {
					st.ProbeProtocols = append(st.ProbeProtocols, p)
				}
			}
			if len(st.ProbeProtocols) == 0 {
				t.fail("gtm global-settings metrics: ldns-probe-protocols %s: openltm probes with dns_dot, dns_rev and tcp only", strings.Join(v.List, " "))
			}
		}
		if v := metricsCollectProtos.Get(o); v != nil {
			// metrics-collection-protocols: tried first by each path
			// measurement (dataplane/gslb Settings.MetricsProtocols);
			// udp is BIG-IP's too, not run by openltm (what it sends is
			// not documented).
			var not []string
			st.MetricsProtocols = []string{}
			for _, p := range v.List {
				if p == "icmp" || p == "dns_dot" || p == "dns_rev" || p == "tcp" {
					st.MetricsProtocols = append(st.MetricsProtocols, p)
				} else {
					not = append(not, p)
				}
			}
			if len(not) > 0 {
				t.kept = append(t.kept, about(o, "metrics-collection-protocols %s: openltm measures paths with icmp, dns_dot, dns_rev and tcp only, and skips these", strings.Join(not, " ")))
			}
		}
		if atoi(t.e(o, metricsProbePort)) > 65535 {
			t.fail("gtm global-settings metrics: ldns-probe-port %s is not a port", t.e(o, metricsProbePort))
		}
	}
	if o := t.cfg.Get(gtmMetricsExcl, ""); o != nil {
		// metrics-exclusions: LDNS addresses never probed (the reader
		// checked each is an address).
		if v := metricsExclAddrs.Get(o); v != nil {
			for _, a := range v.List {
				if ad, ok := objects.NodeAddr(a); ok {
					st.NoProbe = append(st.NoProbe, ad.Unmap())
				}
			}
		}
	}
	if o := t.cfg.Get(gtmGeneral, ""); o != nil {
		st.StaticPersistCIDR4 = atoi(t.e(o, generalPersistCIDR4))
		st.StaticPersistCIDR6 = atoi(t.e(o, generalPersistCIDR6))
		st.NoDrainPersistent = t.e(o, generalDrain) == "no"
		st.MonitorDisabled = t.e(o, generalMonitorOff) == "yes"
		st.NoCacheLDNS = t.e(o, generalCacheLDNS) == "no"
	}
}

func (t *gslbTranslator) datacenters() {
	for _, o := range t.cfg.Of(gtmDatacenter) {
		t.gc.Datacenters[o.Name] = &gslb.Datacenter{Name: o.Name, Disabled: disabled(o)}
	}
}

func (t *gslbTranslator) links() {
	for _, o := range t.cfg.Of(gtmLink) {
		dc, ok := t.ref(specDatacenter, linkDatacenter.Str(o))
		if !ok {
			t.skip(o, "datacenter %s does not exist", linkDatacenter.Str(o))
			continue
		}
		if dc == "" {
			t.fail("The link (%s) must be in a datacenter.", o.Name)
			return
		}
		l := &gslb.Link{
			Name: o.Name, Datacenter: dc, Disabled: disabled(o),
			LimitInboundBps:  limit(t.e(o, linkInbound), t.e(o, linkInboundStatus)),
			LimitOutboundBps: limit(t.e(o, linkOutbound), t.e(o, linkOutboundStatus)),
			LimitTotalBps:    limit(t.e(o, linkTotal), t.e(o, linkTotalStatus)),
			Ratio:            atoi(t.e(o, linkRatio)),
		}
		if u := linkUplink.Str(o); u != "" && u != "none" {
			a, err := netip.ParseAddr(u)
			if err != nil {
				t.fail("The link (%s) has an uplink-address (%s) that is not an IP address.", o.Name, u)
				return
			}
			l.Prober = a
		}
		if rule := t.e(o, linkMonitor); rule != "" && rule != "none" {
			l.Monitor = t.monitor(rule)
			if l.Monitor.Spec == nil {
				t.kept = append(t.kept, about(o, "its monitor %s (the GSLB runs gateway-icmp, tcp and the other probes it has, not bigip_link)", rule))
			}
		}
		if v := linkRouterAddrs.Get(o); v != nil {
			for _, it := range v.Items {
				if a, err := netip.ParseAddr(it.Name); err == nil {
					l.RouterAddresses = append(l.RouterAddresses, a)
				}
			}
		}
		t.gc.Links[o.Name] = l
	}
}

// serverAddrs reads a server's `addresses { 10.0.0.5 { device-name x } }`
// items, then BIG-IP 13's `devices { x { addresses { 10.0.0.5 { } } } }`,
// in order (the item names are addresses, checked when read).
func serverAddrs(o *objects.Object) []netip.Addr {
	var out []netip.Addr
	add := func(v *objects.Value) {
		if v == nil {
			return
		}
		for _, it := range v.Items {
			if a, err := netip.ParseAddr(it.Name); err == nil && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	add(serverAddresses.Get(o))
	if v := serverDevices.Get(o); v != nil {
		for _, d := range v.Items {
			add(d.Props["addresses"])
		}
	}
	return out
}

// monitor maps a gtm monitor rule onto the probe the GSLB runs itself:
// a gtm monitor the GSLB runs (http, https, tcp, udp, tcp-half-open,
// gateway-icmp, and the application monitors ftp, imap, ldap, sip, soap,
// the SQL ones ...: translate_gslb_monitors.go), or an ltm monitor kind the
// LTM runs (http with its send and recv, https, tcp, udp, dns, ...),
// compiled exactly as for LTM pool members; either probes the virtual
// server's destination, or the monitor's own when it names one. Anything
// else (bigip, none, the kinds kept as oracle and wmi) leaves the status
// to reported metrics. Of a rule naming several, the first the GSLB can
// run decides [M: BIG-IP requires them all].
func (t *gslbTranslator) monitor(rule string) gslb.Monitor {
	for _, n := range objects.MonitorNames(rule) {
		o := t.cfg.Lookup(t.s, specAnyMonitor, n)
		if o == nil || o.Kind == nil {
			continue // missing, or a kind kept without being run (gtm monitor bigip)
		}
		typ, gtm := gtmMonitorRun[o.Kind]
		if !gtm {
			for _, r := range monitorRun {
				if r.kind == o.Kind {
					typ = dataplane.MonitorType(r.typ)
				}
			}
		}
		if typ == "" || typ == "inband" {
			continue
		}
		lt := &translator{s: t.s, cfg: t.cfg, dc: &dataplane.Config{Monitors: map[string]*dataplane.Monitor{}}}
		lt.monitor(o, typ)
		m := lt.dc.Monitors[o.Name]
		if m == nil {
			t.kept = append(t.kept, lt.kept...)
			t.kept = append(t.kept, lt.skipped...)
			continue // kept without being run (a dns monitor without qname)
		}
		spec, err := dataplane.CompileMonitor(o.Name, m)
		if err == nil && gtm {
			err = t.gtmTiming(o, spec) // translate_gslb_monitors.go
		}
		dest := m.Destination
		if err == nil && spec.SNMP != nil {
			dest, err = t.snmpAgentPort(o, spec, dest) // translate_gslb_monitors.go
		}
		if err != nil {
			t.kept = append(t.kept, about(o, "%v; not run by the GSLB", err))
			continue
		}
		return gslb.Monitor{Spec: spec, Destination: dest}
	}
	return gslb.Monitor{}
}

// memberMonitor is the monitor a gtm pool probes one member with: the
// member's own, else the pool's; `default` and `none` add no probe to the
// virtual server's own monitor [M: both must find it up].
func (t *gslbTranslator) memberMonitor(pool, own string) gslb.Monitor {
	rule := own
	if rule == "" || rule == "default" {
		rule = pool
	}
	if rule == "" || rule == "default" || rule == "none" {
		return gslb.Monitor{}
	}
	return t.monitor(rule)
}

func (t *gslbTranslator) servers() {
	for _, o := range t.cfg.Of(gtmServer) {
		dc, ok := t.ref(specDatacenter, serverDatacenter.Str(o))
		if !ok {
			t.skip(o, "datacenter %s does not exist", serverDatacenter.Str(o))
			continue
		}
		if dc == "" {
			t.fail("The server (%s) must be in a datacenter.", o.Name)
			return
		}
		h := &gslb.Host{
			Name: o.Name, Datacenter: dc, Disabled: disabled(o),
			Addresses:           serverAddrs(o),
			LimitMaxConnections: limit(t.e(o, serverMaxConns), t.e(o, serverMaxConnsStatus)),
			LimitCPUUsage:       limit(t.e(o, serverCPU), t.e(o, serverCPUStatus)),
			LimitMemAvail:       limit(t.e(o, serverMem), t.e(o, serverMemStatus)),
			LimitMaxBps:         limit(t.e(o, serverBps), t.e(o, serverBpsStatus)),
			LimitMaxPps:         limit(t.e(o, serverPps), t.e(o, serverPpsStatus)),
		}
		if h.LimitCPUUsage > 100 {
			t.fail("The server (%s) has limit-cpu-usage %d; it is a percentage, 0 to 100.", o.Name, h.LimitCPUUsage)
			return
		}
		if (h.LimitCPUUsage > 0 || h.LimitMemAvail > 0) && t.e(o, serverProduct) != "bigip" {
			// Only a bigip server reports its CPU and memory (over
			// iQuery); openltm has no SNMP to ask other hosts.
			t.kept = append(t.kept, about(o, "its limit-cpu-usage and limit-mem-avail (a %s reports no CPU or memory; a product bigip server does, over iQuery)", t.e(o, serverProduct)))
		}
		serverMon := t.e(o, serverMonitor)
		if v := serverVirtuals.Get(o); v != nil {
			for _, it := range v.Items {
				d := vsDestination.StrIn(it)
				if d == "" {
					t.fail("The virtual server (%s) of server (%s) has no destination.", it.Name, o.Name)
					return
				}
				dst, err := objects.ParseDest(d)
				if err != nil || !dst.Addr.IsValid() || dst.Addr.IsUnspecified() {
					t.fail("The virtual server (%s) of server (%s) has destination %s, which has no address to answer with.", it.Name, o.Name, d)
					return
				}
				x := &gslb.VirtualServer{
					Name: it.Name, Destination: dst.AddrPort(),
					Disabled:            vsEnabled.StrIn(it) == "disabled",
					LimitMaxConnections: limit(vsMaxConns.StrIn(it), vsMaxConnsStatus.StrIn(it)),
					LimitMaxBps:         limit(vsMaxBps.StrIn(it), vsMaxBpsStatus.StrIn(it)),
				}
				ln, ok := t.ref(specLink, vsLink.StrIn(it))
				if !ok {
					t.skip(o, "virtual server %s: link %s does not exist", it.Name, vsLink.StrIn(it))
					continue
				}
				if ln != "" && t.gc.Links[ln] == nil {
					t.skip(o, "virtual server %s: link %s is left out", it.Name, ln)
					continue
				}
				x.Link = ln
				mon := vsMonitor.StrIn(it)
				if mon == "default" {
					mon = serverMon
				}
				x.Monitor = t.monitor(mon)
				h.VirtualServers = append(h.VirtualServers, x)
			}
		}
		t.gc.Servers[o.Name] = h
	}
}

// splitGTMMember splits a gtm pool member, /Common/server:vs, into the
// server's full path and the virtual server's name.
func splitGTMMember(name string) (server, vs string, ok bool) {
	i := strings.IndexByte(name, ':')
	if i <= 0 || i == len(name)-1 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// hostVS finds a server's virtual server by the name a member gives it
// (as typed, or as a full path in the server's folder).
func hostVS(h *gslb.Host, name string) *gslb.VirtualServer {
	for _, v := range h.VirtualServers {
		if v.Name == name || objects.FullPath(path.Dir(h.Name), v.Name) == name {
			return v
		}
	}
	return nil
}

func (t *gslbTranslator) pools() {
	for _, k := range gtmTyped {
		t.poolsOf(k.t, k.pool)
		if t.err != nil {
			return
		}
	}
}

func (t *gslbTranslator) poolsOf(typ gslb.RRType, kind *objects.Kind) {
	for _, o := range t.cfg.Of(kind) {
		p := &gslb.Pool{
			Name: o.Name, Type: typ, Disabled: disabled(o),
			Mode:                gslb.Mode(t.e(o, gpoolLBMode)),
			Alternate:           gslb.Mode(t.e(o, gpoolAlternate)),
			Fallback:            gslb.Mode(t.e(o, gpoolFallback)),
			TTL:                 uint32(atoi(t.e(o, gpoolTTL))),
			MaxAnswers:          atoi(t.e(o, gpoolMaxAnswers)),
			NoVerify:            t.e(o, gpoolVerify) == "disabled",
			LimitMaxConnections: limit(t.e(o, gpoolMaxConns), t.e(o, gpoolMaxConnsStatus)),
			LimitMaxBps:         limit(t.e(o, gpoolMaxBps), t.e(o, gpoolMaxBpsStatus)),
			LimitMaxPps:         limit(t.e(o, gpoolMaxPps), t.e(o, gpoolMaxPpsStatus)),
			QoS: &gslb.QoSWeights{
				RTT: atoi(t.e(o, gpoolQoSRTT)), Topology: atoi(t.e(o, gpoolQoSTopology)),
				PacketRate: atoi(t.e(o, gpoolQoSPacketRate)), Kbps: atoi(t.e(o, gpoolQoSKbps)),
				VSCapacity: atoi(t.e(o, gpoolQoSCapacity)), VSScore: atoi(t.e(o, gpoolQoSScore)),
				LinkCapacity: atoi(t.e(o, gpoolQoSLink)), HitRatio: atoi(t.e(o, gpoolQoSHitRatio)), Hops: atoi(t.e(o, gpoolQoSHops)),
			},
			ManualResume: t.e(o, gpoolManualResume) == "enabled",
			MinUpMode:    gslb.MinUpMode(t.e(o, gpoolMinUpMode)),
			MinUpValue:   atoi(t.e(o, gpoolMinUpValue)),
			DynamicRatio: t.e(o, gpoolDynamicRatio) == "enabled",
		}
		if !alternateModes[p.Alternate] {
			t.fail("The pool (%s) cannot use %s as its alternate-mode: only static methods are allowed.", o.Name, p.Alternate)
			return
		}
		if p.Mode == gslb.None {
			t.fail("The pool (%s) cannot use none as its load-balancing-mode.", o.Name)
			return
		}
		if fip := t.e(o, gpoolFallbackIP); kind.Prop("fallback-ip") != nil && fip != "" && fip != "any" && fip != "any6" {
			a, err := netip.ParseAddr(fip)
			if err != nil {
				t.fail("The pool (%s) has a fallback-ip (%s) that is not an IP address.", o.Name, fip)
				return
			}
			p.FallbackIP = a
		}
		if p.Fallback == gslb.FallbackIP && !p.FallbackIP.IsValid() {
			t.fail("The pool (%s) uses fallback-mode fallback-ip without a fallback-ip address.", o.Name)
			return
		}
		if v := gpoolMembers.Get(o); v != nil && (typ == gslb.TypeA || typ == gslb.TypeAAAA) {
			poolMon := t.e(o, gpoolMonitor)
			for _, it := range v.Items {
				srv, vsName, ok := splitGTMMember(it.Name)
				if !ok {
					t.fail("The pool member (%s) of pool (%s) is not written server:virtual-server.", it.Name, o.Name)
					return
				}
				so := t.cfg.Lookup(t.s, specGTMServer, srv)
				if so == nil {
					t.skip(o, "member %s: server %s does not exist", it.Name, srv)
					continue
				}
				h := t.gc.Servers[so.Name]
				if h == nil {
					t.skip(o, "member %s: server %s is left out", it.Name, so.Name)
					continue
				}
				vs := hostVS(h, vsName)
				if vs == nil {
					t.skip(o, "member %s: server %s has no virtual server %s", it.Name, so.Name, vsName)
					continue
				}
				p.Members = append(p.Members, gslb.PoolMember{
					Server: so.Name, VirtualServer: vs.Name,
					Order:               atoi(gmemberOrder.StrIn(it)),
					Ratio:               atoi(gmemberRatio.StrIn(it)),
					Disabled:            gmemberEnabled.StrIn(it) == "disabled",
					LimitMaxConnections: limit(gmemberMaxConns.StrIn(it), gmemberMaxConnsStat.StrIn(it)),
					Monitor:             t.memberMonitor(poolMon, gmemberMonitor.StrIn(it)),
				})
			}
		}
		if typ != gslb.TypeA && typ != gslb.TypeAAAA {
			t.nameMembers(o, p)
			if t.err != nil {
				return
			}
		}
		t.gc.Pools[gslb.Key(typ, o.Name)] = p
	}
}

// alternateModes are the static methods BIG-IP allows as alternate-mode.
var alternateModes = map[gslb.Mode]bool{
	gslb.RoundRobin: true, gslb.ReturnToDNS: true, gslb.None: true, gslb.Ratio: true, gslb.Topology: true,
	gslb.StaticPersistence: true, gslb.GlobalAvailability: true, gslb.VirtualServerCapacity: true,
	gslb.PacketRate: true, gslb.DropPacket: true, gslb.FallbackIP: true, gslb.VirtualServerScore: true,
}

func (t *gslbTranslator) wideIPs() {
	for _, k := range gtmTyped {
		t.wideIPsOf(k.t, k.wideip, k.poolSpec)
	}
}

// failureRcodes are failure-rcode's values as DNS RCODEs.
var failureRcodes = map[string]int{
	"noerror": dns.RcodeSuccess, "formerr": dns.RcodeFormatError, "servfail": dns.RcodeServerFailure,
	"nxdomain": dns.RcodeNameError, "notimpl": dns.RcodeNotImplemented, "refused": dns.RcodeRefused,
}

func (t *gslbTranslator) wideIPsOf(typ gslb.RRType, kind *objects.Kind, poolSpec []string) {
	for _, o := range t.cfg.Of(kind) {
		w := &gslb.WideIP{
			Name: o.Name, Type: typ, Disabled: disabled(o),
			PoolLBMode:      gslb.Mode(t.e(o, wideipPoolLBMode)),
			Persistence:     t.e(o, wideipPersistence) == "enabled",
			PersistTTL:      seconds(t.e(o, wideipPersistTTL)),
			PersistCIDR4:    atoi(t.e(o, wideipPersistCIDR4)),
			PersistCIDR6:    atoi(t.e(o, wideipPersistCIDR6)),
			FailureResponse: t.e(o, wideipFailResponse) == "enabled",
			FailureRcode:    failureRcodes[t.e(o, wideipFailRcode)],
			FailureTTL:      uint32(atoi(t.e(o, wideipFailTTL))),
			FullResponse:    t.e(o, wideipMinimal) == "disabled",

			TopologyPreferECS: t.e(o, wideipPreferECS) == "enabled",
		}
		if v := wideipDecisionLog.Get(o); v != nil {
			var words []string
			for _, x := range v.List {
				if x != "none" {
					words = append(words, x)
				}
			}
			dl, err := gslb.ParseDecisionLog(words)
			if err != nil {
				t.fail("The wide IP (%s): %v.", o.Name, err)
				return
			}
			w.DecisionLog = dl
		}
		if v := wideipAliases.Get(o); v != nil {
			for _, a := range v.List {
				w.Aliases = append(w.Aliases, path.Base(a))
			}
		}
		if v := wideipPools.Get(o); v != nil {
			for _, it := range v.Items {
				if t.gc.Pools[gslb.Key(typ, it.Name)] == nil {
					t.skip(o, "pool %s does not exist", it.Name)
					continue
				}
				w.Pools = append(w.Pools, gslb.WideIPPool{Pool: gslb.Key(typ, it.Name), Order: atoi(wideipPoolOrder.StrIn(it)), Ratio: atoi(wideipPoolRatio.StrIn(it))})
			}
		}
		if v := wideipPoolsCNAME.Get(o); v != nil && (typ == gslb.TypeA || typ == gslb.TypeAAAA) {
			for _, it := range v.Items {
				if t.gc.Pools[gslb.Key(gslb.TypeCNAME, it.Name)] == nil {
					t.skip(o, "pool cname %s does not exist", it.Name)
					continue
				}
				w.CNAMEPools = append(w.CNAMEPools, gslb.WideIPPool{Pool: gslb.Key(gslb.TypeCNAME, it.Name), Order: atoi(wideipPoolOrder.StrIn(it)), Ratio: atoi(wideipPoolRatio.StrIn(it))})
			}
		}
		if lr := wideipLastResort.Str(o); lr != "" && lr != "none" {
			po := t.cfg.Lookup(t.s, poolSpec, lastResortName(lr, path.Dir(o.Name)))
			if po == nil || t.gc.Pools[gslb.Key(typ, po.Name)] == nil {
				t.skip(o, "last-resort-pool %s does not exist", lr)
			} else {
				w.LastResortPool = gslb.Key(typ, po.Name)
			}
		}
		rs, ok := t.rules(o, wideipRules)
		if !ok {
			continue
		}
		w.Rules = rs
		t.gc.WideIPs[gslb.Key(typ, o.Name)] = w
	}
}

// matches reads region members or one side of a topology record, as in a
// region's raw `region-members { subnet 10.0.0.0/8
// { } not pool /Common/p { } }` into matches.
func (t *gslbTranslator) matches(words []string, where string) ([]gslb.Match, error) {
	var out []gslb.Match
	for i := 0; i < len(words); i++ {
		m := gslb.Match{}
		if words[i] == "not" {
			m.Not = true
			i++
		}
		if i+1 >= len(words) {
			return nil, fmt.Errorf("%s: %q needs a value", where, strings.Join(words[i:], " "))
		}
		m.Kind = gslb.MatchKind(words[i])
		if m.Kind == "geoip-isp" {
			m.Kind = gslb.MatchISP
		}
		v := words[i+1]
		i++
		switch m.Kind {
		case gslb.MatchSubnet:
			p, err := netip.ParsePrefix(v)
			if err != nil {
				a, aerr := netip.ParseAddr(v)
				if aerr != nil {
					return nil, fmt.Errorf("%s: subnet %s is not an address/prefix", where, v)
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			m.Prefix = p.Masked()
		case gslb.MatchRegion, gslb.MatchDatacenter, gslb.MatchPool:
			m.Name = objects.FullPath("/Common", v)
		case gslb.MatchContinent, gslb.MatchCountry, gslb.MatchState, gslb.MatchISP:
			m.Name = v
		default:
			return nil, fmt.Errorf("%s: %q is not one of subnet, region, datacenter, pool, continent, country, state, isp", where, words[i-1])
		}
		out = append(out, m)
	}
	return out, nil
}

func (t *gslbTranslator) regions() {
	for _, o := range t.cfg.Of(gtmRegion) {
		var ws []string
		if v := regionMembers.Get(o); v != nil {
			for _, it := range v.Items {
				ws = append(ws, objects.MatchWords(it.Name)...)
			}
		}
		ms, err := t.matches(ws, "region-members")
		if err != nil {
			t.fail("The region (%s): %v.", o.Name, err)
			return
		}
		t.gc.Regions[o.Name] = &gslb.Region{Name: o.Name, Members: ms}
	}
}

// missing names the object a region or topology match refers to, when
// that object is missing from the translation.
func (t *gslbTranslator) missing(m gslb.Match) string {
	switch m.Kind {
	case gslb.MatchRegion:
		if t.gc.Regions[m.Name] == nil {
			return "region " + m.Name
		}
	case gslb.MatchDatacenter:
		if t.gc.Datacenters[m.Name] == nil {
			return "datacenter " + m.Name
		}
	case gslb.MatchPool:
		// A record names a pool by path: a pool of any type [M].
		for _, typ := range gslb.Types {
			if t.gc.Pools[gslb.Key(typ, m.Name)] != nil {
				return ""
			}
		}
		return "pool " + m.Name
	}
	return ""
}

func (t *gslbTranslator) topology() {
	// A region member naming a missing object is left out of the region.
	for _, r := range t.gc.Regions {
		kept := r.Members[:0]
		for _, m := range r.Members {
			if miss := t.missing(m); miss != "" {
				t.skipped = append(t.skipped, fmt.Sprintf("gtm region %s: %s does not exist", r.Name, miss))
				continue
			}
			kept = append(kept, m)
		}
		r.Members = kept
	}
	for _, o := range t.cfg.Of(gtmTopology) {
		ws := objects.MatchWords(o.Name)
		var ldns, server []string
		cur := &ldns
		for _, w := range ws {
			switch w {
			case "ldns:":
				cur = &ldns
			case "server:":
				cur = &server
			default:
				*cur = append(*cur, w)
			}
		}
		lm, err1 := t.matches(ldns, "ldns")
		sm, err2 := t.matches(server, "server")
		if err := errors.Join(err1, err2); err != nil {
			// A match kind the GSLB does not run (geoip-isp, ...): the
			// record is kept and left out, like a dangling reference.
			t.skip(o, "%v", err)
			continue
		}
		if len(lm) != 1 || len(sm) != 1 {
			t.fail("The topology record (%s) is not written ldns: [not] KIND VALUE server: [not] KIND VALUE.", o.Name)
			return
		}
		if miss := t.missing(lm[0]) + t.missing(sm[0]); miss != "" {
			t.skip(o, "%s does not exist", miss)
			continue
		}
		t.gc.Topology = append(t.gc.Topology, gslb.TopologyRecord{LDNS: lm[0], Server: sm[0], Order: atoi(t.e(o, topologyOrder)), Score: atoi(t.e(o, topologyScore))})
	}
}

func (t *gslbTranslator) listeners() {
	for _, o := range t.cfg.Of(gtmListener) {
		a, err := netip.ParseAddr(strings.SplitN(listenerAddress.Str(o), "%", 2)[0])
		if err != nil {
			t.fail("The listener (%s) needs an address.", o.Name)
			return
		}
		port, err := objects.ParsePort(t.e(o, listenerPort))
		if err != nil || port == 0 {
			t.fail("The listener (%s) needs a port: %s.", o.Name, t.e(o, listenerPort))
			return
		}
		rs, ok := t.rules(o, listenerRules)
		if !ok {
			continue
		}
		l := gslb.Listener{
			Name: o.Name, Addr: netip.AddrPortFrom(a, uint16(port)),
			Protocol: t.e(o, listenerProtocol), Disabled: disabled(o), Rules: rs,
		}
		vl, msg := vlanFilter(t.cfg, t.s, o, listenerVLANs, listenerVLANsDisabled) // translate_vlans.go
		if msg != "" {
			t.fail("The listener (%s): %s.", o.Name, msg)
			return
		}
		l.VLANs = vl
		if dp := t.listenerDNSProfile(o); dp != nil { // translate_dns.go
			l.ProcessXfr = profileDNS.MustProp("process-xfr").Effective(t.cfg, dp) == "yes"
			l.Rapid = profileDNS.MustProp("enable-rapid-response").Effective(t.cfg, dp) == "yes"
			l.RapidLast = profileDNS.MustProp("rapid-response-last-action").Effective(t.cfg, dp)
			if profileDNS.MustProp("enable-logging").Effective(t.cfg, dp) == "yes" && !dnsLogProfileExists(t.cfg, t.s, profileDNS.MustProp("log-profile").Effective(t.cfg, dp)) {
				t.fail("The listener (%s): profile %s: enable-logging yes needs a log-profile (ltm profile dns-logging).", o.Name, dp.Name)
				return
			}
		}
		t.gc.Listeners = append(t.gc.Listeners, l)
	}
}

// rules compiles the iRules an object lists, in order. A rule that does
// not exist, or does not compile (the rules hook refuses those in a
// command), leaves the object out: it must not answer without its rules.
func (t *gslbTranslator) rules(o *objects.Object, p *objects.Prop) ([]*rules.Rule, bool) {
	v := p.Get(o)
	if v == nil {
		return nil, true
	}
	var out []*rules.Rule
	for _, name := range v.List {
		full := objects.FullPath("/Common", name)
		var ro *objects.Object
		body := ""
		if slices.Contains(p.Ref, "gtm rule") {
			// A wide IP names gtm rules, as on BIG-IP, or ltm rules.
			if ro = t.cfg.Get(gtmRule, full); ro != nil {
				body = gtmRuleDefinition.Str(ro)
			}
		}
		if ro == nil {
			if ro = t.cfg.Get(ltmRule, full); ro != nil {
				body = ruleDefinition.Str(ro)
			}
		}
		if ro == nil {
			t.skip(o, "rule %s does not exist", name)
			return nil, false
		}
		r, err := t.compile(ro.Name, body)
		if note, ok := ruleNotActedOn(ro.Name, err); ok {
			// Valid on a BIG-IP: the object is kept, and answers nothing.
			t.kept = append(t.kept, about(o, "%s", note))
			return nil, false
		}
		if err != nil {
			t.skip(o, "rule %s: %v", ro.Name, err)
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

func (t *gslbTranslator) zones() {
	for _, o := range t.cfg.Of(gtmZone) {
		t.gc.Zones = append(t.gc.Zones, gslb.Zone{Origin: gslb.DNSName(o.Name), Data: zoneText(zoneDefinition.Str(o))})
	}
}

// zoneText lets a zone's records be indented like the rest of bigip.conf:
// each line's leading blanks are dropped, so every record names its owner
// (@ for the apex) rather than inheriting the previous one's, as a line
// starting with a blank would in a BIND file.
func zoneText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " \t")
	}
	return strings.Join(lines, "\n")
}
