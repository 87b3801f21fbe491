//go:build linux

package dataplane

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAnyPortMBLBAutomap: automap without self IPs on an HTTP virtual
// that is a network on a port (127.249.0.0/16 on 30110) or on every port
// (127.250.128.0/17) leaves from the address each client reached, with
// and without OneConnect: keep-alive clients of two addresses each,
// their requests interleaved, and new connections alternating between
// the addresses; the member sees every request come from the address
// its client reached, so no server connection (OneConnect's pooled ones
// included) serves clients of two addresses.
func TestAnyPortMBLBAutomap(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startPortEcho(t, "127.250.50.11:30110", "M")
	startPortEcho(t, "127.250.50.11:30111", "A")
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			p, _ := loggedPlane(t)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
			if oc {
				m.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg := mblbConfig("127.249.0.0:30110", m, "127.250.50.11:30110")
			cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("127.249.0.0/16")
			v := *cfg.Virtuals["/Common/vs"]
			m2 := *m
			v.Name, v.Destination, v.Network, v.MBLB, v.Pool = "/Common/any", ap("127.250.128.0:0"),
				netip.MustParsePrefix("127.250.128.0/17"), &m2, "/Common/pany"
			cfg.Virtuals["/Common/any"] = &v
			withPool(cfg, "/Common/pany", "127.250.50.11:0")
			if err := Check(cfg); err != nil {
				t.Fatal(err)
			}
			mustApply(t, p, cfg)
			for _, tc := range []struct {
				addrs [2]string
				port  string
				label string
			}{
				{[2]string{"127.249.1.1", "127.249.2.2"}, "30110", "M"},
				{[2]string{"127.250.129.1", "127.250.200.2"}, "30111", "A"},
			} {
				clients := [2]*httpRuleClient{dialHTTPVS(t, tc.addrs[0]+":"+tc.port), dialHTTPVS(t, tc.addrs[1]+":"+tc.port)}
				check := func(what, addr, body string, err error) {
					t.Helper()
					if err != nil || len(body) < 2 || body[:1] != tc.label {
						t.Errorf("%s to %s: %q %v", what, addr, body, err)
						return
					}
					conn, err := netip.ParseAddrPort(echoField(body, "conn"))
					if err != nil || conn.Addr().String() != addr {
						t.Errorf("%s to %s: the member saw the request from %q, want the address the client reached", what, addr, echoField(body, "conn"))
					}
				}
				for i := range 4 {
					for j, c := range clients {
						_, body, err := c.do(httpReq("net.example", fmt.Sprintf("/k%d", i)))
						check("keep-alive request", tc.addrs[j], body, err)
					}
				}
				for i := range 3 {
					for _, addr := range tc.addrs {
						_, body, err := dialHTTPVS(t, addr+":"+tc.port).do(httpReq("net.example", fmt.Sprintf("/n%d", i)))
						check("new connection", addr, body, err)
					}
				}
			}
		})
	}
}

// TestAnyPortHTTP2MembersAutomap: on an HTTP virtual that is a network
// on a port (127.249.0.0/16 on 30112) with automap and members asked in
// HTTP/2, the member connections are shared by the clients of one
// address only: clients of two addresses, two connections, whatever the
// number of requests (each leaves from the address its clients reached).
func TestAnyPortHTTP2MembersAutomap(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startH2Member(t, "127.250.51.11:30112", "H", nil, nil)
	p, _ := loggedPlane(t)
	cfg, st := memberH2Config(t, "127.249.0.0:30112", "127.250.51.11:30112")
	cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("127.249.0.0/16")
	if cfg.Virtuals["/Common/vs"].SNAT.Type != SNATAutomap {
		t.Fatalf("SNAT %q, want automap", cfg.Virtuals["/Common/vs"].SNAT.Type)
	}
	mustApply(t, p, cfg)
	for i := range 3 {
		for _, addr := range []string{"127.249.3.1", "127.249.4.2"} {
			resp, err := h2Client(t).Get(fmt.Sprintf("http://%s:30112/a%d", addr, i))
			if err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			if body := readBody(t, resp); len(body) < 2 || body[:2] != "H " {
				t.Errorf("%s: %q", addr, body)
			}
		}
	}
	if n := st.TotalConnections.Load(); n != 2 {
		t.Errorf("%d member connections, want 2 (one per address reached)", n)
	}
}

// TestAnyPortMBLBSNATObjectAutomap: on an HTTP virtual that is a
// network on a port (127.249.128.0/18 on 30113) with its own SNAT none,
// an ltm snat object with automap for every client leaves from the
// address each client reached too, with and without OneConnect (not
// from the network's address, the virtual's Destination); with the
// virtual's SNAT none and no SNAT object, the member sees the client's
// own address.
func TestAnyPortMBLBSNATObjectAutomap(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startPortEcho(t, "127.250.150.11:30113", "S")
	for _, tc := range []struct {
		name      string
		oc, snats bool
	}{
		{"snat-object", false, true},
		{"snat-object-oneconnect", true, true},
		{"no-snat", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := loggedPlane(t)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
			if tc.oc {
				m.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg := mblbConfig("127.249.128.0:30113", m, "127.250.150.11:30113")
			v := cfg.Virtuals["/Common/vs"]
			v.Network = netip.MustParsePrefix("127.249.128.0/18")
			v.SNAT = SNAT{Type: SNATNone}
			if tc.snats {
				cfg.SNATs = []SNATObject{{Name: "/Common/am", Origins: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, Automap: true}}
			}
			if err := Check(cfg); err != nil {
				t.Fatal(err)
			}
			mustApply(t, p, cfg)
			addrs := [2]string{"127.249.130.1", "127.249.190.2"}
			check := func(what, addr, body string, err error) {
				t.Helper()
				if err != nil || len(body) < 2 || body[:1] != "S" {
					t.Errorf("%s to %s: %q %v", what, addr, body, err)
					return
				}
				conn, err := netip.ParseAddrPort(echoField(body, "conn"))
				switch {
				case err != nil:
					t.Errorf("%s to %s: member's conn field %q: %v", what, addr, echoField(body, "conn"), err)
				case tc.snats && conn.Addr().String() != addr:
					t.Errorf("%s to %s: the member saw the request from %s, want the address the client reached", what, addr, conn.Addr())
				case !tc.snats && conn.Addr().String() == addr:
					t.Errorf("%s to %s: without SNAT the member saw the address the client reached, want the client's", what, addr)
				}
			}
			clients := [2]*httpRuleClient{dialHTTPVS(t, addrs[0]+":30113"), dialHTTPVS(t, addrs[1]+":30113")}
			for i := range 3 {
				for j, c := range clients {
					_, body, err := c.do(httpReq("net.example", fmt.Sprintf("/k%d", i)))
					check("keep-alive request", addrs[j], body, err)
				}
			}
			for i := range 2 {
				for _, addr := range addrs {
					_, body, err := dialHTTPVS(t, addr+":30113").do(httpReq("net.example", fmt.Sprintf("/n%d", i)))
					check("new connection", addr, body, err)
				}
			}
		})
	}
}
