package rules

import (
	"path"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// profileAttrTypes are the profile types whose settings PROFILE::<type>
// reads, as F5 names the commands (fastL4 and fastl4 are one type). The
// types openltm keeps no profile kind for (access, antifraud, auth, avr,
// exchange, vdi) stay F5 names it does not implement.
var profileAttrTypes = []string{"tcp", "udp", "http", "fastl4", "fastL4", "fasthttp", "oneconnect", "persist",
	"stream", "httpcompression", "webacceleration", "ftp", "xml", "diameter", "tftp"}

// registerProfile adds PROFILE::<type> ATTR and PROFILE::list TYPE: a
// rule reads its virtual's own settings (an idle timeout to log or to
// derive a table lifetime from, a redirect-rewrite mode to branch on)
// instead of repeating them as literals that drift from the profile.
func registerProfile(t *tcl.Commands) {
	for _, typ := range profileAttrTypes {
		cmd := "PROFILE::" + typ
		t.Register(cmd, cmdProfileAttr(cmd, ProfileType(typ)))
	}
	t.Register("PROFILE::list", cmdProfileList)
}

// virtualProfiles is the running connection's virtual's profiles; a
// connection that does not list them (a DNS listener) makes cmd a Tcl
// error.
func virtualProfiles(in *tcl.Interp, cmd string) (*ConnState, []ProfileRef, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	pl, ok := c.(ProfileLister)
	if !ok {
		return nil, nil, tcl.Errorf("%s: this listener has no profiles to read", cmd)
	}
	return s, pl.VirtualProfiles(), nil
}

// cmdProfileAttr is PROFILE::<type> ATTR: the setting ATTR (tmsh's
// property name, its hyphens written as underscores: idle_timeout for
// idle-timeout) of the virtual's profile of that type, as tmsh shows it.
// With a profile per side (tcp's clientside and serverside contexts) the
// running side's is read. `name` is the profile's full path [M]. A type
// the virtual has no profile of, and a setting the type lacks, are Tcl
// errors naming them.
func cmdProfileAttr(cmd, typ string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " attribute")
		}
		s, refs, err := virtualProfiles(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		p := sideProfile(refs, typ, s.side)
		if p == nil {
			return tcl.Empty, tcl.Errorf("%s: the virtual server has no %s profile", cmd, typ)
		}
		return profileAttr(cmd, p, args[1].String())
	}
}

// profileAttr reads attr of p.
func profileAttr(cmd string, p *ProfileRef, attr string) (tcl.Value, error) {
	if v, ok := p.Attrs[strings.ReplaceAll(attr, "_", "-")]; ok {
		return tcl.Str(v), nil
	}
	if v, ok := p.Attrs[attr]; ok {
		return tcl.Str(v), nil
	}
	if attr == "name" {
		return tcl.Str(p.Name), nil
	}
	return tcl.Empty, tcl.Errorf("%s: unknown attribute %q of %s profile %s", cmd, attr, p.Type, p.Name)
}

// sideProfile is the virtual's profile of type typ for side: the one of
// that side's context, else one for both sides, else any (a lone
// serverside tcp profile serves both sides, as the dataplane applies it).
func sideProfile(refs []ProfileRef, typ string, side Side) *ProfileRef {
	var both, other *ProfileRef
	for i := range refs {
		p := &refs[i]
		if p.Type != typ {
			continue
		}
		switch p.Context {
		case side.String():
			return p
		case "", "all":
			if both == nil {
				both = p
			}
		default:
			if other == nil {
				other = p
			}
		}
	}
	if both != nil {
		return both
	}
	return other
}

// cmdProfileList is PROFILE::list TYPE: the full paths of the virtual's
// profiles of that type, in the virtual's order (an empty list when it
// has none).
func cmdProfileList(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("PROFILE::list type")
	}
	_, refs, err := virtualProfiles(in, "PROFILE::list")
	if err != nil {
		return tcl.Empty, err
	}
	typ := ProfileType(args[1].String())
	var out []tcl.Value
	for _, p := range refs {
		if p.Type == typ {
			out = append(out, tcl.Str(p.Name))
		}
	}
	return tcl.List(out...), nil
}

// namedProfile is the virtual's profile named name (a full path, or a
// bare name in any partition), nil when it lists none such.
func namedProfile(refs []ProfileRef, name string) *ProfileRef {
	for i := range refs {
		if profileNamed(refs[i].Name, name) {
			return &refs[i]
		}
	}
	return nil
}

// profileNamed reports whether a profile's full path full is name: the
// same path, or a bare name in any partition [M].
func profileNamed(full, name string) bool {
	return full == name || (!strings.Contains(name, "/") && path.Base(full) == name)
}
