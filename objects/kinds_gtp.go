package objects

// gtpProfileKind is `ltm profile gtp` (parent /Common/gtp), GTP parsing
// on UDP virtuals for iRules [M: the property list and ingress-max's
// default of 100 messages are as remembered from v13-v17, not read from
// a system]. openltm acts on it on UDP virtuals: each datagram is one GTP
// message (GTPv1-C, GTP-U, GTPv2-C, GTP'), checked, balanced, and shown
// to the GTP_ events (dataplane/internal/udp/gtp.go).
// ingress-max bounds a queue of messages waiting for a rule; openltm runs
// each message's events as it arrives, so it keeps the setting with a
// warning.
//
// persistence and persist-timeout are openltm extensions [M]: BIG-IP's
// profile has no persistence setting (F5 leaves GTP persistence to
// iRules). With persistence enabled (the default), a subscriber's
// messages stay on the member that took its Create Session (Create PDP
// Context) Request: by the TEIDs the member gave in its answer and by
// the IMSI, each a universal persistence record living persist-timeout
// seconds after its last use and dropped when the member accepts the
// session's delete.
func gtpProfileKind() *Kind {
	k := actOn(profileKind("gtp", "gtp", `
ingress-max int 100
persistence enum enabled enabled|disabled
persist-timeout int 3600
`), "F5 ltm profile gtp: GTP messages (GTPv1-C, GTP-U, GTPv2-C, GTP') on UDP virtuals, a subscriber's session kept on one member (by TEID and IMSI), retransmitted requests sent where the first copy went, read and built by the GTP_ events and GTP:: commands",
		"persistence", "persist-timeout")
	k.row("ingress-max").Min = 1
	k.row("ingress-max").Max = 65535
	k.row("persistence").Help = "openltm extension: enabled keeps a subscriber's session on one member, by the TEIDs the member gave and by the IMSI (universal persistence records)"
	k.row("persist-timeout").Help = "openltm extension: seconds a session's persistence records live after their last use (0: until the session is deleted)"
	k.row("persist-timeout").Max = 2147483647
	return k
}
