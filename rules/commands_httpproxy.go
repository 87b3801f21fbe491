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

// cmdHTTPProxy is HTTP::proxy addr | port | rtdom | exists: the next hop
// of an explicit proxy's request. Without one (a reverse proxy, or
// before the proxy decided) exists is 0 and the others are empty [M].
// The switches (enable, disable, chain, uri-rewrite, iptuple) are
// refused: openltm's explicit proxy always proxies, never through a
// chained proxy.
func cmdHTTPProxy(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, hc, err := httpConn(in, "HTTP::proxy")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("HTTP::proxy addr|port|rtdom|exists")
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
	case "enable", "disable", "chain", "uri-rewrite", "iptuple":
		return tcl.Empty, tcl.Errorf("HTTP::proxy %s is not supported: the explicit proxy always sends a request to the origin it names", sub)
	default:
		return tcl.Empty, tcl.Errorf("HTTP::proxy: bad option %q: must be addr, port, rtdom or exists", sub)
	}
}
