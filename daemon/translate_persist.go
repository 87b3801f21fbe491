package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/objects"
)

// persist fills the virtual's persistence settings from its persist and
// fallback-persistence profiles. It returns false when the virtual was
// skipped (t.skip says why): a profile that is missing or cannot be
// applied would otherwise silently balance clients that expect to stick.
func (t *translator) persist(o *objects.Object, v *dataplane.Virtual) bool {
	if name := defaultPersistName(o); name != "" {
		p, ok := t.persistence(o, v, name)
		if !ok {
			return false
		}
		v.Persist = p
	}
	if fb := virtualFallbackPersist.Str(o); fb != "" && fb != "none" {
		p, ok := t.persistence(o, v, fb)
		if !ok {
			return false
		}
		v.FallbackPersist = p
	}
	return true
}

// persistence resolves one persistence profile (defaults-from walked). A
// universal profile's rule runs as if it were attached to the virtual,
// after the virtual's own rules.
func (t *translator) persistence(o *objects.Object, v *dataplane.Virtual, name string) (*dataplane.Persistence, bool) {
	prof := t.cfg.Lookup(t.s, specPersistence, name)
	if prof == nil {
		t.skip(o, "persistence profile %s does not exist", name)
		return nil, false
	}
	if prof.Kind == nil {
		t.keep(o, "persistence profile %s is of a kind openltm does not run (%s)", name, strings.Join(prof.Words[:len(prof.Words)-1], " "))
		return nil, false
	}
	if prof.Kind.Passive {
		t.keep(o, "persistence profile %s is of a kind openltm does not run (%s)", name, strings.Join(prof.Kind.Words, " "))
		return nil, false
	}
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, prof) }
	p := &dataplane.Persistence{
		Profile:                 prof.Name,
		MatchAcrossServices:     e(persistAcrossService) == "enabled",
		MatchAcrossVirtuals:     e(persistAcrossVirtual) == "enabled",
		MatchAcrossPools:        e(persistAcrossPools) == "enabled",
		OverrideConnectionLimit: e(persistOverrideLimit) == "enabled",
	}
	if hp := persistHashAlg[prof.Kind]; hp != nil {
		p.CARP = e(hp) == "carp"
	}
	switch to := e(persistTimeout); to {
	case "indefinite", "", "0":
	default:
		p.Timeout = seconds(to)
		if p.Timeout <= 0 {
			t.skip(o, "persistence profile %s: timeout %q is not a number of seconds", prof.Name, to)
			return nil, false
		}
	}
	switch prof.Kind {
	case persistSourceAddr, persistDestAddr:
		p.Method = dataplane.PersistSourceAddr
		mask := persistMask
		if prof.Kind == persistDestAddr {
			p.Method, mask = dataplane.PersistDestAddr, persistDestMask
		}
		if m := e(mask); m != "" && m != "none" {
			a, err := netip.ParseAddr(m)
			if err != nil || !isMask(a) {
				t.skip(o, "persistence profile %s: mask %q is not a network mask", prof.Name, m)
				return nil, false
			}
			p.Mask = a
		}
		if prof.Kind == persistSourceAddr && !t.mapProxies(o, prof, p) {
			return nil, false
		}
	case persistUniversal, persistHash:
		// Both take their key from a rule (persist uie, persist hash),
		// the profile's own or the virtual's.
		p.Method = dataplane.PersistUniversal
		rule := persistRule
		if prof.Kind == persistHash {
			p.Method, rule = dataplane.PersistHash, persistHashRule
		}
		if r := e(rule); r != "" && r != "none" {
			if !t.persistRule(o, v, prof.Name, r) {
				return nil, false
			}
		}
		if prof.Kind == persistHash && !t.hashPayload(o, v, prof, name, p) {
			return nil, false
		}
	case persistCookie:
		// Cookie persistence needs the HTTP profile; the L4 proxy accepts
		// it and applies the fallback.
		p.Method = dataplane.PersistCookie
	case persistSSL, persistMSRDP:
		// The L4 proxy reads the TLS hellos, or the RDP connection
		// request, of connections it passes through
		// (dataplane/internal/l4/sslpersist.go).
		kind := "ssl persistence"
		p.Method = dataplane.PersistSSL
		if prof.Kind == persistMSRDP {
			p.Method, kind = dataplane.PersistMSRDP, "msrdp persistence"
			p.SessionDir = persistSessionDir.Effective(t.cfg, prof) == "yes"
		}
		switch {
		case name != defaultPersistName(o):
			t.keep(o, "persistence profile %s: %s runs as a virtual server's default persistence only in openltm", prof.Name, kind)
			return nil, false
		case prof.Kind == persistSSL && t.profile(o, profileClientSSL) != nil:
			// A virtual ending TLS, standard, http or mblb, keys on the
			// client-ssl session's name (dataplane/internal/l4/tls.go,
			// dataplane/internal/mblbvs/persist.go).
		case v.MBLB != nil || v.IsUDP() || t.profile(o, profileClientSSL, profileServerSSL) != nil:
			t.keep(o, "persistence profile %s: openltm runs %s only on a standard TCP virtual server that passes the connection through (no http, mblb, client-ssl or server-ssl profile; ssl persistence also on a virtual server with a client-ssl profile) yet", prof.Name, kind)
			return nil, false
		}
	case persistSIPK:
		if !t.sipPersist(o, v, prof, p) { // translate_sip.go
			return nil, false
		}
	case persistHost:
		// The Host header of each request: an http profile's virtual
		// only [M: BIG-IP's requirement is not documented; without
		// HTTP there is no Host to key on].
		if t.profile(o, profileHTTP) == nil {
			t.keep(o, "persistence profile %s: host persistence keys on the HTTP Host header and needs an http profile on the virtual server", prof.Name)
			return nil, false
		}
		p.Method = dataplane.PersistHost
	default:
		t.keep(o, "persistence profile %s: %s persistence is not supported", prof.Name, strings.TrimPrefix(prof.Kind.Key(), "ltm persistence "))
		return nil, false
	}
	return p, true
}

// hashPayload reads a hash profile's payload settings (hash-offset,
// hash-length, hash-start-pattern, hash-end-pattern, hash-buffer-limit):
// any of them set, the key is looked for in the client's first bytes, as
// ssl and msrdp persistence find theirs. Left at their defaults, the
// profile takes its key from a rule only.
func (t *translator) hashPayload(o *objects.Object, v *dataplane.Virtual, prof *objects.Object, name string, p *dataplane.Persistence) bool {
	e := func(q *objects.Prop) string { return q.Effective(t.cfg, prof) }
	num := func(q *objects.Prop) (int, bool) {
		s := e(q)
		if s == "" {
			return 0, true
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			t.skip(o, "persistence profile %s: %s %q is not a number", prof.Name, q.Name, s)
			return 0, false
		}
		return n, true
	}
	off, ok1 := num(persistHashOffset)
	length, ok2 := num(persistHashLength)
	limit, ok3 := num(persistHashLimit)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	start, end := e(persistHashStart), e(persistHashEnd)
	pattern := func(s string) bool { return s != "" && s != "none" }
	if off == 0 && length == 0 && !pattern(start) && !pattern(end) {
		return true // the rule's key only
	}
	pl, err := persist.NewPayload(off, length, start, end, limit)
	if err != nil {
		t.skip(o, "persistence profile %s: %v", prof.Name, err)
		return false
	}
	switch {
	case name != defaultPersistName(o):
		t.keep(o, "persistence profile %s: a hash profile's payload key runs as a virtual server's default persistence only in openltm", prof.Name)
		return false
	case v.MBLB == nil && t.profile(o, profileClientSSL, profileServerSSL) != nil:
		t.keep(o, "persistence profile %s: openltm finds a hash profile's payload key in a standard TCP virtual server's first bytes only when it passes the connection through (no client-ssl or server-ssl profile; with an http or mblb profile, in each request or message) yet", prof.Name)
		return false
	}
	p.Payload = pl
	return true
}

// mapProxies reads source-addr's map-proxies, map-proxy-class and
// map-proxy-address: with map-proxies enabled and a class, clients in the
// class's networks persist as one. Without a class nothing is mapped
// [M: BIG-IP's own class of a megaproxy's networks is not shipped].
func (t *translator) mapProxies(o, prof *objects.Object, p *dataplane.Persistence) bool {
	e := func(q *objects.Prop) string { return q.Effective(t.cfg, prof) }
	class := e(persistMapClass)
	if e(persistMapProxies) == "disabled" || class == "" || class == "none" {
		return true
	}
	dg := t.cfg.Lookup(t.s, specDataGroup, class)
	if dg == nil {
		t.skip(o, "persistence profile %s: map-proxy-class %s does not exist", prof.Name, class)
		return false
	}
	if dataGroupType.Effective(t.cfg, dg) != "ip" {
		t.skip(o, "persistence profile %s: map-proxy-class %s is not an address data group (type ip)", prof.Name, dg.Name)
		return false
	}
	pm := &dataplane.ProxyMap{}
	if v := dataGroupRecords.Get(dg); v != nil {
		for _, it := range v.Items {
			n, err := netip.ParsePrefix(it.Name)
			if err != nil {
				a, aerr := netip.ParseAddr(it.Name)
				if aerr != nil {
					t.skip(o, "persistence profile %s: map-proxy-class %s: %q is not an address or network", prof.Name, dg.Name, it.Name)
					return false
				}
				n = netip.PrefixFrom(a, a.BitLen())
			}
			pm.Nets = append(pm.Nets, n.Masked())
		}
	}
	if a := e(persistMapAddr); a != "" && a != "none" {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			t.skip(o, "persistence profile %s: map-proxy-address %q is not an IP address", prof.Name, a)
			return false
		}
		pm.Addr = ip.Unmap()
	}
	if len(pm.Nets) > 0 {
		p.Proxies = pm
	}
	return true
}

// persistRule adds a universal profile's rule to the virtual's rule list
// (unless the virtual lists it already) and attaches the whole list again.
func (t *translator) persistRule(o *objects.Object, v *dataplane.Virtual, profile, rule string) bool {
	ro := t.cfg.Lookup(t.s, specRule, rule)
	if ro == nil {
		t.skip(o, "persistence profile %s: rule %s does not exist", profile, rule)
		return false
	}
	var names []string
	if rv := virtualRules.Get(o); rv != nil {
		names = append(names, rv.List...)
	}
	for _, n := range names {
		if x := t.cfg.Lookup(t.s, specRule, n); x != nil && x.Name == ro.Name {
			return true
		}
	}
	pre, _ := t.virtualPolicyRules(o) // its refusals were noted when the virtual's rules were attached
	if _, err := t.rules.attach(t.s, t.cfg, v, pre, append(names, ro.Name)); err != nil {
		t.attachError(o, fmt.Errorf("persistence profile %s: %w", profile, err))
		return false
	}
	return true
}

// isMask reports whether a is a contiguous network mask (ones, then
// zeros).
func isMask(a netip.Addr) bool {
	b := a.AsSlice()
	zero := false
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			one := x&(1<<i) != 0
			if one && zero {
				return false
			}
			if !one {
				zero = true
			}
		}
	}
	return true
}

// cookieSettings reads a cookie persistence profile (reference §7.2): the
// method, the cookie's name (cookie-name, else BIGipServer<pool>), the
// insert attributes and the hash method's part of the value.
func (t *translator) cookieSettings(o *objects.Object, v *dataplane.Virtual, cp *objects.Object) (httpx.CookieSpec, mblb.CookieMode, bool) {
	c := func(p *objects.Prop) string { return p.Effective(t.cfg, cp) }
	var mode mblb.CookieMode
	switch m := c(cookieMethod); m {
	case "", "insert":
	case "rewrite":
		mode.Method = mblb.CookieRewrite
	case "passive":
		mode.Method = mblb.CookiePassive
	case "hash":
		mode.Method = mblb.CookieHash
		mode.HashOffset, mode.HashLength = atoi(c(cookieHashOffset)), atoi(c(cookieHashLength))
	default:
		t.skip(o, "persistence profile %s: cookie method %s is not one of insert, rewrite, passive, hash", cp.Name, m)
		return httpx.CookieSpec{}, mode, false
	}
	exp, err := cookieExpiration(c(cookieExpires))
	if err != nil {
		t.skip(o, "persistence profile %s: %v", cp.Name, err)
		return httpx.CookieSpec{}, mode, false
	}
	name := c(cookieName)
	if name == "" || name == "none" {
		if mode.Method == mblb.CookieHash {
			t.skip(o, "persistence profile %s: cookie method hash needs cookie-name (the application's cookie)", cp.Name)
			return httpx.CookieSpec{}, mode, false
		}
		if v.Pool == "" {
			t.skip(o, "persistence profile %s: cookie persistence needs cookie-name or a default pool", cp.Name)
			return httpx.CookieSpec{}, mode, false
		}
		name = httpx.PoolCookieName(v.Pool)
	}
	spec := httpx.CookieSpec{
		Name:       name,
		Expiration: exp,
		HTTPOnly:   c(cookieHTTPOnly) != "disabled",
		// secure (enabled by default) marks the cookie only where the
		// client reaches the virtual over TLS, as BIG-IP does: a browser
		// neither keeps nor sends back a Secure cookie over plain HTTP,
		// so persistence would silently break there.
		Secure:     c(cookieSecure) != "disabled" && t.profile(o, profileClientSSL) != nil,
		AlwaysSend: c(cookieAlwaysSend) == "enabled",
	}
	if !t.cookieEncryption(o, v, cp, &spec, &mode) { // translate_persistcrypt.go
		return httpx.CookieSpec{}, mode, false
	}
	return spec, mode, true
}
