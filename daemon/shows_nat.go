package daemon

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/dataplane"
)

// natCommands answers show ltm nat and reset-stats ltm nat: for each NAT, the connections to
// its translation address forwarded to its originating address (TCP
// and UDP together, with their bits and packets as the clients' side
// saw them), and the server connections its originating address opened
// through virtual servers that left from its translation address
// [M: the layout; BIG-IP's NAT statistics are one block of traffic,
// whose exact lines were not verified].
func natCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", ltmNAT.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			cfg := e.Config()
			for _, name := range profileNames(e, ltmNAT, names) {
				o := cfg.Get(ltmNAT, name)
				state := "enabled"
				if o != nil && natEnabled.Str(o) == "disabled" {
					state = "disabled"
				}
				st, running := p.NAT(name)
				if err := drawNATStats(w, name, state, running, st); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", ltmNAT.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, ltmNAT, names) {
				p.ResetNATStats(name)
			}
			return nil
		}},
	}
}

// drawNATStats prints one NAT's block.
func drawNATStats(w io.Writer, name, state string, running bool, st dataplane.NATStats) error {
	rule := strings.Repeat("-", 52)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nLtm::NAT: %s\n%s\n", rule, strings.TrimPrefix(name, "/Common/"), rule)
	fmt.Fprintf(&b, "Status\n  %-24s: %s\n", "State", state)
	switch {
	case !running:
		fmt.Fprintf(&b, "  %-24s: %s\n", "Reason", "openltm does not run it (see the commit's warnings)")
	case state == "enabled" && !st.Inbound:
		fmt.Fprintf(&b, "  %-24s: %s\n", "Reason", "connections to the translation address are not forwarded: openltm cannot take every port of an address here")
	}
	in := st.In
	fmt.Fprintf(&b, "\n%-26s%s\n", "Traffic", "Inbound")
	for _, r := range []struct {
		k string
		v uint64
	}{
		{"Bits In", in.BitsIn}, {"Bits Out", in.BitsOut}, {"Packets In", in.PktsIn}, {"Packets Out", in.PktsOut},
		{"Current Connections", in.CurConns}, {"Maximum Connections", in.MaxConns}, {"Total Connections", in.TotConns},
	} {
		fmt.Fprintf(&b, "  %-24s%d\n", r.k, r.v)
	}
	fmt.Fprintf(&b, "\n%-26s%s\n  %-24s%d\n\n", "Traffic", "Outbound", "Total Connections", st.Out)
	_, err := io.WriteString(w, b.String())
	return err
}
