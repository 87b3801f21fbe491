package rules

import (
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
		{"chain refused", func(t *testing.T) Conn { return &proxyFake{newHTTPFake(t, req, ""), hop} }, HTTPProxyRequest, "HTTP::proxy chain", "", "not supported"},
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
