package gslb

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestListenerVLANsLoopback: a gtm listener enabled or disabled on VLANs
// whose interface is the loopback, lo, where every query of this test
// arrives, over UDP and TCP: enabled on lo alone (bound to it) or on lo
// and another it answers; disabled on lo, or enabled only elsewhere, it
// drops the UDP query and resets the TCP client, and counts each. A
// commit changes a running listener's list; a listener made with a list
// has it from its first query.
func TestListenerVLANsLoopback(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("skipped: no lo interface: %v", err)
	}
	other := lo.Index + 1000 // no interface has it
	listen := freeAddr(t, "127.95.3.1")
	src := netip.MustParseAddr("127.95.3.9")
	cases := []struct {
		name  string
		vlans *config.VLANFilter
		ok    bool
	}{
		{"every vlan", nil, true},
		{"enabled on lo, bound", &config.VLANFilter{Ifindex: []int{lo.Index}, Device: "lo"}, true},
		{"disabled on lo", &config.VLANFilter{Ifindex: []int{lo.Index}, Disabled: true}, false},
		{"enabled on lo and another", &config.VLANFilter{Ifindex: []int{other, lo.Index}}, true},
		{"enabled elsewhere", &config.VLANFilter{Ifindex: []int{other}}, false},
		{"disabled elsewhere", &config.VLANFilter{Ifindex: []int{other}, Disabled: true}, true},
		{"enabled on none", &config.VLANFilter{}, false},
		{"every vlan again", nil, true},
	}
	check := func(t *testing.T, s *Server, name string, ok bool) {
		t.Helper()
		for _, network := range []string{"udp", "tcp"} {
			before := s.Counters().Dropped
			timeout := 2 * time.Second
			if !ok {
				timeout = 500 * time.Millisecond
			}
			m, err := gslbtest.Query(src, listen, network, "static.example.com", dns.TypeA, timeout)
			if ok {
				if err != nil || len(gslbtest.Addrs(m)) == 0 {
					t.Fatalf("%s over %s: answer %v, err %v", name, network, m, err)
				}
				continue
			}
			if err == nil {
				t.Fatalf("%s over %s: answered %v, want nothing", name, network, m)
			}
			waitFor(t, name+" over "+network+": the refused query counted", func() bool { return s.Counters().Dropped > before })
		}
	}
	var s *Server
	for _, tc := range cases {
		cfg := testConfig(listen)
		cfg.Listeners[0].VLANs = tc.vlans
		if s == nil {
			s = newServer(t, cfg, Options{})
		} else if err := s.Apply(cfg); err != nil {
			t.Fatal(err)
		}
		check(t, s, tc.name, tc.ok)
	}
	s.Close()
	cfg := testConfig(listen)
	cfg.Listeners[0].VLANs = &config.VLANFilter{Ifindex: []int{other}}
	check(t, newServer(t, cfg, Options{}), "a new listener enabled elsewhere", false)
}
