package rules

import (
	"github.com/openltm/openltm/rules/tcl"
)

// cmdDiameterDynamic is DIAMETER::dynamic_route_insertion and
// DIAMETER::dynamic_route_lookup ?enable|disable?: the client
// connection's own dynamic-route insertion or lookup (the diameter
// session profile's dynamic-route-insertion and -lookup, which it
// overrides for the connection), read or set in the events of a message
// routing virtual's message (mrf.Session.SetDynamicRouting says when
// each takes effect). A virtual with the diameter profile has no route
// table: the commands are Tcl errors there.
func cmdDiameterDynamic(cmd, which string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " ?enable|disable?")
		}
		s := sessionOf(in)
		if s == nil || s.mr == nil || s.mr.msg == nil || s.mr.router == nil {
			return tcl.Empty, tcl.Errorf("%s: only a message routing virtual (diameter session profile) has a route table; a virtual with the diameter profile balances messages without one", cmd)
		}
		o := s.mr.msg.Originator()
		if o == nil {
			return tcl.Empty, tcl.Errorf("%s: the message has no client connection", cmd)
		}
		if len(args) == 2 {
			var on bool
			switch w := args[1].String(); w {
			case "enable", "enabled":
				on = true
			case "disable", "disabled":
			default:
				b, err := boolArg(cmd, args[1])
				if err != nil {
					return tcl.Empty, err
				}
				on = b
			}
			o.SetDynamicRouting(which, on)
			return tcl.Empty, nil
		}
		insert, lookup := o.DynamicRouting()
		on := lookup
		if which == "insertion" {
			on = insert
		}
		if on {
			return tcl.Str("enabled"), nil
		}
		return tcl.Str("disabled"), nil
	}
}
