package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The explicit forward proxy: an http profile with proxy-type explicit,
// its explicit-proxy block and the net dns-resolver it names
// (dataplane/fwdproxy).
var (
	httpProxyType     = profileHTTP.MustProp("proxy-type")
	httpExplicitProxy = profileHTTP.MustProp("explicit-proxy")

	profileHTTPProxyConnect = schema.MustKind("ltm profile http-proxy-connect")
	httpProxyConnectState   = profileHTTPProxyConnect.MustProp("default-state")

	specDNSResolver     = schema.MustSpec("net dns-resolver")
	dnsResolver         = schema.MustKind("net dns-resolver")
	dnsResolverZones    = dnsResolver.MustProp("forward-zones")
	dnsResolverCache    = dnsResolver.MustProp("cache-size")
	dnsResolverUseTCP   = dnsResolver.MustProp("use-tcp")
	dnsResolverUseUDP   = dnsResolver.MustProp("use-udp")
	dnsResolverDefaults = map[string]string{"cache-size": "5767168", "use-tcp": "yes", "use-udp": "yes",
		"use-ipv4": "yes", "use-ipv6": "yes", "randomize-query-name-case": "yes", "answer-default-zones": "no"}
)

// explicitProxy is the forward proxy of the virtual o's http profile
// prof, nil for a reverse (or transparent) proxy. A setting that cannot
// work refuses the commit.
func (t *translator) explicitProxy(o *objects.Object, v *dataplane.Virtual, prof *objects.Object, serverAgent string, maxHeaderSize int) (*fwdproxy.Config, bool) {
	if httpProxyType.Effective(t.cfg, prof) != "explicit" {
		if pc := t.profile(o, profileHTTPProxyConnect); pc != nil {
			t.keep(o, "profile %s (http-proxy-connect): kept, and not acted on: only an explicit proxy (http profile proxy-type explicit) answers CONNECT; profile %s is proxy-type %s", pc.Name, prof.Name, httpProxyType.Effective(t.cfg, prof))
		}
		return nil, true
	}
	if pol, rule, ok := t.proxyPolicies(o); !ok {
		// Kept rather than run half: a forward select is what the policy
		// is for. (Policies run as the rules before the iRules do.)
		t.keep(o, "profile %s: policy %s rule %s: forward select has no meaning on an explicit proxy (proxy-type explicit): each request goes to the origin it names", prof.Name, pol, rule)
		return nil, false
	}
	if r, ev, ok := t.proxyRuleEvents(v); !ok {
		// Kept rather than run half: the event may be what the rule
		// relies on.
		t.keep(o, "profile %s: rule %s: %s does not run on an explicit proxy (proxy-type explicit) in openltm", prof.Name, r, ev)
		return nil, false
	}
	ep, resolver := parseExplicitProxy(t.cfg.Effective(prof, httpExplicitProxy.Name))
	if resolver == "" {
		return nil, t.refuse("profile %s (%s): proxy-type explicit needs explicit-proxy { dns-resolver NAME } naming a net dns-resolver", prof.Name, o.Name)
	}
	if !strings.HasPrefix(resolver, "/") {
		resolver = "/Common/" + resolver
	}
	r := t.cfg.Lookup(t.s, specDNSResolver, resolver)
	if r == nil {
		return nil, t.refuse("profile %s (%s): explicit-proxy dns-resolver: net dns-resolver %s does not exist", prof.Name, o.Name, resolver)
	}
	rc, err := t.resolverOf(r)
	if err != nil {
		return nil, t.refuse("%v", err)
	}
	ep.Resolver = rc
	if pc := t.profile(o, profileHTTPProxyConnect); pc != nil {
		// The profile decides, over default-connect-handling [M: BIG-IP
		// gives it to the explicit proxies that must tunnel].
		ep.ConnectAllow = httpProxyConnectState.Effective(t.cfg, pc) == "enabled"
	}
	ep.ServerAgent = serverAgent
	ep.MaxHeaderSize = maxHeaderSize
	return ep, true
}

// httpProxyConnectNeedsHTTP refuses an http-proxy-connect profile on a
// virtual server without an http profile: CONNECT is an HTTP request,
// and BIG-IP refuses the combination [M: its message is ours].
func (t *translator) httpProxyConnectNeedsHTTP(o *objects.Object) bool {
	if pc := t.profile(o, profileHTTPProxyConnect); pc != nil && t.profile(o, profileHTTP) == nil {
		return t.refuse("profile %s (http-proxy-connect) requires an http profile on the virtual server (%s)", pc.Name, o.Name)
	}
	return true
}

// parseExplicitProxy reads an explicit-proxy block as it applies;
// resolver is its dns-resolver ("" for none). The block's settings were
// checked as typed.
func parseExplicitProxy(v *objects.Value) (c *fwdproxy.Config, resolver string) {
	f := subSettings(v)
	c = &fwdproxy.Config{ConnectAllow: f["default-connect-handling"] == "allow", IPv6: f["ipv6"] == "yes"}
	if r := f["dns-resolver"]; r != "none" {
		resolver = r
	}
	for _, m := range []struct {
		name string
		dst  *string
	}{{"connect-error-message", &c.ConnectError}, {"dns-error-message", &c.DNSError},
		{"bad-request-message", &c.BadRequest}, {"bad-response-message", &c.BadResponse},
		{"gateway-error-message", &c.GatewayError}, {"service-unavailable-message", &c.ServiceUnavailable}} {
		if w := f[m.name]; w != "none" {
			*m.dst = w
		}
	}
	if v != nil && v.Sub != nil {
		if hn := v.Sub.Props["host-names"]; hn != nil {
			for _, n := range hn.List {
				if n = strings.TrimSuffix(strings.ToLower(n), "."); n != "" && n != "none" {
					c.HostNames = append(c.HostNames, n)
				}
			}
		}
	}
	return c, resolver
}

// proxyPolicies checks the policies of the virtual o for what cannot
// run on an explicit proxy (a forward select: there is no member to
// choose); when one has it, it returns the policy and the rule, and
// false.
func (t *translator) proxyPolicies(o *objects.Object) (pol, rule string, ok bool) {
	pv := virtualPolicies.Get(o)
	if pv == nil {
		return "", "", true
	}
	for _, it := range pv.Items {
		po := t.cfg.Lookup(t.s, specPolicy, it.Name)
		if po == nil {
			continue // refused with the virtual's rules
		}
		for _, r := range policyOf(po).Rules {
			for _, a := range r.Actions {
				if a.Words["operand"] == "forward" && a.Words["verb"] == "select" {
					return po.Name, r.Name, false
				}
			}
		}
	}
	return "", "", true
}

// resolverOf reads the net dns-resolver r, for the explicit proxy and
// OCSP validators alike.
func (t *translator) resolverOf(r *objects.Object) (fwdproxy.ResolverConfig, error) {
	rc, err := resolverConfig(func(p *objects.Prop) string {
		if v := t.cfg.Effective(r, p.Name); v != nil {
			return v.Str
		}
		return dnsResolverDefaults[p.Name]
	}, dnsResolverZones.Get(r))
	if err != nil {
		return rc, fmt.Errorf("net dns-resolver %s: %v", r.Name, err)
	}
	rc.Name = r.Name
	if t.rules != nil && t.rules.e != nil {
		rc.RootHints = t.rules.e.opts.RootHints
	}
	return rc, nil
}

// resolverConfig reads a net dns-resolver's settings, zones being its
// forward-zones.
func resolverConfig(get func(*objects.Prop) string, zones *objects.Value) (fwdproxy.ResolverConfig, error) {
	rc := fwdproxy.ResolverConfig{UDP: get(dnsResolverUseUDP) != "no", TCP: get(dnsResolverUseTCP) != "no"}
	if !rc.UDP && !rc.TCP {
		return rc, fmt.Errorf("use-udp and use-tcp are both no: no query could be sent")
	}
	rc.NoIPv4, rc.NoIPv6 = get(dnsResolver.MustProp("use-ipv4")) == "no", get(dnsResolver.MustProp("use-ipv6")) == "no"
	if rc.NoIPv4 && rc.NoIPv6 {
		return rc, fmt.Errorf("use-ipv4 and use-ipv6 are both no: no nameserver could be asked")
	}
	rc.Randomize = get(dnsResolver.MustProp("randomize-query-name-case")) != "no"
	rc.DefaultZones = get(dnsResolver.MustProp("answer-default-zones")) == "yes"
	size, err := strconv.ParseUint(get(dnsResolverCache), 10, 32)
	if err != nil {
		return rc, fmt.Errorf("cache-size %q: expected a number of bytes", get(dnsResolverCache))
	}
	// An answer takes about 256 bytes of BIG-IP's cache [M].
	rc.CacheEntries = max(int(size/256), 16)
	rc.CacheBytes = int(size)
	rc.Zones, err = forwardZones(zones)
	return rc, err
}

// forwardZones reads `{ ZONE { nameservers { ADDR:PORT { } ... } } ... }`
// (ADDR:domain and a bare ADDR are port 53; IPv6 is ADDR.PORT or
// [ADDR]:PORT).
func forwardZones(v *objects.Value) ([]fwdproxy.Zone, error) {
	if v == nil {
		return nil, nil
	}
	var out []fwdproxy.Zone
	for _, it := range v.Items {
		z := fwdproxy.Zone{Name: strings.ToLower(it.Name)}
		if z.Name != "." && !strings.HasSuffix(z.Name, ".") {
			z.Name += "."
		}
		if ns := it.Props["nameservers"]; ns != nil {
			for _, n := range ns.Items {
				ap, err := parseNameserver(n.Name)
				if err != nil {
					return nil, fmt.Errorf("forward-zones %s: %v", it.Name, err)
				}
				z.Nameservers = append(z.Nameservers, ap)
			}
		}
		if len(z.Nameservers) == 0 {
			return nil, fmt.Errorf("forward-zones %s: no nameservers", it.Name)
		}
		out = append(out, z)
	}
	return out, nil
}

// parseNameserver reads one nameserver address.
func parseNameserver(s string) (netip.AddrPort, error) {
	bad := fmt.Errorf("nameserver %q: expected ADDR:PORT (IPv6 ADDR.PORT)", s)
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a, 53), nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	sep := ":"
	if strings.Count(s, ":") > 1 {
		sep = "."
	}
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return netip.AddrPort{}, bad
	}
	a, err := netip.ParseAddr(strings.Trim(s[:i], "[]"))
	if err != nil {
		return netip.AddrPort{}, bad
	}
	port := s[i+1:]
	if port == "domain" {
		port = "53"
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return netip.AddrPort{}, bad
	}
	return netip.AddrPortFrom(a, uint16(n)), nil
}

// proxyRuleEvents checks that every event of v's rules runs on an
// explicit proxy (fwdproxy.Rules); when one does not it returns the rule
// and the event, and false.
func (t *translator) proxyRuleEvents(v *dataplane.Virtual) (rule string, ev rules.Event, ok bool) {
	var list []*rules.Rule
	if t.rules != nil {
		if rl, found := t.rules.pending[v]; found {
			list = rl.list
		}
	}
	if list == nil {
		if p := dataplane.Program(v.Rules); p != nil {
			list = p.Rules()
		}
	}
	for _, r := range list {
		for _, h := range r.Handlers() {
			switch h.Event {
			case rules.RuleInit, rules.ClientAccepted, rules.ClientClosed, rules.HTTPRequest,
				rules.HTTPProxyRequest, rules.HTTPProxyConnect, rules.HTTPResponse, rules.HTTPProxyResponse,
				rules.NameResolved:
			default:
				return r.Name, h.Event, false
			}
		}
	}
	return "", 0, true
}
