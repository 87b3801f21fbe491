package objects

// bwcKinds are BIG-IP's bandwidth controllers. `net bwc policy` acts: a
// virtual's bwc-policy (TCP, UDP and http virtuals) and the rules'
// BWC::policy attach put flows under its rates (dataplane/bwc); the
// daemon checks the rates at commit; show net bwc policy reports its
// counters. Its marking (ip-tos, link-qos: IP_TOS and SO_PRIORITY on the
// flows' sockets) and a dynamic policy's categories (BWC::color) act too,
// and so does measurement: measure enabled measures the policy, its
// categories and its instances (BWC::measure a flow or a session), and
// log-publisher gets a line per measurement each log-period. A policy's
// traffic-priority-map names a `net bwc priority-group`, whose levels
// (BWC::priority, a category's traffic-priority-map) share the policy's
// rate by weight.
// The property list and defaults follow F5's tmsh reference and the
// iControl REST schema of net/bwc/policy (maxRate, maxUserRate,
// maxUserRatePps, dynamic, measure, ipTos, linkQos, logPublisher,
// logPeriod, trafficPriorityMap): log-period's 2048 (milliseconds) is the
// REST schema's and AS3's default [M: the rates' 0 is as remembered from
// v13-v17, not read from a system].
func bwcKinds() []*Kind {
	src := tmshRef("net bwc policy")
	pol := actOn(pk("net bwc policy", "BWC Policy", "", src, `
max-rate str 0
max-user-rate str 0
max-user-rate-pps str 0
dynamic ed disabled
measure ed disabled
ip-tos str pass-through
link-qos str pass-through
log-publisher ref sys+log-config+publisher none
log-period int 2048
traffic-priority-map ref net+bwc+priority-group none
`), "Bandwidth controller: the flows of the virtual servers that name it, and those rules attach with BWC::policy, share max-rate (dynamic disabled) or get max-user-rate each (dynamic enabled)",
		"max-rate", "max-user-rate", "max-user-rate-pps", "dynamic", "ip-tos", "link-qos",
		"measure", "log-publisher", "log-period", "traffic-priority-map")
	pol.Lower = "bwc policy"
	pol.Props = append(pol.Props, help(&Prop{Name: "categories", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Category", Props: []*Prop{
		help(str("max-cat-rate", "0"), "the category's rate: bps, kbps, mbps or gbps (0: max-cat-rate-percentage, or none)"),
		help(num("max-cat-rate-percentage", "0"), "the category's rate as a percentage of the policy's max-rate (1 to 100)"),
		help(str("ip-tos", "pass-through"), "the ToS byte (0 to 255) of the category's flows' packets, or pass-through (the policy's)"),
		help(str("link-qos", "pass-through"), "the link priority (0 to 7) of the category's flows' packets, or pass-through (the policy's)"),
		help(str("traffic-priority-map", "none"), "the level of the policy's priority group the category's flows take (a level's name), or none"),
	}}}, "a dynamic policy's categories { NAME { max-cat-rate RATE | max-cat-rate-percentage N ip-tos N link-qos N } }: BWC::color set puts a flow in one"))
	for _, p := range pol.Props {
		switch p.Name {
		case "max-rate":
			p.Help = "the policy's rate: a number of bps, kbps, mbps or gbps (0: none)"
		case "max-user-rate":
			p.Help = "each user's rate in a dynamic policy: bps, kbps, mbps or gbps, at most max-rate"
		case "max-user-rate-pps":
			p.Help = "each user's packets per second in a dynamic policy: a number, or with pps, kpps, mpps"
		case "dynamic":
			p.Help = "enabled: each user (BWC::policy attach's instance, or the client's address) gets max-user-rate"
		case "ip-tos":
			p.Help = "the ToS byte (0 to 255) of the policy's flows' packets (IP_TOS), or pass-through"
		case "link-qos":
			p.Help = "the link priority (0 to 7) of the policy's flows' packets (SO_PRIORITY), or pass-through"
		case "measure":
			p.Help = "enabled: the policy, its categories and each instance are measured, and logged to log-publisher"
		case "log-publisher":
			p.Help = "the sys log-config publisher that gets a line per measurement each log-period"
		case "log-period":
			p.Help = "milliseconds between measurement lines to log-publisher (at least 100)"
			p.Max = 1 << 31
		case "traffic-priority-map":
			p.Help = "the net bwc priority-group whose levels share the policy's rate by weight (BWC::priority puts a flow in one)"
		}
	}
	// A priority group's levels [M: F5 documents the kind, not its
	// levels' settings; openltm gives each a level number, as
	// BWC::priority and FLOW::priority count them, and a weight].
	pg := actOn(pk("net bwc priority-group", "BWC Priority Group", "", tmshRef("net bwc priority-group"), ""),
		"Priority group of bandwidth controllers: its levels share the rate of each policy whose traffic-priority-map names it, by weight")
	pg.Lower = "bwc priority-group"
	pg.Props = append(pg.Props, help(&Prop{Name: "priority-levels", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Priority Level", Props: []*Prop{
		help(&Prop{Name: "level", Type: TInt, Default: "0", Max: 7}, "the level's number, 0 to 7 (7 the highest): BWC::priority N puts a flow in it"),
		help(&Prop{Name: "weight", Type: TInt, Default: "1", Min: 1, Max: 100}, "the level's share of the policy's rate, against the other levels' weights, while they are busy"),
	}}}, "the group's levels { NAME { level N weight W } }: each busy level gets max-rate × its weight ÷ the levels' weights"))
	return []*Kind{pol, pg}
}
