package dataplane

import (
	"maps"
	"slices"

	"github.com/openltm/openltm/dataplane/monitor"
)

// compileExtMonitor gives an external or inband monitor's spec its
// settings.
func compileExtMonitor(m *Monitor, s *monitor.Spec) {
	if x := m.External; x != nil {
		s.External = &monitor.ExternalRun{Path: x.Path, RunName: x.RunName, Args: x.Args, Env: maps.Clone(x.Env)}
	}
	if in := m.Inband; in != nil {
		s.Inband = &monitor.InbandLimits{Failures: in.Failures, FailureInterval: in.FailureInterval,
			ResponseTime: in.ResponseTime, RetryTime: in.RetryTime}
	}
	if l := m.LDAP; l != nil {
		s.LDAP = &monitor.LDAPCheck{Base: l.Base, Filter: l.Filter, Username: l.Username, Password: l.Password,
			Security: l.Security, MandatoryAttributes: l.MandatoryAttributes, ChaseReferrals: l.ChaseReferrals}
	}
	if x := m.DB; x != nil {
		s.DB = &monitor.DBCheck{Username: x.Username, Password: x.Password, Database: x.Database,
			Send: x.Send, Recv: x.Recv, RecvRow: x.RecvRow, RecvColumn: x.RecvColumn}
	}
	if x := m.RADIUS; x != nil {
		s.RADIUS = &monitor.RADIUSCheck{Secret: x.Secret, Username: x.Username, Password: x.Password, NASIP: x.NASIP}
	}
	if x := m.SIP; x != nil {
		s.SIP = &monitor.SIPCheck{Mode: x.Mode, Request: x.Request, Headers: x.Headers,
			Filter: slices.Clone(x.Filter), FilterNeg: slices.Clone(x.FilterNeg)}
	}
	if l := m.Login; l != nil {
		s.Login = &monitor.Login{Username: l.Username, Password: l.Password, Domain: l.Domain,
			Folder: l.Folder, Filename: l.Filename, Port: l.Port, Newsgroup: l.Newsgroup}
	}
}
