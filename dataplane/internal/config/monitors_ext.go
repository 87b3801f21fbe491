package config

import "time"

// The monitor types of this file.
const (
	MonitorExternal MonitorType = "external"
	MonitorInband   MonitorType = "inband"
)

// ExternalMonitor is an external monitor's program (`run`, a sys file
// external-monitor), its `args` and its `user-defined` variables.
type ExternalMonitor struct {
	// Path is the executable; RunName the run object's name (RUN_I).
	Path, RunName string
	Args          string
	Env           map[string]string
}

// InbandMonitor is an inband monitor's limits: Failures failed connections
// within FailureInterval mark the member down for RetryTime.
type InbandMonitor struct {
	Failures        int
	FailureInterval time.Duration
	ResponseTime    time.Duration
	RetryTime       time.Duration
}
