package rules

import (
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// HTTPProxyConn is implemented by an HTTPConn on an explicit forward
// proxy (an http profile with proxy-type explicit), so that HTTP::proxy
// can tell a rule where the proxy sends the request: ok is false until
// the proxy has resolved the origin (before HTTP_PROXY_REQUEST).
type HTTPProxyConn interface {
	HTTPProxyNextHop() (hop netip.AddrPort, ok bool)
}

// HTTPProxySwitch is implemented by an explicit proxy's HTTPConn that can
// stop proxying the current request (HTTP::proxy disable: it goes to the
// virtual's pool, as on a reverse proxy) or take it up again (enable).
// Proxying reports whether the request is being proxied.
type HTTPProxySwitch interface {
	HTTPProxyEnable(on bool) error
	HTTPProxying() bool
}

// cmdHTTPProxy is HTTP::proxy addr | port | rtdom | exists: the next hop
// of an explicit proxy's request. Without one (a reverse proxy, or
// before the proxy decided) exists is 0 and the others are empty [M].
// HTTP::proxy enable|disable switch the request's proxying through
// HTTPProxySwitch (an explicit proxy's), and HTTP::proxy alone reads it
// (enable or disable); chain, uri-rewrite and iptuple are refused:
// openltm's explicit proxy never sends through a chained proxy of its
// own choosing.
func cmdHTTPProxy(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, hc, err := httpConn(in, "HTTP::proxy")
	if err != nil {
		return tcl.Empty, err
	}
	sw, canSwitch := hc.(HTTPProxySwitch)
	if len(args) == 1 && canSwitch {
		if sw.HTTPProxying() {
			return tcl.Str("enable"), nil
		}
		return tcl.Str("disable"), nil
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("HTTP::proxy addr|port|rtdom|exists|enable|disable")
	}
	var hop netip.AddrPort
	ok := false
	if pc, is := hc.(HTTPProxyConn); is {
		hop, ok = pc.HTTPProxyNextHop()
	}
	switch sub := args[1].String(); sub {
	case "exists":
		return tcl.Bool(ok), nil
	case "addr":
		if !ok {
			return tcl.Empty, nil
		}
		return tcl.Str(hop.Addr().Unmap().String()), nil
	case "port":
		if !ok {
			return tcl.Empty, nil
		}
		return tcl.Str(strconv.Itoa(int(hop.Port()))), nil
	case "rtdom":
		if !ok {
			return tcl.Empty, nil
		}
		return tcl.Int(0), nil
	case "enable", "disable":
		if !canSwitch {
			return tcl.Empty, tcl.Errorf("HTTP::proxy %s is not supported here: only an explicit proxy (proxy-type explicit) switches its proxying", sub)
		}
		return tcl.Empty, sw.HTTPProxyEnable(sub == "enable")
	case "chain", "uri-rewrite", "iptuple":
		return tcl.Empty, tcl.Errorf("HTTP::proxy %s is not supported: the explicit proxy always sends a request to the origin it names", sub)
	default:
		return tcl.Empty, tcl.Errorf("HTTP::proxy: bad option %q: must be addr, port, rtdom, exists, enable or disable", sub)
	}
}
