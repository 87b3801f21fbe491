package dataplane

import (
	"maps"
	"slices"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/monitor"
)

// The monitor types whose settings this file compiles, beside those of
// config.go.
const (
	MonitorMySQL    = config.MonitorMySQL
	MonitorMSSQL    = config.MonitorMSSQL
	MonitorTCPEcho  = config.MonitorTCPEcho
	MonitorScripted = config.MonitorScripted
	MonitorSOAP     = config.MonitorSOAP
	MonitorRPC      = config.MonitorRPC
	MonitorDiameter = config.MonitorDiameter
	MonitorMQTT     = config.MonitorMQTT
	MonitorGTP      = config.MonitorGTP
	// MonitorSNMPDCA and MonitorSNMPDCABase poll a node's SNMP agent.
	MonitorSNMPDCA     = config.MonitorSNMPDCA
	MonitorSNMPDCABase = config.MonitorSNMPDCABase
	// DynamicRatioMember and DynamicRatioNode balance by the dynamic
	// ratios the snmp-dca monitors give.
	DynamicRatioMember = config.DynamicRatioMember
	DynamicRatioNode   = config.DynamicRatioNode
)

// The settings of the monitors of this file, as the daemon reads them.
type (
	// ScriptMonitor is a scripted monitor's script as the daemon read it.
	ScriptMonitor = config.ScriptMonitor
	// SOAPMonitor is a soap monitor's call.
	SOAPMonitor = config.SOAPMonitor
	// RPCMonitor is an rpc monitor's program.
	RPCMonitor = config.RPCMonitor
	// DiameterMonitor is a diameter monitor's capabilities.
	DiameterMonitor = config.DiameterMonitor
	// MQTTMonitor is an mqtt monitor's client.
	MQTTMonitor = config.MQTTMonitor
	// SNMPMonitor is an snmp-dca monitor's agent and metrics.
	SNMPMonitor = config.SNMPMonitor
	// SNMPMetric is one metric an snmp-dca monitor weighs.
	SNMPMetric = config.SNMPMetric
)

// CheckMonitorScript reports what stops a scripted monitor's script from
// running (file:line:column and why), so the daemon refuses a bad
// script when it is configured, as the dataplane would at commit.
func CheckMonitorScript(file, text string) error { return monitor.CheckScript(file, text) }

// compileExtMonitor gives the monitors with settings of their own
// (external, inband, the login, database, radius, sip, tcp-echo,
// scripted, soap, rpc, diameter and mqtt monitors) their spec's settings.
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
			Send: x.Send, Recv: x.Recv, RecvRow: x.RecvRow, RecvColumn: x.RecvColumn, Count: x.Count}
	}
	if x := m.RADIUS; x != nil {
		s.RADIUS = &monitor.RADIUSCheck{Secret: x.Secret, Username: x.Username, Password: x.Password, NASIP: x.NASIP}
	}
	if x := m.SIP; x != nil {
		s.SIP = &monitor.SIPCheck{Mode: x.Mode, Request: x.Request, Headers: x.Headers,
			Filter: slices.Clone(x.Filter), FilterNeg: slices.Clone(x.FilterNeg)}
	}
	if x := m.Script; x != nil {
		s.Script = &monitor.ScriptCheck{File: x.File, Text: x.Text}
	}
	if x := m.SOAP; x != nil {
		s.SOAP = &monitor.SOAPCheck{HTTPS: x.Protocol == "https", URLPath: x.URLPath, Namespace: x.Namespace, Method: x.Method,
			SOAPAction: x.SOAPAction, ParamName: x.ParamName, ParamType: x.ParamType, ParamValue: x.ParamValue,
			ReturnType: x.ReturnType, ReturnValue: x.ReturnValue, ExpectFault: x.ExpectFault, Username: x.Username, Password: x.Password}
	}
	if x := m.RPC; x != nil {
		// The portmapper is asked at port 111 unless the destination names
		// a port, which probeTarget has put in the target (as tcp-echo's).
		s.RPC = &monitor.RPCCheck{Program: x.Program, Version: x.Version, AnyVersion: x.AnyVersion, UDP: x.UDP,
			PortmapPort: m.Destination.Port()}
	}
	if x := m.Diameter; x != nil {
		s.Diameter = &monitor.DiameterCheck{OriginHost: x.OriginHost, OriginRealm: x.OriginRealm, HostIP: x.HostIP,
			VendorID: x.VendorID, ProductName: x.ProductName, AuthAppIDs: slices.Clone(x.AuthAppIDs), AcctAppIDs: slices.Clone(x.AcctAppIDs),
			VSVendorID: x.VSVendorID, VSAuthAppIDs: slices.Clone(x.VSAuthAppIDs), VSAcctAppIDs: slices.Clone(x.VSAcctAppIDs)}
	}
	if x := m.MQTT; x != nil {
		s.MQTT = &monitor.MQTTCheck{Version: x.Version, ClientID: x.ClientID, Username: x.Username, Password: x.Password}
	}
	if m.Type == MonitorGTP {
		s.GTPVersion = m.GTPVersion
	}
	if x := m.SNMP; x != nil {
		metric := func(m SNMPMetric) monitor.SNMPMetric {
			return monitor.SNMPMetric{Name: m.Name, OID: m.OID, Threshold: m.Threshold, Coefficient: m.Coefficient}
		}
		c := &monitor.SNMPCheck{Community: x.Community, V2c: x.V2c, Agent: x.Agent,
			CPU: metric(x.CPU), Memory: metric(x.Memory), Disk: metric(x.Disk),
			// The agent is asked at port 161 unless the destination names
			// a port, which probeTarget has put in the target.
			Port: m.Destination.Port()}
		for _, u := range x.User {
			c.User = append(c.User, metric(u))
		}
		s.SNMP = c
	}
	if m.Type == MonitorTCPEcho {
		// tcp-echo asks the echo service (port 7) unless the destination
		// names a port; probeTarget has already put that port in the
		// target, so the probe is told to keep it.
		s.EchoPort = m.Destination.Port()
	}
	if l := m.Login; l != nil {
		s.Login = &monitor.Login{Username: l.Username, Password: l.Password, Domain: l.Domain,
			Folder: l.Folder, Filename: l.Filename, Port: l.Port, Newsgroup: l.Newsgroup}
	}
}
