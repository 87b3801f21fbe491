package syslog

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPriority(t *testing.T) {
	for _, c := range []struct {
		in   string
		pri  int
		word string
	}{
		{"local0.info", 134, "info"}, {"local0.", 134, "info"}, {"local0.err", 131, "err"},
		{"local7.debug", 191, "debug"}, {"user.warn", 12, "warning"}, {"LOCAL0.NOTICE", 133, "notice"},
		{"bogus.bogus", 134, "info"}, {"daemon.emerg", 24, "emerg"},
	} {
		if p, w := Priority(c.in); p != c.pri || w != c.word {
			t.Errorf("Priority(%q) = %d %q; want %d %q", c.in, p, w, c.pri, c.word)
		}
	}
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestFileAndRemote writes BIG-IP's file format, folds repeated lines and
// sends RFC 5424 to a remote server and to a server a rule names.
func TestFileAndRemote(t *testing.T) {
	srv, err := net.ListenPacket("udp", "127.0.96.9:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	other, err := net.ListenPacket("udp", "127.0.96.10:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	file := filepath.Join(t.TempDir(), "log", "ltm")
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	d, err := Open(Options{File: file, Hostname: func() string { return "bigip1" }, Now: clk.now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.SetRemotes([]Remote{{Name: "r1", Addr: netip.MustParseAddrPort(srv.LocalAddr().String())}})
	d.Log("local0.info", "Rule /Common/r <HTTP_REQUEST>: hello")
	for range 3 {
		d.Log("local0.info", "same")
	}
	clk.add(time.Second)
	d.Log("local0.err", "different")
	d.LogTo(netip.MustParseAddrPort(other.LocalAddr().String()), "local1.warn", "only there")
	d.Close()

	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	want := strings.Join([]string{
		"Dec  1 12:00:00 bigip1 info tmm[PID]: Rule /Common/r <HTTP_REQUEST>: hello",
		"Dec  1 12:00:00 bigip1 info tmm[PID]: same",
		"Dec  1 12:00:01 bigip1 info tmm[PID]: last message repeated 2 times",
		"Dec  1 12:00:01 bigip1 err tmm[PID]: different",
	}, "\n") + "\n"
	want = strings.ReplaceAll(want, "PID", strconv.Itoa(pid))
	if string(raw) != want {
		t.Errorf("file:\n%s\nwant:\n%s", raw, want)
	}
	read := func(c net.PacketConn, n int) []string {
		var out []string
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 2048)
		for len(out) < n {
			k, _, err := c.ReadFrom(buf)
			if err != nil {
				t.Fatalf("read %d of %d: %v", len(out), n, err)
			}
			out = append(out, string(buf[:k]))
		}
		return out
	}
	got := read(srv, 4)
	re := regexp.MustCompile(`^<134>1 2026-12-01T12:00:00Z bigip1 tmm \d+ - - Rule /Common/r <HTTP_REQUEST>: hello$`)
	if !re.MatchString(got[0]) || !strings.HasSuffix(got[2], "last message repeated 2 times") || !strings.HasPrefix(got[3], "<131>1 ") {
		t.Errorf("remote got %q", got)
	}
	if o := read(other, 1); !strings.HasPrefix(o[0], "<140>1 ") || !strings.HasSuffix(o[0], " - - only there") {
		t.Errorf("log ADDR got %q", o)
	}
}

// TestISODate: iso-date switches the file's timestamps to ISO 8601 with
// the zone, and back, line by line.
func TestISODate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ltm")
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.FixedZone("PST", -8*3600))}
	d, err := Open(Options{File: file, Hostname: func() string { return "bigip1" }, Now: clk.now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		iso  bool
		want string
	}{
		{false, "Dec  1 12:00:00 bigip1 info tmm[PID]: line 0"},
		{true, "2026-12-01T12:00:00-08:00 bigip1 info tmm[PID]: line 1"},
		{false, "Dec  1 12:00:00 bigip1 info tmm[PID]: line 2"},
	} {
		d.SetISODate(c.iso)
		if d.ISODate() != c.iso {
			t.Fatalf("ISODate() = %v after SetISODate(%v)", d.ISODate(), c.iso)
		}
		d.Log("local0.info", fmt.Sprintf("line %d", i))
		d.Sync()
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if want := strings.ReplaceAll(c.want, "PID", strconv.Itoa(os.Getpid())); lines[len(lines)-1] != want {
			t.Errorf("iso %v: last line %q, want %q", c.iso, lines[len(lines)-1], want)
		}
	}
	d.Close()
}

// TestRotation: the file is renamed to FILE.1 at MaxSize and started anew.
func TestRotation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ltm")
	d, err := Open(Options{File: file, MaxSize: 200, Hostname: func() string { return "h" },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		d.Log("local0.info", "line "+strconv.Itoa(i)+" "+strings.Repeat("x", 20))
	}
	d.Close()
	cur, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(file + ".1")
	if err != nil {
		t.Fatal(err)
	}
	// The newest lines are in the file, the chunk before them in FILE.1
	// (older chunks were rotated away).
	if len(cur) >= 200 || len(old) < 200 || !strings.Contains(string(cur), "line 9 ") || strings.Contains(string(old), "line 9 ") {
		t.Errorf("current %d bytes:\n%s\nrotated %d bytes:\n%s", len(cur), cur, len(old), old)
	}
}

func TestNames(t *testing.T) {
	for pri, want := range map[int]string{134: "local0.info", 190: "local7.info", 34: "auth.crit", 0: "kern.emerg", 96: "ntp.emerg", -1: "local0.info", 500: "local0.info"} {
		if got := Name(pri); got != want {
			t.Errorf("Name(%d) = %q; want %q", pri, got, want)
		}
	}
	for _, tc := range []struct {
		in   string
		want int
	}{{"local7", 23}, {"Clock", 15}, {"kern", 0}} {
		if got, ok := Facility(tc.in); !ok || got != tc.want {
			t.Errorf("Facility(%q) = %d, %v", tc.in, got, ok)
		}
	}
	for _, tc := range []struct {
		in   string
		want int
	}{{"debug", 7}, {"WARN", 4}, {"panic", 0}, {"err", 3}} {
		if got, ok := Severity(tc.in); !ok || got != tc.want {
			t.Errorf("Severity(%q) = %d, %v", tc.in, got, ok)
		}
	}
	if _, ok := Facility("nope"); ok {
		t.Error("Facility(nope) found")
	}
}
