package daemon

import (
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The gtp profile as UDP virtuals apply it (dataplane/internal/udp/gtp.go).
var (
	profileGTP    = schema.MustKind("ltm profile gtp")
	gtpIngressMax = profileGTP.MustProp("ingress-max")
)

// gtp makes a UDP virtual with a gtp profile a GTP virtual: every
// datagram one GTP message, checked and balanced (a subscriber's session
// kept on one member with a universal persistence profile), shown to
// the GTP_ events. BIG-IP takes the profile on a UDP virtual only [M: the
// message is openltm's], and not beside another UDP application profile
// (sip, radius, tftp, dhcpv4, dhcpv6), which would read the same
// datagrams as their own protocol.
func (t *translator) gtp(o *objects.Object, v *dataplane.Virtual, gp *objects.Object) bool {
	if !v.IsUDP() {
		return t.refuse("profile %s (gtp) requires a udp profile on the virtual server (%s); GTP runs over UDP", gp.Name, o.Name)
	}
	for _, other := range []struct {
		k    *objects.Kind
		name string
	}{{profileSIP, "sip"}, {profileRADIUS, "radius"}, {profileTFTP, "tftp"}, {profileDHCPv4, "dhcpv4"}, {profileDHCPv6, "dhcpv6"}} {
		if p := t.profile(o, other.k); p != nil {
			return t.refuse("profile %s (gtp) cannot be used with %s profile %s on the virtual server (%s)", gp.Name, other.name, p.Name, o.Name)
		}
	}
	g := &dataplane.GTPProfile{IngressMax: 100}
	if s := gtpIngressMax.Effective(t.cfg, gp); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return t.refuse("profile %s (gtp): ingress-max %q is not a number of messages (virtual server %s)", gp.Name, s, o.Name)
		}
		g.IngressMax = n
	}
	v.GTP = g
	return true
}
