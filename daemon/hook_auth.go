package daemon

import (
	"strings"

	"github.com/openltm/openltm/dataplane/authn"
)

// authRuntime is the auth profiles in service: by virtual server (each
// virtual's, in its auth list's order) and by name.
type authRuntime struct {
	byVirtual map[string][]*authn.Profile
	byName    map[string]*authn.Profile
	keys      map[string]string
}

// newAuthRuntime builds the profiles of a translation. A profile that
// was in service goes on counting; one whose settings are unchanged
// also keeps its remembered successes. log, when set, takes the
// accounting records a TACACS+ server did not take (local0.notice).
func newAuthRuntime(set authSet, prev *authRuntime, log func(facility, line string)) *authRuntime {
	rt := &authRuntime{byVirtual: map[string][]*authn.Profile{}, byName: map[string]*authn.Profile{}, keys: map[string]string{}}
	for name, spec := range set.byName {
		var old *authn.Profile
		if prev != nil {
			old = prev.byName[name]
			if old != nil && prev.keys[name] == spec.key {
				rt.byName[name] = old
				rt.keys[name] = spec.key
				continue
			}
		}
		if tc, ok := spec.backend.(*authn.TACACS); ok && log != nil {
			tc.Log = func(line string) { log("local0.notice", "AUTH: tacacs profile "+name+": "+line) }
		}
		rt.byName[name] = authn.NewProfile(name, spec.typ, spec.backend, spec.idle, old)
		rt.byName[name].MaxCache = spec.maxCache
		rt.keys[name] = spec.key
	}
	for vs, specs := range set.byVirtual {
		for _, spec := range specs {
			rt.byVirtual[vs] = append(rt.byVirtual[vs], rt.byName[spec.name])
		}
	}
	return rt
}

// authService is rules.Env.Auth: default_TYPE is the virtual's profile
// of that type (default_ssl_ocsp: ssl-ocsp); another name is one of the
// virtual's profiles by name, bare or full [M: BIG-IP names PAM services
// after its profiles; openltm looks among the virtual's own].
func (rt *ruleRuntime) authService(virtual, service string) (*authn.Profile, bool) {
	a := rt.auth.Load()
	if a == nil {
		return nil, false
	}
	if typ, ok := strings.CutPrefix(service, "default_"); ok {
		typ = strings.ReplaceAll(typ, "_", "-")
		for _, p := range a.byVirtual[virtual] {
			if p.Type == typ {
				return p, true
			}
		}
	}
	full := service
	if !strings.HasPrefix(full, "/") {
		full = "/Common/" + full
	}
	for _, p := range a.byVirtual[virtual] {
		if p.Name == full {
			return p, true
		}
	}
	return nil, false
}

// authProfiles is every auth profile in service, for the shows.
func (rt *ruleRuntime) authProfiles() map[string]*authn.Profile {
	if a := rt.auth.Load(); a != nil {
		return a.byName
	}
	return nil
}
