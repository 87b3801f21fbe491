package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// Monitor prints one `Ltm::Monitor` block: the monitor's running
// instances, each with its destination, the object it decides for, its
// state and how long it has held it, and the last probe's error. The
// layout follows BIG-IP's `show ltm monitor TYPE NAME` as we remember it
// [M]: "Destination:", "State time:" and "Last error:" per instance; an
// snmp-dca or snmp-dca-base instance also shows the dynamic ratio its
// agent's last answer gave ("Dynamic Ratio:"), which BIG-IP's pool member
// shows do not print [M].
func Monitor(w io.Writer, name string, probes []dataplane.MonitorProbe, now time.Time, o Options) error {
	p := &printer{w: w}
	dash := strings.Repeat("-", dashesPool)
	p.line(dash)
	p.f("Ltm::Monitor: %s\n", o.rel(name))
	p.line(dash)
	if len(probes) == 0 {
		p.line("  (no instances: the monitor is not assigned to a pool, member or node)")
	}
	for i, pr := range probes {
		if i > 0 {
			p.line("")
		}
		p.f("  Destination:  %s\n", pr.Destination)
		if pr.Pool != "" {
			p.f("  Pool Member:  %s %s\n", o.rel(pr.Pool), o.rel(pr.Object))
		} else {
			p.f("  Node:         %s\n", o.rel(pr.Object))
		}
		state := pr.Status
		if !pr.Since.IsZero() {
			state += " for " + stateTime(now.Sub(pr.Since))
		}
		p.f("  State time:   %s\n", state)
		if pr.DynamicRatio > 0 && pr.Status == "up" {
			p.f("  Dynamic Ratio: %d\n", pr.DynamicRatio)
		}
		last := pr.LastError
		if last == "" {
			last = "N/A"
		}
		p.f("  |  Last error:  %s\n", last)
	}
	return p.err
}

// stateTime is a duration as BIG-IP writes uptimes: 1hr:2mins:3sec.
func stateTime(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := uint64(d / time.Second)
	h, m := s/3600, s/60%60
	return fmt.Sprintf("%dhr%s:%dmin%s:%dsec", h, plural(h), m, plural(m), s%60)
}
