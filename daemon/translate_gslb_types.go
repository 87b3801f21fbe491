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

// nameMembers reads a CNAME, MX, SRV or NAPTR pool's members: each is a
// domain name with its record's fields.
func (t *gslbTranslator) nameMembers(o *objects.Object, p *gslb.Pool) {
	v := gpoolMembers.Get(o)
	if v == nil {
		return
	}
	for _, it := range v.Items {
		name := strings.TrimSuffix(it.Name, ".")
		if name == "" || strings.ContainsAny(name, " /:") {
			t.fail("The pool member (%s) of pool (%s) is not a domain name.", it.Name, o.Name)
			return
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

// lastResortName reads last-resort-pool, written `TYPE /path` by BIG-IP
// (`a /Common/p`) or as a bare path, into the pool's full path.
func lastResortName(v, folder string) string {
	f := strings.Fields(v)
	if len(f) == 2 {
		v = f[1]
	}
	return objects.FullPath(folder, v)
}
