package objects

import (
	"strconv"
)

// haGroupKind is BIG-IP's `sys ha-group`: the pools whose health gives a
// device its HA score for the traffic groups that name the group
// (`cm traffic-group ... ha-group NAME`). Each device scores its own pools
// from its own monitors, publishes the score in its device group, and
// the highest score takes the traffic group (daemon/hook_cluster.go,
// cluster/hascore.go).
//
// Rows follow F5's tmsh reference of sys ha-group and the iControl REST
// schema (activeBonus, default 10; pools' weight, minimumThreshold,
// sufficientThreshold, attribute percent-up-members). [M] choices: a
// pool's weight defaults to 10, the low end of F5's 10 to 100; the
// pre-v13 `threshold` is read as minimum-threshold when that is unset;
// sufficient-threshold takes `all` (the default) or a member count;
// trunks and clusters are kept with a warning, as this device has no
// trunks or VIPRION blades to count.
func haGroupKind() *Kind {
	item := &Kind{Title: "Pool", Props: []*Prop{
		help(enum("attribute", "percent-up-members", "percent-up-members"), "what of the pool counts: the share of its members up"),
		help(&Prop{Name: "weight", Type: TInt, Default: "10", Min: 10, Max: 100}, "the most the pool adds to the HA score (10 to 100), all its members up"),
		help(&Prop{Name: "minimum-threshold", Type: TInt, Default: "0", Max: 65535}, "with fewer members up the pool adds nothing to the score"),
		help(&Prop{Name: "threshold", Type: TInt, Default: "0", Max: 65535}, "minimum-threshold's name before v13, read as it when minimum-threshold is 0"),
		help(str("sufficient-threshold", "all"), "with this many members up (or all) the pool adds its whole weight"),
	}}
	return &Kind{Words: []string{"sys", "ha-group"}, Title: "HA Group", Lower: "HA group", Source: tmshRef("sys ha-group"),
		Help: "HA group: the pools whose members up give this device its HA score for the traffic groups that name it; the highest score is active",
		Props: []*Prop{
			help(&Prop{Name: "active-bonus", Type: TInt, Default: "10", Max: 100}, "added to the score of the device active for the traffic group (0 to 100), so a small dip does not move it"),
			help(&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}}, "disabled: this device scores 0 for the traffic groups that name the group"),
			help(&Prop{Name: "pools", Type: TColl, Items: ItemRef, Ref: []string{"ltm pool"}, Sub: item, Checked: true},
				"pools { NAME { weight W minimum-threshold N sufficient-threshold N|all } }: each adds weight × its share of members up"),
			passive(raw("trunks")),
			passive(raw("clusters")),
			str("description", "none"),
			passive(str("app-service", "none")),
			passive(raw("metadata")),
		}}
}

// checkHAGroup refuses what BIG-IP refuses in an HA group's pools: a
// sufficient-threshold that is neither all nor a count, or one below the
// minimum.
func checkHAGroup(o *Object) error {
	if o.Kind.Key() != "sys ha-group" {
		return nil
	}
	v := o.Props["pools"]
	if v == nil {
		return nil
	}
	for _, it := range v.Items {
		minT := haInt(it.Props["minimum-threshold"])
		if minT == 0 {
			minT = haInt(it.Props["threshold"])
		}
		s := it.Props["sufficient-threshold"]
		if s == nil || s.Str == "" || s.Str == "all" {
			continue
		}
		n, err := strconv.Atoi(s.Str)
		if err != nil || n < 1 {
			return Invalid("HA group %s, pool %s: sufficient-threshold %q must be all or a number of members (1 or more)", o.Name, it.Name, s.Str)
		}
		if n < minT {
			return Invalid("HA group %s, pool %s: sufficient-threshold %d is below minimum-threshold %d", o.Name, it.Name, n, minT)
		}
	}
	return nil
}

func haInt(v *Value) int {
	if v == nil {
		return 0
	}
	n, _ := strconv.Atoi(v.Str)
	return n
}
