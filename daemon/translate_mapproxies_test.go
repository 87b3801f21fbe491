package daemon

import (
	"strings"
	"testing"
)

// TestMapProxiesTranslated: source-addr's map-proxy-class gives the
// virtual its proxy networks (a host record as a /32), with
// map-proxy-address as their key; map-proxies disabled or no class maps
// nothing; a class that is not an address data group, or an address
// that is none, is refused.
func TestMapProxiesTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.7.11.11:80 }",
		"create ltm data-group internal proxies type ip records add { 127.7.12.0/24 { } 127.7.13.7 { } }",
		"create ltm data-group internal names type string records add { a { } }",
		"create ltm persistence source-addr src_map map-proxy-class proxies map-proxy-address 10.1.1.1",
		"create ltm persistence source-addr src_off defaults-from src_map map-proxies disabled",
		"create ltm virtual v_map destination 127.7.11.1:80 pool p persist replace-all-with { src_map { default yes } }",
		"create ltm virtual v_off destination 127.7.11.2:80 pool p persist replace-all-with { src_off { default yes } }",
		"create ltm virtual v_plain destination 127.7.11.3:80 pool p persist replace-all-with { source_addr { default yes } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, _ := Translate(e.schema, e.Config())
	v := dc.Virtuals["/Common/v_map"]
	if v == nil || v.Persist == nil || v.Persist.Proxies == nil {
		t.Fatalf("v_map: %+v", v)
	}
	if pm := v.Persist.Proxies; len(pm.Nets) != 2 || pm.Nets[0].String() != "127.7.12.0/24" ||
		pm.Nets[1].String() != "127.7.13.7/32" || pm.Addr.String() != "10.1.1.1" {
		t.Fatalf("v_map: %+v", pm)
	}
	for _, n := range []string{"/Common/v_off", "/Common/v_plain"} {
		if v := dc.Virtuals[n]; v == nil || v.Persist == nil || v.Persist.Proxies != nil {
			t.Errorf("%s: %+v", n, v.Persist)
		}
	}
	for _, c := range []struct{ cmd, want string }{
		{"modify ltm persistence source-addr src_map map-proxy-class names", "map-proxy-class /Common/names is not an address data group"},
		{"modify ltm persistence source-addr src_map map-proxy-address bogus", "map-proxy-address \"bogus\" is not an IP address"},
		{"modify ltm persistence source-addr src_map map-proxy-class nowhere", "nowhere"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: %q, want %q", c.cmd, err, c.want)
		}
	}
}
