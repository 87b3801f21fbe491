package daemon

import (
	"net/netip"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// The dns profile and the ltm dns caches as dataplane/dnsvs acts on them.
var (
	profileDNS          = schema.MustKind("ltm profile dns")
	dnsCacheTransparent = schema.MustKind("ltm dns cache transparent")
	dnsCacheResolver    = schema.MustKind("ltm dns cache resolver")
	dnsCacheValidating  = schema.MustKind("ltm dns cache validating-resolver")
)

// dnsProfile gives a virtual with a dns profile its DNS settings: the
// virtual then answers queries (wide IPs, static zones, its cache)
// before it forwards them to its pool. http or mblb beside it is refused
// [M: BIG-IP's message]; with client-ssl (DNS over TLS) the virtual is
// kept and carries no traffic. It returns false when the virtual was
// left out.
func (t *translator) dnsProfile(o *objects.Object, v *dataplane.Virtual) bool {
	if hp, proxy := t.dohProfile(o); hp != nil {
		return t.doh(o, v, hp, proxy) // translate_doh.go: DNS over HTTPS
	}
	dp := t.profile(o, profileDNS)
	if dp == nil {
		return true
	}
	if hp := t.profile(o, profileHTTP); hp != nil {
		return t.refuse("profile %s (dns) cannot be used with http profile %s on the virtual server (%s)", dp.Name, hp.Name, o.Name)
	}
	if cp := t.profile(o, profileClientSSL); cp != nil {
		// DNS over TLS is a BIG-IP feature openltm does not serve.
		t.keep(o, "profile %s (dns) with client-ssl profile %s (DNS over TLS) is not served", dp.Name, cp.Name)
		return false
	}
	if v.MBLB != nil {
		return t.refuse("profile %s (dns) cannot be used with an mblb profile on the virtual server (%s)", dp.Name, o.Name)
	}
	d := t.dnsSettings(o, dp)
	if d == nil {
		return false
	}
	if d.NoLocalBIND {
		// BIG-IP's local BIND answers after the pool; openltm's stand-in
		// for it (the static zones) answers on a virtual as
		// enable-dns-express says, so the setting acts on listeners only.
		t.keep(o, "profile %s: use-local-bind no is acted on by gtm listeners only; on a virtual the static zones follow enable-dns-express", dp.Name)
	}
	v.DNS = d
	return true
}

// dnsSettings reads the dns profile dp, on o (a virtual or a gtm
// listener), as dataplane/dnsvs acts on it; nil when o is left out
// (refused or skipped, the reason recorded).
func (t *translator) dnsSettings(o *objects.Object, dp *objects.Object) *dataplane.DNSProfile {
	e := func(name string) string { return profileDNS.MustProp(name).Effective(t.cfg, dp) }
	d := &dataplane.DNSProfile{
		Name:         dp.Name,
		GTM:          e("enable-gtm") == "yes",
		Express:      e("enable-dns-express") == "yes",
		DNSSEC:       e("enable-dnssec") == "yes",
		Unhandled:    e("unhandled-query-action"),
		NoProcessRD:  e("process-rd") == "no",
		ClientSubnet: e("edns0-client-subnet-insert") == "enabled",
		ProcessXfr:   e("process-xfr") == "yes",
		Rapid:        e("enable-rapid-response") == "yes",
		RapidLast:    e("rapid-response-last-action"),
		NoLocalBIND:  e("use-local-bind") == "no",
	}
	if e("enable-logging") == "yes" {
		if d.Log = t.dnsLogging(dp, e("log-profile")); d.Log == nil {
			t.refuse("profile %s: enable-logging yes needs a log-profile (ltm profile dns-logging)", dp.Name)
			return nil
		}
	}
	switch mode := e("dns64"); mode {
	case "secondary", "immediate", "v4-only":
		d.DNS64 = mode
		if px := e("dns64-prefix"); px != "" && px != "any6" {
			a, err := netip.ParseAddr(px)
			if err != nil || !a.Is6() || a.Is4In6() {
				t.refuse("profile %s: dns64-prefix %q is not an IPv6 address", dp.Name, px)
				return nil
			}
			d.DNS64Prefix = a
		}
		if rw := e("dns64-additional-section-rewrite"); rw != "disabled" {
			d.DNS64Additional = rw
		}
	}
	if e("enable-cache") == "yes" {
		name := e("cache")
		if name == "" || name == "none" {
			t.refuse("profile %s: enable-cache yes needs a cache (ltm dns cache)", dp.Name)
			return nil
		}
		c := t.cfg.Lookup(t.s, []string{dnsCacheTransparent.Key()}, name)
		kind := "transparent"
		if c == nil {
			c, kind = t.cfg.Lookup(t.s, []string{dnsCacheResolver.Key()}, name), "resolver"
		}
		if c == nil {
			c, kind = t.cfg.Lookup(t.s, []string{dnsCacheValidating.Key()}, name), "validating-resolver"
		}
		if c == nil {
			t.skip(o, "profile %s: dns cache %s does not exist", dp.Name, name)
			return nil
		}
		ce := func(name string) string { return c.Kind.MustProp(name).Effective(t.cfg, c) }
		dc := &dataplane.DNSCache{Name: c.Name, Kind: kind, MsgCacheSize: atoi(ce("msg-cache-size")), MaxConcurrent: atoi(ce("max-concurrent-queries"))}
		resolver := kind != "transparent"
		rc, hinted, err := cacheResolver(c, ce, resolver) // translate_dnsresolver.go
		if err != nil {
			t.refuse("dns cache %s: %v", c.Name, err)
			return nil
		}
		dc.Resolver, dc.Recurse, dc.Hinted = rc, resolver, hinted
		if !resolver {
			dc.MaxUDP, dc.MaxTCP = atoi(ce("max-concurrent-udp")), atoi(ce("max-concurrent-tcp"))
			dc.RRsetBytes, dc.Rotate = atoi(ce("rrset-cache-size")), ce("rrset-rotate") == "query-id"
		}
		if resolver {
			zones, err := forwardZones(c.Kind.MustProp("forward-zones").Get(c)) // translate_fwdproxy.go
			if err != nil {
				t.refuse("dns cache %s: %v", c.Name, err)
				return nil
			}
			if len(zones) > 0 {
				dc.Forward = map[string][]netip.AddrPort{}
				for _, z := range zones {
					dc.Forward[z.Name] = z.Nameservers
				}
			}
		}
		if dc.RPZ, err = cacheRPZ(t.cfg, t.s, c, rc); err != nil { // translate_dnsrpz.go
			t.refuse("dns cache %s: %v", c.Name, err)
			return nil
		}
		d.Cache = dc
	}
	return d
}

var profileDNSLogging = schema.MustKind("ltm profile dns-logging")

// dnsLogging is the ltm profile dns-logging of that name as a dns profile
// with enable-logging yes logs through it; nil when there is none. A
// logging profile without a log-publisher logs nothing.
func (t *translator) dnsLogging(dp *objects.Object, name string) *dataplane.DNSLog {
	if name == "" || name == "none" {
		return nil
	}
	lp := t.cfg.Lookup(t.s, []string{profileDNSLogging.Key()}, name)
	if lp == nil {
		return nil
	}
	e := func(prop string) string { return profileDNSLogging.MustProp(prop).Effective(t.cfg, lp) }
	l := &dataplane.DNSLog{
		Name:           lp.Name,
		Hostname:       "openltm",
		Query:          e("enable-query-logging") == "yes",
		Response:       e("enable-response-logging") == "yes",
		CompleteAnswer: e("include-complete-answer") == "yes",
		QueryID:        e("include-query-id") == "yes",
		Source:         e("include-source") == "yes",
		Timestamp:      e("include-timestamp") == "yes",
		View:           e("include-view") == "yes",
	}
	if pub := e("log-publisher"); pub != "" && pub != "none" {
		l.Publisher = objects.FullPath("/Common", pub)
	}
	if gs := t.cfg.Get(sysGlobal, ""); gs != nil {
		if h := sysGlobalHostname.Str(gs); h != "" {
			l.Hostname = h
		}
	}
	return l
}

var listenerProfiles = gtmListener.MustProp("profiles")

// listenerDNSProfile is the ltm profile dns among a gtm listener's
// profiles, nil for none: its logging and process-xfr act on the
// listener as on a virtual.
func (t *gslbTranslator) listenerDNSProfile(o *objects.Object) *objects.Object {
	return listenerDNSProfileOf(t.s, t.cfg, o)
}

func listenerDNSProfileOf(s *objects.Schema, cfg *objects.Config, o *objects.Object) *objects.Object {
	v := listenerProfiles.Get(o)
	if v == nil {
		return nil
	}
	for _, it := range v.Items {
		if p := cfg.Lookup(s, []string{profileDNS.Key()}, it.Name); p != nil {
			return p
		}
	}
	return nil
}

// dnsLogProfileExists reports whether name is an ltm profile dns-logging.
func dnsLogProfileExists(cfg *objects.Config, s *objects.Schema, name string) bool {
	return name != "" && name != "none" && cfg.Lookup(s, []string{profileDNSLogging.Key()}, name) != nil
}

// listenerLogs gives each listener of gc whose dns profile has
// enable-logging yes its logging profile's log, through p's publishers,
// and each the rest of its profile: enable-gtm, enable-dns-express,
// use-local-bind, and its cache and unhandled-query-action as the
// virtuals' dns profiles run them (nil p: no LTM side, none of these).
// A profile a virtual would be refused for is refused here too.
func listenerLogs(t *translator, p *dataplane.Plane, gc *gslb.Config) error {
	if p == nil {
		return nil
	}
	var profs []*dataplane.DNSProfile
	var idx []int
	for i := range gc.Listeners {
		l := &gc.Listeners[i]
		o := t.cfg.Get(gtmListener, l.Name)
		if o == nil {
			continue
		}
		dp := listenerDNSProfileOf(t.s, t.cfg, o)
		if dp == nil {
			continue
		}
		e := func(name string) string { return profileDNS.MustProp(name).Effective(t.cfg, dp) }
		if e("enable-logging") == "yes" {
			if dl := t.dnsLogging(dp, e("log-profile")); dl != nil {
				l.Log = p.DNSQueryLog(dl)
			}
		}
		d := t.dnsSettings(o, dp)
		if d == nil {
			msg := strings.Join(t.skipped, "; ")
			if !strings.HasPrefix(msg, gtmListener.Key()) {
				msg = gtmListener.Key() + " " + o.Name + ": " + msg
			}
			return objects.Invalid("%s", msg)
		}
		l.NoGTM, l.NoExpress, l.NoBIND = !d.GTM, !d.Express, d.NoLocalBIND
		profs, idx = append(profs, d), append(idx, i)
	}
	for j, st := range p.DNSListenerSteps(profs) {
		gc.Listeners[idx[j]].Steps = st
	}
	return nil
}
