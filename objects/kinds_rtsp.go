package objects

// rtspProfileKind is `ltm profile rtsp` (parent /Common/rtsp), BIG-IP's
// RTSP ALG [M: the property list and defaults are as remembered from
// v13-v17, not read from a system]. openltm acts on it on TCP virtuals:
// the control connection is read message by message, SETUP's Transport
// rewritten both ways and the RTP/RTCP data channels opened on the
// virtual's address (dataplane/rtsp). The proxy modes, redirects,
// session reconnection and logging are kept with a warning.
func rtspProfileKind() *Kind {
	return actOn(profileKind("rtsp", "rtsp", `
check-source ed enabled
idle-timeout int 300
log-profile str none
log-publisher str none
max-header-size int 4096
max-queued-data int 32768
multicast-redirect ed disabled
proxy enum none none|external|internal
proxy-header str none
rtcp-port int 0
rtp-port int 0
session-reconnect ed disabled
unicast-redirect ed disabled
`), "F5 ltm profile rtsp: the RTSP ALG on TCP virtuals; SETUP's Transport is rewritten both ways and the RTP/RTCP data channels pass through the virtual's address until TEARDOWN or idle-timeout (max-header-size, max-queued-data)",
		"idle-timeout", "max-header-size", "max-queued-data")
}
