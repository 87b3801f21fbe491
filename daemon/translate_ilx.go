package daemon

import (
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/ilx"
	"github.com/openltm/openltm/objects"
)

// The ilx profile (dataplane/ilx streaming): each client connection of
// the virtual goes to the plugin's extension that started an
// f5.ILXPlugin, which chooses the server and reads and writes both
// sides.
var (
	profileILX    = schema.MustKind("ltm profile ilx")
	ilxProfPlugin = profileILX.MustProp("plugin")
)

// ilxProfile gives a TCP virtual its ilx profile. The profile must name
// an existing plugin; like socks, it needs a tcp profile and refuses the
// profiles that read the client's bytes as something else or end its TLS
// [M: BIG-IP's messages for these are unknown; the plugin's is BIG-IP's
// not-found wording]. A virtual's rules run CLIENT_ACCEPTED (whose pool
// or member choice is the default of flow.lbSelect) and CLIENT_CLOSED
// only; that is said as a warning. It returns false when the commit is
// refused.
func (t *translator) ilxProfile(o *objects.Object, v *dataplane.Virtual) bool {
	p := t.profile(o, profileILX)
	if p == nil {
		return true
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (ilx) requires a tcp profile on the virtual server (%s)", p.Name, o.Name)
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileMBLB, profileSIP, profileDNS, profileClientSSL, profileServerSSL, profileStream, profileSocks} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (ilx) cannot be used with %s profile %s on the virtual server (%s)", p.Name, strings.TrimPrefix(k.Key(), "ltm profile "), other.Name, o.Name)
		}
	}
	plugin := ilxProfPlugin.Effective(t.cfg, p)
	if plugin == "" || plugin == "none" {
		return t.refuse("profile %s (ilx) names no plugin (plugin none) and cannot be used on the virtual server (%s)", p.Name, o.Name)
	}
	if !strings.HasPrefix(plugin, "/") {
		plugin = "/Common/" + plugin
	}
	if t.cfg.Get(ilxPlugin, plugin) == nil {
		return t.refuse("profile %s (ilx): ilx plugin %s does not exist (%s)", p.Name, plugin, o.Name)
	}
	var m *ilx.Manager
	if t.rules != nil && t.rules.e != nil {
		m = t.rules.e.ilx
	}
	v.ILX = m.StreamProfile(p.Name, plugin)
	if rv := virtualRules.Get(o); rv != nil && len(rv.List) > 0 {
		t.note(o, "with ilx profile %s, only the CLIENT_ACCEPTED and CLIENT_CLOSED events of the virtual's rules run", p.Name)
	}
	return true
}
