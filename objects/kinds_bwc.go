package objects

// bwcKinds are BIG-IP's bandwidth controllers. `net bwc policy` acts: a
// virtual's bwc-policy (TCP, UDP and http virtuals) and the rules'
// BWC::policy attach put flows under its rates (dataplane/bwc); the
// daemon checks the rates at commit; show net bwc policy reports its
// counters. Its marking (ip-tos, link-qos: IP_TOS and SO_PRIORITY on the
// flows' sockets) and a dynamic policy's categories (BWC::color) act too;
// measurement and logging are kept with a warning. `net bwc
// priority-group` is kept and saved only: BWC::priority gives a flow its
// level in the policy.
// The property list and defaults follow F5's tmsh reference and the
// iControl REST schema of net/bwc/policy (maxRate, maxUserRate,
// maxUserRatePps, dynamic, measure, ipTos, linkQos, logPublisher,
// logPeriod, trafficPriorityMap) [M: the defaults of log-period and the
// rates' 0 are as remembered from v13-v17, not read from a system].
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
log-publisher str none
log-period int 0
traffic-priority-map str none
`), "Bandwidth controller: the flows of the virtual servers that name it, and those rules attach with BWC::policy, share max-rate (dynamic disabled) or get max-user-rate each (dynamic enabled)",
		"max-rate", "max-user-rate", "max-user-rate-pps", "dynamic", "ip-tos", "link-qos")
	pol.Lower = "bwc policy"
	pol.Props = append(pol.Props, help(&Prop{Name: "categories", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Category", Props: []*Prop{
		help(str("max-cat-rate", "0"), "the category's rate: bps, kbps, mbps or gbps (0: max-cat-rate-percentage, or none)"),
		help(num("max-cat-rate-percentage", "0"), "the category's rate as a percentage of the policy's max-rate (1 to 100)"),
		help(str("ip-tos", "pass-through"), "the ToS byte (0 to 255) of the category's flows' packets, or pass-through (the policy's)"),
		help(str("link-qos", "pass-through"), "the link priority (0 to 7) of the category's flows' packets, or pass-through (the policy's)"),
		help(passive(str("traffic-priority-map", "none")), "kept: the priority group of the category"),
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
		}
	}
	pg := pk("net bwc priority-group", "BWC Priority Group", "", tmshRef("net bwc priority-group"), `
priority-levels raw
`)
	return []*Kind{pol, pg}
}
