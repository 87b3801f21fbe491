package daemon

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestSNMPMonitorsTranslated: the snmp-dca and snmp-dca-base monitors run
// with their agent and metrics read as BIG-IP names them, F5's built-ins
// with F5's defaults; the dynamic-ratio modes and the members' and
// nodes' dynamic-ratio reach the dataplane; settings the probe cannot
// use refuse the change, and nothing is created.
func TestSNMPMonitorsTranslated(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm monitor snmp-dca m_dca community mon version v2c agent-type GENERIC cpu-coefficient 3 cpu-threshold 50 destination *:1161",
		`create ltm monitor snmp-dca-base m_base user-defined { sessions ".1.3.6.1.4.1.99.1.0 60 2" load 1.3.6.1.4.1.99.2.0 }`,
		"create ltm node web1 address 192.0.2.10 dynamic-ratio 3",
		"create ltm pool p_dyn load-balancing-mode dynamic-ratio-node monitor m_dca members add { web1:80 { dynamic-ratio 7 } }",
	)
	dc, skipped := Translate(e.schema, e.reveal(e.Config())[0])
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	cpu := func(c, th float64) dataplane.SNMPMetric {
		return dataplane.SNMPMetric{Name: "cpu", Threshold: th, Coefficient: c}
	}
	f5 := dataplane.SNMPMetric{Name: "memory", Threshold: 70, Coefficient: 1}
	disk := dataplane.SNMPMetric{Name: "disk", Threshold: 90, Coefficient: 2}
	for _, c := range []struct {
		name string
		typ  dataplane.MonitorType
		want *dataplane.SNMPMonitor
	}{
		{"/Common/snmp_dca", dataplane.MonitorSNMPDCA, &dataplane.SNMPMonitor{Community: "public", Agent: "UCD",
			CPU: cpu(1.5, 80), Memory: f5, Disk: disk}},
		{"/Common/m_dca", dataplane.MonitorSNMPDCA, &dataplane.SNMPMonitor{Community: "mon", V2c: true, Agent: "GENERIC",
			CPU: cpu(3, 50), Memory: f5, Disk: disk}},
		{"/Common/snmp_dca_base", dataplane.MonitorSNMPDCABase, &dataplane.SNMPMonitor{Community: "public"}},
		{"/Common/m_base", dataplane.MonitorSNMPDCABase, &dataplane.SNMPMonitor{Community: "public", User: []dataplane.SNMPMetric{
			{Name: "load", OID: ".1.3.6.1.4.1.99.2.0", Threshold: 100, Coefficient: 1},
			{Name: "sessions", OID: ".1.3.6.1.4.1.99.1.0", Threshold: 60, Coefficient: 2}}}},
	} {
		m := dc.Monitors[c.name]
		if m == nil || m.Type != c.typ || !reflect.DeepEqual(m.SNMP, c.want) {
			t.Errorf("%s: %+v, want type %s with %+v", c.name, m, c.typ, c.want)
		}
	}
	if m := dc.Monitors["/Common/snmp_dca"]; m.Interval != 10*time.Second || m.Timeout != 30*time.Second {
		t.Errorf("snmp_dca times %v/%v, want F5's 10/30", m.Interval, m.Timeout)
	}
	if m := dc.Monitors["/Common/m_dca"]; m.Destination.Port() != 1161 {
		t.Errorf("m_dca: destination %v, want port 1161", m.Destination)
	}
	p := dc.Pools["/Common/p_dyn"]
	if p == nil || p.LBMode != dataplane.DynamicRatioNode || len(p.Members) != 1 || p.Members[0].DynamicRatio != 7 {
		t.Errorf("p_dyn: %+v, want dynamic-ratio-node with a member of dynamic-ratio 7", p)
	}
	if n := dc.Nodes["/Common/web1"]; n == nil || n.DynamicRatio != 3 {
		t.Errorf("web1: %+v, want dynamic-ratio 3", n)
	}

	for _, c := range []struct{ cmd, err string }{
		{"create ltm monitor snmp-dca m_b1 memory-coefficient lots", `memory-coefficient: coefficient "lots" is not a number`},
		{"create ltm monitor snmp-dca m_b2 cpu-threshold 101", "101"},
		{"create ltm monitor snmp-dca m_b3 agent-type SOLARIS", "SOLARIS"},
		{"create ltm monitor snmp-dca m_b4 version v3", "v3"},
		{"create ltm monitor snmp-dca-base m_b5 user-defined { x \"1.3.6.1.4.1 200\" }", "threshold"},
		{"create ltm monitor snmp-dca-base m_b6 user-defined { x }", "has no value"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.err)
		}
	}
	for _, kind := range []string{"snmp-dca", "snmp-dca-base"} {
		if out, _ := run(t, s, "list ltm monitor "+kind); regexp.MustCompile(`m_b\d`).MatchString(out) {
			t.Errorf("a refused monitor was kept:\n%s", out)
		}
	}
}
