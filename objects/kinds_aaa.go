package objects

// radiusAAAKind is `pem profile radius-aaa` (parent /Common/radiusaaa),
// with the properties F5 gives it (AS3's Enforcement_Radius_AAA_Profile:
// description, defaults-from, password, retransmission-timeout 5,
// shared-secret, transaction-timeout 30). openltm has no PEM; it acts on
// this one PEM profile for what the iRules' AAA:: commands need: an
// internal virtual server carrying it sends AAA::auth_send's and
// AAA::acct_send's RADIUS requests to its pool, signed with
// shared-secret, sent again each retransmission-timeout until
// transaction-timeout.
func radiusAAAKind() *Kind {
	key := "pem profile radius-aaa"
	k := pk(key, "Profile", "/Common/radiusaaa", tmshRef(key)+"; properties and defaults: AS3 Enforcement_Radius_AAA_Profile", `
defaults-from ref pem+profile+radius-aaa
password str none
retransmission-timeout int 5
shared-secret str none
transaction-timeout int 30
`)
	k.Lower = "profile"
	return actOn(k, "F5 pem profile radius-aaa: on an internal virtual server, where the iRules' AAA::auth_send and AAA::acct_send send their RADIUS requests (to the virtual's pool, signed with shared-secret; password is sent when AAA::auth_send gives none), each sent again every retransmission-timeout seconds until transaction-timeout",
		"password", "retransmission-timeout", "shared-secret", "transaction-timeout")
}
