package daemon

import (
	"sort"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/objects"
)

// The snmp-dca and snmp-dca-base monitors' own settings.
var (
	monitorSNMPDCA     = schema.MustKind("ltm monitor snmp-dca")
	monitorSNMPDCABase = schema.MustKind("ltm monitor snmp-dca-base")
	snmpCommunity      = common("community", monitorSNMPDCA, monitorSNMPDCABase)
	snmpVersion        = common("version", monitorSNMPDCA, monitorSNMPDCABase)
	snmpUser           = common("user-defined", monitorSNMPDCA, monitorSNMPDCABase)
	snmpAgent          = monitorSNMPDCA.MustProp("agent-type")
	snmpCPUCoef        = monitorSNMPDCA.MustProp("cpu-coefficient")
	snmpCPUThreshold   = monitorSNMPDCA.MustProp("cpu-threshold")
	snmpMemCoef        = monitorSNMPDCA.MustProp("memory-coefficient")
	snmpMemThreshold   = monitorSNMPDCA.MustProp("memory-threshold")
	snmpDiskCoef       = monitorSNMPDCA.MustProp("disk-coefficient")
	snmpDiskThreshold  = monitorSNMPDCA.MustProp("disk-threshold")

	memberDynamicRatio = poolMembers.Sub.MustProp("dynamic-ratio")
	nodeDynamicRatio   = ltmNode.MustProp("dynamic-ratio")
)

// snmpMonitor fills an snmp-dca or snmp-dca-base monitor's agent and
// metrics; a coefficient or a user-defined row the probe could not use
// leaves the monitor out, refusing the change that brings it.
func (t *translator) snmpMonitor(o *objects.Object, typ dataplane.MonitorType, m *dataplane.Monitor) bool {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
	s := &dataplane.SNMPMonitor{Community: noneEmpty(e(snmpCommunity)), V2c: e(snmpVersion) == "v2c"}
	if typ == dataplane.MonitorSNMPDCA {
		s.Agent = e(snmpAgent)
		for _, x := range []struct {
			name        string
			coef, thres *objects.Prop
			into        *dataplane.SNMPMetric
		}{
			{"cpu", snmpCPUCoef, snmpCPUThreshold, &s.CPU},
			{"memory", snmpMemCoef, snmpMemThreshold, &s.Memory},
			{"disk", snmpDiskCoef, snmpDiskThreshold, &s.Disk},
		} {
			c, err := monitor.ParseCoefficient(e(x.coef))
			if err != nil {
				t.skip(o, "%s: %v", x.coef.Name, err)
				return false
			}
			*x.into = dataplane.SNMPMetric{Name: x.name, Threshold: float64(atoi(e(x.thres))), Coefficient: c}
		}
	}
	rows, err := userDefined(t.cfg.Effective(o, snmpUser.Name)) // translate_monitors.go
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		u, err := monitor.ParseSNMPUserMetric(n, rows[n])
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		s.User = append(s.User, dataplane.SNMPMetric{Name: u.Name, OID: u.OID, Threshold: u.Threshold, Coefficient: u.Coefficient})
	}
	m.SNMP = s
	return true
}
