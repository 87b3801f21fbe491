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

// HTTPProxyRoute is implemented by an explicit proxy's HTTPConn whose
// rules may choose how a request leaves it: through a parent proxy
// (HTTP::proxy chain), to another address (iptuple), or with its
// absolute URI kept (uri-rewrite disable). Each setter fails outside the
// events before the proxy connects.
type HTTPProxyRoute interface {
	// HTTPProxyChain sends the request through the virtual server named
	// (or, when virtual is "", the proxy at hop); both empty: directly
	// again.
	HTTPProxyChain(virtual string, hop netip.AddrPort) error
	// HTTPProxyChained is the chained virtual's name, or its address
	// when chained by address; "" when not chained.
	HTTPProxyChained() string
	// HTTPProxyURIRewrite sets whether the absolute URI is sent to the
	// origin in origin form (on, the default).
	HTTPProxyURIRewrite(on bool) error
	// HTTPProxyURIRewriting reads it, for HTTP::proxy uri-rewrite alone.
	HTTPProxyURIRewriting() bool
	// HTTPProxySetHop sends the request to hop instead of its name's
	// addresses.
	HTTPProxySetHop(hop netip.AddrPort) error
}

// cmdHTTPProxy is HTTP::proxy addr | port | rtdom | exists | iptuple:
// the next hop of an explicit proxy's request. Without one (a reverse
// proxy, or before the proxy decided) exists is 0 and the others are
// empty [M]. HTTP::proxy enable|disable switch the request's proxying
// through HTTPProxySwitch (an explicit proxy's), and HTTP::proxy alone
// reads it (enable or disable); chain, uri-rewrite and iptuple with a
// value go through HTTPProxyRoute.
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
	if len(args) > 2 {
		return cmdHTTPProxyRoute(hc, args)
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("HTTP::proxy addr|port|rtdom|exists|iptuple|enable|disable|chain|uri-rewrite")
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
	case "iptuple":
		if !ok {
			return tcl.Empty, nil
		}
		return tcl.List(tcl.Str(hop.Addr().Unmap().String()), tcl.Str(strconv.Itoa(int(hop.Port())))), nil
	case "chain", "uri-rewrite":
		rt, is := hc.(HTTPProxyRoute)
		if !is {
			return tcl.Empty, tcl.Errorf("HTTP::proxy %s is not supported here: only an explicit proxy (proxy-type explicit) has a next hop to choose", sub)
		}
		if sub == "chain" {
			return tcl.Str(rt.HTTPProxyChained()), nil
		}
		if rt.HTTPProxyURIRewriting() {
			return tcl.Str("enable"), nil
		}
		return tcl.Str("disable"), nil
	default:
		return tcl.Empty, tcl.Errorf("HTTP::proxy: bad option %q: must be addr, port, rtdom, exists, iptuple, enable, disable, chain or uri-rewrite", sub)
	}
}

// cmdHTTPProxyRoute is HTTP::proxy chain <virtual> | chain host <addr>
// <port> | chain disable, uri-rewrite enable|disable and iptuple <addr>
// <port>: the rule chooses how an explicit proxy's request leaves.
// Addresses are literals (a chained proxy or a next hop named by a name
// would need a resolution the rule cannot wait for) [M].
func cmdHTTPProxyRoute(hc HTTPConn, args []tcl.Value) (tcl.Value, error) {
	sub := args[1].String()
	rt, is := hc.(HTTPProxyRoute)
	if !is {
		switch sub {
		case "chain", "uri-rewrite", "iptuple":
			return tcl.Empty, tcl.Errorf("HTTP::proxy %s is not supported here: only an explicit proxy (proxy-type explicit) has a next hop to choose", sub)
		}
	}
	switch sub {
	case "chain":
		switch v := args[2].String(); {
		case v == "host":
			if len(args) != 5 {
				return tcl.Empty, tcl.WrongArgs("HTTP::proxy chain host <addr> <port>")
			}
			hop, err := proxyHop(args[3].String(), args[4].String())
			if err != nil {
				return tcl.Empty, err
			}
			return tcl.Empty, rt.HTTPProxyChain("", hop)
		case len(args) != 3:
			return tcl.Empty, tcl.WrongArgs("HTTP::proxy chain <virtual>|disable|host <addr> <port>")
		case v == "disable":
			return tcl.Empty, rt.HTTPProxyChain("", netip.AddrPort{})
		case v == "enable" || v == "port" || v == "retry" || v == "":
			return tcl.Empty, tcl.Errorf("HTTP::proxy chain %q is not supported: name the virtual server to chain through, or host <addr> <port>", v)
		default:
			return tcl.Empty, rt.HTTPProxyChain(FullName(v), netip.AddrPort{})
		}
	case "uri-rewrite":
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs("HTTP::proxy uri-rewrite [enable|disable]")
		}
		switch v := args[2].String(); v {
		case "enable", "disable":
			return tcl.Empty, rt.HTTPProxyURIRewrite(v == "enable")
		default:
			return tcl.Empty, tcl.Errorf("HTTP::proxy uri-rewrite: bad value %q: must be enable or disable", v)
		}
	case "iptuple":
		if len(args) != 4 {
			return tcl.Empty, tcl.WrongArgs("HTTP::proxy iptuple [<addr> <port>]")
		}
		hop, err := proxyHop(args[2].String(), args[3].String())
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, rt.HTTPProxySetHop(hop)
	}
	return tcl.Empty, tcl.WrongArgs("HTTP::proxy addr|port|rtdom|exists|iptuple|enable|disable|chain|uri-rewrite")
}

// proxyHop reads an address literal and a port (1-65535) of
// HTTP::proxy iptuple or chain host.
func proxyHop(addr, port string) (netip.AddrPort, error) {
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Zone() != "" {
		return netip.AddrPort{}, tcl.Errorf("HTTP::proxy: bad address %q: an IPv4 or IPv6 literal is needed", addr)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return netip.AddrPort{}, tcl.Errorf("HTTP::proxy: bad port %q: must be 1 to 65535", port)
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), nil
}
