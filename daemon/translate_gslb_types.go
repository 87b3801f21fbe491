package daemon

import (
	"fmt"
	"os"
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
	svcbHPKEKey         = svcbMember.MustProp("hpke-key")
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
			if err == nil {
				err = t.hpkeECH(o, it, &m)
			}
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

// hpkeECH gives an SVCB or HTTPS member whose hpke-key names a sys file
// ssl-key the ech SvcParam built from that key's public half
// (gslb.ECHConfigList), public_name the member's target [M]: the TLS
// server behind the target holds the private key. A key that is no
// X25519 or P-curve private key, a member that also sets ech, or the
// owner name "." (no name to give as public_name) is refused; a name that
// is no sys file ssl-key (an ltm dns hpke key, which openltm does not
// keep) is kept with a warning and answers no ech.
func (t *gslbTranslator) hpkeECH(o *objects.Object, it *objects.Item, m *gslb.PoolMember) error {
	name := noneEmpty(svcbHPKEKey.StrIn(it))
	if name == "" {
		return nil
	}
	if len(m.SVCB.ECH) > 0 {
		return fmt.Errorf("hpke-key %s and ech both give the ech SvcParam: set one", name)
	}
	if m.Target == "." {
		return fmt.Errorf("hpke-key %s: the member . (the owner name) has no target to give the ECH config as its public name", name)
	}
	ko := t.cfg.Lookup(t.s, specSSLKey, objects.FullPath(folderOf(o.Name), name))
	if ko == nil {
		t.kept = append(t.kept, about(o, "member %s: hpke-key %s is no sys file ssl-key (openltm builds the ech SvcParam from an X25519 or P-curve key in a sys file ssl-key and keeps no ltm dns hpke key): the member answers without ech", it.Name, name))
		return nil
	}
	path, err := (&translator{}).sslFilePath(ko)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("hpke-key %s: cannot read %s: %v", ko.Name, path, unwrapPathErr(err))
	}
	pub, err := gslb.ParseHPKEKey(data)
	if err != nil {
		return fmt.Errorf("hpke-key %s: %v", ko.Name, err)
	}
	m.SVCB.ECH, err = gslb.ECHConfigList(pub, m.Target)
	if err != nil {
		return fmt.Errorf("hpke-key %s: %v", ko.Name, err)
	}
	return nil
}
