package daemon

import (
	"slices"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// DNS over HTTPS: a virtual with a doh-server or doh-proxy profile serves
// RFC 8484 requests (dataplane/doh) in place of its HTTP engine.
var (
	profileDoHServer = schema.MustKind("ltm profile doh-server")
	profileDoHProxy  = schema.MustKind("ltm profile doh-proxy")
)

// dohProfile is o's doh profile, nil for none; proxy says it is a
// doh-proxy.
func (t *translator) dohProfile(o *objects.Object) (p *objects.Object, proxy bool) {
	if p = t.profile(o, profileDoHServer); p != nil {
		return p, false
	}
	if p = t.profile(o, profileDoHProxy); p != nil {
		return p, true
	}
	return nil, false
}

// doh gives a virtual with a doh profile (hp) its DoH settings, in place
// of the HTTP engine, the http2 gateway and the DNS listener its other
// profiles would give it. The profile stack is checked [M: BIG-IP's
// messages are not documented; these are openltm's]: an http profile,
// TCP, and for doh-server a dns profile. doh-proxy with a server-ssl
// profile is BIG-IP's DoH-to-DoH proxy: its members are DoH servers, sent
// each query as DoH over TLS (t.tls built the server-ssl side); without
// one, its members get DNS [M]. It returns false when the virtual was
// left out.
func (t *translator) doh(o *objects.Object, v *dataplane.Virtual, hp *objects.Object, proxy bool) bool {
	kind := "doh-server"
	if proxy {
		kind = "doh-proxy"
	}
	if px := t.profile(o, profileDoHProxy); px != nil && !proxy {
		return t.refuse("profile %s (doh-proxy) cannot be used with doh-server profile %s on the virtual server (%s)", px.Name, hp.Name, o.Name)
	}
	if t.profile(o, profileHTTP) == nil {
		return t.refuse("profile %s (%s) requires an http profile on the virtual server (%s)", hp.Name, kind, o.Name)
	}
	if v.IsUDP() {
		return t.refuse("profile %s (%s) requires ip-protocol tcp on the virtual server (%s)", hp.Name, kind, o.Name)
	}
	if t.profile(o, profileMBLB) != nil {
		return t.refuse("profile %s (%s) cannot be used with an mblb profile on the virtual server (%s)", hp.Name, kind, o.Name)
	}
	dp := t.profile(o, profileDNS)
	if dp == nil && !proxy {
		return t.refuse("profile %s (doh-server) requires a dns profile on the virtual server (%s)", hp.Name, o.Name)
	}
	if dp != nil {
		d := t.dnsSettings(o, dp)
		if d == nil {
			return false
		}
		v.DNS = d
	}
	x := &dataplane.DoH{Profile: DoHStatsKey(proxy, hp.Name), Proxy: proxy}
	if v.HTTP2 != nil {
		x.ALPN, x.H2C = v.HTTP2.ALPN, v.HTTP2.Always
	}
	v.MBLB, v.HTTP2 = nil, nil
	v.DoH = x
	t.dohUnusedSettings(o)
	return true
}

// dohUnusedSettings warns of the settings of a DoH virtual's http and
// http2 profiles that the DoH service does not use (it answers every
// request itself): those the profile sets of its own, activation-modes
// aside.
func (t *translator) dohUnusedSettings(o *objects.Object) {
	for _, k := range []*objects.Kind{profileHTTP, profileHTTP2, profileHTTPRouter} {
		p := t.profile(o, k)
		if p == nil || p.BuiltIn {
			continue
		}
		var set []string
		for name := range p.Props {
			switch name {
			case "defaults-from", "description", "app-service", "metadata", "activation-modes":
				continue
			}
			set = append(set, name)
		}
		if len(set) > 0 {
			slices.Sort(set)
			t.note(o, "profile %s (%s): %s not used on a DNS over HTTPS virtual, which answers every request itself", p.Name, strings.TrimPrefix(k.Key(), "ltm profile "), strings.Join(set, ", "))
		}
	}
}

// DoHStatsKey is the name a doh profile's counters go by in the plane:
// the two kinds may hold profiles of one name.
func DoHStatsKey(proxy bool, name string) string {
	if proxy {
		return "doh-proxy " + name
	}
	return "doh-server " + name
}

// dohRuleEvents warns of the events of a DoH virtual's rules that do not
// run: the DoH service answers the HTTP requests itself, so only a dns
// profile's DNS_REQUEST and DNS_RESPONSE run (per query) [M: which
// events BIG-IP runs on such a virtual is not documented].
func (t *translator) dohRuleEvents(o *objects.Object, list []*rules.Rule) {
	hp, _ := t.dohProfile(o)
	if hp == nil {
		return
	}
	dns := t.profile(o, profileDNS) != nil
	var skipped []string
	for _, r := range list {
		for _, h := range r.Handlers() {
			ev := h.Event.String()
			if dns && (ev == "DNS_REQUEST" || ev == "DNS_RESPONSE") || slices.Contains(skipped, ev) {
				continue
			}
			skipped = append(skipped, ev)
		}
	}
	if len(skipped) > 0 {
		t.note(o, "profile %s: the rules' %v events do not run on a DNS over HTTPS virtual (only a dns profile's DNS_REQUEST and DNS_RESPONSE do)", hp.Name, skipped)
	}
}

// The DoH listeners of BIG-IP DNS: each is an ltm virtual server
// underneath, as BIG-IP makes one.
var (
	gtmListenerDoHServer = schema.MustKind("gtm listener-doh-server")
	gtmListenerDoHProxy  = schema.MustKind("gtm listener-doh-proxy")
)

// dohListenerVirtual reports whether name, of kind k, is the ltm virtual
// server a gtm listener-doh-server or listener-doh-proxy makes: `show
// ltm virtual NAME` and `reset-stats ltm virtual NAME` take its name, as
// BIG-IP's do for the virtual server a listener is.
func dohListenerVirtual(cfg *objects.Config, k *objects.Kind, name string) bool {
	return k == ltmVirtual && (cfg.Get(gtmListenerDoHServer, name) != nil || cfg.Get(gtmListenerDoHProxy, name) != nil)
}

// dohListenerObjects are the DoH listeners, each the ltm virtual server
// of its name, for the shows that sum a profile's virtuals.
func dohListenerObjects(cfg *objects.Config) []*objects.Object {
	return append(cfg.Of(gtmListenerDoHServer), cfg.Of(gtmListenerDoHProxy)...)
}

// dohListenerProps are the properties a DoH listener hands its virtual
// server as they are.
var dohListenerProps = []string{"description", "enabled", "mask", "profiles", "pool", "rules", "source-address-translation", "source-port", "translate-address", "translate-port", "vlans", "vlans-disabled"}

// dohListeners makes each gtm listener-doh-server and listener-doh-proxy
// an ltm virtual server of its name, listening on address:port (tcp), with
// its profiles, pool, rules, SNAT and translation settings; the virtual
// is then translated as any. A listener whose profiles lack the doh
// profile of its type, or whose name an ltm virtual has, is refused [M:
// BIG-IP's messages are not documented].
func (t *translator) dohListeners() {
	for _, k := range []*objects.Kind{gtmListenerDoHServer, gtmListenerDoHProxy} {
		want := profileDoHServer
		if k == gtmListenerDoHProxy {
			want = profileDoHProxy
		}
		for _, o := range t.cfg.Of(k) {
			if t.cfg.Get(ltmVirtual, o.Name) != nil {
				t.refuse("%s %s: ltm virtual %s exists; a DoH listener is a virtual server of its name", k.Key(), o.Name, o.Name)
				continue
			}
			vo := &objects.Object{Kind: ltmVirtual, Name: o.Name, Props: map[string]*objects.Value{}}
			for _, name := range dohListenerProps {
				if v := o.Props[name]; v != nil {
					vo.Props[name] = v
				} else if p := k.Prop(name); p != nil && p.Type != objects.TFlag {
					if d := p.Effective(t.cfg, o); d != "" {
						vo.Props[name] = &objects.Value{Str: d}
					}
				}
			}
			if t.profile(vo, want) == nil {
				t.refuse("%s %s requires a %s profile in its profiles", k.Key(), o.Name, strings.TrimPrefix(want.Key(), "ltm profile "))
				continue
			}
			addr, port := k.MustProp("address").Str(o), k.MustProp("port").Effective(t.cfg, o)
			sep := ":"
			if strings.Contains(addr, ":") {
				sep = "." // IPv6 address.port, as a virtual's destination
			}
			vo.Props["destination"] = &objects.Value{Str: addr + sep + port}
			vo.Props["ip-protocol"] = &objects.Value{Str: "tcp"}
			t.virtual(vo)
		}
	}
}
