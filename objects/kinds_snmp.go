package objects

import "strings"

// The SNMP monitors: ltm monitor snmp-dca and snmp-dca-base, which poll a
// node's SNMP agent for its load and give the member a dynamic ratio
// (dynamic-ratio-member and dynamic-ratio-node pools balance by it), and
// the GSLB's gtm monitor snmp and snmp-link.
//
// The rows follow F5's tmsh reference for the four kinds and the defaults
// F5 documents for snmp-dca (agent-type UCD, community public, cpu
// 80 % / 1.5, memory 70 % / 1.0, disk 90 % / 2.0, interval 10, timeout
// 30). Choices [M]: version defaults to v1, as F5's built-in lists it;
// the coefficients are decimal words (F5 writes 1.5, 1.0, 2.0), checked
// when the monitor is used; the gtm snmp monitors take the gtm timing
// defaults of BIG-IP DNS's other probes with snmp_dca's interval 10 and
// timeout 30 (probe-timeout 5).

// snmpDCARows are snmp-dca's own rows; snmp-dca-base has only the
// community, version and user-defined metrics.
const snmpDCARows = `
agent-type enum UCD UCD|WIN2000|GENERIC
cpu-coefficient str 1.5
cpu-threshold int 80
memory-coefficient str 1.0
memory-threshold int 70
disk-coefficient str 2.0
disk-threshold int 90
`

// snmpDCAActed are the settings the snmp-dca probes use.
var snmpDCAActed = []string{"community", "version", "agent-type", "cpu-coefficient", "cpu-threshold",
	"memory-coefficient", "memory-threshold", "disk-coefficient", "disk-threshold", "user-defined"}

// snmpDCAKind is ltm monitor snmp-dca or snmp-dca-base: a monitor the
// dataplane runs (dataplane/monitor/snmp.go). user-defined is a block of
// `NAME "OID [threshold [coefficient]]"` rows [M: F5 keeps a name and
// an OID per row; the threshold and coefficient default to 100 and 1];
// each row's value is a metric in percent, weighed as the built-in ones.
func snmpDCAKind(typ, builtin, rows string) *Kind {
	key := "ltm monitor " + typ
	k := pk(key, "Monitor", "/Common/"+builtin, tmshRef(key)+restDefaults("/Common/"+builtin), `
defaults-from ref `+strings.ReplaceAll(key, " ", "+")+`
destination str *:*
interval int 10
timeout int 30
time-until-up int 0
community str public
version enum v1 v1|v2c
user-defined raw
`+rows)
	k.Lower = "monitor"
	k.row("community").Secret = false
	for _, n := range []string{"cpu-threshold", "memory-threshold", "disk-threshold"} {
		for _, p := range k.Props {
			if p.Name == n {
				p.Max = 100
			}
		}
	}
	return pairs(runMonitor(k, snmpDCAActed...), "user-defined")
}

// snmpGTMMonitorKind is gtm monitor snmp or snmp-link: the GSLB runs
// them (daemon/translate_gslb_monitors.go), asking the SNMP agent at the
// virtual server's address (snmp) or the link's router addresses
// (snmp-link) on port, up while it answers. The rows and defaults are
// F5's REST ones for /Common/snmp_gtm (interval 90, timeout 180,
// probe-timeout 5, probe-attempts 3, probe-interval 1, port 161,
// community public, version v1); snmp_link takes the same [M].
func snmpGTMMonitorKind(typ, builtin string) *Kind {
	return runGTMMonitor(monitorRows(gtmMonitorKind(typ, builtin, `
community str public
version enum v1 v1|v2c
port int 161
probe-attempts int 3
probe-interval int 1
`), "interval", "90", "timeout", "180"), "community", "version", "port", "probe-attempts", "probe-interval")
}
