package dataplane

import (
	"net/netip"
	"strings"
	"testing"
)

func TestDistributionFindings(t *testing.T) {
	up := func(name string, recs int) MemberShare {
		return MemberShare{Name: "/Common/" + name, Addr: netip.MustParseAddrPort(name), State: "up", Records: recs, Ramp: 1}
	}
	top := func(total uint64, keys ...Heavy) Top { return Top{Total: total, Keys: keys} }
	two := []MemberShare{up("10.0.0.1:80", 0), up("10.0.0.2:80", 0)}
	tests := []struct {
		name string
		d    Distribution
		want []string // finding kinds, in order
		in   string   // a piece of the first finding's text or fix
	}{
		{"balanced", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs", HTTP: true, OneConnect: true,
			Persist: "cookie (/Common/cookie)", ClientConns: top(1, Heavy{Key: "127.0.0.1", Count: 1}),
			Requests: top(100, Heavy{Key: "127.0.0.1", Count: 100}), Users: 30}}}, nil, ""},
		{"nat in front of source persistence", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs",
			Persist: "source-addr (/Common/source_addr)", ClientConns: top(40, Heavy{Key: "192.0.2.1", Count: 38}, Heavy{Key: "10.0.0.9", Count: 2})}}},
			[]string{"few-clients"}, "192.0.2.1, 10.0.0.9 carry 100% of 40 connections"},
		{"few clients without source persistence is no finding", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs",
			ClientConns: top(40, Heavy{Key: "192.0.2.1", Count: 40})}}}, nil, ""},
		{"too few connections to judge", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs",
			Persist: "source-addr (/Common/source_addr)", ClientConns: top(3, Heavy{Key: "192.0.2.1", Count: 3})}}}, nil, ""},
		{"source fallback counts too", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs", HTTP: true, OneConnect: true,
			Persist: "cookie (/Common/cookie)", Fallback: "source-addr (/Common/source_addr)",
			Requests: top(50, Heavy{Key: "192.0.2.1", Count: 50})}}}, []string{"few-clients"}, "persist replace-all-with { cookie { default yes } }"},
		{"one xff", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs", HTTP: true,
			XFF: top(30, Heavy{Key: "198.51.100.7", Count: 27}, Heavy{Key: "198.51.100.8", Count: 3})}}},
			[]string{"one-xff"}, "198.51.100.7, is in 90% of 30"},
		{"xff spread over users", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs", HTTP: true,
			XFF: top(30, Heavy{Key: "198.51.100.7", Count: 10}, Heavy{Key: "198.51.100.8", Count: 10})}}}, nil, ""},
		{"users over one connection", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs", HTTP: true,
			ClientConns: top(2, Heavy{Key: "127.0.0.1", Count: 2}), Users: 40}}}, []string{"users-per-connection"}, "profiles add { oneconnect }"},
		{"users over one connection with one-connect is fine", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs", HTTP: true, OneConnect: true,
			ClientConns: top(2, Heavy{Key: "127.0.0.1", Count: 2}), Users: 40}}}, nil, ""},
		{"one user per connection", Distribution{Members: two, Virtuals: []VirtualSpread{{Name: "/Common/vs", HTTP: true,
			ClientConns: top(40), Users: 40}}}, nil, ""},
		{"records pile", Distribution{Records: 10, Members: []MemberShare{up("10.0.0.1:80", 9), up("10.0.0.2:80", 1)}},
			[]string{"records-pile"}, "holds 9 of the pool's 10"},
		{"records even", Distribution{Records: 10, Members: []MemberShare{up("10.0.0.1:80", 6), up("10.0.0.2:80", 4)}}, nil, ""},
		{"member states", Distribution{Pool: "/Common/p", Members: []MemberShare{
			{Name: "/Common/10.0.0.1:80", State: "disabled", Ramp: 1},
			{Name: "/Common/10.0.0.2:80", State: "forced-offline", Ramp: 1},
			{Name: "/Common/10.0.0.3:80", State: "down", Ramp: 1},
			{Name: "/Common/10.0.0.4:80", State: "up", Ramp: 0.25},
			{Name: "/Common/10.0.0.5:80", State: "up", Ramp: 1, ConnectionLimit: 5, AtLimit: true},
		}}, []string{"member-disabled", "member-forced-offline", "member-down", "member-slow-ramp", "member-at-limit"},
			"modify ltm pool /Common/p members modify { 10.0.0.1:80 { session user-enabled } }"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := findings(&tc.d)
			var kinds []string
			for _, f := range got {
				kinds = append(kinds, f.Kind)
				if f.What == "" || f.Fix == "" {
					t.Errorf("finding %s without text or fix: %+v", f.Kind, f)
				}
			}
			if strings.Join(kinds, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("findings %v, want %v: %+v", kinds, tc.want, got)
			}
			if tc.in != "" && !strings.Contains(got[0].What+" fix: "+got[0].Fix, tc.in) {
				t.Errorf("first finding %+v does not say %q", got[0], tc.in)
			}
		})
	}
}
