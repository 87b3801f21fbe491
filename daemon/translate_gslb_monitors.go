package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/objects"
)

// The gtm gtp monitor's own setting: the GTP version its Echo Request
// speaks (1 or 2; the probe refuses any other).
var (
	gtmMonitorGTP = schema.MustKind("gtm monitor gtp")
	gtpVersion    = gtmMonitorGTP.MustProp("protocol-version")
)

// The gtm snmp and snmp-link monitors: their agent's port.
var (
	gtmMonitorSNMP     = schema.MustKind("gtm monitor snmp")
	gtmMonitorSNMPLink = schema.MustKind("gtm monitor snmp-link")
	gtmSNMPPort        = common("port", gtmMonitorSNMP, gtmMonitorSNMPLink)
)

// snmpAgentPort points a gtm snmp or snmp-link probe at its agent: the
// destination's port when it names one, else the monitor's port (161 by
// default), at the virtual server's or router's address. The probe only
// asks whether the agent answers (sysUpTime) [M: BIG-IP DNS also reads
// the host's load through it; openltm takes a bigip server's load from
// iQuery and has none for other hosts].
func (t *gslbTranslator) snmpAgentPort(o *objects.Object, spec *monitor.Spec, dest netip.AddrPort) (netip.AddrPort, error) {
	if dest.Port() != 0 || o.Kind.Prop(gtmSNMPPort.Name) == nil {
		return dest, nil
	}
	v := gtmSNMPPort.Effective(t.cfg, o)
	port, err := strconv.ParseUint(v, 10, 16)
	if err != nil || port == 0 {
		return dest, fmt.Errorf("port %q is not a port (1-65535)", v)
	}
	if port != 161 {
		c := *spec.SNMP
		c.Port = uint16(port)
		spec.SNMP = &c
		dest = netip.AddrPortFrom(dest.Addr(), uint16(port))
	}
	return dest, nil
}

// gtmTiming gives a gtm monitor's probe BIG-IP DNS's timing, which the
// LTM's monitors lack: probe-timeout bounds each probe, a down answer
// marks the target down at once unless ignore-down-response is enabled,
// and udp, tcp-half-open and gateway-icmp try probe-attempts times,
// probe-interval apart, before a probe fails. interval and timeout mean
// what they mean for the LTM (a probe every interval; down once no probe
// succeeded for timeout) and are already in spec.
func (t *gslbTranslator) gtmTiming(o *objects.Object, spec *monitor.Spec) error {
	num := func(name string, least int) (int, error) {
		v := t.cfg.EffectiveStr(o, name)
		n, err := strconv.Atoi(v)
		if err != nil || n < least {
			return 0, fmt.Errorf("%s %q is not a number from %d", name, v, least)
		}
		return n, nil
	}
	pt, err := num("probe-timeout", 1)
	if err != nil {
		return err
	}
	spec.ProbeTimeout = time.Duration(min(pt, maxSeconds)) * time.Second
	spec.DownOnResponse = t.cfg.EffectiveStr(o, "ignore-down-response") != "enabled"
	if o.Kind.Prop("probe-attempts") == nil {
		return nil
	}
	if spec.Attempts, err = num("probe-attempts", 1); err != nil {
		return err
	}
	iv, err := num("probe-interval", 0)
	if err != nil {
		return err
	}
	spec.AttemptInterval = time.Duration(min(iv, maxSeconds)) * time.Second
	return nil
}
