package config

import (
	"net/netip"
	"time"
)

// The monitor types of this file.
const (
	MonitorExternal MonitorType = "external"
	MonitorInband   MonitorType = "inband"
	MonitorSMTP     MonitorType = "smtp"
	MonitorPOP3     MonitorType = "pop3"
	MonitorIMAP     MonitorType = "imap"
	MonitorFTP      MonitorType = "ftp"
	MonitorNNTP     MonitorType = "nntp"
	MonitorLDAP     MonitorType = "ldap"
	MonitorSIP      MonitorType = "sip"
	MonitorRADIUS   MonitorType = "radius"
	// MonitorPostgreSQL is postgresql.
	MonitorPostgreSQL MonitorType = "postgresql"
	// MonitorRADIUSAcct is radius-accounting.
	MonitorRADIUSAcct MonitorType = "radius-accounting"
	MonitorMySQL      MonitorType = "mysql"
	MonitorMSSQL      MonitorType = "mssql"
	// MonitorTCPEcho is tcp-echo.
	MonitorTCPEcho  MonitorType = "tcp-echo"
	MonitorScripted MonitorType = "scripted"
	MonitorSOAP     MonitorType = "soap"
	MonitorRPC      MonitorType = "rpc"
	MonitorDiameter MonitorType = "diameter"
	MonitorMQTT     MonitorType = "mqtt"
	// MonitorGTP is BIG-IP DNS's gtp: a GTP Echo Request over UDP.
	MonitorGTP MonitorType = "gtp"
	// MonitorSNMPDCA and MonitorSNMPDCABase are snmp-dca and
	// snmp-dca-base.
	MonitorSNMPDCA     MonitorType = "snmp-dca"
	MonitorSNMPDCABase MonitorType = "snmp-dca-base"
)

// SNMPMonitor is an snmp-dca or snmp-dca-base monitor's agent (community,
// version v2c or v1, agent-type: "" for snmp-dca-base) and the metrics
// weighed into the dynamic ratio: snmp-dca's cpu, memory and disk
// thresholds and coefficients, and the user-defined OIDs.
type SNMPMonitor struct {
	Community         string
	V2c               bool
	Agent             string
	CPU, Memory, Disk SNMPMetric
	User              []SNMPMetric
}

// SNMPMetric is one metric of an SNMPMonitor: a name, the OID of a
// user-defined one, its threshold (percent) and coefficient.
type SNMPMetric struct {
	Name, OID              string
	Threshold, Coefficient float64
}

// SOAPMonitor is a soap monitor's call: protocol (http or https),
// url-path, namespace, method and soap-action, the one parameter
// (parameter-name, -type, -value; "" for none), the return value it must
// give (return-type, return-value; "" for any), expect-fault, and the
// HTTP login (username, password).
type SOAPMonitor struct {
	Protocol, URLPath, Namespace, Method, SOAPAction string
	ParamName, ParamType, ParamValue                 string
	ReturnType, ReturnValue                          string
	ExpectFault                                      bool
	Username, Password                               string
}

// RPCMonitor is an rpc monitor's program-number and version-number
// (AnyVersion: none) and its mode (UDP: udp; tcp otherwise).
type RPCMonitor struct {
	Program, Version uint32
	AnyVersion, UDP  bool
}

// DiameterMonitor is what a diameter monitor's Capabilities-Exchange-
// Request says: origin-host and origin-realm ("" for none), host-ip-address
// (invalid: none), vendor-id and product-name, and the application ids
// (none: empty; vendor-specific-vendor-id 0: none).
type DiameterMonitor struct {
	OriginHost, OriginRealm    string
	HostIP                     netip.Addr
	VendorID                   uint32
	ProductName                string
	AuthAppIDs, AcctAppIDs     []uint32
	VSVendorID                 uint32
	VSAuthAppIDs, VSAcctAppIDs []uint32
}

// MQTTMonitor is an mqtt monitor's mqtt-version, clientid and login
// ("" for none).
type MQTTMonitor struct {
	Version, ClientID, Username, Password string
}

// ScriptMonitor is a scripted monitor's script: the file it was read from
// (filename), named in errors, and its text as read when the
// configuration was made, so the dataplane checks and runs what was
// committed.
type ScriptMonitor struct {
	File, Text string
}

// DBMonitor is a database monitor's (postgresql, mysql, mssql) login (username, password, database;
// "" for none) and query: send, whose answer must hold recv, at recv-row
// and recv-column when set (1-based; 0: anywhere).
type DBMonitor struct {
	Username, Password, Database, Send, Recv string
	RecvRow, RecvColumn                      int
	// Count is how many probes share one connection before it is
	// closed and opened again (0: a connection per probe).
	Count int
}

// RADIUSMonitor is the radius and radius-accounting monitors' shared
// secret, account ("" for none) and NAS-IP-Address (invalid: none).
type RADIUSMonitor struct {
	Secret, Username, Password string
	NASIP                      netip.Addr
}

// SIPMonitor is a sip monitor's request: its transport (mode), request
// line and extra headers ("" for none), and the status codes that mean
// up (Filter; none: any final answer) or down (FilterNeg).
type SIPMonitor struct {
	Mode, Request, Headers string
	Filter, FilterNeg      []int
}

// LDAPMonitor is an ldap monitor's search: base and filter ("" for
// none), the bind DN and password ("" binds anonymously), security
// (none, ssl or tls), mandatory-attributes and chase-referrals.
type LDAPMonitor struct {
	Base, Filter, Username, Password, Security string
	MandatoryAttributes, ChaseReferrals        bool
}

// MonitorLogin is what the smtp, pop3, imap, ftp and nntp monitors say
// to the member: the account to log in with ("" for BIG-IP's none),
// smtp's HELO domain, the imap folder to select, the ftp file to fetch
// and whether the ftp data connection is active (mode port) or passive,
// the nntp newsgroup to select.
type MonitorLogin struct {
	Username, Password string
	Domain, Folder     string
	Filename           string
	Port               bool
	Newsgroup          string
}

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
