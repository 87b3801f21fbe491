package rules

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestClassify: every matching class's classification, the most specific
// first (destination prefix, source prefix, ports, protocol), each once.
func TestClassify(t *testing.T) {
	p := netip.MustParsePrefix
	classes := []TrafficClass{
		{Name: "/Common/any", Classification: "bronze"},
		{Name: "/Common/net", Classification: "silver", Src: p("10.1.0.0/16")},
		{Name: "/Common/host", Classification: "gold", Src: p("10.1.2.3/32")},
		{Name: "/Common/web", Classification: "web", Dst: p("10.9.0.0/24"), DstPort: 80, Proto: 6},
		{Name: "/Common/udp", Classification: "dns", DstPort: 53, Proto: 17},
		{Name: "/Common/again", Classification: "silver", Src: p("10.0.0.0/8")},
		{Name: "/Common/sport", Classification: "hi", SrcPort: 40000},
	}
	ap := netip.MustParseAddrPort
	for _, tc := range []struct {
		src, dst string
		proto    int
		want     []string
	}{
		{"10.1.2.3:1000", "10.9.0.1:80", 6, []string{"web", "gold", "silver", "bronze"}},
		{"10.1.9.9:1000", "10.9.1.1:80", 6, []string{"silver", "bronze"}},
		{"10.7.9.9:1000", "10.9.0.1:53", 17, []string{"silver", "dns", "bronze"}},
		{"192.0.2.1:1000", "10.9.0.1:80", 17, []string{"bronze"}},
		{"[::ffff:10.1.2.3]:40000", "10.9.9.9:443", 6, []string{"gold", "silver", "hi", "bronze"}},
	} {
		got := Classify(classes, ap(tc.src), ap(tc.dst), tc.proto)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s -> %s/%d: %v, want %v", tc.src, tc.dst, tc.proto, got, tc.want)
		}
	}
	if got := Classify(nil, ap("10.1.2.3:1"), ap("10.9.0.1:80"), 6); got != nil {
		t.Errorf("no classes: %v", got)
	}
}

// TestLBClass: LB::class answers the virtual's most specific match ("" for
// none, or without classes), LB::class a every match; other arguments
// are refused.
func TestLBClass(t *testing.T) {
	c := infoConn{newFakeConn()} // client 127.0.0.9:40001 -> virtual 127.0.0.43:10100, tcp
	p := netip.MustParsePrefix
	env := &Env{TrafficClasses: func(v string) []TrafficClass {
		if v != "/Common/vs_http" {
			return nil
		}
		return []TrafficClass{
			{Name: "/Common/a", Classification: "loopback", Src: p("127.0.0.0/8")},
			{Name: "/Common/b", Classification: "client9", Src: p("127.0.0.9/32"), DstPort: 10100},
			{Name: "/Common/c", Classification: "udp", Proto: 17},
		}
	}}
	for _, tc := range []struct {
		c         Conn
		env       *Env
		expr      string
		want, err string
	}{
		{c, env, "LB::class", "client9", ""},
		{c, env, "LB::class a", "client9 loopback", ""},
		{c, &Env{}, "LB::class", "", ""},
		{newFakeConn(), env, "LB::class", "", ""}, // no virtual to ask for
		{c, env, "LB::class b", "", "wrong # args"},
		{c, env, "LB::class a b", "", "wrong # args"},
	} {
		got, err := evalIn(t, tc.c, tc.env, ClientAccepted, tc.expr)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %q, %v; want error %q", tc.expr, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.expr, got, err, tc.want)
		}
	}
}
