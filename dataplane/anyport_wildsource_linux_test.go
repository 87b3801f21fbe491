//go:build linux

package dataplane

import (
	"net/netip"
	"strings"
	"testing"
)

// TestAnyPortWildcardBySource: in a namespace of its own, a standard and
// an ip-forward TCP wildcard on every port (`0.0.0.0:any mask any`),
// told apart by source as on BIG-IP, both run: a client of the
// standard one's source network reaches its pool, any other client is
// forwarded where it was going; the most specific source wins whatever
// the names' order, and a commit taking the standard one away leaves
// every client to the ip-forward one. Fails without the shared listener
// (Check refuses the second as "already used"; without the per-accept
// pick every client goes to one of them).
func TestAnyPortWildcardBySource(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startServer(t, "127.222.8.30:30030", "M") // the standard wildcard's member
	startServer(t, "127.222.9.5:30005", "F")  // where the clients go
	p, _ := loggedPlane(t)
	all := netip.MustParsePrefix("0.0.0.0/0")
	cfg := &Config{Virtuals: map[string]*Virtual{}, Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
	withPool(cfg, "/Common/pm", "127.222.8.30:30030")
	// The ip-forward one's name sorts first: precedence is by source.
	cfg.Virtuals["/Common/a_fwd"] = &Virtual{Name: "/Common/a_fwd", Destination: ap("0.0.0.0:0"), Network: all, Enabled: true,
		IPForward: true, SNAT: SNAT{Type: SNATNone}}
	cfg.Virtuals["/Common/z_std"] = &Virtual{Name: "/Common/z_std", Destination: ap("0.0.0.0:0"), Network: all, Enabled: true,
		Source: netip.MustParsePrefix("127.222.64.0/18"), TranslateAddress: true, TranslatePort: true, Pool: "/Common/pm", SNAT: SNAT{Type: SNATNone}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for i := range 2 {
		if got := askFrom(t, "127.222.64.7", "127.222.9.5:30005"); got != "M Response" {
			t.Errorf("%d: a client of the standard wildcard's source: %q, want its member's", i, got)
		}
		if got := askFrom(t, "127.222.1.7", "127.222.9.5:30005"); got != "F Response" {
			t.Errorf("%d: another client: %q, want forwarded", i, got)
		}
	}
	for name, want := range map[string]uint64{"/Common/a_fwd": 2, "/Common/z_std": 2} {
		if v, _ := p.Virtual(name); v.ClientSide.TotConns != want {
			t.Errorf("%s: %d client connections, want %d", name, v.ClientSide.TotConns, want)
		}
	}
	// The standard one goes: every client is forwarded.
	delete(cfg.Virtuals, "/Common/z_std")
	mustApply(t, p, cfg)
	if got := askFrom(t, "127.222.64.7", "127.222.9.5:30005"); got != "F Response" {
		t.Errorf("after the standard wildcard went: %q, want forwarded", got)
	}
}

// TestCheckSharedDestination: virtuals on every port or on a network
// share a destination when their source differs (TCP only); two of one
// source, udp ones, host virtuals on a port and virtuals with a vlans
// list are refused, saying why.
func TestCheckSharedDestination(t *testing.T) {
	all := netip.MustParsePrefix("0.0.0.0/0")
	src := netip.MustParsePrefix("127.222.64.0/18")
	mk := func(name, dst string, network netip.Prefix, source netip.Prefix) *Virtual {
		return &Virtual{Name: name, Destination: ap(dst), Network: network, Source: source, Enabled: true, IPForward: true, SNAT: SNAT{Type: SNATNone}}
	}
	for _, tc := range []struct {
		name string
		a, b *Virtual
		want string // "" for accepted
	}{
		{"sources differ", mk("/Common/a", "0.0.0.0:0", all, netip.Prefix{}), mk("/Common/b", "0.0.0.0:0", all, src), ""},
		{"a network on a port", mk("/Common/a", "127.222.0.0:30080", netip.MustParsePrefix("127.222.0.0/16"), netip.Prefix{}), mk("/Common/b", "127.222.0.0:30080", netip.MustParsePrefix("127.222.0.0/16"), src), ""},
		{"one source", mk("/Common/a", "0.0.0.0:0", all, src), mk("/Common/b", "0.0.0.0:0", all, src), "already used by virtual /Common/a"},
		{"host on a port", mk("/Common/a", "127.222.3.3:30080", netip.Prefix{}, netip.Prefix{}), mk("/Common/b", "127.222.3.3:30080", netip.Prefix{}, src), "only virtuals on every port or on a network"},
		{"udp", func() *Virtual {
			v := mk("/Common/a", "0.0.0.0:0", all, netip.Prefix{})
			v.Protocol = ProtoUDP
			return v
		}(),
			func() *Virtual { v := mk("/Common/b", "0.0.0.0:0", all, src); v.Protocol = ProtoUDP; return v }(), "udp virtuals of one destination"},
	} {
		cfg := &Config{Virtuals: map[string]*Virtual{tc.a.Name: tc.a, tc.b.Name: tc.b}, Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
		err := Check(cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
