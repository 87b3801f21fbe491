package objects

// gtmMonitorKinds are BIG-IP DNS's monitor kinds beyond the ones every
// GSLB setup uses (kinds_f5.go): the application monitors, run by the
// GSLB with the LTM's probes, and the kinds it keeps without running.
// Their rows are the LTM kinds' own settings (read by name by the same
// translation) on the gtm monitors' common rows; interval and timeout are
// F5's REST defaults of the built-ins where read (ftp, radius,
// radius-accounting and wap 10/31; mssql and oracle 30/91; nntp and soap
// 30/120; firepass 30/90; none 0/0). Choices [M] where no built-in was
// read: imap, pop3, smtp and ldap 10/31 as ftp; mysql and postgresql
// 30/91 as mssql; the others (sip, scripted, external, gtp, real-server,
// wmi) keep the gtm monitors' 30/120.
func gtmMonitorKinds() []*Kind {
	dbActed := []string{"database", "send", "recv", "recv-row", "recv-column", "username", "password", "count", "debug"}
	return []*Kind{
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("ftp", "ftp", `
filename str none
mode enum passive passive|port
username str none
password str none
debug yn no
`), "interval", "10", "timeout", "31"), "filename", "mode", "username", "password"),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("imap", "imap", `
folder str INBOX
username str none
password str none
debug yn no
`), "interval", "10", "timeout", "31"), "folder", "username", "password"),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("pop3", "pop3", `
username str none
password str none
debug yn no
`), "interval", "10", "timeout", "31"), "username", "password"),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("smtp", "smtp", `
domain str none
debug yn no
`), "interval", "10", "timeout", "31"), "domain"),
		runGTMMonitor(gtmMonitorKind("nntp", "nntp", `
newsgroup str none
username str none
password str none
debug yn no
`), "newsgroup", "username", "password"),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("ldap", "ldap", `
base str none
filter str none
security enum none none|ssl|tls
mandatory-attributes yn no
chase-referrals yn yes
username str none
password str none
debug yn no
`), "interval", "10", "timeout", "31"), "base", "filter", "security", "mandatory-attributes", "chase-referrals", "username", "password"),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("mssql", "mssql", monDatabaseRows), "interval", "30", "timeout", "91"), dbActed...),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("mysql", "mysql", monDatabaseRows), "interval", "30", "timeout", "91"), dbActed...),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("postgresql", "postgresql", monDatabaseRows), "interval", "30", "timeout", "91"), dbActed...),
		// oracle: openltm has no Oracle probe (nor does the LTM's oracle
		// monitor run); kept.
		gtmMonitorRows(gtmMonitorKind("oracle", "oracle", monDatabaseRows), "interval", "30", "timeout", "91"),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("radius", "radius", monRadiusRows), "interval", "10", "timeout", "31"),
			"nas-ip-address", "secret", "username", "password"),
		runGTMMonitor(gtmMonitorRows(gtmMonitorKind("radius-accounting", "radius_accounting", monRadiusRows), "interval", "10", "timeout", "31"),
			"nas-ip-address", "secret", "username", "password"),
		runGTMMonitor(gtmMonitorKind("sip", "sip", monSipRows), monSipRun...),
		runGTMMonitor(gtmMonitorKind("soap", "soap", monSoapRows), monSoapRun...),
		runGTMMonitor(gtmMonitorKind("scripted", "scripted", `
filename str none
debug yn no
`), "filename"),
		pairs(runGTMMonitor(gtmMonitorKind("external", "external", `
run ref sys+file+external-monitor none
args str none
user-defined raw
`), "run", "args", "user-defined"), "user-defined"),
		// gtp: a GTP Echo Request (GTPv1-C or GTPv2-C by protocol-version)
		// over UDP to the virtual server, tried probe-attempts times
		// probe-interval apart as udp is [M: F5 documents protocol-version
		// with versions 1 and 2; 1 is taken as the default].
		runGTMMonitor(gtmMonitorKind("gtp", "gtp", `
protocol-version enum 1 1|2
probe-attempts int 3
probe-interval int 1
`), "protocol-version", "probe-attempts", "probe-interval"),
		// none: no monitor, as on BIG-IP; its rows are the built-in's.
		gtmMonitorRows(gtmMonitorKind("none", "none", `
time-until-up int 86500
up-interval int 0
`), "destination", "*:6666", "interval", "0", "timeout", "0", "probe-timeout", "0"),
		// Kept: openltm has no FirePass, RealServer, WAP or WMI agent to ask.
		gtmMonitorRows(gtmMonitorKind("firepass", "firepass_gtm", `
cipherlist str HIGH:!ADH
concurrency-limit int 95
max-load-average int 12
username str gtmuser
password str none
`), "interval", "30", "timeout", "90"),
		// [M] real-server, wap and wmi take the LTM kinds' settings as F5's
		// tmsh reference lists them.
		gtmMonitorRows(gtmMonitorKind("real-server", "real_server", `
agent str none
command str GetWinMediaInfo
metrics str ActiveStreams,ConnectionsPerSecond,CPU,MaxConnections
method str GET
tm-command str none
`), "agent", msieAgent),
		gtmMonitorRows(gtmMonitorKind("wap", "wap", `
accounting-node str none
accounting-port str none
call-id str none
framed-address str none
recv str none
send str none
secret str none
server-id str none
session-id str none
debug yn no
`), "interval", "10", "timeout", "31"),
		gtmMonitorRows(gtmMonitorKind("wmi", "wmi", `
agent str none
command str none
metrics str none
method str POST
post str none
url str none
username str none
password str none
`), "agent", msieAgent),
	}
}

// msieAgent is the User-Agent F5's real-server and wmi monitors send.
const msieAgent = "Mozilla/4.0 (compatible: MSIE 5.0; Windows NT)"

// gtmMonitorRows sets a gtm monitor kind's defaults where they differ
// from the common rows', name then value.
func gtmMonitorRows(k *Kind, nameValue ...string) *Kind {
	for i := 0; i+1 < len(nameValue); i += 2 {
		k.row(nameValue[i]).Default = nameValue[i+1]
	}
	return k
}
