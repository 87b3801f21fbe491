package daemon

import (
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The soap, rpc, diameter and mqtt monitors' own settings.
var (
	monitorSOAP     = schema.MustKind("ltm monitor soap")
	soapProtocol    = monitorSOAP.MustProp("protocol")
	soapURLPath     = monitorSOAP.MustProp("url-path")
	soapNamespace   = monitorSOAP.MustProp("namespace")
	soapMethod      = monitorSOAP.MustProp("method")
	soapAction      = monitorSOAP.MustProp("soap-action")
	soapParamName   = monitorSOAP.MustProp("parameter-name")
	soapParamType   = monitorSOAP.MustProp("parameter-type")
	soapParamValue  = monitorSOAP.MustProp("parameter-value")
	soapReturnType  = monitorSOAP.MustProp("return-type")
	soapReturnValue = monitorSOAP.MustProp("return-value")
	soapExpectFault = monitorSOAP.MustProp("expect-fault")

	monitorRPC    = schema.MustKind("ltm monitor rpc")
	rpcProgram    = monitorRPC.MustProp("program-number")
	rpcVersion    = monitorRPC.MustProp("version-number")
	rpcMode       = monitorRPC.MustProp("mode")
	monitorMQTT   = schema.MustKind("ltm monitor mqtt")
	mqttClientID  = monitorMQTT.MustProp("clientid")
	mqttVersion   = monitorMQTT.MustProp("mqtt-version")
	appUsername   = common("username", monitorSOAP, monitorMQTT)
	appPassword   = common("password", monitorSOAP, monitorMQTT)
	monitorDiam   = schema.MustKind("ltm monitor diameter")
	diamHost      = monitorDiam.MustProp("origin-host")
	diamRealm     = monitorDiam.MustProp("origin-realm")
	diamHostIP    = monitorDiam.MustProp("host-ip-address")
	diamVendorID  = monitorDiam.MustProp("vendor-id")
	diamProduct   = monitorDiam.MustProp("product-name")
	diamAuthApp   = monitorDiam.MustProp("auth-application-id")
	diamAcctApp   = monitorDiam.MustProp("acct-application-id")
	diamVSVendor  = monitorDiam.MustProp("vendor-specific-vendor-id")
	diamVSAuthApp = monitorDiam.MustProp("vendor-specific-auth-application-id")
	diamVSAcctApp = monitorDiam.MustProp("vendor-specific-acct-application-id")
	diamMode      = monitorDiam.MustProp("mode")
)

// appMonitor fills the soap, rpc, diameter and mqtt monitors' settings;
// false means the monitor was left out (t.skip or t.keep says why). What
// the probes check of the values (a return value of its type, an mqtt
// version they speak) refuses the change when the dataplane compiles it.
func (t *translator) appMonitor(o *objects.Object, typ dataplane.MonitorType, m *dataplane.Monitor) bool {
	ne := func(p *objects.Prop) string { return noneEmpty(p.Effective(t.cfg, o)) } // BIG-IP's none as ""
	// notRun keeps a user's monitor that names nothing to check, saying
	// so; F5's built-in templates name nothing and are quietly left out.
	notRun := func(why string) bool {
		if !o.BuiltIn {
			t.keep(o, "%s; not run", why)
		}
		return false
	}
	switch typ {
	case dataplane.MonitorSOAP:
		if ne(soapMethod) == "" {
			return notRun("a soap monitor without method has nothing to call")
		}
		m.SOAP = &dataplane.SOAPMonitor{Protocol: ne(soapProtocol), URLPath: ne(soapURLPath), Namespace: ne(soapNamespace),
			Method: ne(soapMethod), SOAPAction: ne(soapAction), ParamName: ne(soapParamName), ParamType: ne(soapParamType),
			ParamValue: ne(soapParamValue), ReturnType: ne(soapReturnType), ReturnValue: ne(soapReturnValue),
			ExpectFault: ne(soapExpectFault) == "yes", Username: ne(appUsername), Password: ne(appPassword)}
	case dataplane.MonitorRPC:
		if ne(rpcProgram) == "" {
			return notRun("an rpc monitor without program-number has nothing to call")
		}
		r := &dataplane.RPCMonitor{AnyVersion: ne(rpcVersion) == "", UDP: ne(rpcMode) == "udp"}
		r.Program, _ = parseU32(ne(rpcProgram))
		if !r.AnyVersion {
			r.Version, _ = parseU32(ne(rpcVersion))
		}
		m.RPC = r
	case dataplane.MonitorDiameter:
		if mode := ne(diamMode); mode == "mr-sctp" {
			return notRun("mode mr-sctp (Diameter over SCTP) is not run; tcp and mr-tcp are")
		}
		d := &dataplane.DiameterMonitor{OriginHost: ne(diamHost), OriginRealm: ne(diamRealm), ProductName: ne(diamProduct)}
		if a := ne(diamHostIP); a != "" {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				t.skip(o, "host-ip-address %q is not an IP address", a)
				return false
			}
			d.HostIP = ip
		}
		d.VendorID, _ = parseU32(ne(diamVendorID))
		d.VSVendorID, _ = parseU32(ne(diamVSVendor))
		for _, f := range []struct {
			p  *objects.Prop
			to *[]uint32
		}{{diamAuthApp, &d.AuthAppIDs}, {diamAcctApp, &d.AcctAppIDs}, {diamVSAuthApp, &d.VSAuthAppIDs}, {diamVSAcctApp, &d.VSAcctAppIDs}} {
			if n, ok := parseU32(ne(f.p)); ok {
				*f.to = []uint32{n}
			}
		}
		m.Diameter = d
	case dataplane.MonitorMQTT:
		m.MQTT = &dataplane.MQTTMonitor{Version: ne(mqttVersion), ClientID: ne(mqttClientID), Username: ne(appUsername), Password: ne(appPassword)}
	}
	return true
}

// parseU32 reads an id the schema has bounded to 32 bits; "" (none) is
// not one.
func parseU32(s string) (uint32, bool) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}
