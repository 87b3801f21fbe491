package gslb

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// SVCBParams are the SvcParams of an SVCB or HTTPS pool member (RFC 9460)
// besides port, which is PoolMember.Port: what a client needs to reach the
// service at the member's target without asking again.
type SVCBParams struct {
	// ALPN are the alpn SvcParam's protocol ids, in order (h2, h3 ...).
	ALPN []string
	// NoDefaultALPN is the no-default-alpn SvcParam: the scheme's default
	// protocol (http/1.1 for HTTPS) is not offered, only ALPN's.
	NoDefaultALPN bool
	// IPv4Hint and IPv6Hint are the address hints.
	IPv4Hint []netip.Addr
	IPv6Hint []netip.Addr
	// Mandatory are the keys (their RFC 9460 names) a client must
	// understand to use the record.
	Mandatory []string
	// ECH is the ech SvcParam, an ECHConfigList as it goes on the wire
	// (ParseECHConfigList): the keys a TLS client encrypts its
	// ClientHello to, so the name it asks for is not seen on the path.
	ECH []byte
	// DoHPath is the dohpath SvcParam (RFC 9461): the URI template of a
	// DNS over HTTPS service at the target, "/dns-query{?dns}".
	DoHPath string
}

// ParseECHDoHPath reads the ech (base64 ECHConfigList) and dohpath
// member properties into sp; empty strings leave them out. Why apart
// from ParseSVCBParams: the two keys came later and most members set
// neither.
func (sp *SVCBParams) ParseECHDoHPath(ech, dohpath string) error {
	if ech = strings.TrimSpace(ech); ech != "" && ech != "none" {
		b, err := ParseECHConfigList(ech)
		if err != nil {
			return err
		}
		sp.ECH = b
	}
	if err := CheckDoHPath(dohpath); err != nil {
		return err
	}
	sp.DoHPath = dohpath
	return nil
}

// ParseSVCBParams reads the member properties as tmsh holds them: alpn,
// ipv4hint, ipv6hint and mandatory are comma-separated lists, RFC 9460's
// presentation format; empty strings leave the SvcParam out.
func ParseSVCBParams(alpn, ipv4hint, ipv6hint, mandatory string, noDefaultALPN bool) (SVCBParams, error) {
	var sp SVCBParams
	sp.NoDefaultALPN = noDefaultALPN
	for _, id := range splitList(alpn) {
		if len(id) > 255 {
			return sp, fmt.Errorf("alpn %q: a protocol id is 255 bytes at most", id)
		}
		sp.ALPN = append(sp.ALPN, id)
	}
	for _, h := range splitList(ipv4hint) {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() {
			return sp, fmt.Errorf("ipv4hint %q is not an IPv4 address (e.g. 192.0.2.1,192.0.2.2)", h)
		}
		sp.IPv4Hint = append(sp.IPv4Hint, a)
	}
	for _, h := range splitList(ipv6hint) {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() || a.Is4In6() {
			return sp, fmt.Errorf("ipv6hint %q is not an IPv6 address (e.g. 2001:db8::1,2001:db8::2)", h)
		}
		sp.IPv6Hint = append(sp.IPv6Hint, a)
	}
	for _, k := range splitList(mandatory) {
		k = strings.ToLower(k)
		if _, ok := svcbKeyOf(k); !ok {
			return sp, fmt.Errorf("mandatory %q is not a key a member sets (alpn, no-default-alpn, port, ipv4hint, ech, ipv6hint, dohpath)", k)
		}
		if slices.Contains(sp.Mandatory, k) {
			return sp, fmt.Errorf("mandatory lists %q twice", k)
		}
		sp.Mandatory = append(sp.Mandatory, k)
	}
	return sp, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// svcbKeyOf is the key a mandatory entry names: only those a member can
// set (mandatory itself may not be listed, RFC 9460 section 8).
func svcbKeyOf(name string) (dns.SVCBKey, bool) {
	switch name {
	case "alpn":
		return dns.SVCB_ALPN, true
	case "no-default-alpn":
		return dns.SVCB_NO_DEFAULT_ALPN, true
	case "port":
		return dns.SVCB_PORT, true
	case "ipv4hint":
		return dns.SVCB_IPV4HINT, true
	case "ipv6hint":
		return dns.SVCB_IPV6HINT, true
	case "ech":
		return dns.SVCB_ECHCONFIG, true
	case "dohpath":
		return dns.SVCB_DOHPATH, true
	}
	return 0, false
}

// svcbParams checks an SVCB or HTTPS member and builds its SvcParams in
// key order (mandatory, alpn, no-default-alpn, port, ipv4hint, ech,
// ipv6hint, dohpath), as they go on the wire. An alias-mode member (priority 0)
// takes none (RFC 9460 section 2.4.2); no-default-alpn needs alpn; a
// mandatory key must be set.
func svcbParams(mc *PoolMember) ([]dns.SVCBKeyValue, error) {
	sp := &mc.SVCB
	set := map[string]bool{
		"alpn":            len(sp.ALPN) > 0,
		"no-default-alpn": sp.NoDefaultALPN,
		"port":            mc.Port != 0,
		"ipv4hint":        len(sp.IPv4Hint) > 0,
		"ipv6hint":        len(sp.IPv6Hint) > 0,
		"ech":             len(sp.ECH) > 0,
		"dohpath":         sp.DoHPath != "",
	}
	if mc.Priority == 0 {
		for k, on := range set {
			if on {
				return nil, fmt.Errorf("%s: a member in alias mode (priority 0) takes no SvcParams; give it priority 1 or more for service mode", k)
			}
		}
		if len(sp.Mandatory) > 0 {
			return nil, fmt.Errorf("mandatory: a member in alias mode (priority 0) takes no SvcParams; give it priority 1 or more for service mode")
		}
		return nil, nil
	}
	if sp.NoDefaultALPN && len(sp.ALPN) == 0 {
		return nil, fmt.Errorf("no-default-alpn yes needs alpn (the protocols offered instead of the default one)")
	}
	var kv []dns.SVCBKeyValue
	if len(sp.Mandatory) > 0 {
		m := &dns.SVCBMandatory{}
		for _, k := range sp.Mandatory {
			if !set[k] {
				return nil, fmt.Errorf("mandatory names %s, which the member does not set", k)
			}
			key, _ := svcbKeyOf(k)
			m.Code = append(m.Code, key)
		}
		slices.Sort(m.Code)
		kv = append(kv, m)
	}
	if len(sp.ALPN) > 0 {
		kv = append(kv, &dns.SVCBAlpn{Alpn: slices.Clone(sp.ALPN)})
	}
	if sp.NoDefaultALPN {
		kv = append(kv, &dns.SVCBNoDefaultAlpn{})
	}
	if mc.Port != 0 {
		kv = append(kv, &dns.SVCBPort{Port: mc.Port})
	}
	if len(sp.IPv4Hint) > 0 {
		h := &dns.SVCBIPv4Hint{}
		for _, a := range sp.IPv4Hint {
			b := a.As4()
			h.Hint = append(h.Hint, net.IP(b[:]))
		}
		kv = append(kv, h)
	}
	if len(sp.ECH) > 0 {
		kv = append(kv, &dns.SVCBECHConfig{ECH: slices.Clone(sp.ECH)})
	}
	if len(sp.IPv6Hint) > 0 {
		h := &dns.SVCBIPv6Hint{}
		for _, a := range sp.IPv6Hint {
			b := a.As16()
			h.Hint = append(h.Hint, net.IP(b[:]))
		}
		kv = append(kv, h)
	}
	if sp.DoHPath != "" {
		kv = append(kv, &dns.SVCBDoHPath{Template: sp.DoHPath})
	}
	return kv, nil
}

// svcbAdditional adds the A and AAAA records of an SVCB or HTTPS answer's
// targets to its additional section, as RFC 9460 section 4.2 asks of an
// authoritative server, so the client needs no further query. [M] F5 is
// silent: a target naming an A or AAAA wide IP here is load balanced for
// this LDNS as a query of that wide IP would be (its pools' and members'
// counters count the answer, the wide IP's request counters do not); a
// target in a static zone gives that zone's records; a target "." stands
// for the owner name; other targets add nothing (the resolver asks).
func (s *Server) svcbAdditional(p *plan, rq *request, m *dns.Msg, qname string, targets []*nameMember) {
	for i, t := range targets {
		name := t.target
		if name == "." {
			name = qname
		}
		dup := false
		for _, u := range targets[:i] {
			if u.target == t.target {
				dup = true
			}
		}
		if dup {
			continue
		}
		for _, typ := range [2]RRType{TypeA, TypeAAAA} {
			var tw *wideIP
			if typ == TypeA {
				tw = p.lookupName(name)
			} else {
				tw = p.typed[TypeAAAA.index()].lookup(name)
			}
			if tw != nil {
				if tw.cfg.Disabled {
					continue
				}
				trq := request{plan: p, ldns: rq.ldns, client: rq.client, topoAddr: rq.topoAddr, ecs: rq.ecs, now: rq.now, shard: rq.shard}
				var d decision
				s.resolve(&trq, tw, &d)
				if d.out != outAnswer || len(d.targets) > 0 {
					continue
				}
				for _, a := range d.addrs() {
					if typ.family(a) {
						m.Extra = append(m.Extra, addrRR(name, a, d.ttl))
					}
				}
				continue
			}
			if z := p.zoneFor(name); z != nil {
				for _, rr := range z.Set(name)[typ.qtype()] {
					m.Extra = append(m.Extra, dns.Copy(rr))
				}
			}
		}
	}
}
