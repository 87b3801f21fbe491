package daemon

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"
)

// sysCommands answers show sys version, show sys failover (one line, as
// BIG-IP answers it: "Failover active for 0d 00:22:20") and show sys
// clock, the questions scripts ask a device first (which software, which
// state, what time).
func sysCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "sys version", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if len(words) > 0 {
				return synErr(nil, nil, "show sys version takes no options (%q)", words[0])
			}
			bi, _ := debug.ReadBuildInfo()
			return writeVersion(w, bi)
		}},
		{"show", "sys clock", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if len(words) > 0 {
				return synErr(nil, nil, "show sys clock takes no options (%q)", words[0])
			}
			return writeClock(w, time.Now())
		}},
		{"show", "sys failover", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if len(words) > 0 {
				return synErr(nil, nil, "show sys failover takes no options (%q)", words[0])
			}
			active, since := true, e.started
			if h := e.cluster.Load(); h != nil {
				h.mu.Lock()
				m := h.member
				h.mu.Unlock()
				if m != nil {
					active, since = m.DeviceState()
				}
			}
			state := "standby"
			if active {
				state = "active"
			}
			_, err := fmt.Fprintf(w, "Failover %s for %s\n", state, uptime(time.Since(since)))
			return err
		}},
	}
}

// moduleVersion is openltm's version as the binary records it ("devel"
// for a build outside a released module).
func moduleVersion(bi *debug.BuildInfo) string {
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return strings.TrimPrefix(v, "v")
		}
	}
	return "devel"
}

// writeVersion prints show sys version in BIG-IP's layout, from what the
// Go toolchain recorded in the binary: the module version, the commit it
// was built from (marked when the tree had changes) and that commit's
// time.
func writeVersion(w io.Writer, bi *debug.BuildInfo) error {
	version, build, date := moduleVersion(bi), "unknown", "unknown"
	if bi != nil {
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				build = s.Value
				if len(build) > 12 {
					build = build[:12]
				}
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && build != "unknown" {
			build += "-modified"
		}
	}
	_, err := fmt.Fprintf(w, "\nSys::Version\nMain Package\n  %-11s %s\n  %-11s %s\n  %-11s %s\n  %-11s %s\n\n",
		"Product", "openltm", "Version", version, "Build", build, "Date", date)
	return err
}

// uptime is a duration as BIG-IP prints one in show sys failover:
// days, then hours:minutes:seconds.
func uptime(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%dd %02d:%02d:%02d", s/86400, s%86400/3600, s%3600/60, s%60)
}

// writeClock prints show sys clock: the device's time as date(1) prints
// it, under a bar as long as the line.
func writeClock(w io.Writer, now time.Time) error {
	line := now.Format("Mon Jan _2 15:04:05 MST 2006")
	bar := strings.Repeat("-", len(line))
	_, err := fmt.Fprintf(w, "%s\nSys::Clock\n%s\n%s\n", bar, bar, line)
	return err
}
