package daemon

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// SVCB and HTTPS members are read with their SvcPriority and SvcParams;
// a member "." is the owner name, a static target.
func TestTranslateSVCBPools(t *testing.T) {
	gc, skipped, err := TranslateGSLB(objects.Default, gtmConfig(t, `
gtm pool https /Common/h {
    members {
        web.ex.test. { priority 2 alpn h2,h3 port 8443 ipv4hint 127.170.5.1,127.170.5.2 ipv6hint fd00::1 mandatory alpn no-default-alpn yes member-order 1 }
        . { }
    }
}
gtm pool svcb /Common/a { members { dns.example.net { priority 0 static-target yes } } }
gtm wideip https /Common/ex.test { pools { /Common/h { } } }
gtm wideip svcb /Common/_dns.ex.test { pools { /Common/a { } } }
`))
	if err != nil || len(skipped) != 0 {
		t.Fatalf("err %v skipped %v", err, skipped)
	}
	h := gc.Pools[gslb.Key(gslb.TypeHTTPS, "/Common/h")]
	if h == nil || len(h.Members) != 2 {
		t.Fatalf("https pool: %+v", h)
	}
	a := netip.MustParseAddr
	want := gslb.PoolMember{Target: "web.ex.test", Order: 1, Ratio: 1, Priority: 2, Port: 8443, SVCB: gslb.SVCBParams{
		ALPN: []string{"h2", "h3"}, NoDefaultALPN: true, IPv4Hint: []netip.Addr{a("127.170.5.1"), a("127.170.5.2")},
		IPv6Hint: []netip.Addr{a("fd00::1")}, Mandatory: []string{"alpn"}}}
	if !reflect.DeepEqual(h.Members[0], want) {
		t.Errorf("member web.ex.test:\n got %+v\nwant %+v", h.Members[0], want)
	}
	if m := h.Members[1]; m.Target != "." || !m.StaticTarget || m.Priority != 1 {
		t.Errorf("member .: %+v, want the owner, static, priority 1 (the default)", m)
	}
	if p := gc.Pools[gslb.Key(gslb.TypeSVCB, "/Common/a")]; p == nil || p.Members[0].Priority != 0 || !p.Members[0].StaticTarget {
		t.Errorf("svcb alias pool: %+v", p)
	}
	if w := gc.WideIPs[gslb.Key(gslb.TypeHTTPS, "/Common/ex.test")]; w == nil || w.Pools[0].Pool != gslb.Key(gslb.TypeHTTPS, "/Common/h") {
		t.Errorf("https wide IP: %+v", w)
	}
	if err := gslb.Check(gc); err != nil {
		t.Errorf("Check: %v", err)
	}
	// A bad hint is refused, naming the member and pool.
	_, _, err = TranslateGSLB(objects.Default, gtmConfig(t, `gtm pool https /Common/h { members { web.ex.test { priority 1 ipv6hint 127.0.0.1 } } }`))
	if err == nil || !strings.Contains(err.Error(), "web.ex.test") || !strings.Contains(err.Error(), "/Common/h") || !strings.Contains(err.Error(), "not an IPv6 address") {
		t.Errorf("bad ipv6hint: %v", err)
	}
}
