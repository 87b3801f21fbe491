package rules

import "github.com/openltm/openltm/rules/tcl"

// Server-sent events. F5 documents SSE_RESPONSE and SSE::field (get, set
// and remove of a text/event-stream message's fields) for a virtual
// server with an sse profile, but neither the profile's settings (which
// responses it parses, how long an event may grow, what it does with a
// malformed one) nor how a changed message is written back. openltm has
// no sse profile (ltm profile sse is kept with a warning), so a rule's
// SSE_RESPONSE is kept with a warning and SSE::field with the reason
// below.
var sseUnsupported = map[string]string{
	"SSE::field": "openltm has no sse profile to parse a response's server-sent events",
}

func registerSSE(t *tcl.Commands) { registerUnsupported(t, sseUnsupported) }
