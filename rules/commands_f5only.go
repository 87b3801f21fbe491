package rules

import (
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// F5 commands of namespaces openltm has whose underlying thing openltm
// lacks, or does itself without a rule's say: each is a command, so
// that a rule naming it loads as on BIG-IP, and each call is a Tcl error
// that says why nothing was done (a rule that relies on one fails where
// it can be seen, never half obeyed). The few with a documented answer
// openltm can give truthfully give it (LINK::nexthop before the server
// connection).

// unbacked is each command's reason, as the Tcl error words it.
var unbacked = map[string]string{
	"LB::bias":           "openltm's balancing takes no per-connection bias; use ratio or priority groups on the pool",
	"LB::class":          "openltm has no traffic classes (ltm traffic-class) for a connection to match",
	"LB::command":        "openltm has none of the F5 modules (PEM, CGNAT) whose load balancing this command drives",
	"LB::context_id":     "openltm keeps no load balancing context shared with F5 modules to name",
	"LB::connlimit":      "openltm has no per-key connection limits; use the virtual's, node's or member's connection-limit",
	"LB::dst_tag":        "openltm's pool members carry no tags to select by",
	"LB::src_tag":        "openltm's pool members carry no tags to select by",
	"LINK::lasthop":      "Linux does not give an accepted connection the MAC address its packets came from",
	"LINK::qos":          "Linux does not give an accepted connection the 802.1p priority its frames carried",
	"ONECONNECT::select": "openltm picks the idle member connection a request reuses itself (by label, ONECONNECT::label)",
	"TCP::offset":        "openltm does not count the stream position of collected data",
	"UDP::debug_queue":   "openltm keeps no per-flow UDP queue to show",
	"UDP::max_buf_pkts":  "openltm keeps no per-flow UDP buffer to bound (the udp profile's max-buffer-packets)",
	"UDP::max_rate":      "openltm does not pace a UDP flow's datagrams",
	"DNS::rrname":        "the command reads the record of BIG-IP DNS's resolver and cache, which openltm does not have",
	"DNS::rrtype":        "the command reads the record of BIG-IP DNS's resolver and cache, which openltm does not have",
}

// registerF5Only adds the unbacked commands, and LINK::nexthop.
func registerF5Only(t *tcl.Commands) {
	for name, why := range unbacked {
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			return tcl.Empty, tcl.Errorf("%s: not supported: %s", name, why)
		})
	}
	t.Register("LINK::nexthop", cmdLinkNexthop)
}

// cmdLinkNexthop is LINK::nexthop ?id|name|type?. F5 documents the
// broadcast address ff:ff:ff:ff:ff:ff on the client side before the
// server connection is made, which openltm answers too; after it, the
// next hop's MAC address, name and type are the host's neighbour and
// route tables', which a proxy on sockets does not read: a Tcl error.
func cmdLinkNexthop(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "LINK::nexthop"
	what := ""
	if len(args) == 2 {
		what = args[1].String()
	}
	switch {
	case len(args) > 2, len(args) == 2 && what != "id" && what != "name" && what != "type":
		return tcl.Empty, tcl.WrongArgs(name + " ?id|name|type?")
	}
	s, _, err := sess(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	if (what == "" || what == "id") && s.side == ClientSide && (s.event == FlowInit || s.event == ClientAccepted) {
		// Before load balancing: no server connection yet, whatever
		// the virtual [M: later client-side events may have one].
		return tcl.Str("ff:ff:ff:ff:ff:ff"), nil
	}
	return tcl.Empty, tcl.Errorf("%s%s: not supported: Linux does not give a proxied connection its next hop's %s", name,
		strings.TrimSpace(" "+what), map[string]string{"": "MAC address", "id": "MAC address", "name": "VLAN name", "type": "link type"}[what])
}
