package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The kinds and properties the daemon reads, looked up once here. A
// misspelt key or property name panics when the package initialises, so it
// fails every test and every start instead of reading as nil or "" at the
// one place it is used. Defaults come from the schema through these handles
// (Prop.Effective, Prop.StrIn); nothing here restates one.

// schema is the schema every engine reads with (Engine.schema).
var schema = objects.Default

// common returns the handle of a property that every one of kinds has,
// checking each: the translators read some properties the same way from
// several kinds (every monitor's interval, every persistence profile's
// timeout), and a handle reads by name.
func common(name string, kinds ...*objects.Kind) *objects.Prop {
	var p *objects.Prop
	for _, k := range kinds {
		p = k.MustProp(name)
	}
	return p
}

// defaultsFrom names the property a new object's parent (Kind.Parent) is
// set in; every kind with a parent is checked to have it.
var defaultsFrom = func() string {
	for _, k := range schema.Kinds() {
		if k.Parent != "" {
			k.MustProp("defaults-from")
		}
	}
	return "defaults-from"
}()

// Reference specs the daemon resolves names with (objects.Config.Lookup).
var (
	specMonitor = schema.MustSpec("ltm monitor ")
	// specAnyMonitor is what a gtm object's monitor may name: the GSLB
	// runs gtm monitors and the ltm ones alike (translate_gslb.go).
	// The gtm kinds come first, as on BIG-IP, where /Common/http on a gtm
	// pool is the gtm http monitor.
	specAnyMonitor  = append(schema.MustSpec("gtm monitor "), schema.MustSpec("ltm monitor ")...)
	specPersistence = schema.MustSpec("ltm persistence ")
	specRule        = schema.MustSpec("ltm rule")
	specDataGroup   = schema.MustSpec("ltm data-group internal")
	specPool        = schema.MustSpec("ltm pool")
	specSnatPool    = schema.MustSpec("ltm snatpool")
	specTMC         = schema.MustSpec("ltm traffic-matching-criteria")
	specAddressList = schema.MustSpec("net address-list")
	specPortList    = schema.MustSpec("net port-list")
	specGTMServer   = schema.MustSpec("gtm server")
	specDatacenter  = schema.MustSpec("gtm datacenter")
	specLink        = schema.MustSpec("gtm link")
)

// sys and net
var (
	sysGlobal         = schema.MustKind("sys global-settings")
	sysGlobalHostname = sysGlobal.MustProp("hostname")

	netSelf        = schema.MustKind("net self")
	netSelfAddress = netSelf.MustProp("address")
)

// ltm monitors
var (
	monitorTCP         = schema.MustKind("ltm monitor tcp")
	monitorTCPHalfOpen = schema.MustKind("ltm monitor tcp-half-open")
	monitorHTTP        = schema.MustKind("ltm monitor http")
	monitorICMP        = schema.MustKind("ltm monitor gateway-icmp")
	monitorHTTPS       = schema.MustKind("ltm monitor https")
	monitorHTTP2       = schema.MustKind("ltm monitor http2")
	monitorUDP         = schema.MustKind("ltm monitor udp")
	monitorPing        = schema.MustKind("ltm monitor icmp")
	monitorDNS         = schema.MustKind("ltm monitor dns")
	dnsQName           = monitorDNS.MustProp("qname")
	dnsQType           = monitorDNS.MustProp("qtype")
	dnsAcceptRcode     = monitorDNS.MustProp("accept-rcode")
	dnsAnswerContains  = monitorDNS.MustProp("answer-contains")
	dnsRecv            = monitorDNS.MustProp("recv")

	// monitorRun are the monitor kinds the dataplane runs, with its type.
	monitorRun = []struct {
		kind *objects.Kind
		typ  string
	}{
		{monitorTCP, "tcp"}, {monitorTCPHalfOpen, "tcp-half-open"}, {monitorHTTP, "http"}, {monitorICMP, "gateway-icmp"},
		{monitorHTTPS, "https"}, {monitorHTTP2, "http2"}, {monitorUDP, "udp"}, {monitorPing, "icmp"}, {monitorDNS, "dns"},
		{monitorExternal, "external"}, {monitorInband, "inband"}, // translate_monitors.go
		{monitorSMTP, "smtp"}, {monitorPOP3, "pop3"}, {monitorIMAP, "imap"}, {monitorFTP, "ftp"}, {monitorNNTP, "nntp"}, {monitorLDAP, "ldap"}, {monitorSIP, "sip"},
		{monitorRADIUS, "radius"}, {monitorRADIUSAcct, "radius-accounting"}, {monitorPostgreSQL, "postgresql"},
		{monitorMySQL, "mysql"}, {monitorMSSQL, "mssql"}, {monitorTCPEcho, "tcp-echo"}, {monitorScripted, "scripted"},
		{monitorSOAP, "soap"}, {monitorRPC, "rpc"}, {monitorDiam, "diameter"}, {monitorMQTT, "mqtt"}, // translate_monitors_app.go
		{monitorSNMPDCA, "snmp-dca"}, {monitorSNMPDCABase, "snmp-dca-base"}, // translate_monitors_snmp.go
	}
	// gtmMonitorRun are the gtm monitor kinds the GSLB runs, with the
	// probe type (translate_gslb.go); bigip and bigip-link are reported
	// status, not probes.
	gtmMonitorRun = map[*objects.Kind]dataplane.MonitorType{
		schema.MustKind("gtm monitor http"): dataplane.MonitorHTTP, schema.MustKind("gtm monitor https"): dataplane.MonitorHTTPS,
		schema.MustKind("gtm monitor tcp"): dataplane.MonitorTCP, schema.MustKind("gtm monitor udp"): dataplane.MonitorUDP,
		schema.MustKind("gtm monitor tcp-half-open"): dataplane.MonitorTCPHalfOpen, schema.MustKind("gtm monitor gateway-icmp"): dataplane.MonitorGatewayICMP,
		// The application monitors, with the LTM's probes
		// (objects/kinds_gtm_monitors.go); oracle, firepass,
		// real-server, wap and wmi are kept, none probes nothing; gtp is
		// the GSLB's own (a GTP Echo Request).
		schema.MustKind("gtm monitor ftp"): dataplane.MonitorFTP, schema.MustKind("gtm monitor imap"): dataplane.MonitorIMAP,
		schema.MustKind("gtm monitor pop3"): dataplane.MonitorPOP3, schema.MustKind("gtm monitor smtp"): dataplane.MonitorSMTP,
		schema.MustKind("gtm monitor nntp"): dataplane.MonitorNNTP, schema.MustKind("gtm monitor ldap"): dataplane.MonitorLDAP,
		schema.MustKind("gtm monitor mssql"): dataplane.MonitorMSSQL, schema.MustKind("gtm monitor mysql"): dataplane.MonitorMySQL,
		schema.MustKind("gtm monitor postgresql"): dataplane.MonitorPostgreSQL, schema.MustKind("gtm monitor radius"): dataplane.MonitorRADIUS,
		schema.MustKind("gtm monitor radius-accounting"): dataplane.MonitorRADIUSAcct, schema.MustKind("gtm monitor sip"): dataplane.MonitorSIP,
		schema.MustKind("gtm monitor soap"): dataplane.MonitorSOAP, schema.MustKind("gtm monitor scripted"): dataplane.MonitorScripted,
		schema.MustKind("gtm monitor external"): dataplane.MonitorExternal, gtmMonitorGTP: dataplane.MonitorGTP,
		// snmp and snmp-link ask an SNMP agent whether it answers, with
		// snmp-dca-base's probe (translate_gslb_monitors.go).
		gtmMonitorSNMP: dataplane.MonitorSNMPDCABase, gtmMonitorSNMPLink: dataplane.MonitorSNMPDCABase,
	}
	allMonitors = []*objects.Kind{monitorTCP, monitorTCPHalfOpen, monitorHTTP, monitorICMP, monitorHTTPS, monitorHTTP2, monitorUDP, monitorPing, monitorDNS,
		monitorSMTP, monitorPOP3, monitorIMAP, monitorFTP, monitorNNTP, monitorLDAP, monitorSIP, monitorRADIUS, monitorRADIUSAcct, monitorPostgreSQL,
		monitorMySQL, monitorMSSQL, monitorTCPEcho, monitorScripted, monitorSOAP, monitorRPC, monitorDiam, monitorMQTT}
	sendRecvMonitor = []*objects.Kind{monitorTCP, monitorHTTP, monitorHTTPS, monitorHTTP2, monitorUDP}

	monitorInterval     = common("interval", allMonitors...)
	monitorTimeout      = common("timeout", allMonitors...)
	monitorTimeUntilUp  = common("time-until-up", allMonitors...)
	monitorUpInterval   = common("up-interval", allMonitors...)
	monitorManualResume = common("manual-resume", allMonitors...)
	monitorReverse      = common("reverse", sendRecvMonitor...)
	monitorSend         = common("send", sendRecvMonitor...)
	monitorRecv         = common("recv", sendRecvMonitor...)
	monitorRecvDisable  = common("recv-disable", sendRecvMonitor...)
	monitorDestination  = common("destination", allMonitors...)

	defaultNodeMonitor     = schema.MustKind("ltm default-node-monitor")
	defaultNodeMonitorRule = defaultNodeMonitor.MustProp("rule")
)

// ltm node, snatpool, pool
var (
	ltmNode             = schema.MustKind("ltm node")
	nodeAddress         = ltmNode.MustProp("address")
	nodeFQDN            = ltmNode.MustProp("fqdn")
	nodeSession         = ltmNode.MustProp("session")
	nodeState           = ltmNode.MustProp("state")
	nodeConnectionLim   = ltmNode.MustProp("connection-limit")
	nodeRatio           = ltmNode.MustProp("ratio")
	nodeLogging         = ltmNode.MustProp("logging")
	nodeMonitor         = ltmNode.MustProp("monitor")
	ltmSnatPool         = schema.MustKind("ltm snatpool")
	snatPoolMembers     = ltmSnatPool.MustProp("members")
	ltmPool             = schema.MustKind("ltm pool")
	poolLBMode          = ltmPool.MustProp("load-balancing-mode")
	poolMonitor         = ltmPool.MustProp("monitor")
	poolMinActive       = ltmPool.MustProp("min-active-members")
	poolSlowRamp        = ltmPool.MustProp("slow-ramp-time")
	poolServiceDown     = ltmPool.MustProp("service-down-action")
	poolAllowSNAT       = ltmPool.MustProp("allow-snat")
	poolAllowNAT        = ltmPool.MustProp("allow-nat")
	poolReselectTries   = ltmPool.MustProp("reselect-tries")
	poolMembers         = ltmPool.MustProp("members")
	memberRatio         = poolMembers.Sub.MustProp("ratio")
	memberPriority      = poolMembers.Sub.MustProp("priority-group")
	memberConnLimit     = poolMembers.Sub.MustProp("connection-limit")
	memberSession       = poolMembers.Sub.MustProp("session")
	memberState         = poolMembers.Sub.MustProp("state")
	memberMonitor       = poolMembers.Sub.MustProp("monitor")
	memberLogging       = poolMembers.Sub.MustProp("logging")
	ltmRule             = schema.MustKind("ltm rule")
	ruleDefinition      = ltmRule.MustProp("definition")
	gtmRule             = schema.MustKind("gtm rule")
	gtmRuleDefinition   = gtmRule.MustProp("definition")
	dataGroupInternal   = schema.MustKind("ltm data-group internal")
	dataGroupType       = dataGroupInternal.MustProp("type")
	dataGroupRecords    = dataGroupInternal.MustProp("records")
	dataGroupRecordData = dataGroupRecords.Sub.MustProp("data")
	ltmTMC              = schema.MustKind("ltm traffic-matching-criteria")
	tmcDestAddress      = ltmTMC.MustProp("destination-address-inline")
	tmcDestPort         = ltmTMC.MustProp("destination-port-inline")
	tmcDestAddressList  = ltmTMC.MustProp("destination-address-list")
	tmcDestPortList     = ltmTMC.MustProp("destination-port-list")
	tmcSrcAddress       = ltmTMC.MustProp("source-address-inline")
	tmcSrcAddressList   = ltmTMC.MustProp("source-address-list")
	tmcSrcPort          = ltmTMC.MustProp("source-port-inline")
	tmcSrcPortList      = ltmTMC.MustProp("source-port-list")
	tmcProtocol         = ltmTMC.MustProp("protocol")
	tmcRouteDomain      = ltmTMC.MustProp("route-domain")
	netAddressList      = schema.MustKind("net address-list")
	addressListEntries  = netAddressList.MustProp("addresses")
	addressListNested   = netAddressList.MustProp("address-lists")
	addressListFQDNs    = netAddressList.MustProp("fqdns")
	addressListGeo      = netAddressList.MustProp("geo")
	netPortList         = schema.MustKind("net port-list")
	portListEntries     = netPortList.MustProp("ports")
	portListNested      = netPortList.MustProp("port-lists")
)

// ltm virtual
var (
	ltmVirtual              = schema.MustKind("ltm virtual")
	virtualDestination      = ltmVirtual.MustProp("destination")
	virtualEnabled          = ltmVirtual.MustProp("enabled")
	virtualReject           = ltmVirtual.MustProp("reject")
	virtualDownImmediate    = ltmVirtual.MustProp("service-down-immediate-action")
	virtualConnectionLimit  = ltmVirtual.MustProp("connection-limit")
	virtualTranslateAddress = ltmVirtual.MustProp("translate-address")
	virtualTranslatePort    = ltmVirtual.MustProp("translate-port")
	virtualIPProtocol       = ltmVirtual.MustProp("ip-protocol")
	virtualMask             = ltmVirtual.MustProp("mask")
	virtualSource           = ltmVirtual.MustProp("source")
	virtualTMC              = ltmVirtual.MustProp("traffic-matching-criteria")
	virtualSNAT             = ltmVirtual.MustProp("source-address-translation")
	snatType                = virtualSNAT.Sub.MustProp("type")
	snatPool                = virtualSNAT.Sub.MustProp("pool")
	virtualPool             = ltmVirtual.MustProp("pool")
	virtualRules            = ltmVirtual.MustProp("rules")
	virtualProfiles         = ltmVirtual.MustProp("profiles")
	virtualPersist          = ltmVirtual.MustProp("persist")
	persistDefault          = virtualPersist.Sub.MustProp("default")
	virtualFallbackPersist  = ltmVirtual.MustProp("fallback-persistence")
)

// ltm profiles
var (
	profileTCP       = schema.MustKind("ltm profile tcp")
	profileFastL4    = schema.MustKind("ltm profile fastl4")
	profileIdle      = common("idle-timeout", profileTCP, profileFastL4)
	profileHTTP      = schema.MustKind("ltm profile http")
	httpInsertXFF    = profileHTTP.MustProp("insert-xforwarded-for")
	httpOCTransforms = profileHTTP.MustProp("oneconnect-transformations")

	profileMBLB       = schema.MustKind("ltm profile mblb")
	mblbMaxMessage    = profileMBLB.MustProp("max-message-size")
	mblbMaxInFlight   = profileMBLB.MustProp("max-in-flight")
	mblbShutdown      = profileMBLB.MustProp("shutdown-timeout")
	mblbMinConn       = profileMBLB.MustProp("min-conn")
	mblbIsolateAbort  = profileMBLB.MustProp("isolate-abort")
	mblbIsolateServer = profileMBLB.MustProp("isolate-server")
	mblbIsolateExpire = profileMBLB.MustProp("isolate-expire")
	mblbIsolateClient = profileMBLB.MustProp("isolate-client")
	mblbIngressHigh   = profileMBLB.MustProp("ingress-high")
	mblbIngressLow    = profileMBLB.MustProp("ingress-low")
	mblbEgressHigh    = profileMBLB.MustProp("egress-high")
	mblbEgressLow     = profileMBLB.MustProp("egress-low")
	mblbRetry         = profileMBLB.MustProp("retry")
	mblbRespTimeout   = profileMBLB.MustProp("response-timeout")
	mblbFraming       = profileMBLB.MustProp("framing")
	mblbLengthSize    = profileMBLB.MustProp("length-size")
	mblbLengthAdjust  = profileMBLB.MustProp("length-adjust")
	mblbLengthOffset  = profileMBLB.MustProp("length-offset")
	mblbLengthOrder   = profileMBLB.MustProp("length-byte-order")
	mblbLengthHeader  = profileMBLB.MustProp("length-includes-header")
	mblbDelimiter     = profileMBLB.MustProp("delimiter")
	profileOneConnect = schema.MustKind("ltm profile one-connect")
	profileStream     = schema.MustKind("ltm profile stream")
	profileStatistics = schema.MustKind("ltm profile statistics")
	ocMaxSize         = profileOneConnect.MustProp("max-size")
	ocMaxAge          = profileOneConnect.MustProp("max-age")
	ocMaxReuse        = profileOneConnect.MustProp("max-reuse")
	ocIdleOverride    = profileOneConnect.MustProp("idle-timeout-override")
	ocLimitType       = profileOneConnect.MustProp("limit-type")
	ocSourceMask      = profileOneConnect.MustProp("source-mask")
)

// ltm persistence
var (
	persistSourceAddr = schema.MustKind("ltm persistence source-addr")
	persistUniversal  = schema.MustKind("ltm persistence universal")
	persistCookie     = schema.MustKind("ltm persistence cookie")
	persistHash       = schema.MustKind("ltm persistence hash")
	persistDestAddr   = schema.MustKind("ltm persistence dest-addr")
	persistSSL        = schema.MustKind("ltm persistence ssl")
	persistMSRDP      = schema.MustKind("ltm persistence msrdp")
	persistHost       = schema.MustKind("ltm persistence host")
	persistSessionDir = persistMSRDP.MustProp("has-session-dir")
	persistRun        = []*objects.Kind{persistSourceAddr, persistUniversal, persistCookie, persistHash, persistDestAddr}

	persistTimeout       = common("timeout", persistRun...)
	persistAcrossService = common("match-across-services", persistRun...)
	persistAcrossVirtual = common("match-across-virtuals", persistRun...)
	persistAcrossPools   = common("match-across-pools", persistRun...)
	persistOverrideLimit = common("override-connection-limit", persistRun...)
	persistMask          = persistSourceAddr.MustProp("mask")
	persistRule          = persistUniversal.MustProp("rule")
	persistDestMask      = persistDestAddr.MustProp("mask")
	persistMapProxies    = persistSourceAddr.MustProp("map-proxies")
	persistMapClass      = persistSourceAddr.MustProp("map-proxy-class")
	persistMapAddr       = persistSourceAddr.MustProp("map-proxy-address")
	persistHashRule      = persistHash.MustProp("rule")
	persistHashOffset    = persistHash.MustProp("hash-offset")
	persistHashLength    = persistHash.MustProp("hash-length")
	persistHashStart     = persistHash.MustProp("hash-start-pattern")
	persistHashEnd       = persistHash.MustProp("hash-end-pattern")
	persistHashLimit     = persistHash.MustProp("hash-buffer-limit")
	persistHashAlg       = map[*objects.Kind]*objects.Prop{persistSourceAddr: persistSourceAddr.MustProp("hash-algorithm"),
		persistDestAddr: persistDestAddr.MustProp("hash-algorithm"), persistHash: persistHash.MustProp("hash-algorithm")}
	cookieHashOffset = persistCookie.MustProp("hash-offset")
	cookieHashLength = persistCookie.MustProp("hash-length")
	cookieMethod     = persistCookie.MustProp("method")
	cookieExpires    = persistCookie.MustProp("expiration")
	cookieName       = persistCookie.MustProp("cookie-name")
	cookieHTTPOnly   = persistCookie.MustProp("httponly")
	cookieSecure     = persistCookie.MustProp("secure")
	cookieAlwaysSend = persistCookie.MustProp("always-send")
)

// gtm
var (
	gtmLBSettings        = schema.MustKind("gtm global-settings load-balancing")
	gtmTopologyLongest   = gtmLBSettings.MustProp("topology-longest-match")
	gtmTopologyZero      = gtmLBSettings.MustProp("topology-allow-zero-scores")
	gtmVerifyVS          = gtmLBSettings.MustProp("verify-vs-availability")
	gtmIgnorePathTTL     = gtmLBSettings.MustProp("ignore-path-ttl")
	gtmRespectFallback   = gtmLBSettings.MustProp("respect-fallback-dependency")
	gtmMetrics           = schema.MustKind("gtm global-settings metrics")
	metricsPathTTL       = gtmMetrics.MustProp("path-ttl")
	metricsProbeTimeout  = gtmMetrics.MustProp("ldns-probe-timeout")
	metricsProbePort     = gtmMetrics.MustProp("ldns-probe-port")
	metricsPrefix4       = gtmMetrics.MustProp("ldns-prefix-length-ipv4")
	metricsMaxProbes     = gtmMetrics.MustProp("max-ldns-probes")
	metricsProbeProtos   = gtmMetrics.MustProp("ldns-probe-protocols")
	metricsCollectProtos = gtmMetrics.MustProp("metrics-collection-protocols")
	gtmMetricsExcl       = schema.MustKind("gtm global-settings metrics-exclusions")
	metricsExclAddrs     = gtmMetricsExcl.MustProp("addresses")
	metricsInactiveLDNS  = gtmMetrics.MustProp("inactive-ldns-ttl")
	metricsInactivePaths = gtmMetrics.MustProp("inactive-paths-ttl")
	gtmGeneral           = schema.MustKind("gtm global-settings general")
	generalPersistCIDR4  = gtmGeneral.MustProp("static-persist-cidr-ipv4")
	generalDrain         = gtmGeneral.MustProp("drain-persistent-requests")
	generalMonitorOff    = gtmGeneral.MustProp("monitor-disabled-objects")
	generalPersistCIDR6  = gtmGeneral.MustProp("static-persist-cidr-ipv6")
	generalCacheLDNS     = gtmGeneral.MustProp("cache-ldns-servers")
	gtmDatacenter        = schema.MustKind("gtm datacenter")
	gtmLink              = schema.MustKind("gtm link")
	gtmServer            = schema.MustKind("gtm server")
	gtmPoolA             = schema.MustKind("gtm pool a")
	gtmWideIPA           = schema.MustKind("gtm wideip a")
	gtmRegion            = schema.MustKind("gtm region")
	gtmTopology          = schema.MustKind("gtm topology")
	gtmListener          = schema.MustKind("gtm listener")
	gtmZone              = schema.MustKind("gtm zone")
	gtmEnabled           = common("enabled", gtmDatacenter, gtmLink, gtmServer, gtmPoolA, gtmWideIPA, gtmListener)
	linkDatacenter       = gtmLink.MustProp("datacenter")
	linkInbound          = gtmLink.MustProp("limit-max-inbound-bps")
	linkInboundStatus    = gtmLink.MustProp("limit-max-inbound-bps-status")
	linkOutbound         = gtmLink.MustProp("limit-max-outbound-bps")
	linkOutboundStatus   = gtmLink.MustProp("limit-max-outbound-bps-status")
	linkTotal            = gtmLink.MustProp("limit-max-total-bps")
	linkTotalStatus      = gtmLink.MustProp("limit-max-total-bps-status")
	linkRatio            = gtmLink.MustProp("link-ratio")
	linkUplink           = gtmLink.MustProp("uplink-address")
	serverDatacenter     = gtmServer.MustProp("datacenter")
	serverAddresses      = gtmServer.MustProp("addresses")
	serverDevices        = gtmServer.MustProp("devices")
	serverMaxConns       = gtmServer.MustProp("limit-max-connections")
	serverMaxConnsStatus = gtmServer.MustProp("limit-max-connections-status")
	serverCPU            = gtmServer.MustProp("limit-cpu-usage")
	serverCPUStatus      = gtmServer.MustProp("limit-cpu-usage-status")
	serverMem            = gtmServer.MustProp("limit-mem-avail")
	serverMemStatus      = gtmServer.MustProp("limit-mem-avail-status")
	serverBps            = gtmServer.MustProp("limit-max-bps")
	serverBpsStatus      = gtmServer.MustProp("limit-max-bps-status")
	serverPps            = gtmServer.MustProp("limit-max-pps")
	serverPpsStatus      = gtmServer.MustProp("limit-max-pps-status")
	serverMonitor        = gtmServer.MustProp("monitor")
	serverVirtuals       = gtmServer.MustProp("virtual-servers")
	vsDestination        = serverVirtuals.Sub.MustProp("destination")
	vsEnabled            = serverVirtuals.Sub.MustProp("enabled")
	vsMaxConns           = serverVirtuals.Sub.MustProp("limit-max-connections")
	vsMaxConnsStatus     = serverVirtuals.Sub.MustProp("limit-max-connections-status")
	vsMaxBps             = serverVirtuals.Sub.MustProp("limit-max-bps")
	vsMaxBpsStatus       = serverVirtuals.Sub.MustProp("limit-max-bps-status")
	vsLink               = serverVirtuals.Sub.MustProp("link")
	vsMonitor            = serverVirtuals.Sub.MustProp("monitor")
	gpoolLBMode          = gtmPoolA.MustProp("load-balancing-mode")
	gpoolAlternate       = gtmPoolA.MustProp("alternate-mode")
	gpoolFallback        = gtmPoolA.MustProp("fallback-mode")
	gpoolTTL             = gtmPoolA.MustProp("ttl")
	gpoolMaxAnswers      = gtmPoolA.MustProp("max-answers-returned")
	gpoolFallbackIP      = gtmPoolA.MustProp("fallback-ip")
	gpoolMembers         = gtmPoolA.MustProp("members")
	gpoolMonitor         = gtmPoolA.MustProp("monitor")
	gpoolVerify          = gtmPoolA.MustProp("verify-member-availability")
	gpoolMaxConns        = gtmPoolA.MustProp("limit-max-connections")
	gpoolMaxConnsStatus  = gtmPoolA.MustProp("limit-max-connections-status")
	gpoolMaxBps          = gtmPoolA.MustProp("limit-max-bps")
	gpoolMaxBpsStatus    = gtmPoolA.MustProp("limit-max-bps-status")
	gpoolMaxPps          = gtmPoolA.MustProp("limit-max-pps")
	gpoolMaxPpsStatus    = gtmPoolA.MustProp("limit-max-pps-status")
	gpoolQoSRTT          = gtmPoolA.MustProp("qos-rtt")
	gpoolQoSTopology     = gtmPoolA.MustProp("qos-topology")
	gpoolQoSPacketRate   = gtmPoolA.MustProp("qos-packet-rate")
	gpoolQoSKbps         = gtmPoolA.MustProp("qos-kilobytes-second")
	gpoolQoSCapacity     = gtmPoolA.MustProp("qos-vs-capacity")
	gpoolQoSScore        = gtmPoolA.MustProp("qos-vs-score")
	gpoolQoSLink         = gtmPoolA.MustProp("qos-lcs")
	gpoolQoSHitRatio     = gtmPoolA.MustProp("qos-hit-ratio")
	gpoolQoSHops         = gtmPoolA.MustProp("qos-hops")
	gpoolManualResume    = gtmPoolA.MustProp("manual-resume")
	gpoolMinUpMode       = gtmPoolA.MustProp("min-members-up-mode")
	gpoolMinUpValue      = gtmPoolA.MustProp("min-members-up-value")
	gpoolDynamicRatio    = gtmPoolA.MustProp("dynamic-ratio")
	gmemberMonitor       = gpoolMembers.Sub.MustProp("monitor")
	gmemberOrder         = gpoolMembers.Sub.MustProp("member-order")
	gmemberRatio         = gpoolMembers.Sub.MustProp("ratio")
	gmemberEnabled       = gpoolMembers.Sub.MustProp("enabled")
	gmemberMaxConns      = gpoolMembers.Sub.MustProp("limit-max-connections")
	gmemberMaxConnsStat  = gpoolMembers.Sub.MustProp("limit-max-connections-status")
	wideipPoolLBMode     = gtmWideIPA.MustProp("pool-lb-mode")
	wideipPersistence    = gtmWideIPA.MustProp("persistence")
	wideipPersistTTL     = gtmWideIPA.MustProp("ttl-persistence")
	wideipPersistCIDR4   = gtmWideIPA.MustProp("persist-cidr-ipv4")
	wideipPersistCIDR6   = gtmWideIPA.MustProp("persist-cidr-ipv6")
	wideipAliases        = gtmWideIPA.MustProp("aliases")
	wideipRules          = gtmWideIPA.MustProp("rules")
	wideipPools          = gtmWideIPA.MustProp("pools")
	wideipPoolOrder      = wideipPools.Sub.MustProp("order")
	wideipPoolsCNAME     = gtmWideIPA.MustProp("pools-cname")
	wideipPoolRatio      = wideipPools.Sub.MustProp("ratio")
	wideipLastResort     = gtmWideIPA.MustProp("last-resort-pool")
	wideipFailResponse   = gtmWideIPA.MustProp("failure-rcode-response")
	wideipFailRcode      = gtmWideIPA.MustProp("failure-rcode")
	wideipFailTTL        = gtmWideIPA.MustProp("failure-rcode-ttl")
	wideipMinimal        = gtmWideIPA.MustProp("minimal-response")
	wideipPreferECS      = gtmWideIPA.MustProp("topology-prefer-edns0-client-subnet")
	wideipDecisionLog    = gtmWideIPA.MustProp("load-balancing-decision-log-verbosity")
	regionMembers        = gtmRegion.MustProp("region-members")
	topologyOrder        = gtmTopology.MustProp("order")
	topologyScore        = gtmTopology.MustProp("score")
	listenerAddress      = gtmListener.MustProp("address")
	listenerRules        = gtmListener.MustProp("rules")
	listenerPort         = gtmListener.MustProp("port")
	listenerProtocol     = gtmListener.MustProp("ip-protocol")
	zoneDefinition       = gtmZone.MustProp("definition")
)
