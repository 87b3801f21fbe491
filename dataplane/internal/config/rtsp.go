package config

import "github.com/openltm/openltm/dataplane/rtsp"

// RTSP is a virtual's rtsp profile: its TCP flows are RTSP control
// connections read message by message (dataplane/rtsp), SETUP's
// Transport rewritten both ways and the RTP/RTCP data channels opened
// on the virtual's address. An alias so that the daemon, which may not
// import this package, can build it.
type RTSP = rtsp.Options
