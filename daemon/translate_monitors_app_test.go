package daemon

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestAppMonitorsTranslated: the soap, rpc, diameter and mqtt monitors
// run with their settings read as BIG-IP names them; F5's soap and rpc
// templates, which name nothing to call, do not run, nor does a user's
// monitor like them, which is kept and said not to run; settings a probe
// cannot run with refuse the change, and nothing is created.
func TestAppMonitorsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir()) // a running dataplane refuses what it cannot run
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		`create ltm monitor soap m_soap protocol https url-path /calc namespace urn:calc method Inc soap-action urn:calc#Inc `+
			`parameter-name n parameter-type int parameter-value 41 return-type int return-value 42 username mon password pw`,
		"create ltm monitor soap m_fault method Boom expect-fault yes",
		"create ltm monitor rpc m_rpc program-number 100003 version-number 3 mode udp destination *:1111",
		"create ltm monitor rpc m_rpc_any program-number 100005",
		"create ltm monitor diameter m_dia origin-host ltm.example.com origin-realm example.com host-ip-address 192.0.2.9 "+
			"auth-application-id 4 vendor-specific-vendor-id 10415 vendor-specific-auth-application-id 16777251",
		"create ltm monitor mqtt m_mqtt clientid ltm-1 username mon password pw mqtt-version 5",
	)
	dc, skipped := Translate(e.schema, e.reveal(e.Config())[0])
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, c := range []struct {
		name string
		typ  dataplane.MonitorType
		want any // the monitor's own settings
		got  func(*dataplane.Monitor) any
	}{
		{"/Common/m_soap", dataplane.MonitorSOAP, &dataplane.SOAPMonitor{Protocol: "https", URLPath: "/calc", Namespace: "urn:calc", Method: "Inc",
			SOAPAction: "urn:calc#Inc", ParamName: "n", ParamType: "int", ParamValue: "41", ReturnType: "int", ReturnValue: "42",
			Username: "mon", Password: "pw"}, func(m *dataplane.Monitor) any { return m.SOAP }},
		{"/Common/m_fault", dataplane.MonitorSOAP, &dataplane.SOAPMonitor{Protocol: "http", Method: "Boom", ParamType: "bool", ReturnType: "bool",
			ExpectFault: true}, func(m *dataplane.Monitor) any { return m.SOAP }},
		{"/Common/m_rpc", dataplane.MonitorRPC, &dataplane.RPCMonitor{Program: 100003, Version: 3, UDP: true},
			func(m *dataplane.Monitor) any { return m.RPC }},
		{"/Common/m_rpc_any", dataplane.MonitorRPC, &dataplane.RPCMonitor{Program: 100005, AnyVersion: true},
			func(m *dataplane.Monitor) any { return m.RPC }},
		{"/Common/m_dia", dataplane.MonitorDiameter, &dataplane.DiameterMonitor{OriginHost: "ltm.example.com", OriginRealm: "example.com",
			HostIP: netip.MustParseAddr("192.0.2.9"), VendorID: 3375, ProductName: "F5 BIGIP Diameter Health Monitoring",
			AuthAppIDs: []uint32{4}, VSVendorID: 10415, VSAuthAppIDs: []uint32{16777251}}, func(m *dataplane.Monitor) any { return m.Diameter }},
		{"/Common/diameter", dataplane.MonitorDiameter, &dataplane.DiameterMonitor{VendorID: 3375, ProductName: "F5 BIGIP Diameter Health Monitoring"},
			func(m *dataplane.Monitor) any { return m.Diameter }},
		{"/Common/m_mqtt", dataplane.MonitorMQTT, &dataplane.MQTTMonitor{Version: "5", ClientID: "ltm-1", Username: "mon", Password: "pw"},
			func(m *dataplane.Monitor) any { return m.MQTT }},
		{"/Common/mqtt", dataplane.MonitorMQTT, &dataplane.MQTTMonitor{Version: "3"}, func(m *dataplane.Monitor) any { return m.MQTT }},
	} {
		m := dc.Monitors[c.name]
		if m == nil || m.Type != c.typ || !reflect.DeepEqual(c.got(m), c.want) {
			t.Errorf("%s: %+v, want type %s with %+v", c.name, m, c.typ, c.want)
			continue
		}
	}
	if m := dc.Monitors["/Common/m_rpc"]; m.Destination.Port() != 1111 {
		t.Errorf("m_rpc: destination %v, want port 1111 (the portmapper's)", m.Destination)
	}
	if m := dc.Monitors["/Common/diameter"]; m.Interval != 10*time.Second || m.Timeout != 31*time.Second {
		t.Errorf("the diameter template times %v/%v, want F5's 10/31", m.Interval, m.Timeout)
	}
	for _, name := range []string{"/Common/soap", "/Common/rpc"} {
		if m := dc.Monitors[name]; m != nil {
			t.Errorf("the built-in %s, which names nothing to call, runs: %+v", name, m)
		}
	}
	if out, _ := run(t, s, "list ltm monitor diameter m_dia all-properties"); !strings.Contains(out, `product-name "F5 BIGIP Diameter Health Monitoring"`) {
		t.Errorf("product-name not listed with its default:\n%s", out)
	}

	// Bad settings refuse the change, saying what and where.
	for _, c := range []struct{ cmd, err string }{
		{"create ltm monitor soap m_b1 method Inc return-type int return-value yes", `return-value: "yes" is not an int`},
		{`create ltm monitor soap m_b2 method "Get Status"`, `method "Get Status" is not an XML element name`},
		{"create ltm monitor soap m_b3 method Inc url-path calc", `url-path "calc" does not start with /`},
		{"create ltm monitor mqtt m_b4 mqtt-version 3.1", `mqtt-version "3.1" is not 3 (MQTT 3.1.1) or 5 (MQTT 5.0)`},
		{"create ltm monitor mqtt m_b5 password pw", "password needs username"},
		{"create ltm monitor diameter m_b6 vendor-specific-acct-application-id 3", "need vendor-specific-vendor-id"},
		{"create ltm monitor diameter m_b7 origin-host \"two words\"", `origin-host "two words" is not a host name`},
		{"create ltm monitor rpc m_b8 program-number 4294967296", "out of range"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.err)
		}
	}
	for _, kind := range []string{"soap", "mqtt", "diameter", "rpc"} {
		if out, _ := run(t, s, "list ltm monitor "+kind); strings.Contains(out, "m_b") {
			t.Errorf("a refused monitor was kept:\n%s", out)
		}
	}

	// A user's monitor that names nothing to call, or a transport not
	// run, is kept and said not to run.
	mustRun(t, s, "create ltm monitor soap m_none", "create ltm monitor rpc m_noprog", "create ltm monitor diameter m_sctp mode mr-sctp")
	_, skipped = Translate(e.schema, e.reveal(e.Config())[0])
	want := []string{"without method", "without program-number", "mode mr-sctp"}
	if len(skipped) != len(want) {
		t.Fatalf("kept: %v, want %d", skipped, len(want))
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(skipped, "\n"), w) {
			t.Errorf("kept %v, none saying %q", skipped, w)
		}
	}
}
