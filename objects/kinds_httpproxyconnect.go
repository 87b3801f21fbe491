package objects

// httpProxyConnectProfileKind is `ltm profile http-proxy-connect`
// (parent /Common/http-proxy-connect): whether an explicit proxy's
// virtual answers CONNECT requests and tunnels them (BIG-IP 13.1+, the
// SSL Orchestrator's explicit proxy topologies). default-state is
// disabled [M: as the built-in profile is remembered; SSL Orchestrator
// makes its own with enabled]. openltm acts on it on a virtual whose
// http profile has proxy-type explicit: enabled answers CONNECT with 200
// and tunnels, disabled refuses it, whatever default-connect-handling
// says (daemon/translate_fwdproxy.go).
func httpProxyConnectProfileKind() *Kind {
	return actOn(profileKind("http-proxy-connect", "http-proxy-connect", `
default-state enum disabled enabled|disabled
`), "F5 ltm profile http-proxy-connect: on an explicit proxy (http profile proxy-type explicit), default-state enabled answers CONNECT with 200 and tunnels; disabled refuses it with 403",
		"default-state")
}
