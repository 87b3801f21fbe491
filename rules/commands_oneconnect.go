package rules

import "github.com/openltm/openltm/rules/tcl"

// ONECONNECT::select persist|none: with persist, each of the client's
// requests from this one on reuses only the OneConnect server
// connections opened for the same persistence key (the key a persist
// command gave the request), as ONECONNECT::label keys them by a label
// of the rule's; none goes back to the label (or to sharing them with
// every client). A request without a persistence key keeps the label
// [M: F5's page does not say]. On an HTTP virtual in HTTP_REQUEST; on a
// message-based virtual (ONECONNECT::label too) in CLIENT_DATA, for the
// messages it notifies.

// OneConnectKeyer is a message-based virtual's client connection, whose
// OneConnect reuse a rule keys without an http profile
// (ONECONNECT::label, ONECONNECT::select).
type OneConnectKeyer interface {
	// OneConnectLabel keys the client's later messages' server
	// connections by label ("" shares them with every client).
	OneConnectLabel(label string) error
	// OneConnectSelect keys them by each message's persistence key
	// (persist) or stops.
	OneConnectSelect(persist bool) error
}

// oneConnectKeyer is the event's connection when it keys OneConnect
// reuse itself rather than through an http profile.
func oneConnectKeyer(in *tcl.Interp) (OneConnectKeyer, bool) {
	s := sessionOf(in)
	if s == nil || s.conn == nil {
		return nil, false
	}
	if _, http := s.conn.(HTTPConn); http {
		return nil, false
	}
	k, ok := s.conn.(OneConnectKeyer)
	return k, ok
}

func cmdOneConnectSelect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 || (args[1].String() != "persist" && args[1].String() != "none") {
		return tcl.Empty, tcl.WrongArgs("ONECONNECT::select persist|none")
	}
	on := args[1].String() == "persist"
	if k, ok := oneConnectKeyer(in); ok {
		return tcl.Empty, tclErr(k.OneConnectSelect(on))
	}
	_, hc, err := httpConn(in, "ONECONNECT::select")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: OneConnectSelect, Enable: on}))
}
