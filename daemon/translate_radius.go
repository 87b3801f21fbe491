package daemon

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/radius"
	"github.com/openltm/openltm/objects"
)

// The radius profile as UDP virtuals apply it (dataplane/internal/udp/radius.go).
var (
	profileRADIUS    = schema.MustKind("ltm profile radius")
	radiusPersistAVP = profileRADIUS.MustProp("persist-avp")
	radiusClients    = profileRADIUS.MustProp("clients")
)

// radius makes a UDP virtual with a radius profile a RADIUS virtual:
// every datagram a request balanced by itself, persisted on persist-avp.
// BIG-IP takes the profile on a UDP virtual only [M: the message is
// openltm's], and not beside a sip profile. persist-avp is an attribute
// number or RFC 2865/2866 name; clients an address data group whose
// records' data is each NAS's shared secret. subscriber-discovery needs
// PEM: kept (the schema warns), the virtual still balances.
func (t *translator) radius(o *objects.Object, v *dataplane.Virtual, rp *objects.Object) bool {
	if !v.IsUDP() {
		return t.refuse("profile %s (radius) requires a udp profile on the virtual server (%s); RADIUS runs over UDP", rp.Name, o.Name)
	}
	if sp := t.profile(o, profileSIP); sp != nil {
		return t.refuse("profile %s (radius) cannot be used with sip profile %s on the virtual server (%s)", rp.Name, sp.Name, o.Name)
	}
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, rp) }
	r := &dataplane.RADIUSProfile{}
	if a := strings.TrimSpace(e(radiusPersistAVP)); a != "" && a != "none" {
		n, _, err := radius.ParseAttr(a)
		if err != nil {
			return t.refuse("profile %s (radius): persist-avp %v (virtual server %s)", rp.Name, err, o.Name)
		}
		r.PersistAVP = n
	}
	if c := e(radiusClients); c != "" && c != "none" {
		dg := t.cfg.Lookup(t.s, specDataGroup, c)
		if dg == nil {
			return t.refuse("profile %s (radius): clients data group %s does not exist", rp.Name, c)
		}
		if dataGroupType.Effective(t.cfg, dg) != "ip" {
			return t.refuse("profile %s (radius): clients %s is not an address data group (type ip)", rp.Name, dg.Name)
		}
		if recs := dataGroupRecords.Get(dg); recs != nil {
			for _, it := range recs.Items {
				n, err := netip.ParsePrefix(it.Name)
				if err != nil {
					a, aerr := netip.ParseAddr(it.Name)
					if aerr != nil {
						return t.refuse("profile %s (radius): clients %s: %q is not an address or network", rp.Name, dg.Name, it.Name)
					}
					n = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
				}
				d := dataGroupRecordData.In(it)
				if d == nil || d.Str == "" {
					t.note(o, "profile %s: clients %s: %s has no shared secret (its data); edited packets from it are not signed again", rp.Name, dg.Name, it.Name)
					continue
				}
				r.Clients = append(r.Clients, dataplane.RADIUSClient{Net: n.Masked(), Secret: []byte(d.Str)})
			}
		}
		slices.SortStableFunc(r.Clients, func(a, b dataplane.RADIUSClient) int { return cmp.Compare(b.Net.Bits(), a.Net.Bits()) })
	}
	v.RADIUS = r
	return true
}

// radiusProfile refuses a persist-avp that names no attribute, in use or
// not.
func (t *translator) radiusProfile(o *objects.Object) {
	if a := strings.TrimSpace(radiusPersistAVP.Effective(t.cfg, o)); a != "" && a != "none" {
		if _, _, err := radius.ParseAttr(a); err != nil {
			t.skip(o, "persist-avp %v", err)
		}
	}
}
