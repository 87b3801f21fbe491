package daemon

import (
	"bytes"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestWriteVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want []string
	}{
		{"no build info", nil, []string{"  Version     devel\n", "  Build       unknown\n", "  Date        unknown\n"}},
		{"go run from a tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, []string{"  Version     devel\n"}},
		{"a stamped build", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "56d58f0304ce8761713407b7fd8046463cfaf5da"}, {Key: "vcs.time", Value: "2026-12-03T09:04:50Z"},
			{Key: "vcs.modified", Value: "false"}}},
			[]string{"\nSys::Version\nMain Package\n  Product     openltm\n", "  Version     1.2.0\n", "  Build       56d58f0304ce\n", "  Date        2026-12-03T09:04:50Z\n"}},
		{"a tree with changes", &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "56d58f0"}, {Key: "vcs.modified", Value: "true"}}},
			[]string{"  Build       56d58f0-modified\n"}},
	} {
		var b bytes.Buffer
		if err := writeVersion(&b, tc.bi); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, b.String())
			}
		}
	}
}

func TestWriteClock(t *testing.T) {
	var b bytes.Buffer
	if err := writeClock(&b, time.Date(2026, 1, 7, 9, 5, 3, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	want := "----------------------------\nSys::Clock\n----------------------------\nWed Jan  7 09:05:03 UTC 2026\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestUptime(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0d 00:00:00"}, {-time.Second, "0d 00:00:00"}, {59*time.Second + 999*time.Millisecond, "0d 00:00:59"},
		{11*24*time.Hour + 4*time.Hour + 5*time.Minute + 45*time.Second, "11d 04:05:45"},
	} {
		if got := uptime(tc.d); got != tc.want {
			t.Errorf("uptime(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// A standalone device is active, since the engine opened; both commands
// work from inside the sys module too, and refuse options they lack.
func TestShowSysVersionAndFailover(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	out, errText := run(t, s, "show sys failover")
	if errText != "" || !regexp.MustCompile(`^Failover active for 0d 00:\d\d:\d\d\n$`).MatchString(out) {
		t.Fatalf("show sys failover: %q %q", out, errText)
	}
	if out, errText = run(t, s, "show sys version"); errText != "" || !strings.Contains(out, "  Product     openltm\n") {
		t.Fatalf("show sys version: %q %q", out, errText)
	}
	for _, c := range []string{"sys", "show version", "show failover", "show clock", "exit"} {
		if _, errText := run(t, s, c); errText != "" {
			t.Fatalf("%s: %s", c, errText)
		}
	}
	if _, errText = run(t, s, "show sys failover detail"); !strings.Contains(errText, "takes no options") {
		t.Fatalf("an option: %q", errText)
	}
}
