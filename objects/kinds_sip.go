package objects

// sipProfileKind is `ltm profile sip` (parent /Common/sip), with the
// properties BIG-IP lists for it [M: the list and defaults are those of
// v13-v17 all-properties as remembered, not read from a system]. openltm
// frames SIP messages with it (over TCP and UDP) and acts on max-size, the Via and
// Record-Route settings, terminate-on-bye, the dialog settings and the
// registration limits; what needs BIG-IP's ALG, firewall, media
// handling or logging is kept with a warning.
func sipProfileKind() *Kind {
	return actOn(profileKind("sip", "sip", `
alg-enable ed disabled
community str none
dialog-aware ed disabled
dialog-establishment-timeout int 10
enable-sip-firewall yn no
insert-record-route-header ed disabled
insert-via-header ed disabled
log-profile str none
log-publisher str none
max-media-sessions int 6
max-registrations int 100
max-sessions-per-registration int 50
max-size int 65535
registration-timeout int 3600
rtp-proxy-style enum symmetric symmetric|restricted-by-ip-address|any-location
secure-via-header ed disabled
security ed disabled
sip-session-timeout int 300
terminate-on-bye ed enabled
user-via-header str none
`), "F5 ltm profile sip: SIP messages over TCP or UDP, balanced one by one with an mblb profile (max-size bounds a message; Via and Record-Route insertion, dialogs, registration limits, BYE)", "max-size",
		"insert-via-header", "secure-via-header", "user-via-header", "insert-record-route-header",
		"terminate-on-bye", "dialog-aware", "dialog-establishment-timeout", "sip-session-timeout",
		"max-registrations", "max-sessions-per-registration", "registration-timeout")
}
