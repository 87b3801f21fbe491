package dataplane

import "github.com/openltm/openltm/dataplane/monitor"

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
