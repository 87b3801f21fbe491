package l4

import "time"

// The flow timeouts, stated once. Each engine enforces them its own way:
// the event loops compare on their tick (loop_linux.go), goroutine flows
// turn them into read deadlines (proxy.go, ruleflow.go), and the
// message-based engine is given the same values (dataplane/internal/mblbvs).

const (
	// defaultIdleTimeout is the tcp profile's idle-timeout default.
	defaultIdleTimeout = 300 * time.Second
	// DefaultConnectTimeout bounds a server-side connect when
	// Options.ConnectTimeout is not set.
	DefaultConnectTimeout = 5 * time.Second
)

// IdleTimeout resolves the tcp profile's idle-timeout: 0 is the default,
// negative is indefinite (returned as 0: never).
func IdleTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return defaultIdleTimeout
	case d < 0:
		return 0
	}
	return d
}

// idleExpired reports whether a flow whose last byte in either direction
// moved at last (flows.Flow.LastActive) is idle at now: every byte moved
// restarts the timeout; idle 0 never expires.
func idleExpired(idle time.Duration, last, now int64) bool {
	return idle > 0 && now-last >= int64(idle)
}

// idleDeadline is when a flow last active at last becomes idle (idle > 0).
func idleDeadline(idle time.Duration, last int64) time.Time {
	return time.Unix(0, last).Add(idle)
}

// connectExpired reports whether a server-side connect started at start
// has taken its time at now; each connect attempt (reselect-tries) has
// the whole timeout.
func connectExpired(timeout time.Duration, start, now int64) bool {
	return now-start >= int64(timeout)
}
