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

// TestResolverSettings: use-ipv4/use-ipv6, randomize-query-name-case
// (0x20, checked on the answer) and answer-default-zones of a net
// dns-resolver.
func TestResolverSettings(t *testing.T) {
	recs := []string{"test. 60 IN SOA ns.test. h. 1 60 60 60 30", "www.test. 60 IN A 127.39.4.10"}
	echo, err := authtest.New(recs...)
	if err != nil {
		t.Fatal(err)
	}
	lower, _ := authtest.New(recs...)
	lower.LowerCase = true
	for srv, addr := range map[*authtest.Server]string{echo: "127.39.4.1:5353", lower: "127.39.4.2:5353"} {
		if err := srv.Start(addr); err != nil {
			t.Skip(err)
		}
		t.Cleanup(srv.Close)
	}
	zone := func(addr string) []Zone {
		return []Zone{{Name: ".", Nameservers: []netip.AddrPort{netip.MustParseAddrPort(addr)}}}
	}
	for _, tc := range []struct {
		what string
		cfg  ResolverConfig
		host string
		want string
	}{
		{"echoing server, 0x20", ResolverConfig{Zones: zone("127.39.4.1:5353"), Randomize: true}, "www.test", "[127.39.4.10]"},
		{"lower-casing server, 0x20: dropped", ResolverConfig{Zones: zone("127.39.4.2:5353"), Randomize: true}, "www.test", "error"},
		{"lower-casing server without 0x20", ResolverConfig{Zones: zone("127.39.4.2:5353")}, "www.test", "[127.39.4.10]"},
		{"use-ipv4 no: the IPv4 nameserver is not asked", ResolverConfig{Zones: zone("127.39.4.1:5353"), NoIPv4: true}, "www.test", "error"},
		{"use-ipv6 no: the IPv4 nameserver is", ResolverConfig{Zones: zone("127.39.4.1:5353"), NoIPv6: true}, "www.test", "[127.39.4.10]"},
		{"answer-default-zones: localhost", ResolverConfig{Zones: zone("127.39.4.1:5353"), DefaultZones: true}, "localhost", "[127.0.0.1]"},
		{"answer-default-zones: AS112 names do not exist", ResolverConfig{Zones: zone("127.39.4.1:5353"), DefaultZones: true}, "1.1.168.192.in-addr.arpa", "error " + ErrNoName.Error()},
		{"without answer-default-zones localhost is asked", ResolverConfig{Zones: zone("127.39.4.1:5353")}, "localhost", "error"},
	} {
		tc.cfg.UDP, tc.cfg.Timeout = true, 300*time.Millisecond
		before := echo.Queries.Load() + lower.Queries.Load()
		addrs, err := NewResolver(tc.cfg).Lookup(context.Background(), tc.host, false)
		got := fmt.Sprint(addrs)
		if err != nil {
			got = "error"
			if errors.Is(err, ErrNoName) && tc.want != "error" {
				got += " " + err.Error()
			}
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.what, got, tc.want)
		}
		asked := echo.Queries.Load()+lower.Queries.Load() != before
		if tc.cfg.DefaultZones && tc.want != "error" && asked {
			t.Errorf("%s: a nameserver was asked", tc.what)
		}
	}
}
