package objects

import "math"

// iiopProfileKind is `ltm profile iiop` (parent /Common/iiop), BIG-IP's
// CORBA IIOP profile [M: the property list and defaults are as BIG-IP's
// tmsh reference lists them, not read from a system; timeout is taken as
// a 32-bit count of seconds, 0 meaning no timeout]. openltm acts on every
// setting: a TCP virtual with it balances each GIOP Request and
// LocateRequest by itself and routes each reply back by request id
// (dataplane/mblb, iiopsession.go; GIOP framing in dataplane/iiop).
func iiopProfileKind() *Kind {
	k := actOn(profileKind("iiop", "iiop", `
abort-on-timeout ed enabled
persist-object-key ed disabled
persist-request-id ed disabled
timeout int 30
`), "F5 ltm profile iiop: CORBA IIOP (GIOP over TCP) balanced per request, not per connection: each Request and LocateRequest goes to its own member and each reply back to the client by request id (persist-object-key, persist-request-id, timeout, abort-on-timeout)",
		"abort-on-timeout", "persist-object-key", "persist-request-id", "timeout")
	k.bound("timeout", 0, math.MaxUint32)
	for _, p := range k.Props {
		switch p.Name {
		case "abort-on-timeout":
			p.Help = "enabled: a request unanswered after timeout seconds resets the client connection; disabled: the request is forgotten"
		case "persist-object-key":
			p.Help = "enabled: requests for one object key go to the member the first one went to"
		case "persist-request-id":
			p.Help = "enabled: a request whose request id an earlier request carried goes to that request's member"
		case "timeout":
			p.Help = "seconds a request may wait for its reply (0: no limit)"
		}
	}
	return k
}
