package render

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/gslb"
)

// GTMTopology prints `show gtm topology`: the records in the order the
// GSLB evaluates them (the first whose two sides match gives the score),
// so a user sees which record wins for an LDNS.
func GTMTopology(w io.Writer, recs []gslb.TopologyStats, o Options) error {
	var buf bytes.Buffer
	if len(recs) > 0 {
		t := gtmTable(&buf)
		t.Header("#", "LDNS", "Server", "Order", "Score")
		for i, r := range recs {
			if err := t.Append(strconv.Itoa(i+1), relMatch(o, r.LDNS), relMatch(o, r.Server), strconv.Itoa(r.Order), strconv.Itoa(r.Score)); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return writeTrimmed(w, "Gtm::Topology Records (in evaluation order)\n", &buf, fmt.Sprintf("Total records: %d\n", len(recs)))
}

// relMatch prints a `[not] KIND VALUE` match with its object path
// relative to the folder.
func relMatch(o Options, m string) string {
	f := strings.Fields(m)
	if len(f) > 0 && strings.HasPrefix(f[len(f)-1], "/") {
		f[len(f)-1] = o.rel(f[len(f)-1])
	}
	return strings.Join(f, " ")
}

// GTMRegion prints one `Gtm::Region` block: its members and how many
// topology records and regions use it.
func GTMRegion(w io.Writer, s gslb.RegionStats, o Options) error {
	p := &printer{w: w}
	p.header("Gtm::Region: " + o.rel(s.Name))
	p.f("  %-13s: %d\n", "Used By", s.UsedBy)
	p.line("  Members")
	if len(s.Members) == 0 {
		p.line("    none")
	}
	for _, m := range s.Members {
		p.line("    " + relMatch(o, m))
	}
	return p.err
}

// GTMListener prints one `Gtm::Listener` block.
func GTMListener(w io.Writer, s gslb.ListenerStats, o Options) error {
	p := &printer{w: w}
	p.header("Gtm::Listener: " + o.rel(s.Name))
	p.status("", s.Status)
	p.f("  %-13s: %s\n", "Address", s.Address)
	p.f("  %-13s: %s\n", "Protocol", s.Protocol)
	return p.err
}

// GTMCounters prints the DNS server's own counters, which every listener
// adds to.
func GTMCounters(w io.Writer, c gslb.ServerCounters, o Options) error {
	p := &printer{w: w}
	p.header("Gtm::DNS: all listeners")
	p.section("", "Queries", []kv{
		{"Total", o.num(c.Queries)}, {"Wide IP", o.num(c.WideIP)}, {"Static zone", o.num(c.Static)},
		{"NXDOMAIN", o.num(c.NXDomain)}, {"Refused", o.num(c.Refused)}, {"Dropped", o.num(c.Dropped)}, {"Malformed", o.num(c.Malformed)},
	})
	return p.err
}
