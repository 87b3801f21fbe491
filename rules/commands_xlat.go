package rules

import (
	"net/netip"

	"github.com/openltm/openltm/rules/tcl"
)

// The XLAT:: commands read a connection's source translation.
// XLAT::src_addr and XLAT::src_port answer the address and port the
// server side leaves from (an lsn pool's translation, a SNAT's, or the
// client's own without one) once it is made; F5 runs them in SA_PICKED,
// the moment the source is picked, which openltm does not raise: the
// source is picked when the server side is made, so they answer from
// SERVER_CONNECTED on, and before that are a Tcl error that says so
// [M]. XLAT::src_config answers the type and object of the virtual's
// source-address-translation as the rule left it (LSN::pool, snat,
// snatpool, LSN::disable): {LSN /Common/pool}, {SNAT /Common/snatpool},
// {AUTOMAP NA} or {NONE NA} [M: a rule's `snat ADDR` is {SNAT NA}].
//
// XLAT::listen and XLAT::listen_lifetime open and time a related
// listener on a reserved translation endpoint, and
// XLAT::src_endpoint_reservation reserves such endpoints in BIG-IP's
// translation tables; openltm's lsn pools have no reservation table a
// rule can write, so they are registered unsupported, as is
// XLAT::src_nat_valid_range, whose answer is the endpoints a related
// listener may take. DSLITE::remote_addr needs a DS-Lite tunnel, which
// openltm does not have.

// XLATConn is implemented by a Conn whose source translation a rule may
// read (the L4 proxy's flows), found by type assertion; without it the
// XLAT:: commands are Tcl errors.
type XLATConn interface {
	// XLATSource is the server side's source address and port, false
	// until the server side is made.
	XLATSource() (netip.AddrPort, bool)
	// XLATConfig is the connection's source translation: its F5 type
	// (LSN, SNAT, AUTOMAP, NONE) and object (NA: none).
	XLATConfig() (typ, object string)
}

var xlatUnsupported = map[string]string{
	"XLAT::listen":                   "openltm's lsn pools keep no endpoint reservations for a related listener to take (the listen command opens related listeners)",
	"XLAT::listen_lifetime":          "openltm's lsn pools keep no endpoint reservations for a related listener to take (the listen command opens related listeners)",
	"XLAT::src_endpoint_reservation": "openltm's lsn pools keep no endpoint reservation table a rule can write",
	"XLAT::src_nat_valid_range":      "openltm's lsn pools keep no endpoint reservations for a related listener to take, which this command's ranges are for",
	"DSLITE::remote_addr":            "openltm has no DS-Lite tunnels",
}

func registerXLAT(t *tcl.Commands) {
	t.Register("XLAT::src_addr", cmdXLATSrc("XLAT::src_addr", 0))
	t.Register("XLAT::src_port", cmdXLATSrc("XLAT::src_port", 1))
	t.Register("XLAT::src_config", cmdXLATConfig)
	registerUnsupported(t, xlatUnsupported)
}

func xlatConn(in *tcl.Interp, cmd string) (XLATConn, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	xc, ok := c.(XLATConn)
	if !ok {
		return nil, tcl.Errorf("%s: command is not valid on this virtual server (its connections' source translation cannot be read)", cmd)
	}
	return xc, nil
}

// cmdXLATSrc is XLAT::src_addr (i 0) or XLAT::src_port (i 1).
func cmdXLATSrc(name string, i int) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		c, err := xlatConn(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		src, ok := c.XLATSource()
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: the source translation is not picked yet: it is picked when the server side is made (SERVER_CONNECTED and after)", name)
		}
		if i == 1 {
			return tcl.Int(int64(src.Port())), nil
		}
		return tcl.Str(src.Addr().Unmap().String()), nil
	}
}

// cmdXLATConfig is XLAT::src_config: {TYPE OBJECT}.
func cmdXLATConfig(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("XLAT::src_config")
	}
	c, err := xlatConn(in, "XLAT::src_config")
	if err != nil {
		return tcl.Empty, err
	}
	typ, obj := c.XLATConfig()
	return tcl.List(tcl.Str(typ), tcl.Str(obj)), nil
}
