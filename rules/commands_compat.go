package rules

import (
	"net/netip"

	"github.com/openltm/openltm/rules/tcl"
)

// registerCompat adds F5 core commands that answer from what a
// connection already reports: the BIG-IP 4.x names of the pool member
// counts, and PROFILE::exists.
func registerCompat(t *tcl.Commands) {
	// active_nodes and nodes are BIG-IP 4.x's names for active_members
	// and members, kept by F5 for old rules: same forms
	// (?-list? pool), same answers.
	t.Register("active_nodes", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return poolList(in, args, "active_nodes", func(c Conn, pool string) ([]netip.AddrPort, error) {
			return c.ActiveMembers(pool)
		})
	})
	t.Register("nodes", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return poolList(in, args, "nodes", func(c Conn, pool string) ([]netip.AddrPort, error) {
			li, ok := c.(LBInfo)
			if !ok {
				return nil, tcl.Errorf("this connection cannot list pool members")
			}
			return li.Members(pool)
		})
	})
	t.Register("PROFILE::exists", cmdProfileExists)
}

// profileExistsKnown are the profile types PROFILE::exists answers for on
// a Conn that does not list its virtual's profiles: those whose presence
// it shows by the interface it implements (only clients of an HTTP
// virtual implement HTTPConn, only DNS listeners DNSConn).
var profileExistsKnown = map[string]func(Conn) bool{
	"http": func(c Conn) bool { _, ok := c.(HTTPConn); return ok },
	"dns":  func(c Conn) bool { _, ok := c.(DNSConn); return ok },
}

// cmdProfileExists is PROFILE::exists TYPE ?NAME?: 1 when the virtual
// server has a profile of that type (named NAME, a full path or a name in
// any partition [M]), else 0.
func cmdProfileExists(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("PROFILE::exists type ?name?")
	}
	_, c, err := sess(in, "PROFILE::exists")
	if err != nil {
		return tcl.Empty, err
	}
	typ := ProfileType(args[1].String())
	if pl, ok := c.(ProfileLister); ok {
		name := ""
		if len(args) == 3 {
			name = args[2].String()
		}
		for _, p := range pl.VirtualProfiles() {
			if p.Type == typ && (name == "" || profileNamed(p.Name, name)) {
				return tcl.Int(1), nil
			}
		}
		return tcl.Int(0), nil
	}
	has, ok := profileExistsKnown[typ]
	if !ok || len(args) == 3 {
		return tcl.Empty, tcl.Errorf("PROFILE::exists %s: openltm cannot tell whether this virtual server has such a profile (it answers PROFILE::exists http and PROFILE::exists dns here, without a profile name)", typ)
	}
	if has(c) {
		return tcl.Int(1), nil
	}
	return tcl.Int(0), nil
}
