package gslb

import (
	"net/netip"
	"testing"
	"time"
)

func TestWildMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*.cdn.example.com.", "img.cdn.example.com.", true},
		{"*.cdn.example.com.", "a.b.cdn.example.com.", true},
		{"*.cdn.example.com.", "cdn.example.com.", false},
		{"www?.example.com.", "www1.example.com.", true},
		{"www?.example.com.", "www.example.com.", false},
		{"*", "anything.", true},
		{"a*b*c.", "axxbyyc.", true},
		{"a*b*c.", "axxbyy.", false},
		{"exact.", "exact.", true},
	}
	for _, c := range cases {
		if got := wildMatch(c.pat, c.s); got != c.want {
			t.Errorf("wildMatch(%q, %q) = %v", c.pat, c.s, got)
		}
	}
}

// Longest match sorts records: a non-negated entry before a negated one,
// a subnet before a region before a datacenter, a longer prefix first.
func TestTopologyRank(t *testing.T) {
	pfx := netip.MustParsePrefix
	order := []Match{
		{Kind: MatchSubnet, Prefix: pfx("10.1.1.1/32")},
		{Kind: MatchSubnet, Prefix: pfx("10.1.0.0/16")},
		{Kind: MatchSubnet, Prefix: pfx("0.0.0.0/0")},
		{Kind: MatchRegion, Name: "/Common/r"},
		{Kind: MatchCountry, Name: "CN"},
		{Kind: MatchPool, Name: "/Common/p"},
		{Kind: MatchDatacenter, Name: "/Common/dc"},
		{Not: true, Kind: MatchSubnet, Prefix: pfx("10.0.0.0/8")},
		{Not: true, Kind: MatchDatacenter, Name: "/Common/dc"},
	}
	for i := 1; i < len(order); i++ {
		if rank(order[i-1]) <= rank(order[i]) {
			t.Errorf("%+v should rank above %+v", order[i-1], order[i])
		}
	}
}

func TestMatches(t *testing.T) {
	pfx := netip.MustParsePrefix
	a := netip.MustParseAddr
	p := &plan{regions: map[string]*Region{
		"/Common/r":    {Members: []Match{{Kind: MatchSubnet, Prefix: pfx("10.0.0.0/8")}, {Kind: MatchDatacenter, Name: "/Common/dc"}}},
		"/Common/loop": {Members: []Match{{Kind: MatchRegion, Name: "/Common/loop"}}},
	}}
	target := topoTarget{addr: a("192.0.2.1"), dc: "/Common/dc", pool: "/Common/p"}
	cases := []struct {
		m         Match
		ldns      netip.Addr
		ldnsWant  bool
		serveWant bool
	}{
		{Match{Kind: MatchSubnet, Prefix: pfx("10.0.0.0/8")}, a("10.2.3.4"), true, false},
		{Match{Not: true, Kind: MatchSubnet, Prefix: pfx("10.0.0.0/8")}, a("10.2.3.4"), false, true},
		{Match{Kind: MatchRegion, Name: "/Common/r"}, a("10.2.3.4"), true, true},
		{Match{Kind: MatchRegion, Name: "/Common/loop"}, a("10.2.3.4"), false, false},
		{Match{Kind: MatchDatacenter, Name: "/Common/dc"}, a("10.2.3.4"), false, true},
		{Match{Kind: MatchPool, Name: "/Common/p"}, a("10.2.3.4"), false, true},
		{Match{Kind: MatchCountry, Name: "CN"}, a("10.2.3.4"), false, false},
		{Match{Not: true, Kind: MatchISP, Name: "x"}, a("10.2.3.4"), true, true},
	}
	for _, c := range cases {
		if got := p.matchLDNS(c.m, c.ldns, nil, 0); got != c.ldnsWant {
			t.Errorf("LDNS side %+v: %v", c.m, got)
		}
		if got := p.matchServer(c.m, target, nil, 0); got != c.serveWant {
			t.Errorf("server side %+v: %v", c.m, got)
		}
	}
}

func TestMaskAddr(t *testing.T) {
	cases := []struct {
		a      string
		b4, b6 int
		want   string
	}{
		{"10.1.2.3", 24, 64, "10.1.2.0/24"},
		{"::ffff:10.1.2.3", 32, 128, "10.1.2.3/32"},
		{"2001:db8::1", 24, 48, "2001:db8::/48"},
	}
	for _, c := range cases {
		if got := maskAddr(netip.MustParseAddr(c.a), c.b4, c.b6).String(); got != c.want {
			t.Errorf("maskAddr(%s) = %s, want %s", c.a, got, c.want)
		}
	}
}

// A hit pushes a persistence record's expiry out when that moves it by a
// second, or by an eighth of the timeout when that is shorter.
func TestPersistRecTouch(t *testing.T) {
	const s = int64(time.Second)
	cases := []struct {
		name                 string
		stored, now, expires int64
		want                 int64
	}{
		{"an hour's timeout, a second later", 3600 * s, 1 * s, 3601 * s, 3601 * s},
		{"an hour's timeout, under a second later", 3600 * s, s / 2, 3600*s + s/2, 3600 * s},
		{"a 2 s timeout, a quarter second later", 2 * s, s / 4, 2*s + s/4, 2*s + s/4},
		{"a 2 s timeout, a tenth later", 2 * s, s / 10, 2*s + s/10, 2 * s},
		{"an earlier expiry never", 10 * s, 0, 5 * s, 10 * s},
	}
	for _, c := range cases {
		var r persistRec
		r.expires.Store(c.stored)
		r.touch(c.now, c.expires)
		if got := r.expires.Load(); got != c.want {
			t.Errorf("%s: expires %v, want %v", c.name, time.Duration(got), time.Duration(c.want))
		}
	}
}
