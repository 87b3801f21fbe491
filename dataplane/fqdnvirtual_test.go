package dataplane

import (
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fqdn"
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
