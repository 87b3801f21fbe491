package rules

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// LSNConn is implemented by a Conn whose server side a virtual's lsn
// pool translates (the L4 proxy's flows), found by type assertion: the
// LSN:: commands go through it, before the server side is made
// (CLIENT_ACCEPTED, CLIENT_DATA, LB_SELECTED). Without it they are Tcl
// errors.
type LSNConn interface {
	// LSNDisable makes the connection untranslated (LSN::disable).
	LSNDisable()
	// LSNPool translates the connection through the lsn pool named
	// (relative to /Common, or a full path) instead of the virtual's.
	LSNPool(name string) error
	// LSNAddress and LSNPort ask for a translation address and port of
	// the pool, taken when free.
	LSNAddress(a netip.Addr) error
	LSNPort(port uint16) error
	// LSNPersistence sets the connection's persistence mode (none,
	// address, address-port) and timeout.
	LSNPersistence(mode string, timeout time.Duration) error
	// LSNInbound lets the translation take inbound connections (an
	// explicit pool) or not.
	LSNInbound(enable bool) error
	// LSNTranslation is the connection's translation address and port
	// once the server side is made; false before, or untranslated.
	LSNTranslation() (netip.AddrPort, bool)
}

func registerLSN(t *tcl.Commands) {
	// The compile hooks (commands_lsncheck.go) refuse literal words
	// the commands would refuse when they run.
	t.Register("LSN::disable", cmdLSNDisable).Compile = lsnArity("LSN::disable", "LSN::disable", 1, 1)
	t.Register("LSN::pool", cmdLSNPool).Compile = lsnPoolHook
	t.Register("LSN::address", cmdLSNAddress).Compile = lsnAddressHook
	t.Register("LSN::port", cmdLSNPort).Compile = lsnPortHook
	t.Register("LSN::persistence", cmdLSNPersistence).Compile = lsnPersistenceHook
	t.Register("LSN::inbound", cmdLSNInbound).Compile = lsnInboundHook
	registerLSNEntries(t) // commands_lsnentry.go, with the XLAT:: entries
}

func lsnConn(in *tcl.Interp, cmd string) (LSNConn, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	lc, ok := c.(LSNConn)
	if !ok {
		return nil, tcl.Errorf("%s: command is not valid on this virtual server (its connections are not translated by an lsn pool)", cmd)
	}
	return lc, nil
}

// cmdLSNDisable is LSN::disable: the connection is not translated (its
// server side is made as without source-address-translation).
func cmdLSNDisable(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("LSN::disable")
	}
	c, err := lsnConn(in, "LSN::disable")
	if err != nil {
		return tcl.Empty, err
	}
	c.LSNDisable()
	return tcl.Empty, nil
}

// cmdLSNPool is LSN::pool NAME: the connection is translated through
// that lsn pool.
func cmdLSNPool(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("LSN::pool pool_name")
	}
	c, err := lsnConn(in, "LSN::pool")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(c.LSNPool(args[1].String()))
}

// cmdLSNAddress is LSN::address ?ADDR?: with an address, the translation
// address to take (one of the pool's, when it has a port free); without,
// the connection's translation address once made, else empty [M: F5
// documents the setting form].
func cmdLSNAddress(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("LSN::address ?address?")
	}
	c, err := lsnConn(in, "LSN::address")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		if ap, ok := c.LSNTranslation(); ok {
			return tcl.Str(ap.Addr().String()), nil
		}
		return tcl.Empty, nil
	}
	a, err := netip.ParseAddr(args[1].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("LSN::address: %q is not an IP address", args[1].String())
	}
	return tcl.Empty, tclErr(c.LSNAddress(a))
}

// cmdLSNPort is LSN::port ?PORT?, as LSN::address for the port.
func cmdLSNPort(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("LSN::port ?port?")
	}
	c, err := lsnConn(in, "LSN::port")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		if ap, ok := c.LSNTranslation(); ok {
			return tcl.Int(int64(ap.Port())), nil
		}
		return tcl.Empty, nil
	}
	p, err := strconv.ParseUint(args[1].String(), 10, 16)
	if err != nil || p == 0 {
		return tcl.Empty, tcl.Errorf("LSN::port: %q is not a port (1 to 65535)", args[1].String())
	}
	return tcl.Empty, tclErr(c.LSNPort(uint16(p)))
}

// cmdLSNPersistence is LSN::persistence none ?TIMEOUT? | (address |
// address-port) TIMEOUT. F5's older strict-address-port is read as
// address-port [M].
func cmdLSNPersistence(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "LSN::persistence none ?timeout? | (address | address-port) timeout"
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	mode := args[1].String()
	switch mode {
	case "none":
	case "address", "address-port":
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	case "strict-address-port":
		mode = "address-port"
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	default:
		return tcl.Empty, tcl.Errorf("LSN::persistence: %q is not none, address or address-port", mode)
	}
	var ttl time.Duration
	if len(args) == 3 {
		n, err := strconv.ParseUint(args[2].String(), 10, 32)
		if err != nil {
			return tcl.Empty, tcl.Errorf("LSN::persistence: timeout %q is not a number of seconds", args[2].String())
		}
		ttl = time.Duration(n) * time.Second
	}
	c, err := lsnConn(in, "LSN::persistence")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(c.LSNPersistence(mode, ttl))
}

// cmdLSNInbound is LSN::inbound disable: no inbound connections to the
// connection's translation; `enable` opens them on an explicit pool [M:
// F5 documents disable only].
func cmdLSNInbound(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 || (args[1].String() != "disable" && args[1].String() != "enable") {
		return tcl.Empty, tcl.WrongArgs("LSN::inbound disable|enable")
	}
	c, err := lsnConn(in, "LSN::inbound")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(c.LSNInbound(args[1].String() == "enable"))
}
