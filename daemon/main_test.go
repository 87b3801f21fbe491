package daemon

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// waitingParallel is how many of the package's parallel tests run at
// once when go test is not given -parallel. Those tests spend their time
// waiting on protocol timers counted in whole seconds (monitor intervals
// and timeouts, idle timeouts, iCall periods, iQuery discovery), not on
// the CPU, so the default of GOMAXPROCS (two on a small machine) left
// the package waiting on them two at a time.
const waitingParallel = 8

// TestMain raises the default -parallel to waitingParallel (never below
// GOMAXPROCS); an explicit -parallel wins.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(max(waitingParallel, runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}
