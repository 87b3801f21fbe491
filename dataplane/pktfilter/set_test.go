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

// TestDecideClass: the rate class a connection is shaped by is the
// accepting filter's, else the first matched continue filter's that
// names one when the connection is then accepted; nothing refused, and
// nothing trusted, gets a class.
func TestDecideClass(t *testing.T) {
	withClass := func(f *Filter, class string) *Filter { f.RateClass = class; return f }
	var h Holder
	h.Store(&Set{
		Filters: []*Filter{
			withClass(mustFilter(t, "count-udp", 5, Continue, "udp", false), "/Common/udp"),
			withClass(mustFilter(t, "slow-web", 10, Accept, "tcp and dst port 80", false), "/Common/web"),
			mustFilter(t, "fast", 15, Accept, "src host 127.182.5.5", false),
			withClass(mustFilter(t, "deny", 20, Reject, "src net 127.182.6.0/24", false), "/Common/web"),
		},
		Default: Accept,
		Trusted: []netip.Prefix{netip.MustParsePrefix("127.182.5.9/32")},
	})
	if !h.Classes() {
		t.Fatal("Classes() is false with filters naming rate classes")
	}
	for _, c := range []struct {
		p     *Packet
		want  Action
		class string
	}{
		{pkt(ProtoTCP, "127.182.5.1:1000", "127.182.0.1:80"), Accept, "/Common/web"},
		{pkt(ProtoTCP, "127.182.5.9:1000", "127.182.0.1:80"), Accept, ""}, // trusted
		{pkt(ProtoTCP, "127.182.5.1:1000", "127.182.0.1:81"), Accept, ""}, // the default, no class
		{pkt(ProtoUDP, "127.182.5.1:1000", "127.182.0.1:53"), Accept, "/Common/udp"},
		{pkt(ProtoUDP, "127.182.5.5:1000", "127.182.0.1:53"), Accept, "/Common/udp"}, // continue's, then fast
		{pkt(ProtoUDP, "127.182.6.1:1000", "127.182.0.1:53"), Reject, ""},
	} {
		if a, cls := h.DecideClass(c.p); a != c.want || cls != c.class {
			t.Errorf("DecideClass(%v) = %v %q, want %v %q", *c.p, a, cls, c.want, c.class)
		}
	}
	var none Holder
	none.Store(&Set{Filters: []*Filter{mustFilter(t, "plain", 1, Accept, "", false)}})
	if none.Classes() {
		t.Error("Classes() is true with no filter naming a rate class")
	}
}
