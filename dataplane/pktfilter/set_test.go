package pktfilter

import (
	"net/netip"
	"strings"
	"testing"
)

func mustFilter(t *testing.T, name string, order int, a Action, expr string, logging bool) *Filter {
	t.Helper()
	e, err := Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	return &Filter{Name: name, Order: order, Action: a, Expr: e, Logging: logging}
}

// TestDecide: filters apply in order whatever order they are given in,
// the first match that is not continue decides, the default decides
// the rest, trusted sources are never filtered, and counters and log
// lines follow the matches.
func TestDecide(t *testing.T) {
	var lines []string
	var h Holder
	set := &Set{
		Filters: []*Filter{
			mustFilter(t, "deny-net", 20, Reject, "src net 127.182.3.0/24", false),
			mustFilter(t, "count-all", 5, Continue, "tcp", true),
			mustFilter(t, "allow-one", 10, Accept, "src host 127.182.3.7", false),
			mustFilter(t, "drop-udp", 30, Discard, "udp", false),
		},
		Default: Accept,
		Trusted: []netip.Prefix{netip.MustParsePrefix("127.182.3.9/32")},
		Log:     func(l string) { lines = append(lines, l) },
	}
	h.Store(set)
	for _, c := range []struct {
		p    *Packet
		want Action
	}{
		{pkt(ProtoTCP, "127.182.3.7:1000", "127.182.0.1:80"), Accept},
		{pkt(ProtoTCP, "127.182.3.8:1000", "127.182.0.1:80"), Reject},
		{pkt(ProtoTCP, "127.182.3.9:1000", "127.182.0.1:80"), Accept}, // trusted
		{pkt(ProtoUDP, "127.182.4.1:1000", "127.182.0.1:53"), Discard},
		{pkt(ProtoTCP, "127.182.4.1:1000", "127.182.0.1:80"), Accept}, // default
	} {
		if got := h.Verdict(c.p); got != c.want {
			t.Errorf("Verdict(%v) = %v, want %v", *c.p, got, c.want)
		}
		if got := h.Decide(c.p); got != c.want {
			t.Errorf("Decide(%v) = %v, want %v", *c.p, got, c.want)
		}
	}
	for name, want := range map[string]uint64{"count-all": 3, "allow-one": 1, "deny-net": 1, "drop-udp": 1} {
		if got := h.Stats(name).Matches; got != want {
			t.Errorf("%s matched %d, want %d", name, got, want)
		}
	}
	if d, tr := h.Totals(); d != 1 || tr != 1 {
		t.Errorf("totals: default %d trusted %d, want 1 1", d, tr)
	}
	if len(lines) != 3 || !strings.Contains(lines[0], "Packet filter count-all (order 5) continue: TCP 127.182.3.7:1000 -> 127.182.0.1:80") {
		t.Errorf("log lines %q", lines)
	}
	// A new Set keeps the counters by name; reset-stats zeroes them.
	h.Store(&Set{Filters: []*Filter{mustFilter(t, "deny-net", 1, Reject, "src net 127.182.3.0/24", false)}, Default: Discard})
	if got := h.Stats("deny-net").Matches; got != 1 {
		t.Errorf("deny-net after a commit: %d, want 1", got)
	}
	if got := h.Decide(pkt(ProtoTCP, "127.182.5.1:1000", "127.182.0.1:80")); got != Discard {
		t.Errorf("default discard: %v", got)
	}
	h.Reset("deny-net")
	if got := h.Stats("deny-net").Matches; got != 0 {
		t.Errorf("deny-net after reset: %d", got)
	}
	h.Reset()
	if d, tr := h.Totals(); d != 0 || tr != 0 {
		t.Errorf("totals after reset: %d %d", d, tr)
	}
	// Off: everything is accepted, nothing counted.
	h.Store(nil)
	if got := h.Decide(pkt(ProtoTCP, "127.182.3.8:1000", "127.182.0.1:80")); got != Accept {
		t.Errorf("off: %v", got)
	}
	var nilHolder *Holder
	if nilHolder.Load() != nil {
		t.Error("a nil holder has a set")
	}
}

// TestParseAction: BIG-IP's four words, nothing else.
func TestParseAction(t *testing.T) {
	for _, w := range []string{"accept", "discard", "reject", "continue"} {
		a, ok := ParseAction(w)
		if !ok || a.String() != w {
			t.Errorf("ParseAction(%q) = %v, %v", w, a, ok)
		}
	}
	if _, ok := ParseAction("drop"); ok {
		t.Error("drop accepted")
	}
}
