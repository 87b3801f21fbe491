package dataplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExternalMonitor runs a user's script with F5's arguments and
// environment: it prints "up" while a flag file exists.
func TestExternalMonitor(t *testing.T) {
	dir := t.TempDir()
	flag, log := filepath.Join(dir, "flag"), filepath.Join(dir, "log")
	script := filepath.Join(dir, "check.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $2 $3 $4 $MON_TMPL_NAME $RUN_I $NODE_IP $NODE_PORT $HOST\" > "+log+"\n[ -e \"$FLAG\" ] && echo up\nexit 0\n"), 0o755)
	os.WriteFile(flag, nil, 0o600)
	startServer(t, "127.0.170.11:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.170.10:9000", "127.0.170.11:9000")
	cfg.Monitors["/Common/ext"] = &Monitor{Name: "/Common/ext", Type: MonitorExternal, Interval: 50 * time.Millisecond, Timeout: 300 * time.Millisecond,
		External: &ExternalMonitor{Path: script, RunName: "/Common/check.sh", Args: `a "b c"`, Env: map[string]string{"FLAG": flag, "HOST": "www.example"}}}
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/ext"}}
	mustApply(t, p, cfg)
	status := func() string { return memberStat(t, p, "/Common/pool", "/Common/127.0.170.11:9000").MonitorStatus }
	eventually(t, "up", func() bool { return status() == "up" })
	b, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(b)); got != "::ffff:127.0.170.11 9000 a b c /Common/ext /Common/check.sh ::ffff:127.0.170.11 9000 www.example" {
		t.Fatalf("the script saw %q", got)
	}
	os.Remove(flag)
	eventually(t, "down", func() bool { return status() == "down" })
}

// TestInbandMonitor marks a member down after failed connections to it
// and back up after retry-time, without probing.
func TestInbandMonitor(t *testing.T) {
	startServer(t, "127.0.171.11:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.171.10:9000", "127.0.171.11:9000", "127.0.171.12:9000") // .12: nothing listens
	cfg.Pools["/Common/pool"].ReselectTries = 1
	cfg.Monitors["/Common/inb"] = &Monitor{Name: "/Common/inb", Type: MonitorInband,
		Inband: &InbandMonitor{Failures: 2, FailureInterval: 30 * time.Second, RetryTime: 2 * time.Second}}
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/inb"}}
	mustApply(t, p, cfg)
	status := func() string { return memberStat(t, p, "/Common/pool", "/Common/127.0.171.12:9000").MonitorStatus }
	if s := status(); s != "up" {
		t.Fatalf("an inband member starts up, is %s", s)
	}
	for i := 0; i < 4 && status() == "up"; i++ {
		if got := once(t, "127.0.171.10:9000"); got != "S1 Response" {
			t.Fatalf("client %d: %q", i, got)
		}
	}
	if s := status(); s != "down" {
		t.Fatalf("after failed connections the member is %s, want down", s)
	}
	// Down: every client goes to the live member at once.
	for i := 0; i < 3; i++ {
		once(t, "127.0.171.10:9000")
	}
	eventually(t, "retry-time to bring it back", func() bool { return status() == "up" })
}
