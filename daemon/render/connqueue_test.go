package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

func TestRenderConnQueue(t *testing.T) {
	// A row as the pool's Traffic rows are laid out.
	row := func(label, v string) string { return fmt.Sprintf("%-23s%10s", "  "+label, v) }
	base := dataplane.PoolStats{Name: "/Common/p", Status: dataplane.Status{Availability: dataplane.Available, State: "enabled", Reason: "The pool is available"}}
	queueing := base
	queueing.Queueing = true
	queueing.ConnQueue = dataplane.ConnQueueStats{Depth: 2, AgeHead: 1500, AgeMax: 2500, AgeEMA: 300, AgeEDM: 2000, Serviced: 7, Abandoned: 1, Expired: 2, Dropped: 3}
	history := base
	history.ConnQueue.Serviced = 4
	for _, c := range []struct {
		name   string
		ps     dataplane.PoolStats
		o      Options
		want   []string // lines that must be there, in order
		absent bool     // no Connection Queue section at all
	}{
		{"queueing off, no history: BIG-IP's block unchanged", base, Options{}, nil, true},
		{"queueing on", queueing, Options{Raw: true}, []string{
			"Connection Queue",
			row("Depth", "2"),
			row("Age of Head (ms)", "1500"),
			row("Maximum Age (ms)", "2500"),
			row("Average Age (ms)", "300"),
			row("Decaying Max Age (ms)", "2000"),
			row("Serviced", "7"),
			row("Abandoned", "1"),
			row("Timed Out", "2"),
			row("Dropped", "3"),
		}, false},
		{"scaled unless raw", queueing, Options{}, []string{row("Age of Head (ms)", "1.5K")}, false},
		{"off with a history until reset-stats", history, Options{}, []string{row("Serviced", "4")}, false},
	} {
		var b bytes.Buffer
		if err := Pool(&b, c.ps, c.o); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if c.absent {
			if strings.Contains(out, "Connection Queue") {
				t.Errorf("%s: section printed:\n%s", c.name, out)
			}
			continue
		}
		rest := out
		for _, l := range c.want {
			i := strings.Index(rest, l+"\n")
			if i < 0 {
				t.Errorf("%s: no line %q in order in:\n%s", c.name, l, out)
				break
			}
			rest = rest[i+len(l):]
		}
	}

	var b bytes.Buffer
	if err := PoolFields(&b, queueing, Options{Raw: true}); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"    connq.age-head 1500\n", "    connq.depth 2\n", "    connq.serviced 7\n", "    connq-all.age-max 2500\n"} {
		if !strings.Contains(b.String(), l) {
			t.Errorf("field-fmt lacks %q:\n%s", l, b.String())
		}
	}
}
