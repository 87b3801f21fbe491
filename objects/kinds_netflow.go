package objects

// netflowProfileKind is `ltm profile netflow` (parent /Common/netflow):
// the virtual's connections reported as flow records. BIG-IP's REST
// output of /Common/netflow (14.1.2.1) shows netflow-version version-5
// and no other setting; the tmsh reference names netflow-version and
// reset-stats. openltm reads:
//   - netflow-version: version-5 (F5's default), version-9 and ipfix
//     [M: the values beside version-5 are openltm's reading], the
//     format of the records;
//   - log-publisher [M: openltm's own: F5's documents name no
//     destination for the profile's records]: the sys log-config
//     publisher whose ipfix destinations (pool, transport) receive them;
//     none sends nothing and the commit says so.
//
// F5 documents no sampling and no active timeout for the profile (its
// tmsh reference and REST schema name neither), so openltm has neither:
// every connection is reported, once, when it ends, and a property of
// either name is refused as BIG-IP refuses an unknown one.
func netflowProfileKind() *Kind {
	return actOn(profileKind("netflow", "netflow", `
netflow-version enum version-5 version-5|version-9|ipfix
log-publisher ref sys+log-config+publisher none
`), "F5 ltm profile netflow: each connection of the virtual reported at its end as two flow records (client to virtual, virtual to client: addresses, ports, protocol, octets, packets, start and end) in NetFlow v5, v9 or IPFIX (netflow-version) to the ipfix destinations of log-publisher",
		"netflow-version", "log-publisher")
}
