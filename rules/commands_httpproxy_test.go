package rules

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// proxyFake is an HTTP connection on an explicit proxy whose next hop is
// hop (invalid: not decided yet).
type proxyFake struct {
	*httpFake
	hop netip.AddrPort
}

func (f *proxyFake) HTTPProxyNextHop() (netip.AddrPort, bool) { return f.hop, f.hop.IsValid() }

// switchFake is a proxyFake that can stop proxying.
type switchFake struct {
	proxyFake
	off bool
}

func (f *switchFake) HTTPProxyEnable(on bool) error { f.off = !on; return nil }
func (f *switchFake) HTTPProxying() bool            { return !f.off }

// routeFake is a proxyFake whose rules may choose the route.
type routeFake struct {
	proxyFake
	chain     string
	chainHop  netip.AddrPort
	absolute  bool
	setHop    netip.AddrPort
	refuseAll bool
}

func (f *routeFake) HTTPProxyChain(virtual string, hop netip.AddrPort) error {
	if f.refuseAll {
		return errors.New("too late")
	}
	f.chain, f.chainHop = virtual, hop
	return nil
}

func (f *routeFake) HTTPProxyChained() string {
	if f.chainHop.IsValid() {
		return f.chainHop.String()
	}
	return f.chain
}

func (f *routeFake) HTTPProxyURIRewrite(on bool) error { f.absolute = !on; return nil }
func (f *routeFake) HTTPProxyURIRewriting() bool       { return !f.absolute }
func (f *routeFake) HTTPProxySetHop(hop netip.AddrPort) error {
	f.setHop = hop
	f.hop = hop
	return nil
}

func TestHTTPProxyCommand(t *testing.T) {
	const req = "GET http://o.test/a HTTP/1.1\r\nHost: o.test\r\n\r\n"
	hop := netip.MustParseAddrPort("127.22.4.1:8080")
	for _, tc := range []struct {
		name string
		conn func(t *testing.T) Conn
		ev   Event
		expr string
		want string
		err  string
	}{
		{"addr", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPProxyRequest, "HTTP::proxy addr", "127.22.4.1", ""},
		{"port", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPProxyConnect, "HTTP::proxy port", "8080", ""},
		{"exists", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPProxyRequest, "HTTP::proxy exists", "1", ""},
		{"rtdom", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPProxyRequest, "HTTP::proxy rtdom", "0", ""},
		{"not decided yet", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), netip.AddrPort{}} }, HTTPRequest, "list [HTTP::proxy exists] [HTTP::proxy addr]", "0 {}", ""},
		{"a reverse proxy", func(t *testing.T) Conn { return newHTTPFake(t, req, "") }, HTTPRequest, "list [HTTP::proxy exists] [HTTP::proxy port]", "0 {}", ""},
		{"no http profile", func(t *testing.T) Conn { return newFakeConn() }, ClientAccepted, "HTTP::proxy addr", "", "no http profile"},
		{"chain on a reverse proxy", func(t *testing.T) Conn { return newHTTPFake(t, req, "") }, HTTPRequest, "HTTP::proxy chain /Common/up", "", "not supported here"},
		{"iptuple read", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPProxyRequest, "HTTP::proxy iptuple", "127.22.4.1 8080", ""},
		{"iptuple read undecided", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), netip.AddrPort{}} }, HTTPRequest, "HTTP::proxy iptuple", "", ""},
		{"disable, then read", func(t *testing.T) Conn { return &switchFake{proxyFake: proxyFake{newHTTPFake(t, req, ""), hop}} }, HTTPRequest, "set a [HTTP::proxy]; HTTP::proxy disable; list $a [HTTP::proxy]", "enable disable", ""},
		{"enable again", func(t *testing.T) Conn {
			return &switchFake{proxyFake: proxyFake{newHTTPFake(t, req, ""), hop}, off: true}
		}, HTTPProxyRequest, "HTTP::proxy enable; HTTP::proxy", "enable", ""},
		{"disable refused on a reverse proxy", func(t *testing.T) Conn { return newHTTPFake(t, req, "") }, HTTPRequest, "HTTP::proxy disable", "", "not supported"},
		{"bad option", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPRequest, "HTTP::proxy where", "", `bad option "where"`},
		{"no option", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPRequest, "HTTP::proxy", "", "wrong # args"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalIn(t, tc.conn(t), nil, tc.ev, tc.expr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("= %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("= %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestHTTPProxyRouteCommand: chain, uri-rewrite and iptuple read and set
// the route through HTTPProxyRoute, and refuse bad input with nothing
// changed.
func TestHTTPProxyRouteCommand(t *testing.T) {
	const req = "GET http://o.test/a HTTP/1.1\r\nHost: o.test\r\n\r\n"
	hop := netip.MustParseAddrPort("127.22.4.1:8080")
	for _, tc := range []struct {
		name, expr, want, err string
		refuse                bool
		// chain, absolute, setHop: the fake's state after the command.
		chain    string
		absolute bool
		setHop   string
	}{
		{name: "chain unset", expr: "HTTP::proxy chain", want: ""},
		{name: "chain a virtual", expr: "HTTP::proxy chain up_vs; HTTP::proxy chain", want: "/Common/up_vs", chain: "/Common/up_vs"},
		{name: "chain a full name", expr: "HTTP::proxy chain /Part/up_vs", chain: "/Part/up_vs"},
		{name: "chain host", expr: "HTTP::proxy chain host 127.22.4.9 3128; HTTP::proxy chain", want: "127.22.4.9:3128", chain: "127.22.4.9:3128"},
		{name: "chain disable", expr: "HTTP::proxy chain up_vs; HTTP::proxy chain disable; HTTP::proxy chain", want: ""},
		{name: "chain host bad address", expr: "HTTP::proxy chain host proxy.test 3128", err: "bad address"},
		{name: "chain host bad port", expr: "HTTP::proxy chain host 127.22.4.9 0", err: "bad port"},
		{name: "chain host short", expr: "HTTP::proxy chain host 127.22.4.9", err: "wrong # args"},
		{name: "chain enable refused", expr: "HTTP::proxy chain enable", err: "not supported"},
		{name: "chain retry refused", expr: "HTTP::proxy chain retry", err: "not supported"},
		{name: "chain too many", expr: "HTTP::proxy chain a b", err: "wrong # args"},
		{name: "chain refused by the proxy", expr: "HTTP::proxy chain up_vs", refuse: true, err: "too late"},
		{name: "uri-rewrite default", expr: "HTTP::proxy uri-rewrite", want: "enable"},
		{name: "uri-rewrite disable", expr: "HTTP::proxy uri-rewrite disable; HTTP::proxy uri-rewrite", want: "disable", absolute: true},
		{name: "uri-rewrite back", expr: "HTTP::proxy uri-rewrite disable; HTTP::proxy uri-rewrite enable; HTTP::proxy uri-rewrite", want: "enable"},
		{name: "uri-rewrite bad", expr: "HTTP::proxy uri-rewrite off", err: "bad value"},
		{name: "iptuple set", expr: "HTTP::proxy iptuple 127.22.4.7 81; list [HTTP::proxy addr] [HTTP::proxy port] [HTTP::proxy iptuple]", want: "127.22.4.7 81 {127.22.4.7 81}", setHop: "127.22.4.7:81"},
		{name: "iptuple v6", expr: "HTTP::proxy iptuple ::1 81; HTTP::proxy iptuple", want: "::1 81", setHop: "[::1]:81"},
		{name: "iptuple bad address", expr: "HTTP::proxy iptuple o.test 81", err: "bad address"},
		{name: "iptuple bad port", expr: "HTTP::proxy iptuple 127.22.4.7 70000", err: "bad port"},
		{name: "iptuple one arg", expr: "HTTP::proxy iptuple 127.22.4.7", err: "wrong # args"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &routeFake{proxyFake: proxyFake{newHTTPFake(t, req, ""), hop}, refuseAll: tc.refuse}
			got, err := evalIn(t, f, nil, HTTPProxyRequest, tc.expr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("= %q, %v; want an error with %q", got, err, tc.err)
				}
			} else if err != nil || got != tc.want {
				t.Fatalf("= %q, %v; want %q", got, err, tc.want)
			}
			if c := f.HTTPProxyChained(); c != tc.chain {
				t.Errorf("chain %q, want %q", c, tc.chain)
			}
			if f.absolute != tc.absolute {
				t.Errorf("absolute %v, want %v", f.absolute, tc.absolute)
			}
			var sh string
			if f.setHop.IsValid() {
				sh = f.setHop.String()
			}
			if sh != tc.setHop {
				t.Errorf("next hop %q, want %q", sh, tc.setHop)
			}
		})
	}
}
