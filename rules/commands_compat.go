package rules

import (
	"net/netip"

	"github.com/openltm/openltm/rules/tcl"
)

// registerCompat adds F5 core commands that answer from what a
// connection already reports: the BIG-IP 4.x names of the pool member
// counts, and PROFILE::exists for the profiles whose presence the
// connection's interfaces show.
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
	t.Register("PROFILE::exists", cmdProfileExists).Compile = profileExistsHook
}

// profileExistsKnown are the profile types PROFILE::exists answers for:
// those whose presence a connection shows by the interface it
// implements. Only clients of an HTTP virtual implement HTTPConn and
// only DNS listeners DNSConn; the others (client-ssl before its
// handshake, tcp beside fastL4, ...) a connection does not report.
var profileExistsKnown = map[string]func(Conn) bool{
	"http": func(c Conn) bool { _, ok := c.(HTTPConn); return ok },
	"dns":  func(c Conn) bool { _, ok := c.(DNSConn); return ok },
}

// cmdProfileExists is PROFILE::exists TYPE: 1 when the virtual server
// has a profile of that type, else 0.
func cmdProfileExists(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("PROFILE::exists type ?name?")
	}
	_, c, err := sess(in, "PROFILE::exists")
	if err != nil {
		return tcl.Empty, err
	}
	typ := args[1].String()
	has, ok := profileExistsKnown[typ]
	if !ok || len(args) == 3 {
		return tcl.Empty, tcl.Errorf("PROFILE::exists %s: openltm cannot tell whether this virtual server has such a profile (it answers PROFILE::exists http and PROFILE::exists dns, without a profile name)", typ)
	}
	if has(c) {
		return tcl.Int(1), nil
	}
	return tcl.Int(0), nil
}

// profileExistsHook keeps a rule that asks PROFILE::exists about a
// literal type openltm cannot answer for, or about a profile by name,
// from running: it is listed as unsupported ("PROFILE::exists
// clientssl") rather than failing at run time.
func profileExistsHook(c *tcl.Compiler) error {
	r, ok := c.Context().(*Rule)
	if !ok {
		return nil
	}
	typ, lit := c.Literal(1)
	if !lit {
		return nil
	}
	_, known := profileExistsKnown[typ]
	if known && c.NumWords() == 3 {
		known = false
		typ += " NAME"
	}
	if !known {
		line, col := c.Pos(1)
		r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: "PROFILE::exists " + typ, Line: line, Col: col})
	}
	return nil
}
