package gslb

import (
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/internal/netnstest"
)

// listenerVLANsNetnsEnv carries the client namespaces' names to the
// test binary run again inside the server's namespace.
const listenerVLANsNetnsEnv = "OPENLTM_GTM_VLANS_NETNS"

// TestListenerVLANsNetns runs a gtm listener in a network namespace of
// its own with two veth interfaces, va and vb, each leading to a
// namespace with a client: for each VLAN setting the client behind va
// and the one behind vb get answers over UDP and TCP or not, as BIG-IP
// would. The listener's address is va's, which the client behind vb
// reaches through vb. The namespaces use 127.95.x addresses with
// route_localnet, so the host's own addresses and routes are not
// touched.
func TestListenerVLANsNetns(t *testing.T) {
	sides := netnstest.Sides{Test: "TestListenerVLANsNetns", Env: listenerVLANsNetnsEnv, Prefix: "oltmg",
		Subnets: [2]string{"127.95.21", "127.95.22"}}
	if a, b, ok := sides.Inside(); ok {
		listenerVLANsInNetns(t, a, b)
		return
	}
	sides.Run(t)
}

// queryIn is gslbtest.Query from network namespace ns (named by ip
// netns): the socket is made on a thread moved there for the while.
func queryIn(t *testing.T, ns string, srv netip.AddrPort, network string, timeout time.Duration) (*dns.Msg, error) {
	t.Helper()
	var m *dns.Msg
	var err error
	netnstest.In(t, ns, func() {
		m, err = gslbtest.Query(netip.Addr{}, srv, network, "static.example.com", dns.TypeA, timeout)
	})
	return m, err
}

// listenerVLANsInNetns is TestListenerVLANsNetns inside the server's
// namespace.
func listenerVLANsInNetns(t *testing.T, a, b string) {
	va, vb := netnstest.Ifaces(t)
	listen := netip.MustParseAddrPort("127.95.21.1:5353")
	s := newServer(t, testConfig(listen), Options{})
	for _, tc := range []struct {
		name     string
		vlans    *config.VLANFilter
		aOK, bOK bool
	}{
		{"every vlan", nil, true, true},
		{"enabled on va", &config.VLANFilter{Ifindex: []int{va.Index}, Device: "va"}, true, false},
		{"enabled on vb", &config.VLANFilter{Ifindex: []int{vb.Index}, Device: "vb"}, false, true},
		{"enabled on both", &config.VLANFilter{Ifindex: []int{va.Index, vb.Index}}, true, true},
		{"disabled on va", &config.VLANFilter{Ifindex: []int{va.Index}, Disabled: true}, false, true},
		{"disabled on vb", &config.VLANFilter{Ifindex: []int{vb.Index}, Disabled: true}, true, false},
		{"enabled on vb, the check alone", &config.VLANFilter{Ifindex: []int{vb.Index}}, false, true},
		{"every vlan again", nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(listen)
			cfg.Listeners[0].VLANs = tc.vlans
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				ns string
				ok bool
			}{{a, tc.aOK}, {b, tc.bOK}} {
				for _, network := range []string{"udp", "tcp"} {
					timeout := 5 * time.Second
					if !c.ok {
						timeout = 500 * time.Millisecond
					}
					m, err := queryIn(t, c.ns, listen, network, timeout)
					if got := err == nil && len(gslbtest.Addrs(m)) > 0; got != c.ok {
						t.Errorf("client in %s over %s: answered %v (err %v), want %v", c.ns, network, got, err, c.ok)
					}
				}
			}
		})
	}
}
