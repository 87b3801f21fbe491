package daemon

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/openltm/openltm/cluster"
	"github.com/openltm/openltm/objects"
)

// HA groups (sys ha-group): each device scores the pools of the HA group
// its traffic groups name from its own monitors' view (the dataplane's
// pool snapshots) and publishes the score in its device group, where the
// highest score takes the traffic group (cluster/hascore.go).
var (
	sysHAGroup    = schema.MustKind("sys ha-group")
	haGroupBonus  = sysHAGroup.MustProp("active-bonus")
	haGroupOn     = sysHAGroup.MustProp("enabled")
	haGroupPools  = sysHAGroup.MustProp("pools")
	cmTGHAGroup   = cmTrafficGroup.MustProp("ha-group")
	haGroupDefWgt = 10
)

// haGroup is one sys ha-group as this device scores it.
type haGroup struct {
	Name        string
	Enabled     bool
	ActiveBonus int
	Pools       []cluster.HAPool
}

// Score is the sum of the pools' contributions, without the bonus.
func (g haGroup) Score() int { return cluster.HAScore(g.Pools) }

// haGroups scores every sys ha-group of cfg, pools counted as the
// dataplane sees their members (none attached: every pool counts 0 up).
func (e *Engine) haGroups(cfg *objects.Config) map[string]haGroup {
	objs := cfg.Of(sysHAGroup)
	if len(objs) == 0 {
		return nil
	}
	p := e.plane()
	out := make(map[string]haGroup, len(objs))
	for _, o := range objs {
		g := haGroup{Name: o.Name, Enabled: haGroupOn.Str(o) != "disabled", ActiveBonus: 10}
		if n, err := strconv.Atoi(haGroupBonus.Effective(cfg, o)); err == nil {
			g.ActiveBonus = n
		}
		if v := haGroupPools.Get(o); v != nil {
			for _, it := range v.Items {
				hp := cluster.HAPool{Name: it.Name, Weight: itemInt(it, "weight", haGroupDefWgt),
					MinThreshold: itemInt(it, "minimum-threshold", 0)}
				if hp.MinThreshold == 0 {
					hp.MinThreshold = itemInt(it, "threshold", 0)
				}
				hp.SufficientThreshold = itemInt(it, "sufficient-threshold", 0) // "all" reads as 0
				if p != nil {
					if ps, ok := p.Pool(it.Name); ok {
						hp.Members, hp.Up = ps.TotalMembers, ps.AvailableMembers
					}
				}
				g.Pools = append(g.Pools, hp)
			}
		}
		out[o.Name] = g
	}
	return out
}

func itemInt(it *objects.Item, name string, def int) int {
	if v := it.Props[name]; v != nil {
		if n, err := strconv.Atoi(v.Str); err == nil {
			return n
		}
	}
	return def
}

// haGroupOf is the sys ha-group a traffic group names ("" for none) and
// this device's active bonus for it. The traffic group is synced and
// the HA group is each device's own, as on BIG-IP: every device of the
// group scores its own object of that name [M: one that has none, or has
// it disabled, scores 0, so it takes the traffic group only when no
// device scores more].
func haGroupOf(cfg *objects.Config, o *objects.Object) (string, int) {
	name := cmTGHAGroup.Str(o)
	if name == "" || name == "none" {
		return "", 0
	}
	if !strings.HasPrefix(name, "/") {
		name = "/Common/" + name
	}
	bonus := 10
	if g := cfg.Get(sysHAGroup, name); g != nil {
		if n, err := strconv.Atoi(haGroupBonus.Effective(cfg, g)); err == nil {
			bonus = n
		}
	}
	return name, bonus
}

// followScores publishes this device's HA score for each traffic group
// that names an HA group; without one nothing is computed.
func (h *clusterHook) followScores(m *cluster.Member) {
	h.mu.Lock()
	tgs := h.tgs
	h.mu.Unlock()
	m.SetScores(h.scoresOf(tgs))
}

// scoresOf is this device's HA score for each of tgs that names an HA
// group (0 for a missing or disabled one).
func (h *clusterHook) scoresOf(tgs []cluster.TrafficGroup) map[string]int {
	cfg := h.e.Config()
	var groups map[string]haGroup
	scores := map[string]int{}
	for _, tg := range tgs {
		if !tg.HAScore {
			continue
		}
		if groups == nil {
			groups = h.e.haGroups(cfg)
		}
		o := cfg.Get(cmTrafficGroup, "/Common/"+tg.Name)
		if o == nil {
			continue
		}
		name, _ := haGroupOf(cfg, o)
		if g, ok := groups[name]; ok && g.Enabled {
			scores[tg.Name] = g.Score()
		} else {
			scores[tg.Name] = 0
		}
	}
	return scores
}

// haGroupCommands answers show sys ha-group.
func haGroupCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{{"show", "sys ha-group", func(_ context.Context, _ *Session, names, _ []string, w io.Writer) error {
		cfg := e.Config()
		groups := e.haGroups(cfg)
		var m *cluster.Member
		if h := e.cluster.Load(); h != nil {
			h.mu.Lock()
			m = h.member
			h.mu.Unlock()
		}
		for _, o := range cfg.Of(sysHAGroup) {
			if !nameMatch(names, o.Name) {
				continue
			}
			showHAGroup(w, cfg, groups[o.Name], m)
		}
		return nil
	}}}
}

// showHAGroup prints one HA group: its score on this device, the traffic
// groups that name it (with the bonus where this device is active), and
// each pool's members up and contribution [M: F5's layout of this
// output is not documented; openltm prints the same facts in tmsh's
// show style].
func showHAGroup(w io.Writer, cfg *objects.Config, g haGroup, m *cluster.Member) {
	bar := strings.Repeat("-", 72)
	fmt.Fprintf(w, "%s\nSys::HA Group: %s\n%s\n", bar, strings.TrimPrefix(g.Name, "/Common/"), bar)
	state := "enabled"
	if !g.Enabled {
		state = "disabled"
	}
	fmt.Fprintf(w, "%-22s %s\n%-22s %d\n%-22s %d\n", "State", state, "Active Bonus", g.ActiveBonus, "Score", g.Score())
	var st []cluster.TrafficGroupStatus
	if m != nil {
		st = m.FailoverStatus()
	}
	for _, o := range cfg.Of(cmTrafficGroup) {
		if name, _ := haGroupOf(cfg, o); name != g.Name {
			continue
		}
		tg := shortName(o.Name)
		line := "not in a sync-failover device group"
		for _, s := range st {
			if s.Name != tg {
				continue
			}
			line = "standby"
			if s.Active {
				line = fmt.Sprintf("active (score with bonus %d)", g.Score()+bonusIf(g.Score(), g.ActiveBonus))
			}
			var peers []string
			for d, sc := range m.Scores(tg) {
				peers = append(peers, fmt.Sprintf("%s %d", d, sc))
			}
			if len(peers) > 0 {
				slices.Sort(peers)
				line += "; published: " + strings.Join(peers, ", ")
			}
		}
		fmt.Fprintf(w, "%-22s %s: %s\n", "Traffic Group", tg, line)
	}
	fmt.Fprintf(w, "\n%-32s %6s %9s %10s %4s %7s %12s\n", "Pool", "Weight", "Threshold", "Sufficient", "Up", "Members", "Contribution")
	for _, p := range g.Pools {
		suff := "all"
		if p.SufficientThreshold > 0 {
			suff = strconv.Itoa(p.SufficientThreshold)
		}
		fmt.Fprintf(w, "%-32s %6d %9d %10s %4d %7d %12d\n", p.Name, p.Weight, p.MinThreshold, suff, p.Up, p.Members, p.Contribution())
	}
}

func bonusIf(score, bonus int) int {
	if score <= 0 {
		return 0
	}
	return bonus
}

// showLoads adds to show cm traffic-group the load-aware traffic groups'
// ha-load-factor and each device's load (the load factors of the
// load-aware traffic groups it is active for) [M: the layout].
func showLoads(w io.Writer, m *cluster.Member, tgs []cluster.TrafficGroupStatus) {
	head := false
	for _, t := range tgs {
		if !t.LoadAware {
			continue
		}
		if !head {
			fmt.Fprintf(w, "\n%-26s %-16s %s\n", "Traffic Group", "Active Device", "HA Load Factor")
			head = true
		}
		owner := t.Owner
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(w, "%-26s %-16s %d\n", t.Name, owner, t.LoadFactor)
	}
	if !head {
		return
	}
	loads := m.DeviceLoads()
	caps := m.Capacities()
	if !slices.ContainsFunc(m.Group().Devices, func(d string) bool { return caps[d] > 0 }) {
		fmt.Fprintf(w, "\n%-26s %s\n", "Device", "Load")
		for _, d := range m.Group().Devices {
			fmt.Fprintf(w, "%-26s %d\n", d, loads[d])
		}
		return
	}
	// With ha-capacity set, each device's capacity and its use (load
	// over capacity, as a percentage; "-" without a capacity) [M: the
	// layout].
	fmt.Fprintf(w, "\n%-26s %-6s %-12s %s\n", "Device", "Load", "HA Capacity", "Use")
	for _, d := range m.Group().Devices {
		use := "-"
		if caps[d] > 0 {
			use = fmt.Sprintf("%d%%", loads[d]*100/caps[d])
		}
		fmt.Fprintf(w, "%-26s %-6d %-12d %s\n", d, loads[d], caps[d], use)
	}
}

// showHAScores adds to show cm traffic-group the HA scores the devices
// published for the traffic groups that fail over by HA group.
func showHAScores(w io.Writer, m *cluster.Member, tgs []cluster.TrafficGroupStatus) {
	head := false
	for _, t := range tgs {
		if !t.Scored {
			continue
		}
		if !head {
			fmt.Fprintf(w, "\n%-26s %-16s %s\n", "Traffic Group", "Device", "HA Score")
			head = true
		}
		scores := m.Scores(t.Name)
		devs := make([]string, 0, len(scores))
		for d := range scores {
			devs = append(devs, d)
		}
		slices.Sort(devs)
		for _, d := range devs {
			fmt.Fprintf(w, "%-26s %-16s %d\n", t.Name, d, scores[d])
		}
	}
}
