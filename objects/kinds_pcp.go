package objects

// pcpProfileKind is `ltm profile pcp` (parent /Common/pcp): the Port
// Control Protocol server (RFC 6887) an lsn pool runs on its pcp selfip
// (dataplane/lsn/pcp.go). Its subscribers ask it for inbound mappings
// (MAP) and outbound ones (PEER) of the pool's translation addresses.
// [M: the defaults (listening-port 5351, map-limit-per-client 65535,
// min-mapping-lifetime 0, max-mapping-lifetime 86400, map-filter-limit
// 1, map-recycle-delay 60, announce-multicast 10, third-party-option
// disabled) are as remembered from BIG-IP 13 to 17, not read from a
// system.] The profile's rule runs in the PCP server (PCP_REQUEST,
// PCP_RESPONSE: daemon/translate_pcprules.go). announce-after-failover
// needs a peer unit, map-filter-limit has no FILTER option to bound
// (a MAP with one is answered UNSUPP_OPTION) and map-recycle-delay is
// not applied yet: they are kept with a warning.
func pcpProfileKind() *Kind {
	return actOn(profileKind("pcp", "pcp", `
announce-after-failover ed disabled
announce-multicast int 10
listening-port int 5351
map-filter-limit int 1
map-limit-per-client int 65535
map-recycle-delay int 60
max-mapping-lifetime int 86400
min-mapping-lifetime int 0
rule ref ltm+rule none
third-party-allowed-subnets list
third-party-option ed disabled
`), "F5 ltm profile pcp: the PCP server (RFC 6887) of the lsn pools that name it: MAP and PEER mappings of the pool's translation addresses, their lifetimes and limits, ",
		"listening-port", "map-limit-per-client", "max-mapping-lifetime", "min-mapping-lifetime",
		"rule", "third-party-allowed-subnets", "third-party-option")
}
