package daemon

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/openltm/openltm/objects"
)

// Prober selection and link monitors reach the GSLB as written: the
// datacenter's and server's words, the prober pool's members by order
// (disabled ones left out), the server that is this device (a bigip
// server with a net self address), a link's monitor and routers.
func TestTranslateGSLBProbers(t *testing.T) {
	text := `net self /Common/s1 { address 127.94.50.3/32 }
gtm datacenter /Common/dc0 { }
gtm datacenter /Common/dc1 { prober-preference outside-datacenter prober-fallback none }
gtm server /Common/gtm { datacenter /Common/dc0 product bigip addresses { 127.94.50.3 { } } }
gtm server /Common/ltm1 { datacenter /Common/dc1 product bigip addresses { 127.94.50.1 { } } }
gtm server /Common/ltm2 { datacenter /Common/dc1 product bigip addresses { 127.94.50.2 { } } }
gtm prober-pool /Common/pp { load-balancing-mode round-robin members { /Common/ltm2 { order 1 } /Common/ltm1 { order 0 } /Common/gtm { order 2 disabled } } }
gtm server /Common/web { datacenter /Common/dc1 prober-preference pool prober-pool /Common/pp addresses { 127.94.50.40 { } } }
gtm monitor tcp /Common/rtr { destination *:9000 }
gtm link /Common/isp1 { datacenter /Common/dc1 router-addresses { 127.94.50.9 { } 127.94.50.10 { } } monitor /Common/rtr }`
	gc, _, err := TranslateGSLB(objects.Default, gtmConfig(t, text))
	if err != nil {
		t.Fatal(err)
	}
	pp := gc.ProberPools["/Common/pp"]
	if pp == nil {
		t.Fatal("no prober pool")
	}
	isp := gc.Links["/Common/isp1"]
	cases := []struct {
		name      string
		got, want any
	}{
		{"self", gc.Self, "/Common/gtm"},
		{"bigip", gc.Servers["/Common/ltm1"].BigIP, true},
		{"generic host", gc.Servers["/Common/web"].BigIP, false},
		{"datacenter preference", gc.Datacenters["/Common/dc1"].ProberPreference, "outside-datacenter"},
		{"datacenter fallback", gc.Datacenters["/Common/dc1"].ProberFallback, "none"},
		{"server preference", gc.Servers["/Common/web"].ProberPreference, "pool"},
		{"server fallback inherits", gc.Servers["/Common/web"].ProberFallback, "inherit"},
		{"server pool", gc.Servers["/Common/web"].ProberPool, "/Common/pp"},
		{"pool mode", pp.Mode, "round-robin"},
		{"pool members by order", pp.Members, []string{"/Common/ltm1", "/Common/ltm2"}},
		{"link routers", isp.RouterAddresses, []netip.Addr{netip.MustParseAddr("127.94.50.9"), netip.MustParseAddr("127.94.50.10")}},
		{"link monitor", isp.Monitor.Spec != nil && isp.Monitor.Destination.Port() == 9000, true},
	}
	for _, c := range cases {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	// A prober pool of a generic host is refused.
	_, _, err = TranslateGSLB(objects.Default, gtmConfig(t, text+"\ngtm prober-pool /Common/bad { members { /Common/web { } } }"))
	if err == nil || !strings.Contains(err.Error(), "not a BIG-IP") {
		t.Errorf("a generic host in a prober pool: %v", err)
	}
}
