package rules

import (
	"net/netip"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// The XLAT:: commands read a connection's source translation.
// XLAT::src_addr and XLAT::src_port answer the address and port the
// server side leaves from (an lsn pool's translation, a SNAT's, or the
// client's own without one) once it is picked: in SA_PICKED, which a
// standard virtual with an lsn pool raises when the pool gave the flow
// its translation, just before the server connection opens from it
// (F5's example event), and from SERVER_CONNECTED on; before that
// (CLIENT_ACCEPTED, CLIENT_DATA, LB_SELECTED) the source is not picked
// yet and they are a Tcl error that says so [M: BIG-IP picks it at the
// same point; a SNAT's or automap's port is the host's choice at
// connect, so SA_PICKED is raised for lsn translations only].
// XLAT::src_config answers the type and object of the virtual's
// source-address-translation as the rule left it (LSN::pool, snat,
// snatpool, LSN::disable): {LSN /Common/pool}, {SNAT /Common/snatpool},
// {AUTOMAP NA} or {NONE NA} [M: a rule's `snat ADDR` is {SNAT NA}].
//
// XLAT::src_nat_valid_range answers the endpoints the flow's subscriber
// may be translated to, {{ADDR LOW HIGH} ...}: in mode pba each port
// block it holds (not the zombies), in mode deterministic its range of
// its translation address, in mode napt its translation address with
// the pool's translation-port-range; on a flow no lsn pool translates
// it is a Tcl error [M: F5 documents it for LSN and the security NATs;
// openltm has no security NAT], and before the translation is made as
// XLAT::src_addr is.
//
// XLAT::listen, XLAT::listen_lifetime and
// XLAT::src_endpoint_reservation write the lsn pool's tables
// (commands_lsnentry.go). DSLITE::remote_addr needs a DS-Lite tunnel,
// which openltm does not have: registered unsupported.

// XLATConn is implemented by a Conn whose source translation a rule may
// read (the L4 proxy's flows), found by type assertion; without it the
// XLAT:: commands are Tcl errors.
type XLATConn interface {
	// XLATSource is the server side's source address and port (the lsn
	// translation from SA_PICKED on), false before it is picked.
	XLATSource() (netip.AddrPort, bool)
	// XLATConfig is the connection's source translation: its F5 type
	// (LSN, SNAT, AUTOMAP, NONE) and object (NA: none).
	XLATConfig() (typ, object string)
	// XLATValidRanges are the translation endpoints the flow's
	// subscriber may take (its lsn pool's): lsn is false when no lsn
	// pool translates the flow, picked false before its translation is
	// made.
	XLATValidRanges() (r []XLATRange, lsn, picked bool)
}

// SNATXLATConfig is XLATConn.XLATConfig for a connection no lsn pool
// translates, from its SNATDecision ("none", "automap", "snatpool NAME",
// or a rule's snat address, which names no object [M]).
func SNATXLATConfig(decision string) (typ, object string) {
	switch {
	case decision == "none":
		return "NONE", "NA"
	case decision == "automap":
		return "AUTOMAP", "NA"
	case strings.HasPrefix(decision, "snatpool "):
		return "SNAT", strings.TrimPrefix(decision, "snatpool ")
	}
	return "SNAT", "NA"
}

// XLATRange is a translation address and a range of its ports.
type XLATRange struct {
	Addr      netip.Addr
	Low, High uint16
}

var xlatUnsupported = map[string]string{
	"DSLITE::remote_addr": "openltm has no DS-Lite tunnels",
}

func registerXLAT(t *tcl.Commands) {
	t.Register("XLAT::src_addr", cmdXLATSrc("XLAT::src_addr", 0))
	t.Register("XLAT::src_port", cmdXLATSrc("XLAT::src_port", 1))
	t.Register("XLAT::src_config", cmdXLATConfig)
	t.Register("XLAT::src_nat_valid_range", cmdXLATValidRange)
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
			return tcl.Empty, tcl.Errorf("%s: the source translation is not picked yet: it is picked when the server side is made (SA_PICKED, SERVER_CONNECTED and after)", name)
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

// cmdXLATValidRange is XLAT::src_nat_valid_range.
func cmdXLATValidRange(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "XLAT::src_nat_valid_range"
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs(name)
	}
	c, err := xlatConn(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	rs, lsn, picked := c.XLATValidRanges()
	switch {
	case !lsn:
		return tcl.Empty, tcl.Errorf("%s: the connection is not translated by an lsn pool", name)
	case !picked:
		return tcl.Empty, tcl.Errorf("%s: the source translation is not picked yet: it is picked when the server side is made (SA_PICKED, SERVER_CONNECTED and after)", name)
	}
	l := make([]tcl.Value, len(rs))
	for i, r := range rs {
		l[i] = tcl.List(tcl.Str(r.Addr.Unmap().String()), tcl.Int(int64(r.Low)), tcl.Int(int64(r.High)))
	}
	return tcl.List(l...), nil
}
