package rtsp

import "time"

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
