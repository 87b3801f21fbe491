package rtsp

import (
	"sync/atomic"
	"time"
)

// Options is an rtsp profile as the gateway applies it; the daemon fills
// it in from the profile's effective properties.
type Options struct {
	// Profile is the profile's full path, for logs.
	Profile string
	// Idle is idle-timeout: a data channel without a datagram either way
	// for that long is closed (0: DefaultIdle).
	Idle time.Duration
	// MaxHeader is max-header-size, MaxBody max-queued-data: bounds of a
	// control message past which the connection is reset.
	MaxHeader, MaxBody int
}

// Counts are an rtsp profile's figures on one virtual (show ltm profile
// rtsp): what the gateway followed on the control connections and the
// data channels it opened [M: openltm's fields; BIG-IP's are not
// documented].
type Counts struct {
	// Requests counts the clients' requests, Responses the members'
	// answers, Interleaved the $ frames either way; Channels the data
	// channels (RTP and RTCP pairs) a SETUP's answer opened; Malformed
	// the control connections reset for a message the gateway could not
	// follow.
	Requests, Responses, Interleaved, Channels, Malformed atomic.Uint64
}

// Reset zeroes the counts (reset-stats ltm profile rtsp).
func (c *Counts) Reset() {
	for _, n := range []*atomic.Uint64{&c.Requests, &c.Responses, &c.Interleaved, &c.Channels, &c.Malformed} {
		n.Store(0)
	}
}
