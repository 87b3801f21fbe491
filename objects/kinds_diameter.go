package objects

// diameterProfileKind is the classic `ltm profile diameter` (parent
// /Common/diameter), with the properties BIG-IP lists for it [M: the rows
// and defaults are those of v11-v17 as remembered, not read from a
// system]. openltm balances each Diameter message of a TCP virtual with
// it (persist-avp and parent-avp, the Origin-Host/Origin-Realm rewrites,
// destination-realm, overwrite-destination-host, host-ip-rewrite,
// connection-prime, the retransmission of a failed member's requests:
// retransmit-timeout, max-retransmit-attempts, reset-on-timeout; the
// watchdog toward members: watchdog-timeout, max-watchdog-failure; the
// members' capabilities exchange bounded by handshake-timeout);
// subscriber-aware (PEM) is kept with a warning.
func diameterProfileKind() *Kind {
	return actOn(profileKind("diameter", "diameter", `
connection-prime ed disabled
destination-realm str none
handshake-timeout int 10
host-ip-rewrite ed enabled
max-retransmit-attempts int 1
max-watchdog-failure int 10
origin-host-to-client str none
origin-host-to-server str none
origin-realm-to-client str none
origin-realm-to-server str none
overwrite-destination-host ed enabled
parent-avp str none
persist-avp str none
reset-on-timeout ed enabled
retransmit-timeout int 10
subscriber-aware ed disabled
watchdog-timeout int 0
`), "F5 ltm profile diameter: each Diameter message of a TCP virtual balanced on its own (persistence on persist-avp), answers routed back by hop-by-hop id, Origin-Host and Origin-Realm rewritten toward clients and servers",
		"connection-prime", "destination-realm", "host-ip-rewrite", "origin-host-to-client", "origin-host-to-server",
		"origin-realm-to-client", "origin-realm-to-server", "overwrite-destination-host", "parent-avp", "persist-avp",
		"retransmit-timeout", "max-retransmit-attempts", "reset-on-timeout", "watchdog-timeout", "max-watchdog-failure",
		"handshake-timeout")
}
