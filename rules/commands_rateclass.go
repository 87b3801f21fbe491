package rules

import (
	"github.com/openltm/openltm/rules/tcl"
)

// RateClassConn is implemented by a Conn whose flow a rate class can
// shape (the L4 proxy's flows, an http virtual's paced clients, UDP
// flows), found by type assertion: rateclass goes through it. Without
// it rateclass is a Tcl error.
type RateClassConn interface {
	// RateClass puts the flow in the rate class named (relative to
	// /Common, or a full path), in place of the class it was in.
	RateClass(name string) error
}

// cmdRateClass is F5's rateclass NAME: the connection's bytes from now on
// wait on that `net rate-shaping class` (its rate, bursting to its
// ceiling with its parent's spare, in its direction), as a virtual's
// rate-class would make them
// (https://clouddocs.f5.com/api/irules/rateclass.html). A class that does
// not exist is a Tcl error [M: F5 does not say what it does with one].
func cmdRateClass(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("rateclass rateclass_name")
	}
	_, c, err := sess(in, "rateclass")
	if err != nil {
		return tcl.Empty, err
	}
	rc, ok := c.(RateClassConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("rateclass: this connection cannot be shaped by a rate class")
	}
	if err := rc.RateClass(args[1].String()); err != nil {
		return tcl.Empty, tcl.Errorf("rateclass: %v", err)
	}
	return tcl.Empty, nil
}
