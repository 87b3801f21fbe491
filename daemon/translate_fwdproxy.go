package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// The explicit forward proxy: an http profile with proxy-type explicit,
// its explicit-proxy block and the net dns-resolver it names
// (dataplane/fwdproxy).
var (
	httpProxyType     = profileHTTP.MustProp("proxy-type")
	httpExplicitProxy = profileHTTP.MustProp("explicit-proxy")

	specDNSResolver     = schema.MustSpec("net dns-resolver")
	dnsResolver         = schema.MustKind("net dns-resolver")
	dnsResolverZones    = dnsResolver.MustProp("forward-zones")
	dnsResolverCache    = dnsResolver.MustProp("cache-size")
	dnsResolverUseTCP   = dnsResolver.MustProp("use-tcp")
	dnsResolverUseUDP   = dnsResolver.MustProp("use-udp")
	dnsResolverDefaults = map[string]string{"cache-size": "5767168", "use-tcp": "yes", "use-udp": "yes"}
)

// explicitProxy is the forward proxy of the virtual o's http profile
// prof, nil for a reverse (or transparent) proxy. A setting that cannot
// work refuses the commit.
func (t *translator) explicitProxy(o *objects.Object, v *dataplane.Virtual, prof *objects.Object, serverAgent string, maxHeaderSize int) (*fwdproxy.Config, bool) {
	if httpProxyType.Effective(t.cfg, prof) != "explicit" {
		return nil, true
	}
	rv, pv := virtualRules.Get(o), virtualPolicies.Get(o)
	if v.Rules != nil || rv != nil && len(rv.List) > 0 || pv != nil && len(pv.Items) > 0 {
		// Kept rather than run without them: a rule may be what keeps
		// the proxy closed to some clients.
		t.keep(o, "profile %s: iRules and policies do not run on an explicit proxy (proxy-type explicit) in openltm", prof.Name)
		return nil, false
	}
	raw := httpExplicitProxy.Effective(t.cfg, prof)
	ep, resolver, err := parseExplicitProxy(raw)
	if err != nil {
		return nil, t.refuse("profile %s (%s): explicit-proxy: %v", prof.Name, o.Name, err)
	}
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
	rc, err := resolverConfig(func(p *objects.Prop) string {
		if v := t.cfg.Effective(r, p.Name); v != nil {
			return v.Str
		}
		return dnsResolverDefaults[p.Name]
	}, dnsResolverZones.Get(r))
	if err != nil {
		return nil, t.refuse("net dns-resolver %s: %v", r.Name, err)
	}
	rc.Name = r.Name
	ep.Resolver = rc
	ep.ServerAgent = serverAgent
	ep.MaxHeaderSize = maxHeaderSize
	return ep, true
}

// parseExplicitProxy reads an explicit-proxy block; resolver is its
// dns-resolver ("" for none).
func parseExplicitProxy(raw string) (c *fwdproxy.Config, resolver string, err error) {
	c = &fwdproxy.Config{}
	if strings.TrimSpace(raw) == "" {
		return c, "", nil
	}
	f, perr := grammar.Parse("explicit-proxy", []byte("x "+raw))
	if perr != nil || len(f.Statements) != 1 || len(f.Statements[0].Items) != 2 {
		return nil, "", fmt.Errorf("not a { setting value ... } block")
	}
	b, ok := f.Statements[0].Items[1].(*grammar.Block)
	if !ok {
		return nil, "", fmt.Errorf("not a { } block")
	}
	for i := 0; i < len(b.Items); i++ {
		w, ok := b.Items[i].(*grammar.Word)
		if !ok {
			return nil, "", fmt.Errorf("a setting name must come before { }")
		}
		if i+1 >= len(b.Items) {
			return nil, "", fmt.Errorf("%s needs a value", w.Text)
		}
		i++
		if w.Text == "host-names" {
			if hw, ok := b.Items[i].(*grammar.Word); ok && hw.Text == "none" {
				continue
			}
			if _, ok := b.Items[i].(*grammar.Block); !ok {
				return nil, "", fmt.Errorf("host-names takes a { } list")
			}
			continue
		}
		vw, ok := b.Items[i].(*grammar.Word)
		if !ok {
			return nil, "", fmt.Errorf("%s takes one value, not a { } block", w.Text)
		}
		v := vw.Text
		msg := func(dst *string) {
			if v != "none" {
				*dst = v
			}
		}
		switch w.Text {
		case "default-connect-handling":
			if v != "allow" && v != "deny" {
				return nil, "", fmt.Errorf("default-connect-handling %q: must be allow or deny", v)
			}
			c.ConnectAllow = v == "allow"
		case "dns-resolver":
			if v != "none" && v != "" {
				resolver = v
			}
		case "ipv6":
			if v != "yes" && v != "no" {
				return nil, "", fmt.Errorf("ipv6 %q: must be yes or no", v)
			}
			c.IPv6 = v == "yes"
		case "tunnel-on-any-request":
			if v != "yes" && v != "no" {
				return nil, "", fmt.Errorf("tunnel-on-any-request %q: must be yes or no", v)
			}
		case "route-domain", "tunnel-name":
		case "connect-error-message":
			msg(&c.ConnectError)
		case "dns-error-message":
			msg(&c.DNSError)
		case "bad-request-message":
			msg(&c.BadRequest)
		case "bad-response-message":
			msg(&c.BadResponse)
		default:
			return nil, "", fmt.Errorf("%q is not a setting (default-connect-handling, dns-resolver, host-names, ipv6, route-domain, tunnel-name, tunnel-on-any-request, connect-error-message, dns-error-message, bad-request-message, bad-response-message)", w.Text)
		}
	}
	return c, resolver, nil
}

// resolverConfig reads a net dns-resolver's settings, zones being its
// forward-zones.
func resolverConfig(get func(*objects.Prop) string, zones *objects.Value) (fwdproxy.ResolverConfig, error) {
	rc := fwdproxy.ResolverConfig{UDP: get(dnsResolverUseUDP) != "no", TCP: get(dnsResolverUseTCP) != "no"}
	if !rc.UDP && !rc.TCP {
		return rc, fmt.Errorf("use-udp and use-tcp are both no: no query could be sent")
	}
	size, err := strconv.ParseUint(get(dnsResolverCache), 10, 32)
	if err != nil {
		return rc, fmt.Errorf("cache-size %q: expected a number of bytes", get(dnsResolverCache))
	}
	// An answer takes about 256 bytes of BIG-IP's cache [M].
	rc.CacheEntries = max(int(size/256), 16)
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

// explicitProxyRefs checks the explicit-proxy block of every http profile
// that sets one, used by a virtual or not: one that cannot be read, or
// that names a net dns-resolver that does not exist, refuses the commit,
// so that a resolver a profile names cannot be deleted.
func (t *translator) explicitProxyRefs() {
	for _, prof := range t.cfg.Of(profileHTTP) {
		v := prof.Props[httpExplicitProxy.Name]
		if v == nil {
			continue
		}
		_, resolver, err := parseExplicitProxy(v.Str)
		if err != nil {
			t.refuse("profile %s: explicit-proxy: %v", prof.Name, err)
			continue
		}
		if resolver == "" {
			continue
		}
		if !strings.HasPrefix(resolver, "/") {
			resolver = "/Common/" + resolver
		}
		if t.cfg.Lookup(t.s, specDNSResolver, resolver) == nil {
			t.refuse("profile %s: explicit-proxy dns-resolver: net dns-resolver %s does not exist", prof.Name, resolver)
		}
	}
}
