package daemon

import (
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/socks"
	"github.com/openltm/openltm/objects"
)

// The socks profile (dataplane/socks): the virtual's clients speak SOCKS
// 4, 4A or 5 and name their destinations.
var (
	profileSocks       = schema.MustKind("ltm profile socks")
	socksVersions      = profileSocks.MustProp("protocol-versions")
	socksConnect       = profileSocks.MustProp("default-connect-handling")
	socksResolver      = profileSocks.MustProp("dns-resolver")
	socksIPv6          = profileSocks.MustProp("ipv6")
	socksDefaultVerson = []string{"socks4", "socks4a", "socks5"}
)

// socksProfile gives a TCP virtual its socks profile. As BIG-IP does, a
// socks profile needs a tcp profile and refuses the profiles that read
// the client's bytes as something else (http, ftp, sip, mblb, dns);
// openltm also refuses TLS and stream beside it [M: BIG-IP's messages
// and whether it takes client-ssl are unknown]. It returns false when
// the commit is refused.
func (t *translator) socksProfile(o *objects.Object, v *dataplane.Virtual) bool {
	p := t.profile(o, profileSocks)
	if p == nil {
		return true
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (socks) requires a tcp profile on the virtual server (%s)", p.Name, o.Name)
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileMBLB, profileSIP, profileDNS, profileClientSSL, profileServerSSL, profileStream} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (socks) cannot be used with %s profile %s on the virtual server (%s)", p.Name, strings.TrimPrefix(k.Key(), "ltm profile "), other.Name, o.Name)
		}
	}
	c := socks.Config{Profile: p.Name}
	words := socksDefaultVerson
	if val := t.cfg.Effective(p, socksVersions.Name); val != nil {
		words = val.List
	}
	vers, err := socks.ParseVersions(words)
	if err != nil {
		return t.refuse("profile %s (socks): protocol-versions: %v", p.Name, err)
	}
	if vers == 0 {
		return t.refuse("profile %s (socks): protocol-versions names no version (%s)", p.Name, o.Name)
	}
	c.Versions = vers
	c.ConnectAllow = socksConnect.Effective(t.cfg, p) == "allow"
	c.IPv6 = socksIPv6.Effective(t.cfg, p) != "no"
	if r := socksResolver.Effective(t.cfg, p); r != "" && r != "none" {
		if !strings.HasPrefix(r, "/") {
			r = "/Common/" + r
		}
		ro := t.cfg.Lookup(t.s, specDNSResolver, r)
		if ro == nil {
			return t.refuse("profile %s (socks): dns-resolver: net dns-resolver %s does not exist", p.Name, r)
		}
		rc, err := t.resolverOf(ro) // translate_fwdproxy.go
		if err != nil {
			return t.refuse("%v", err)
		}
		c.Resolver = &rc
	}
	v.Socks = socks.New(c)
	return true
}
