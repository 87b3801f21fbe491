package daemon

import (
	"strings"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// gtmTyped are the pool and wide IP kinds of each record type, in the
// order the GSLB lists types. The A kinds' property handles read every
// type's objects: the other kinds share their property names.
var gtmTyped = func() []struct {
	t              gslb.RRType
	pool, wideip   *objects.Kind
	poolSpec, spec []string
} {
	var out []struct {
		t              gslb.RRType
		pool, wideip   *objects.Kind
		poolSpec, spec []string
	}
	for _, t := range gslb.Types {
		out = append(out, struct {
			t              gslb.RRType
			pool, wideip   *objects.Kind
			poolSpec, spec []string
		}{t, schema.MustKind("gtm pool " + string(t)), schema.MustKind("gtm wideip " + string(t)),
			schema.MustSpec("gtm pool " + string(t)), schema.MustSpec("gtm wideip " + string(t))})
	}
	return out
}()

// Properties of the name pools' members (CNAME, MX, SRV, NAPTR).
var (
	nmemberStatic     = schema.MustKind("gtm pool cname").MustProp("members").Sub.MustProp("static-target")
	nmemberPriority   = schema.MustKind("gtm pool srv").MustProp("members").Sub.MustProp("priority")
	nmemberWeight     = schema.MustKind("gtm pool srv").MustProp("members").Sub.MustProp("weight")
	nmemberPort       = schema.MustKind("gtm pool srv").MustProp("members").Sub.MustProp("port")
	nmemberPreference = schema.MustKind("gtm pool naptr").MustProp("members").Sub.MustProp("preference")
	nmemberFlags      = schema.MustKind("gtm pool naptr").MustProp("members").Sub.MustProp("flags")
	nmemberService    = schema.MustKind("gtm pool naptr").MustProp("members").Sub.MustProp("service")
)

// Properties of SVCB and HTTPS members (the two kinds share the table).
var (
	svcbMember          = schema.MustKind("gtm pool svcb").MustProp("members").Sub
	svcbPriority        = svcbMember.MustProp("priority")
	svcbPort            = svcbMember.MustProp("port")
	svcbALPN            = svcbMember.MustProp("alpn")
	svcbNoDefaultALPN   = svcbMember.MustProp("no-default-alpn")
	svcbIPv4Hint        = svcbMember.MustProp("ipv4hint")
	svcbIPv6Hint        = svcbMember.MustProp("ipv6hint")
	svcbMandatoryParams = svcbMember.MustProp("mandatory")
	svcbECH             = svcbMember.MustProp("ech")
	svcbDoHPath         = svcbMember.MustProp("dohpath")
)

// nameMembers reads a CNAME, MX, SRV, NAPTR, SVCB or HTTPS pool's
// members: each is a domain name with its record's fields.
func (t *gslbTranslator) nameMembers(o *objects.Object, p *gslb.Pool) {
	v := gpoolMembers.Get(o)
	if v == nil {
		return
	}
	svcb := p.Type == gslb.TypeSVCB || p.Type == gslb.TypeHTTPS
	for _, it := range v.Items {
		name := strings.TrimSuffix(it.Name, ".")
		if svcb && it.Name == "." {
			name = "." // RFC 9460: in service mode, the owner name itself
		}
		if name == "" || strings.ContainsAny(name, " /:") {
			t.fail("The pool member (%s) of pool (%s) is not a domain name.", it.Name, o.Name)
			return
		}
		if svcb {
			m, err := svcbPoolMember(it, name)
			if err != nil {
				t.fail("The pool member (%s) of pool %s (%s): %v.", it.Name, p.Type, o.Name, err)
				return
			}
			p.Members = append(p.Members, m)
			continue
		}
		p.Members = append(p.Members, gslb.PoolMember{
			Target:       name,
			StaticTarget: nmemberStatic.StrIn(it) == "yes",
			Order:        atoi(gmemberOrder.StrIn(it)),
			Ratio:        atoi(gmemberRatio.StrIn(it)),
			Disabled:     gmemberEnabled.StrIn(it) == "disabled",
			Priority:     uint16(atoi(nmemberPriority.StrIn(it))),
			Weight:       uint16(atoi(nmemberWeight.StrIn(it))),
			Port:         uint16(atoi(nmemberPort.StrIn(it))),
			Preference:   uint16(atoi(nmemberPreference.StrIn(it))),
			Flags:        nmemberFlags.StrIn(it),
			Service:      nmemberService.StrIn(it),
		})
	}
}

// svcbPoolMember reads an SVCB or HTTPS member: its target, SvcPriority
// and SvcParams (the dataplane checks how they fit together).
func svcbPoolMember(it *objects.Item, name string) (gslb.PoolMember, error) {
	sp, err := gslb.ParseSVCBParams(svcbALPN.StrIn(it), svcbIPv4Hint.StrIn(it), svcbIPv6Hint.StrIn(it),
		svcbMandatoryParams.StrIn(it), svcbNoDefaultALPN.StrIn(it) == "yes")
	if err != nil {
		return gslb.PoolMember{}, err
	}
	if err := sp.ParseECHDoHPath(svcbECH.StrIn(it), svcbDoHPath.StrIn(it)); err != nil {
		return gslb.PoolMember{}, err
	}
	return gslb.PoolMember{
		Target:       name,
		StaticTarget: name == "." || nmemberStatic.StrIn(it) == "yes",
		Order:        atoi(gmemberOrder.StrIn(it)),
		Ratio:        atoi(gmemberRatio.StrIn(it)),
		Disabled:     gmemberEnabled.StrIn(it) == "disabled",
		Priority:     uint16(atoi(svcbPriority.StrIn(it))),
		Port:         uint16(atoi(svcbPort.StrIn(it))),
		SVCB:         sp,
	}, nil
}

// lastResortName reads last-resort-pool, written `TYPE /path` by BIG-IP
// (`a /Common/p`) or as a bare path, into the pool's full path.
func lastResortName(v, folder string) string {
	f := strings.Fields(v)
	if len(f) == 2 {
		v = f[1]
	}
	return objects.FullPath(folder, v)
}
