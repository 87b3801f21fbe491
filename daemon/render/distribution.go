package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/dataplane"
)

// topKeys lists how many of a top's heaviest keys a line shows.
const topKeys = 3

// Distribution draws `show ltm pool NAME distribution`: the members'
// shares, each virtual's traffic sources and the findings with their
// fixes.
func Distribution(w io.Writer, d dataplane.Distribution, o Options) error {
	p := &printer{w: w}
	dashes := strings.Repeat("-", dashesPool)
	p.line(dashes)
	p.line("Ltm::Pool Distribution: " + o.rel(d.Pool))
	p.line(dashes)
	p.f("  %-22s %s\n", "Load Balancing Mode", d.LBMode)
	p.f("  %-22s %d\n", "Slow Ramp Time", int(d.SlowRamp.Seconds()))
	p.f("  %-22s %d\n", "Persistence Records", d.Records)
	p.line("")
	var conns, reqs uint64
	for _, m := range d.Members {
		conns += m.TotConns
		reqs += m.Requests
	}
	var buf bytes.Buffer
	t := plainTable(&buf)
	t.Header("Member", "State", "Cur Conns", "Tot Conns", "Conns%", "Requests", "Req%", "Records", "Rec%", "Limit", "Ramp%")
	for _, m := range d.Members {
		limit := "-"
		if m.ConnectionLimit > 0 {
			limit = fmt.Sprint(m.ConnectionLimit)
			if m.AtLimit {
				limit += " (at limit)"
			}
		}
		if err := t.Append(o.rel(m.Name), m.State, o.num(m.CurConns), o.num(m.TotConns), pct(m.TotConns, conns),
			o.num(m.Requests), pct(m.Requests, reqs), fmt.Sprint(m.Records), pct(uint64(m.Records), uint64(d.Records)),
			limit, fmt.Sprintf("%.0f", m.Ramp*100)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		p.line("  " + strings.TrimRight(line, " "))
	}
	for _, v := range d.Virtuals {
		p.line("")
		p.line("  Virtual " + o.rel(v.Name) + " " + v.Destination.String())
		p.f("    %-20s %s\n", "Balances", balances(&v))
		per := "none"
		if v.Persist != "" {
			per = o.relText(v.Persist)
		}
		if v.Fallback != "" {
			per += ", fallback " + o.relText(v.Fallback)
		}
		p.f("    %-20s %s\n", "Persistence", per)
		if len(v.Records) > 0 {
			var rs []string
			for _, r := range v.Records {
				rs = append(rs, fmt.Sprintf("%d %s", r.Count, r.Mode))
			}
			p.f("    %-20s %s\n", "Records", strings.Join(rs, ", "))
		}
		p.f("    %-20s %s\n", "Client Connections", topLine(v.ClientConns, o))
		if v.HTTP && v.Requests.Total > 0 {
			p.f("    %-20s %s\n", "Requests", topLine(v.Requests, o))
			p.f("    %-20s %s\n", "X-Forwarded-For", topLine(v.XFF, o))
			users := fmt.Sprint(v.Users)
			if v.UsersAtLeast {
				users = "at least " + users
			}
			p.f("    %-20s %s over %d client connection%s\n", "Users", users, v.ClientConns.Total, plural(v.ClientConns.Total))
		}
	}
	p.line("")
	if len(d.Findings) == 0 {
		p.line("  Findings: none (no cause of an uneven spread is seen in the counts since the last reset-stats)")
		return p.err
	}
	p.line("  Findings")
	for i, f := range d.Findings {
		p.f("  %d. %s: %s\n", i+1, f.Kind, o.relText(f.What))
		p.f("     fix: %s\n", o.relText(f.Fix))
	}
	return p.err
}

func balances(v *dataplane.VirtualSpread) string {
	switch {
	case v.HTTP && v.OneConnect:
		return "each request (http and one-connect)"
	case v.HTTP:
		return "each client connection (http without one-connect: the connection's first request decides)"
	case v.Messages && v.OneConnect:
		return "each message (mblb and one-connect)"
	case v.Messages:
		return "each message (mblb)"
	}
	return "each client connection"
}

// topLine is a count and its heaviest keys: `24 (127.0.0.1 24 100%)`.
func topLine(t dataplane.Top, o Options) string {
	if t.Total == 0 {
		return "none"
	}
	var b strings.Builder
	b.WriteString(o.num(t.Total))
	for i, k := range t.Keys {
		if i == topKeys {
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s (%s)", k.Key, o.num(k.Count), pct(k.Count, t.Total))
	}
	return b.String()
}

func pct(n, total uint64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", float64(n)*100/float64(total))
}

func plural(n uint64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// relText writes the full paths in a sentence relative to the options'
// folder, as tmsh prints names from there.
func (o Options) relText(s string) string {
	if o.Folder == "" {
		return s
	}
	pre := o.Folder + "/"
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], pre) && (i == 0 || strings.IndexByte(" ({,", s[i-1]) >= 0) {
			i += len(pre)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
