package objects

// fastHTTPProfileKind is `ltm profile fasthttp` (parent /Common/fasthttp),
// BIG-IP's lightweight HTTP profile: a virtual with it has no tcp, http
// or one-connect profile, and it pools the member connections itself.
// The rows and defaults are those of the REST output of /Common/fasthttp
// on BIG-IP 14.1.2.1 (clientCloseTimeout, connpool*, forceHttp_10Response,
// hardwareSynCookie, headerInsert, http_11CloseWorkarounds, idleTimeout,
// insertXforwardedFor, layer_7, maxHeaderSize, maxRequests, mssOverride,
// receiveWindowSize, resetOnTimeout, serverCloseTimeout, serverSack,
// serverTimestamp, uncleanShutdown) [M: hardware-syn-cookie and
// unclean-shutdown default to enabled as a v14 system lists them; the
// Ansible module of 2016 said disabled]. openltm runs it on the HTTP
// path of http virtuals (dataplane/mblb) with its OneConnect pool:
// connpool-max-size, -max-reuse and -idle-timeout-override size and age
// the pool, insert-xforwarded-for, header-insert, max-header-size,
// max-requests and force-http-10-response edit and bound the messages,
// idle-timeout is the connections' idle timeout. The TCP tuning rows
// (mss-override, receive-window-size, the close timeouts, SYN cookies,
// SACK and timestamps), connpool-min-size, -step and -replenish, layer-7
// and http-11-close-workarounds are kept with a warning.
func fastHTTPProfileKind() *Kind {
	k := actOn(profileKind("fasthttp", "fasthttp", `
client-close-timeout int 5
connpool-idle-timeout-override int 0
connpool-max-reuse int 0
connpool-max-size int 2048
connpool-min-size int 0
connpool-replenish ed enabled
connpool-step int 4
force-http-10-response ed disabled
hardware-syn-cookie ed enabled
header-insert str none
http-11-close-workarounds ed disabled
idle-timeout int 300
insert-xforwarded-for ed disabled
layer-7 ed enabled
max-header-size int 32768
max-requests int 0
mss-override int 0
receive-window-size int 0
reset-on-timeout ed enabled
server-close-timeout int 5
server-sack ed disabled
server-timestamp ed disabled
unclean-shutdown enum enabled enabled|disabled|fast
`), "F5 ltm profile fasthttp: a lightweight HTTP virtual (no tcp, http or one-connect profile) whose member connections are pooled: connpool-max-size connections per member, each carrying connpool-max-reuse requests (0: no limit), X-Forwarded-For and header-insert added, max-header-size and max-requests enforced, responses said as HTTP/1.0 with force-http-10-response",
		"connpool-idle-timeout-override", "connpool-max-reuse", "connpool-max-size", "force-http-10-response",
		"header-insert", "idle-timeout", "insert-xforwarded-for", "max-header-size", "max-requests")
	k.row("mss-override").Max = 1460
	k.row("max-header-size").Max = 1 << 31
	return k
}

// ntlmProfileKind is `ltm profile ntlm` (parent /Common/ntlm), which
// keeps a member connection that carried an NTLM or Negotiate
// authentication bound to the client that authenticated on it, so that
// OneConnect never gives it to another client. The rows and defaults are
// the REST output of /Common/ntlm on BIG-IP 14.1.2.1 (insertCookie*,
// keyBy*). openltm binds the connection itself
// (dataplane/mblb/ntlm.go); the cookie BIG-IP inserts to key its pools
// of such connections by user, domain, workstation or target is kept
// with a warning [M: key-by-cookie-name's default is none here].
func ntlmProfileKind() *Kind {
	return actOn(profileKind("ntlm", "ntlm", `
insert-cookie-domain str none
insert-cookie-name str NTLMconnpool
insert-cookie-passphrase str none
key-by-cookie ed disabled
key-by-cookie-name str none
key-by-domain ed disabled
key-by-ip-address ed disabled
key-by-target ed disabled
key-by-user ed enabled
key-by-workstation ed disabled
`), "F5 ltm profile ntlm: on an http virtual with a one-connect profile, a member connection that answered 401 with WWW-Authenticate NTLM or Negotiate, and then carried the client's Authorization NTLM or Negotiate, stays that client's until it closes (NTLM::disable turns it off for the connection)")
}
