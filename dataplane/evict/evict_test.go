package evict

import (
	"net/netip"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
)

func TestMarks(t *testing.T) {
	for _, c := range []struct {
		high, low, limit  int
		wantHigh, wantLow int
	}{
		{95, 85, 4, 4, 3},        // the defaults on a small limit: the fourth client is admitted
		{95, 85, 100, 95, 85},    // BIG-IP's defaults, as percentages
		{100, 75, 4, 4, 3},       // evict one to admit one
		{100, 100, 4, 4, 3},      // low at high still frees a place
		{50, 50, 10, 5, 4},       // likewise below the limit
		{50, 50, 1, 1, 0},        // one connection: evict it
		{95, 85, 0, 0, 0},        // no limit, no marks
		{60, 50, 1000, 600, 500}, // large limits
	} {
		p := &Policy{High: c.high, Low: c.low}
		h, l := p.Marks(c.limit)
		if h != c.wantHigh || l != c.wantLow {
			t.Errorf("high %d low %d limit %d: marks %d,%d, want %d,%d", c.high, c.low, c.limit, h, l, c.wantHigh, c.wantLow)
		}
	}
}

func TestChooseLow(t *testing.T) {
	s := time.Second
	cands := []Candidate{
		{Idle: 30 * s, Age: 30 * s},
		{Idle: 1 * s, Age: 2 * s, Low: true},
		{Idle: 20 * s, Age: 40 * s},
		{Idle: 2 * s, Age: 1 * s, Low: true},
	}
	p := Policy{BiasIdle: true}
	if got, want := p.Choose(cands, 3), []int{3, 1, 0}; !reflect.DeepEqual(got, want) {
		// The low-priority ones first, the idler (3) before 1, then the
		// idlest of the others.
		t.Errorf("Choose = %v, want %v", got, want)
	}
}

func TestChoose(t *testing.T) {
	s := time.Second
	// Four connections: 0 the oldest but busy just now, 1 idle the
	// longest, 2 the youngest with no bytes, 3 carrying the most.
	cands := []Candidate{
		{Idle: 0, Age: 40 * s, Bytes: 500},
		{Idle: 30 * s, Age: 30 * s, Bytes: 100},
		{Idle: 5 * s, Age: 5 * s, Bytes: 0},
		{Idle: 10 * s, Age: 20 * s, Bytes: 9000},
	}
	for _, c := range []struct {
		name string
		p    Policy
		n    int
		want []int
	}{
		{"idle", Policy{BiasIdle: true}, 1, []int{1}},
		{"idle two", Policy{BiasIdle: true}, 2, []int{1, 3}},
		{"oldest", Policy{BiasOldest: true}, 1, []int{0}},
		{"oldest all", Policy{BiasOldest: true}, 9, []int{0, 1, 3, 2}},
		{"fewest bytes", Policy{BiasBytes: true}, 1, []int{2}},
		{"fewest bytes, young spared", Policy{BiasBytes: true, BytesDelay: 6 * s}, 2, []int{1, 0}},
		// idle ranks 1:3 3:2 2:1 0:0; oldest ranks 0:3 1:2 3:1 2:0:
		// 1 sums 5, 0 and 3 sum 3 (3 idle longer).
		{"idle and oldest", Policy{BiasIdle: true, BiasOldest: true}, 2, []int{1, 3}},
		{"none: idle", Policy{}, 1, []int{1}},
		{"none wanted", Policy{BiasIdle: true}, 0, nil},
		// Rates (bytes over age): 0 12.5, 1 3.3, 2 0, 3 450.
		{"fastest", Policy{BiasFast: true}, 2, []int{3, 0}},
		{"fastest, young spared", Policy{BiasFast: true, FastDelay: 25 * s}, 2, []int{0, 1}},
		{"slowest", Policy{BiasSlow: true}, 2, []int{2, 1}},
		{"slowest, young spared", Policy{BiasSlow: true, SlowDelay: 6 * s}, 2, []int{1, 0}},
		// slow ranks 2:3 1:2 0:1 3:0; idle ranks 1:3 3:2 2:1 0:0: 1
		// sums 5, 2 sums 4.
		{"slowest and idle", Policy{BiasSlow: true, BiasIdle: true}, 2, []int{1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.p.Choose(cands, c.n)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Choose(%d) = %v, want %v", c.n, got, c.want)
			}
		})
	}
}

// TestSweep evicts from a real table: only the virtual's own flows, the
// idlest first, each once, down to the low mark.
func TestSweep(t *testing.T) {
	tab := flows.NewTable()
	var aborted atomic.Int32
	add := func(vs string, idle time.Duration) *flows.Flow {
		f := &flows.Flow{Virtual: vs, Client: netip.MustParseAddrPort("127.184.9.1:40000")}
		f.Closer = func(reset bool) {
			if !reset {
				t.Errorf("evicted flow closed without a reset")
			}
			aborted.Add(1)
		}
		tab.Add(f)
		f.Touch(time.Now().Add(-idle).UnixNano())
		return f
	}
	a := add("/Common/vs", 1*time.Second)
	b := add("/Common/vs", 50*time.Second)
	c := add("/Common/vs", 20*time.Second)
	other := add("/Common/other", 99*time.Second)
	p := &Policy{High: 100, Low: 50, BiasIdle: true}
	in := func(f *flows.Flow) bool { return f.Virtual == "/Common/vs" }
	sweep := func(high, low int) (int, int) {
		live, ev := p.Sweep(tab, nil, in, high, low)
		return live, len(ev)
	}

	live, n := sweep(4, 2)
	if live != 3 || n != 0 {
		t.Fatalf("under the high mark: live %d evicted %d, want 3 0", live, n)
	}
	live, n = sweep(3, 1)
	if live != 3 || n != 2 {
		t.Fatalf("at the high mark: live %d evicted %d, want 3 2", live, n)
	}
	if !b.Evicted() || !c.Evicted() || a.Evicted() || other.Evicted() {
		t.Errorf("evicted a %v b %v c %v other %v; want b and c only", a.Evicted(), b.Evicted(), c.Evicted(), other.Evicted())
	}
	if aborted.Load() != 2 {
		t.Errorf("%d resets, want 2", aborted.Load())
	}
	// The evicted flows are not seen again while their ends come.
	live, n = sweep(1, 0)
	if live != 1 || n != 1 || !a.Evicted() || aborted.Load() != 3 {
		t.Errorf("third round: live %d evicted %d (a %v, resets %d), want 1 1", live, n, a.Evicted(), aborted.Load())
	}
}

// TestSlowFlowPick: slow flows are the ones past the grace period under
// the threshold; throttling resets those above the maximum (a count, or
// a percentage of the context's connections), the slowest first, and
// nothing without throttling.
func TestSlowFlowPick(t *testing.T) {
	s := time.Second
	// Rates: 0 none, 1 10/s, 2 100/s, 3 5/s but inside a 10s grace
	// period.
	cands := []Candidate{{Age: 20 * s, Idle: 20 * s}, {Age: 20 * s, Bytes: 200}, {Age: 20 * s, Bytes: 2000}, {Age: 2 * s, Bytes: 10}}
	for _, c := range []struct {
		name      string
		slow      SlowFlow
		wantSlow  int
		wantReset []int
	}{
		{"counted only", SlowFlow{Threshold: 32, Grace: 10 * s, Max: 0}, 2, nil},
		{"throttled to one", SlowFlow{Threshold: 32, Grace: 10 * s, Throttle: true, Max: 1}, 2, []int{0}},
		{"throttled to none", SlowFlow{Threshold: 32, Grace: 10 * s, Throttle: true, Max: 0}, 2, []int{0, 1}},
		{"within the maximum", SlowFlow{Threshold: 32, Grace: 10 * s, Throttle: true, Max: 2}, 2, nil},
		{"percent", SlowFlow{Threshold: 32, Grace: 10 * s, Throttle: true, Max: 25, Percent: true}, 2, []int{0}},
		{"short grace", SlowFlow{Threshold: 32, Grace: 1 * s, Throttle: true, Max: 0}, 3, []int{0, 3, 1}},
		{"high threshold", SlowFlow{Threshold: 1000, Grace: 10 * s, Throttle: true, Max: 2}, 3, []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			slow, got := c.slow.pick(cands)
			if slow != c.wantSlow || !reflect.DeepEqual(got, c.wantReset) {
				t.Errorf("slow %d reset %v, want %d %v", slow, got, c.wantSlow, c.wantReset)
			}
		})
	}
	// In a round, slow flows go first, like low-priority ones.
	tab := flows.NewTable()
	fast := &flows.Flow{Virtual: "v", Closer: func(bool) {}}
	idle := &flows.Flow{Virtual: "v", Closer: func(bool) {}}
	tab.Add(fast)
	tab.Add(idle)
	fast.BytesIn.Store(1 << 30)
	fast.Touch(time.Now().Add(-time.Hour).UnixNano())
	p := &Policy{BiasIdle: true, Slow: &SlowFlow{Threshold: 32}}
	if _, ev := p.Sweep(tab, nil, func(*flows.Flow) bool { return true }, 2, 1); len(ev) != 1 || ev[0] != idle {
		t.Errorf("a round evicted %v, want the slow flow", ev)
	}
}
