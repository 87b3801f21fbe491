package daemon

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

func TestUpCount(t *testing.T) {
	ms := func(st ...string) dataplane.PoolStats {
		var ps dataplane.PoolStats
		for _, s := range st {
			ps.Members = append(ps.Members, dataplane.MemberStats{MonitorStatus: s})
		}
		return ps
	}
	for _, tc := range []struct {
		name      string
		ps        dataplane.PoolStats
		up, total int
		decided   bool
	}{
		{"all up", ms("up", "up", "up"), 3, 3, true},
		{"no monitor counts as up", ms("unchecked", "unchecked"), 2, 2, true},
		{"down and forced offline do not", ms("up", "down", "user-down", "address-down"), 1, 4, true},
		{"a monitor still deciding", ms("up", "checking"), 0, 2, false},
		{"empty pool", ms(), 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, total, decided := upCount(tc.ps)
			if up != tc.up || total != tc.total || decided != tc.decided {
				t.Errorf("upCount = %d, %d, %v; want %d, %d, %v", up, total, decided, tc.up, tc.total, tc.decided)
			}
		})
	}
}

// TestMinUpMembers runs min-up-members on a pool of three real members
// under a tcp monitor: the action fires once when a member's server dies
// and leaves two up below a minimum of three, not again while the pool
// stays short, again after it had enough members up (the server back)
// and then two forced offline; a pool without min-up-members-checking
// never fires. reboot is refused nowhere but warned of at commit, and an
// action BIG-IP does not have is refused.
func TestMinUpMembers(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	servers := map[string]net.Listener{}
	for _, a := range []string{"127.7.5.11:9000", "127.7.5.12:9000", "127.7.5.13:9000"} {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go serveLabel(ln, a)
		servers[a] = ln
	}
	var mu sync.Mutex
	var fired []string
	w := e.minUp
	w.mu.Lock()
	w.fire = func(_ context.Context, pool string, r minUpRule) {
		mu.Lock()
		fired = append(fired, pool+" "+r.action)
		mu.Unlock()
	}
	w.mu.Unlock()
	firedNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), fired...)
	}
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm monitor tcp fast interval 1 timeout 2",
		"create ltm pool p members add { 127.7.5.11:9000 127.7.5.12:9000 127.7.5.13:9000 } monitor fast min-up-members 3 min-up-members-checking enabled",
		"create ltm pool unwatched members add { 127.7.5.11:9000 127.7.5.12:9000 127.7.5.13:9000 } monitor fast min-up-members 3",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	poll := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: fired %q", what, firedNow())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	up := func(pool string) int {
		ps, _ := e.plane().Pool("/Common/" + pool)
		n, _, decided := upCount(ps)
		if !decided {
			return -1
		}
		return n
	}
	poll("the members up", func() bool { return up("p") == 3 && up("unwatched") == 3 })
	if f := firedNow(); len(f) != 0 {
		t.Fatalf("fired with every member up: %q", f)
	}
	// One server dies: two up, below three.
	servers["127.7.5.13:9000"].Close()
	poll("the action fires", func() bool { return len(firedNow()) == 1 })
	if f := firedNow(); f[0] != "/Common/p failover" {
		t.Fatalf("fired %q", f)
	}
	// Still short: nothing more, whatever else changes.
	if _, err := run(t, s, "modify ltm pool p members modify { 127.7.5.12:9000 { state user-down } }"); err != "" {
		t.Fatal(err)
	}
	poll("the member forced offline", func() bool { return up("p") == 1 })
	time.Sleep(3 * minUpEvery)
	if f := firedNow(); len(f) != 1 {
		t.Fatalf("fired again while the pool stayed short: %q", f)
	}
	// The server back and the member enabled: armed again; forced offline
	// twice, it fires again, with the action now set.
	ln, lerr := net.Listen("tcp", "127.7.5.13:9000")
	if lerr != nil {
		t.Fatal(lerr)
	}
	t.Cleanup(func() { ln.Close() })
	go serveLabel(ln, "back")
	if _, err := run(t, s, "modify ltm pool p members modify { 127.7.5.12:9000 { state user-up } }"); err != "" {
		t.Fatal(err)
	}
	poll("the pool whole again", func() bool { return up("p") == 3 })
	var out, err string
	poll("the watch to see it whole", func() bool { // armed again
		w.mu.Lock()
		defer w.mu.Unlock()
		return !w.below["/Common/p"]
	})
	out, err = run(t, s, "modify ltm pool p min-up-members-action reboot members modify { 127.7.5.11:9000 { state user-down } }")
	if err != "" {
		t.Fatal(err)
	}
	if !strings.Contains(out, "min-up-members-action reboot is logged") {
		t.Errorf("no warning that reboot is not taken: %q", out)
	}
	poll("the action fires again", func() bool { return len(firedNow()) == 2 })
	if f := firedNow(); f[1] != "/Common/p reboot" {
		t.Fatalf("fired %q", f)
	}
	for _, x := range firedNow() {
		if strings.Contains(x, "unwatched") {
			t.Errorf("a pool without min-up-members-checking fired: %q", x)
		}
	}
	if _, err := run(t, s, "modify ltm pool p min-up-members-action shutdown"); !strings.Contains(err, "min-up-members-action") {
		t.Errorf("action shutdown: %q", err)
	}
}
