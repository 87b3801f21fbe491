package fwdproxy

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

// TestResolverRecursion: a name no forward zone holds is resolved from
// the root hints (referral, glue, the zone's answer), with the
// resolver's settings; a forward zone still takes its names, and a "."
// forward zone leaves nothing to recursion.
func TestResolverRecursion(t *testing.T) {
	servers := map[string][]string{
		"127.68.2.1:53": {". 60 IN SOA a.root. h. 1 60 60 60 30", "example. 60 IN NS ns.example.", "ns.example. 60 IN A 127.68.2.2",
			"lower. 60 IN NS ns.lower.", "ns.lower. 60 IN A 127.68.2.3"},
		"127.68.2.2:53": {"example. 60 IN SOA ns.example. h. 1 60 60 60 30", "www.example. 60 IN A 127.68.2.20",
			"alias.example. 60 IN CNAME www.example."},
		"127.68.2.3:53": {"lower. 60 IN SOA ns.lower. h. 1 60 60 60 30", "www.lower. 60 IN A 127.68.2.30"},
		"127.68.2.9:53": {"corp.example. 60 IN SOA ns.corp.example. h. 1 60 60 60 30", "app.corp.example. 60 IN A 127.68.2.90"},
	}
	byAddr := map[string]*authtest.Server{}
	for addr, recs := range servers {
		s, err := authtest.New(recs...)
		if err != nil {
			t.Fatal(err)
		}
		s.LowerCase = addr == "127.68.2.3:53"
		if err := s.Start(addr); err != nil {
			t.Skipf("cannot serve DNS on %s (port 53 needs privileges): %v", addr, err)
		}
		t.Cleanup(s.Close)
		byAddr[addr] = s
	}
	root := byAddr["127.68.2.1:53"]
	hints := []netip.AddrPort{netip.MustParseAddrPort("127.68.2.1:53")}
	corp := []Zone{{Name: "corp.example.", Nameservers: []netip.AddrPort{netip.MustParseAddrPort("127.68.2.9:53")}}}
	for _, tc := range []struct {
		what      string
		cfg       ResolverConfig
		host      string
		want      string
		rootAsked bool
	}{
		{"no forward zone: from the root", ResolverConfig{}, "www.example", "[127.68.2.20]", true},
		{"a CNAME followed", ResolverConfig{}, "alias.example", "[127.68.2.20]", true},
		{"a name that does not exist", ResolverConfig{}, "nope.example", "error " + ErrNoName.Error(), true},
		{"a forward zone takes its names", ResolverConfig{Zones: corp}, "app.corp.example", "[127.68.2.90]", false},
		{"other names beside it recurse", ResolverConfig{Zones: corp}, "www.example", "[127.68.2.20]", true},
		{"a '.' forward zone: no recursion", ResolverConfig{Zones: []Zone{{Name: ".", Nameservers: corp[0].Nameservers}}}, "www.example", "error", false},
		{"0x20: a server that lower-cases is not believed", ResolverConfig{Randomize: true}, "www.lower", "error", true},
		{"without 0x20 it is", ResolverConfig{}, "www.lower", "[127.68.2.30]", true},
		{"use-ipv4 no: no root server to ask", ResolverConfig{NoIPv4: true}, "www.example", "error", false},
		{"use-udp no: over TCP", ResolverConfig{TCP: true}, "www.example", "[127.68.2.20]", true},
		{"answer-default-zones: localhost not asked", ResolverConfig{DefaultZones: true}, "localhost", "[127.0.0.1]", false},
	} {
		t.Run(tc.what, func(t *testing.T) {
			tc.cfg.RootHints, tc.cfg.Timeout = hints, time.Second
			if !tc.cfg.TCP {
				tc.cfg.UDP = true
			}
			before, beforeTCP := root.Queries.Load(), root.TCP.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			addrs, err := NewResolver(tc.cfg).Lookup(ctx, tc.host, false)
			got := fmt.Sprint(addrs)
			if err != nil {
				got = "error"
				if errors.Is(err, ErrNoName) && tc.want != "error" {
					got += " " + err.Error()
				}
			}
			if got != tc.want {
				t.Errorf("%s: %s, want %s", tc.host, got, tc.want)
			}
			if asked := root.Queries.Load() > before; asked != tc.rootAsked {
				t.Errorf("%s: root asked %v, want %v", tc.host, asked, tc.rootAsked)
			}
			if !tc.cfg.UDP && root.TCP.Load() == beforeTCP {
				t.Errorf("%s: use-udp no, yet the root was not asked over TCP", tc.host)
			}
		})
	}
}
