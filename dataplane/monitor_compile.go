package dataplane

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/monitor"
)

// The settings every probe type shares beside send and recv, as the daemon
// reads them.
type (
	// MonitorTLS is an https monitor's TLS: cipherlist, compatibility, a
	// client certificate, or a server-ssl profile.
	MonitorTLS = config.MonitorTLS
	// AdaptiveMonitor is a monitor's adaptive response-time settings.
	AdaptiveMonitor = config.AdaptiveMonitor
)

// CompileMonitor compiles one monitor as the plane compiles its own, for
// the GSLB: a gtm server's virtual servers and gtm pool members are
// probed by the same code, with the same send, recv and timing, as LTM
// pool members are.
func CompileMonitor(name string, m *Monitor) (*monitor.Spec, error) {
	specs, err := compileMonitors(&Config{Monitors: map[string]*Monitor{name: m}})
	if err != nil {
		return nil, err
	}
	return specs[name], nil
}

// compileMonitorOpts gives a spec the account, ip-dscp, TLS and adaptive
// settings; Spec.Check refuses the out-of-range ones.
func compileMonitorOpts(m *Monitor, s *monitor.Spec) {
	s.Username, s.Password = m.Username, m.Password
	s.DSCP = uint8(min(max(m.DSCP, 0), 255)) // above 63: Check refuses it
	s.Debug = m.Debug

	if t := m.TLS; t != nil {
		s.TLS = &monitor.TLS{Ciphers: t.Ciphers, Strict: !t.Compatibility, Certificate: t.Certificate,
			Profile: t.Profile, ProfileID: t.ProfileID}
	}
	if a := m.Adaptive; a != nil {
		s.Adaptive = &monitor.Adaptive{Relative: a.Relative, Divergence: a.Divergence, Limit: a.Limit, Timespan: a.Timespan}
	}
}
