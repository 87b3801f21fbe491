package rules

import "github.com/openltm/openltm/rules/tcl"

// F5 commands of namespaces openltm has whose underlying thing openltm
// lacks, or does itself without a rule's say: a rule naming one is kept
// with a warning that says why (registerUnsupported), never half obeyed.

// unbacked is each command's reason, as the Tcl error words it.
var unbacked = map[string]string{
	"LB::bias":       "openltm's balancing takes no per-connection bias; use ratio or priority groups on the pool",
	"LB::command":    "openltm has none of the F5 modules (PEM, CGNAT) whose load balancing this command drives",
	"LB::context_id": "openltm keeps no load balancing context shared with F5 modules to name",
	"LB::dst_tag":    "openltm's pool members carry no tags to select by",
	"LB::src_tag":    "openltm's pool members carry no tags to select by",
	"LINK::lasthop":  "Linux does not give an accepted connection the MAC address its packets came from",
	"LINK::qos":      "Linux does not give an accepted connection the 802.1p priority its frames carried",
	"DNS::rrname":    "the command reads the record of BIG-IP DNS's resolver and cache, which openltm does not have",
	"DNS::rrtype":    "the command reads the record of BIG-IP DNS's resolver and cache, which openltm does not have",
}

// registerF5Only adds the unbacked commands, and LINK::lasthop and
// LINK::nexthop.
func registerF5Only(t *tcl.Commands) {
	registerUnsupported(t, unbacked)
	t.Register("LINK::lasthop", cmdLinkHop("LINK::lasthop", false)).Compile = linkHook // commands_link_hop.go
	t.Register("LINK::nexthop", cmdLinkHop("LINK::nexthop", true)).Compile = linkHook
}
