package dataplane

import (
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/monitor"
)

// MonitorProbe is one running instance of a monitor: what it probes, for
// which object, and what it found last; `show ltm monitor` lists them so
// that an operator sees which targets a monitor marks down and why.
type MonitorProbe struct {
	Monitor     string
	Destination netip.AddrPort
	// Pool and Object are what the probe decides for: a pool and its
	// member ("/Common/10.1.1.1:80"), or no pool and a node.
	Pool, Object string
	Status       string // up, down, checking
	Since        time.Time
	LastError    string
	// DynamicRatio is what an snmp-dca or snmp-dca-base monitor weighed
	// the member or node at on its last answer (0 for the other kinds,
	// and before an answer): the figure dynamic-ratio balancing uses,
	// which BIG-IP's pool and member shows do not print.
	DynamicRatio int
}

// MonitorProbes lists the running instances of the monitors named (all
// without names), by monitor, then destination.
func (p *Plane) MonitorProbes(names []string) []MonitorProbe {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []MonitorProbe
	add := func(pool, object string, w *state.Watch) {
		if w == nil {
			return
		}
		w.Probes(func(name string, target netip.AddrPort, s monitor.State) {
			if len(want) > 0 && !want[name] {
				return
			}
			out = append(out, MonitorProbe{Monitor: name, Destination: target, Pool: pool, Object: object,
				Status: s.Status.String(), Since: s.Since, LastError: s.LastError, DynamicRatio: s.DynamicRatio})
		})
	}
	p.mu.Lock()
	pools := make([]*state.Pool, 0, len(p.pools))
	for _, n := range sortedKeys(p.pools) {
		pools = append(pools, p.pools[n])
	}
	nodes := make([]*state.Node, 0, len(p.nodes))
	for _, n := range sortedKeys(p.nodes) {
		nodes = append(nodes, p.nodes[n])
	}
	p.mu.Unlock()
	for _, pl := range pools {
		if s := pl.Snap.Load(); s != nil {
			for _, m := range s.Members {
				add(pl.Name, m.Name, m.Watch)
			}
		}
	}
	for _, n := range nodes {
		add("", n.Name, n.Watch)
	}
	slices.SortStableFunc(out, func(a, b MonitorProbe) int {
		if c := strings.Compare(a.Monitor, b.Monitor); c != 0 {
			return c
		}
		return a.Destination.Compare(b.Destination)
	})
	return out
}
