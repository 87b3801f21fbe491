package mqtt

import "sync/atomic"

// DefaultMax bounds a packet's remaining length on a virtual: the proxy
// holds a whole packet before its events run, so a bound keeps one
// client from making it hold 256 MB [M: BIG-IP documents no bound].
const DefaultMax = 4 << 20

// Options is a virtual's mqtt profile as the L4 engine applies it.
type Options struct {
	// Profile is the profile's full name, for logs.
	Profile string
	// Max bounds a packet's remaining length; a larger one resets its
	// sender. 0: DefaultMax.
	Max int
}

// Counts are a virtual's MQTT packets, for show ltm profile mqtt.
type Counts struct {
	// FromClient and FromServer count the packets read from each end;
	// Malformed the connections reset for a malformed packet, TooLarge
	// those reset for one past the bound.
	FromClient, FromServer, Malformed, TooLarge atomic.Uint64
}

// Reset zeroes the counts (reset-stats ltm profile mqtt).
func (c *Counts) Reset() {
	c.FromClient.Store(0)
	c.FromServer.Store(0)
	c.Malformed.Store(0)
	c.TooLarge.Store(0)
}
