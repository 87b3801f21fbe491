package rules

import (
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// SOCKSState is a SOCKS client's request while SOCKS_REQUEST runs: what
// SOCKS::version reads, and the destination and verdict SOCKS::destination
// and SOCKS::allowed read and change, so that a rule can send a client
// elsewhere or turn it away before anything is resolved or connected.
type SOCKSState struct {
	// Version is 4 (4A included) or 5.
	Version int
	// Allowed: the request goes on (the profile's
	// default-connect-handling decided it first).
	Allowed bool
	// Destination reads the request's destination (ADDR:PORT or
	// NAME:PORT).
	Destination func() string
	// SetDestination changes it; an error is a value that is not
	// ADDR:PORT or NAME:PORT.
	SetDestination func(string) error
}

// SOCKSConn is implemented by a Conn whose virtual has a socks profile,
// found by type assertion.
type SOCKSConn interface {
	// SOCKS is the request being decided, nil outside SOCKS_REQUEST.
	SOCKS() *SOCKSState
}

func registerSOCKS(t *tcl.Commands) {
	t.Register("SOCKS::version", cmdSOCKSVersion)
	t.Register("SOCKS::allowed", cmdSOCKSAllowed)
	t.Register("SOCKS::destination", cmdSOCKSDestination)
}

// socksRequest is the running connection's request.
func socksRequest(in *tcl.Interp, cmd string) (*SOCKSState, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(SOCKSConn)
	if !ok {
		return nil, tcl.Errorf("%s: the virtual server has no socks profile", cmd)
	}
	r := sc.SOCKS()
	if r == nil {
		return nil, tcl.Errorf("%s: only valid in SOCKS_REQUEST", cmd)
	}
	return r, nil
}

// cmdSOCKSVersion is SOCKS::version: 4 or 5 (a SOCKS 4A client is 4).
func cmdSOCKSVersion(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("SOCKS::version")
	}
	r, err := socksRequest(in, "SOCKS::version")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(strconv.Itoa(r.Version)), nil
}

// cmdSOCKSAllowed is SOCKS::allowed ?0|1?: whether the request goes on
// (1) or is answered "not allowed by ruleset" (0); without a value, the
// current verdict, the profile's default-connect-handling's until a rule
// sets it.
func cmdSOCKSAllowed(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("SOCKS::allowed ?0|1?")
	}
	var on bool
	if len(args) == 2 {
		b, err := args[1].Truth()
		if err != nil {
			return tcl.Empty, tcl.Errorf("SOCKS::allowed: %v", err)
		}
		on = b
	}
	r, err := socksRequest(in, "SOCKS::allowed")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		r.Allowed = on
		return tcl.Empty, nil
	}
	if r.Allowed {
		return tcl.Str("1"), nil
	}
	return tcl.Str("0"), nil
}

// cmdSOCKSDestination is SOCKS::destination ?ADDR:PORT|NAME:PORT?: where
// the request goes, or, with a value, where it goes instead (a name is
// resolved through the profile's dns-resolver).
func cmdSOCKSDestination(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("SOCKS::destination ?addr:port?")
	}
	r, err := socksRequest(in, "SOCKS::destination")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		if err := r.SetDestination(args[1].String()); err != nil {
			return tcl.Empty, tcl.Errorf("SOCKS::destination: %v", err)
		}
		return tcl.Empty, nil
	}
	return tcl.Str(r.Destination()), nil
}

// SOCKSNeeds lists the rule's SOCKS_REQUEST handlers: BIG-IP refuses the
// rule on a virtual server without a socks profile (01070394), where the
// event could never run.
func (r *Rule) SOCKSNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event == SOCKSRequest {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}
