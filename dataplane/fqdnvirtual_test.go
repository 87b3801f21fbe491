package dataplane

import (
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fqdn"
	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/dataplane/geoip/geoiptest"
)

// TestVirtualFQDNs: a virtual whose address list names an FQDN listens on
// the addresses it resolves to, beside the list's own; when the answer
// changes it listens on the new address and no longer on the old one,
// while flows on the others go on; an address another virtual listens on
// is left out; a virtual of names only runs once one resolves.
func TestVirtualFQDNs(t *testing.T) {
	z := startTestZone(t, "127.65.40.53")
	z.set("vip.example", "127.65.40.2")
	startServer(t, "127.65.40.100:7000", "S1")
	p := New(Options{Logger: slog.New(slog.NewTextHandler(&logBuf{}, nil)), ConnectTimeout: time.Second,
		FQDNResolver: &fqdn.Server{Addrs: []string{z.addr}}})
	t.Cleanup(p.Close)

	cfg := basic("127.65.40.1:8080", "127.65.40.100:7000")
	v := cfg.Virtuals["/Common/vs"]
	v.FQDNs = []string{"vip.example"}
	other := *cfg.Virtuals["/Common/vs"]
	other.Name, other.Destination, other.FQDNs = "/Common/other", ap("127.65.40.4:8080"), nil
	cfg.Virtuals["/Common/other"] = &other
	only := *cfg.Virtuals["/Common/vs"]
	only.Name, only.Destination, only.FQDNs = "/Common/only", netip.AddrPort{}, []string{"late.example"}
	only.PortRanges = []PortRange{{Low: 8080, High: 8080}}
	cfg.Virtuals["/Common/only"] = &only
	mustApply(t, p, cfg)

	answers := func(to string) bool { return tryAsk("127.65.40.9", to) == nil }
	eventually(t, "the resolved address answers", func() bool { return answers("127.65.40.2:8080") })
	held := dialFrom(t, "127.65.40.9", "127.65.40.1:8080")
	held.mustAsk("one")
	for _, step := range []struct {
		name    string
		vip     []string
		late    []string
		on, off []string
	}{
		{"the answer moves", []string{"127.65.40.3"}, nil, []string{"127.65.40.1:8080", "127.65.40.3:8080"}, []string{"127.65.40.2:8080"}},
		{"another virtual's address is left out", []string{"127.65.40.3", "127.65.40.4"}, nil, []string{"127.65.40.3:8080", "127.65.40.4:8080"}, nil},
		{"a virtual of names only starts", []string{"127.65.40.3"}, []string{"127.65.40.6"}, []string{"127.65.40.6:8080", "127.65.40.3:8080"}, nil},
		{"and stops when its name has no address", []string{"127.65.40.3"}, nil, []string{"127.65.40.3:8080"}, []string{"127.65.40.6:8080"}},
	} {
		z.set("vip.example", step.vip...)
		z.set("late.example", step.late...)
		for _, to := range step.on {
			eventually(t, step.name+": "+to+" answers", func() bool { return answers(to) })
		}
		for _, to := range step.off {
			eventually(t, step.name+": "+to+" no longer answers", func() bool { return !answers(to) })
		}
	}
	if vs, ok := p.Virtual("/Common/other"); !ok || vs.ClientSide.TotConns == 0 {
		t.Errorf("127.65.40.4 was not left to virtual other: %+v", vs)
	}
	if a := held.mustAsk("two"); a != "S1 Response" {
		t.Errorf("a flow on the list's own address across the changes: %q", a)
	}
}

// TestVirtualSourceFQDNs: a virtual whose source list names an FQDN
// admits the clients it resolves to (A and AAAA) and no other, follows
// the answer without moving a listener or cutting a flow; a destination
// name's AAAA record is listened on (::1) until the answer drops it.
func TestVirtualSourceFQDNs(t *testing.T) {
	z := startTestZone(t, "127.86.2.53")
	z.set("client.example", "127.86.2.7", "::1")
	z.set("v6.example", "::1")
	startServer(t, "127.86.2.100:7000", "S1")
	p := New(Options{Logger: slog.New(slog.NewTextHandler(&logBuf{}, nil)), ConnectTimeout: time.Second,
		FQDNResolver: &fqdn.Server{Addrs: []string{z.addr}}})
	t.Cleanup(p.Close)

	cfg := basic("127.86.2.1:28614", "127.86.2.100:7000")
	v := cfg.Virtuals["/Common/vs"]
	v.FQDNs, v.SourceFQDNs = []string{"v6.example"}, []string{"client.example"}
	v.Match = &SourceMatch{NoAddrs: true}
	mustApply(t, p, cfg)

	answers := func(from, to string) bool { return tryAsk(from, to) == nil }
	eventually(t, "a client the name resolves to", func() bool { return answers("127.86.2.7", "127.86.2.1:28614") })
	held := dialFrom(t, "127.86.2.7", "127.86.2.1:28614")
	held.mustAsk("one")
	type path struct{ from, to string }
	for _, step := range []struct {
		name       string
		client, v6 []string
		on, off    []path
	}{
		{"both families", []string{"127.86.2.7", "::1"}, []string{"::1"},
			[]path{{"127.86.2.7", "127.86.2.1:28614"}, {"::1", "[::1]:28614"}},
			[]path{{"127.86.2.8", "127.86.2.1:28614"}}},
		{"the answer moves", []string{"127.86.2.8", "::1"}, []string{"::1"},
			[]path{{"127.86.2.8", "127.86.2.1:28614"}, {"::1", "[::1]:28614"}},
			[]path{{"127.86.2.7", "127.86.2.1:28614"}}},
		{"the AAAA record goes", []string{"127.86.2.8", "::1"}, nil,
			[]path{{"127.86.2.8", "127.86.2.1:28614"}},
			[]path{{"::1", "[::1]:28614"}}},
		{"no address: no client", nil, nil,
			nil,
			[]path{{"127.86.2.8", "127.86.2.1:28614"}, {"127.86.2.7", "127.86.2.1:28614"}}},
	} {
		z.set("client.example", step.client...)
		z.set("v6.example", step.v6...)
		for _, pt := range step.on {
			eventually(t, step.name+": "+pt.from+" -> "+pt.to+" answered", func() bool { return answers(pt.from, pt.to) })
		}
		for _, pt := range step.off {
			eventually(t, step.name+": "+pt.from+" -> "+pt.to+" refused", func() bool { return !answers(pt.from, pt.to) })
		}
	}
	if a := held.mustAsk("two"); a != "S1 Response" {
		t.Errorf("a flow admitted before the answers changed: %q", a)
	}
}

// TestWithSourceAddrs: the source filter a virtual's source names give,
// joined to the list's own ranges and ports.
func TestWithSourceAddrs(t *testing.T) {
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	own := NewSourceMatch([]AddrRange{{Low: netip.MustParseAddr("10.0.0.0"), High: netip.MustParseAddr("10.0.0.255")}}, []PortRange{{Low: 1000, High: 1999}})
	// A list of names and geo entries keeps its geo entries when its
	// names resolve again.
	b, err := geoiptest.Build("127.97.3.0/24 continent=EU country=DE")
	if err != nil {
		t.Fatal(err)
	}
	db, err := geoip.OpenBytes("test.mmdb", b)
	if err != nil {
		t.Fatal(err)
	}
	st := &geoip.Store{}
	st.Replace(geoip.NewSet(db))
	geo := &SourceMatch{NoAddrs: true, Geo: &GeoMatch{Store: st, Countries: []string{"DE"}}}
	for _, tc := range []struct {
		name  string
		m     *SourceMatch
		addrs []netip.Addr
		admit []string
		deny  []string
	}{
		{"names only, none resolved", &SourceMatch{NoAddrs: true}, nil, nil, []string{"10.0.0.1:1", "[::1]:1"}},
		{"nil filter, none resolved", nil, nil, nil, []string{"10.0.0.1:1"}},
		{"names only, resolved", &SourceMatch{NoAddrs: true}, addrs("10.0.0.1", "::1"), []string{"10.0.0.1:1", "[::1]:5", "[::ffff:10.0.0.1]:1"}, []string{"10.0.0.2:1", "[::2]:1"}},
		{"mapped answer", nil, addrs("::ffff:10.0.0.9"), []string{"10.0.0.9:1"}, []string{"10.0.0.8:1"}},
		{"the list's own ranges and ports", own, addrs("192.0.2.1"), []string{"10.0.0.7:1500", "192.0.2.1:1000"}, []string{"192.0.2.1:2000", "192.0.2.2:1500", "10.0.1.0:1500"}},
		{"own ranges, none resolved", own, nil, []string{"10.0.0.7:1500"}, []string{"192.0.2.1:1500"}},
		{"names and geo, none resolved", geo, nil, []string{"127.97.3.9:1"}, []string{"127.97.4.9:1"}},
		{"names and geo, resolved", geo, addrs("127.97.4.9"), []string{"127.97.3.9:1", "127.97.4.9:1"}, []string{"127.97.4.10:1"}},
	} {
		got := withSourceAddrs(tc.m, tc.addrs)
		for _, c := range tc.admit {
			if !got.Admits(netip.MustParseAddrPort(c)) {
				t.Errorf("%s: %s refused", tc.name, c)
			}
		}
		for _, c := range tc.deny {
			if got.Admits(netip.MustParseAddrPort(c)) {
				t.Errorf("%s: %s admitted", tc.name, c)
			}
		}
	}
	if len(own.Addrs) != 1 {
		t.Errorf("the list's own filter was changed: %v", own.Addrs)
	}
}
