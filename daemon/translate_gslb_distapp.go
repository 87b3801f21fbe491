package daemon

import (
	"path"
	"strings"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// Properties of gtm distributed-app.
var (
	gtmDistApp        = schema.MustKind("gtm distributed-app")
	distAppWideIPs    = gtmDistApp.MustProp("wideips")
	distAppDependency = gtmDistApp.MustProp("dependency-level")
	distAppPersist    = gtmDistApp.MustProp("persistence")
	distAppPersistTTL = gtmDistApp.MustProp("ttl-persistence")
	distAppEnabled    = gtmDistApp.MustProp("enabled")
	distAppContexts   = gtmDistApp.MustProp("disabled-contexts")
	distAppCtxType    = distAppContexts.Sub.MustProp("type")
)

// contextKinds are the kinds a disabled-contexts item's type names.
var contextKinds = map[string]*objects.Kind{
	"datacenter": schema.MustKind("gtm datacenter"),
	"server":     schema.MustKind("gtm server"),
	"link":       schema.MustKind("gtm link"),
}

// distAppMember reads one wideips item, NAME:TYPE as bigip_gtm.conf writes
// it (www.example.com:A), relative to the application's folder; NAME with
// no type is an A wide IP [M].
func distAppMember(item, folder string) (name string, typ gslb.RRType, ok bool) {
	name, t, hasType := strings.Cut(item, ":")
	typ = gslb.TypeA
	if hasType {
		typ = gslb.RRType(strings.ToLower(t))
		found := false
		for _, x := range gslb.Types {
			found = found || x == typ
		}
		if !found {
			return "", "", false
		}
	}
	return objects.FullPath(folder, name), typ, name != ""
}

// distApps reads the gtm distributed-app objects. A wide IP named that
// does not exist is BIG-IP's not-found error and the configuration is
// refused [M: the message's words for a typed wide IP, "NAME TYPE",
// follow how tmsh names typed objects]; a wide IP left out of the GSLB
// (a dangling pool) is left out of its application with a note.
func (t *gslbTranslator) distApps() {
	for _, o := range t.cfg.Of(gtmDistApp) {
		a := &gslb.DistApp{Name: o.Name, Dependency: gslb.Dependency(t.e(o, distAppDependency)),
			Persistence: t.e(o, distAppPersist) == "enabled", PersistTTL: seconds(t.e(o, distAppPersistTTL)),
			Disabled: distAppEnabled.Str(o) == "disabled"}
		if v := distAppWideIPs.Get(o); v != nil {
			for _, it := range v.Items {
				name, typ, ok := distAppMember(it.Name, path.Dir(o.Name))
				if !ok {
					t.fail("The distributed application (%s): wide IP %q is not NAME or NAME:TYPE (TYPE one of A, AAAA, CNAME, MX, SRV, NAPTR, SVCB, HTTPS).", o.Name, it.Name)
					return
				}
				kind := schema.MustKind("gtm wideip " + string(typ))
				if t.cfg.Get(kind, name) == nil {
					if t.err == nil {
						t.err = objects.NotFound(kind, name+" "+strings.ToUpper(string(typ)))
					}
					return
				}
				key := gslb.Key(typ, name)
				if t.gc.WideIPs[key] == nil {
					t.skip(o, "wide IP %s is not in the running GSLB", name)
					continue
				}
				a.WideIPs = append(a.WideIPs, key)
			}
		}
		if v := distAppContexts.Get(o); v != nil {
			for _, it := range v.Items {
				typ := distAppCtxType.StrIn(it)
				if typ == "" {
					typ = "datacenter"
				}
				kind := contextKinds[typ]
				if kind == nil || t.cfg.Get(kind, it.Name) == nil {
					// The item names an object of another kind than its type.
					if t.err == nil && kind != nil {
						t.err = objects.NotFound(kind, it.Name)
					}
					return
				}
				// A server or link left out of the GSLB (its data center
				// dangling) takes nothing out: the context is left out too.
				if (typ == "datacenter" && t.gc.Datacenters[it.Name] == nil) || (typ == "server" && t.gc.Servers[it.Name] == nil) || (typ == "link" && t.gc.Links[it.Name] == nil) {
					t.skip(o, "disabled-contexts: %s %s is not in the running GSLB", typ, it.Name)
					continue
				}
				a.DisabledContexts = append(a.DisabledContexts, gslb.DistAppContext{Kind: gslb.Dependency(typ), Name: it.Name})
			}
		}
		if t.gc.DistApps == nil {
			t.gc.DistApps = map[string]*gslb.DistApp{}
		}
		t.gc.DistApps[o.Name] = a
	}
}
