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
// A subscriber's session stays on one member when the virtual has a
// universal persistence profile (dataplane/internal/udp/gtpsession.go).
func gtpProfileKind() *Kind {
	k := actOn(profileKind("gtp", "gtp", `
ingress-max int 100
`), "F5 ltm profile gtp: GTP messages (GTPv1-C, GTP-U, GTPv2-C, GTP') on UDP virtuals, a subscriber's session kept on one member (by TEID and IMSI), retransmitted requests sent where the first copy went, read and built by the GTP_ events and GTP:: commands")
	k.row("ingress-max").Min = 1
	k.row("ingress-max").Max = 65535
	return k
}
