package config

import (
	"crypto/tls"
	"time"
)

// MonitorTLS is how an https monitor speaks TLS to its members: its own
// cipherlist, compatibility and client certificate (cert and key), or the
// server-ssl profile it names (ssl-profile), which the daemon resolves
// and builds, so the probe presents what the virtual servers' server side
// would.
type MonitorTLS struct {
	// Ciphers is the cipherlist, an F5 cipher string.
	Ciphers string
	// Compatibility is enabled's true: older protocol versions allowed.
	Compatibility bool
	// Certificate is the client certificate offered; nil: none.
	Certificate *tls.Certificate
	// Profile is the built server-ssl profile's configuration; when set
	// the other fields are not used.
	Profile *tls.Config
	// ProfileID stands for Profile in comparisons: the same text means the
	// same settings, so a commit keeps the monitor's running instances.
	ProfileID string
}

// AdaptiveMonitor is a monitor's adaptive response-time settings (adaptive
// enabled): probes slower than Limit, or slower than the mean of the last
// Timespan by more than Divergence (percent when Relative, else
// milliseconds), fail.
type AdaptiveMonitor struct {
	Relative   bool
	Divergence int
	Limit      time.Duration
	Timespan   time.Duration
}
