package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/gslb"
)

// bigConfig is n pools of one member each and n virtual servers, one per
// pool, on loopback addresses (127.64.0.0/10 upwards, port 9000), with no
// monitors, so that a commit's cost is the pipeline's and not probing's.
func bigConfig(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "ltm pool /Common/p%d {\n    members {\n        /Common/127.%d.%d.%d:9000 {\n            address 127.%d.%d.%d\n        }\n    }\n}\n",
			i, 100+i/62500, i/250%250, i%250+1, 100+i/62500, i/250%250, i%250+1)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "ltm virtual /Common/vs%d {\n    destination /Common/127.%d.%d.%d:9000\n    pool /Common/p%d\n    profiles {\n        /Common/tcp { }\n    }\n}\n",
			i, 64+i/62500, i/250%250, i%250+1, i)
	}
	return b.String()
}

// BenchmarkCommitModify10k times one `modify ltm pool` against a running
// configuration of 5,000 pools and 5,000 virtual servers (with their
// nodes, 15,000 objects) with the dataplane listening on every virtual
// and the GSLB attached, as ltmd runs: everything a commit does, from the
// statement to the stored generation and the swapped runtime.
func BenchmarkCommitModify10k(b *testing.B) {
	const n = 5000
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := Open(Options{StateDir: b.TempDir(), Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	p := dataplane.New(dataplane.Options{Logger: log})
	defer p.Close()
	if err := e.AttachDataplane(p); err != nil {
		b.Fatal(err)
	}
	g := gslb.New(gslb.Options{Logger: log})
	defer g.Close()
	stop, err := e.AttachGSLB(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()

	objs, err := e.schema.ReadConfig("bench", []byte(bigConfig(n)), nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := e.Config().Clone()
	for _, o := range objs {
		cfg.Put(o)
	}
	if _, err := e.Commit(e.Generation(), "admin", "load", cfg, CommitOptions{Lenient: true}); err != nil {
		b.Fatal(err)
	}
	if got := len(p.Virtuals()); got != n {
		b.Fatalf("%d virtual servers running, want %d", got, n)
	}
	s := e.NewSession("admin").(*Session)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		line := fmt.Sprintf("modify ltm pool p%d description d%d", i%n, i)
		if err := s.Exec(context.Background(), line, io.Discard); err != nil {
			b.Fatalf("%s: %v", line, err)
		}
	}
	b.StopTimer()
	// CPU time the process spent (all threads, the collector's included)
	// is steadier than wall time on a shared machine.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
