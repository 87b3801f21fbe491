package objects

// radiusProfileKind is `ltm profile radius` (parents /Common/radiusLB and
// /Common/radiusLB-subscriber-aware), with the properties BIG-IP lists
// for it [M: the list and defaults are those of v13-v17 as remembered,
// not read from a system]. openltm parses RADIUS on UDP virtuals with
// it: each request is balanced by itself, persisted on persist-avp, and
// the clients data group gives the shared secrets an edited packet is
// signed again with; subscriber discovery and the PEM protocol profile
// need PEM and are kept with a warning.
func radiusProfileKind() *Kind {
	return actOn(profileKind("radius", "radiusLB", `
clients ref ltm+data-group+internal none
persist-avp str none
pem-protocol-profile-radius str none
subscriber-discovery ed disabled
`), "F5 ltm profile radius: RADIUS on UDP virtuals, each request balanced by itself and persisted on an attribute (persist-avp); clients is an address data group of NAS secrets",
		"clients", "persist-avp")
}
