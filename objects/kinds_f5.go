package objects

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// This file holds the kinds F5 has that openltm keeps, lists and saves back
// without acting on them (category 2: valid on a BIG-IP, not run here). Their
// property tables are written one row per line:
//
//	name type [default] [argument]
//
// where type is one of
//
//	str int ed (enabled|disabled) yn (yes|no) tf (true|false)
//	ip                 an IP address (%route-domain, any, any6, none)
//	network            default, default-inet6 or address/prefix
//	enum a|b|c         one word of the list
//	flag a|b           a bare word that is its own value, the first the default
//	bare               a bare word present or absent
//	ref kind,kind      the name of another object (words joined by +)
//	list               { word ... }
//	reflist kind       { name ... } of other objects
//	coll               { item { } ... } with no item properties
//	refcoll kind       the same, items naming other objects
//	raw                a word or a { } block kept verbatim
//	mon                a monitor rule
//	ro                 a read-only word the system writes
//
// A default of "-" shows none. Every kind also takes description, app-service
// and metadata, as every BIG-IP object does.

// tmshRef is the page of F5's tmsh reference that documents a kind.
func tmshRef(key string) string {
	ws := strings.Fields(key)
	return "https://clouddocs.f5.com/cli/tmsh-reference/latest/modules/" + ws[0] + "/" + strings.Join(ws, "_") + ".html"
}

// restDefaults names where a kind's default values were read: the REST
// output of the built-in parent object on a BIG-IP 14.1.2.1.
func restDefaults(builtin string) string {
	return "; defaults: REST /mgmt/tm of " + builtin + " on BIG-IP 14.1.2.1"
}

func table(key, text string) []*Prop {
	var out []*Prop
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			panic(fmt.Sprintf("objects: %s row %d: %q needs a type", key, i, line))
		}
		name, typ, def, arg := f[0], f[1], "", ""
		if len(f) > 2 && f[2] != "-" {
			def = f[2]
		}
		if len(f) > 3 {
			arg = f[3]
		}
		specs := func(s string) []string {
			var xs []string
			for _, x := range strings.Split(s, ",") {
				x = strings.ReplaceAll(x, "+", " ")
				xs = append(xs, x)
			}
			return xs
		}
		var p *Prop
		switch typ {
		case "str":
			p = str(name, def)
		case "ip", "network":
			p = str(name, def)
			p.Format = typ
		case "int":
			p = num(name, def)
		case "ed":
			p = ed(name, def)
		case "yn":
			p = enum(name, def, "yes", "no")
		case "tf":
			p = enum(name, def, "true", "false")
		case "enum":
			p = enum(name, def, strings.Split(arg, "|")...)
		case "flag":
			p = &Prop{Name: name, Type: TFlag, Enum: strings.Split(def, "|")}
		case "bare":
			p = bare(name)
		case "ref":
			p = ref(name)
			if def != "" {
				p.Ref = specs(def)
				p.Checked = !strings.HasPrefix(def, "sys+file+")
			}
			if arg != "" && arg != "-" {
				p.Default = arg
			}
		case "list":
			p = &Prop{Name: name, Type: TList, Inline: true}
			if def != "" && def != "-" {
				p.Default = def // comma-separated (defaultList)
			}
		case "reflist":
			p = &Prop{Name: name, Type: TList, Ref: specs(def)}
		case "coll":
			p = &Prop{Name: name, Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Item"}}
		case "refcoll":
			p = &Prop{Name: name, Type: TColl, Items: ItemRef, Ref: specs(def), Sub: &Kind{Title: "Item"}, Checked: true}
		case "raw":
			p = &Prop{Name: name, Type: TRaw}
		case "mon":
			p = &Prop{Name: name, Type: TMonitor, Default: def, Ref: []string{"ltm monitor "}}
		case "ro":
			p = ro(str(name, def))
		case "roraw":
			p = ro(&Prop{Name: name, Type: TRaw})
		default:
			panic(fmt.Sprintf("objects: %s row %q: unknown type %q", key, line, typ))
		}
		if name == "port" && p.Type == TInt {
			p.Max = 65535
		}
		p.Passive = true
		out = append(out, p)
	}
	return out
}

// pk builds a kind openltm keeps without acting on, from its row table.
func pk(key, title, parent, source, rows string) *Kind {
	k := &Kind{Words: strings.Fields(key), Title: title, Parent: parent, Passive: true, Source: source,
		Help: "F5 " + key + " (kept and saved; openltm does not act on it)"}
	k.Props = table(key, rows)
	have := map[string]bool{}
	for _, p := range k.Props {
		have[p.Name] = true
	}
	for _, p := range []*Prop{str("description", "none"), str("app-service", "none"), raw("metadata")} {
		if !have[p.Name] {
			p.Passive = true
			p.Source = "F5 tmsh reference: every object has description, app-service and metadata"
			k.Props = append(k.Props, p)
		}
	}
	return k
}

// actedOn marks a pk kind whose objects openltm reads by name (a policy's
// strategy) though it keeps their properties without acting on them.
func actedOn(k *Kind) *Kind {
	k.Passive = false
	k.Help = "F5 " + joinWords(k.Words)
	for _, p := range k.Props {
		p.Passive = true
	}
	return k
}

// single is pk for a kind with one object and no name (sys ntp).
func single(key, source, rows string) *Kind {
	ws := strings.Fields(key)
	last := ws[len(ws)-1]
	k := pk(key, strings.ToUpper(last[:1])+last[1:], "", source, rows)
	k.Singleton = true
	return k
}

const monCommonRows = `
defaults-from ref -
destination str *:*
interval int 5
timeout int 16
time-until-up int 0
up-interval int 0
manual-resume ed disabled
ip-dscp int 0
adaptive ed disabled
adaptive-divergence-type enum relative relative|absolute
adaptive-divergence-value int 25
adaptive-limit int 200
adaptive-sampling-timespan int 300
`

const monSendRecvRows = `
send str none
recv str none
recv-disable str none
reverse ed disabled
transparent ed disabled
username str none
password str none
`

// monDatabaseRows are the rows of the SQL monitors (mssql, mysql, oracle,
// postgresql).
const monDatabaseRows = `
database str none
send str none
recv str none
recv-column str none
recv-row str none
count int 0
username str none
password str none
debug yn no
`

// monRadiusRows are the rows of the RADIUS monitors.
const monRadiusRows = `
nas-ip-address ip none
secret str none
username str none
password str none
debug yn no
`

// monSipRows and monSoapRows are the rows of the SIP and SOAP monitors,
// the same for LTM and GTM (F5 gives both kinds the same properties);
// monSipRun and monSoapRun are the ones their probes act on besides the
// common monitor settings.
const (
	monSipRows = `
mode enum udp tcp|udp|tls|sips
cert str none
key str none
cipherlist str DEFAULT:+SHA:+3DES:+kEDH
compatibility ed enabled
filter str none
filter-neg str none
headers str none
request str none
debug yn no
`
	monSoapRows = `
protocol enum http http|https
url-path str none
namespace str none
method str none
soap-action str none
parameter-name str none
parameter-type enum bool bool|int|long|string
parameter-value str none
return-type enum bool bool|char|double|int|long|short|string
return-value str none
expect-fault yn no
username str none
password str none
debug yn no
`
)

var (
	monSipRun  = []string{"mode", "request", "headers", "filter", "filter-neg"}
	monSoapRun = []string{"protocol", "url-path", "namespace", "method", "soap-action", "parameter-name", "parameter-type", "parameter-value",
		"return-type", "return-value", "expect-fault", "username", "password"}
)

// monitorKind is an F5 monitor kind openltm does not run.
func monitorKind(typ, builtin, rows string) *Kind {
	key := "ltm monitor " + typ
	k := pk(key, "Monitor", "/Common/"+builtin, tmshRef(key)+restDefaults("/Common/"+builtin), monCommonRows+rows)
	k.Lower = "monitor"
	k.row("defaults-from").Ref = []string{key}
	k.row("ip-dscp").Max = 63
	return k
}

// monitorRows adjusts a monitor kind's rows, name then value: a value
// is the row's default where the kind's differs from the common rows'
// (rpc and diameter: interval 10, timeout 31) or holds spaces, which the
// row tables split on; "" marks an integer row as a 32-bit number (a
// program or application id), bounded as BIG-IP bounds it.
func monitorRows(k *Kind, nameValue ...string) *Kind {
	for i := 0; i+1 < len(nameValue); i += 2 {
		p := k.row(nameValue[i])
		if v := nameValue[i+1]; v != "" {
			p.Default = v
		} else {
			p.Max = math.MaxUint32
		}
	}
	return k
}

// monitorActed are the monitor settings openltm's probes act on.
var monitorActed = map[string]bool{
	"defaults-from": true, "destination": true, "interval": true, "timeout": true,
	"time-until-up": true, "up-interval": true, "manual-resume": true,
	"send": true, "recv": true, "recv-disable": true, "reverse": true,
	"description": true, "app-service": true, "metadata": true,
	"qname": true, "qtype": true, "accept-rcode": true, "answer-contains": true,
	"failures": true, "failure-interval": true, "retry-time": true,
	"run": true, "args": true, "user-defined": true,
	"ip-dscp": true, "adaptive": true, "adaptive-divergence-type": true, "adaptive-divergence-value": true,
	"adaptive-limit": true, "adaptive-sampling-timespan": true,
}

// monitorNotActed are monitorActed settings a kind's probe cannot use:
// an external monitor's program opens its own sockets, and inband sends
// no probes.
var monitorNotActed = map[string][]string{
	"ltm monitor external": {"ip-dscp"},
	"ltm monitor inband":   {"ip-dscp"},
}

// clusterActed are the cm properties ltmd's device groups act on
// (daemon/hook_cluster.go); the others are kept.
var clusterActed = map[string]bool{
	"self-device": true, "type": true, "devices": true, "auto-sync": true, "network-failover": true, "unicast-address": true,
	"ha-order": true, "ha-group": true, "auto-failback-enabled": true, "auto-failback-time": true, "is-floating": true,
	"ha-load-factor": true, // load-aware failover (cluster.TrafficGroup.LoadFactor)
	"ha-capacity":    true, // the same, each device's load over its capacity (cluster.Member.SetCapacity)
	"description":    true,
	// A device's management address: system-written on BIG-IP (from sys
	// management-ip); settable here, where it is only what show cm device
	// prints [M].
	"management-ip": true,
}

// clustered marks a cm kind as one the device groups act on.
func clustered(k *Kind) *Kind {
	return acting(k, "F5 "+k.Key()+" (device service clustering)", func(n string) bool { return clusterActed[n] })
}

// acting marks a kept F5 kind as one openltm acts on, with help as its
// help text: the properties acted says it uses are acted on, the others
// stay kept-only (a warning when set). clustered, runMonitor, actOn,
// runPersist and runTLS are its uses.
func acting(k *Kind, help string, acted func(name string) bool) *Kind {
	k.Passive = false
	k.Help = help
	for _, p := range k.Props {
		p.Passive = !acted(p.Name)
	}
	return k
}

// keptWhy gives the properties of k named in why the reason they are
// kept and not acted on, which the warning of a non-default value says.
func keptWhy(k *Kind, why map[string]string) *Kind {
	for _, p := range k.Props {
		if w, ok := why[p.Name]; ok {
			p.Help = w
		}
	}
	return k
}

// runMonitor marks an F5 monitor kind as one openltm runs: the kind is
// acted on, and its settings the probes do not use stay kept-only (a
// warning when set). own are the kind's settings its probe uses beyond
// monitorActed, whose names mean the same in every kind (username is a
// pop3 monitor's login, while a tcp monitor's is not acted on).
func runMonitor(k *Kind, own ...string) *Kind {
	not := monitorNotActed[k.Key()]
	return acting(k, "F5 "+k.Key()+" health monitor", func(n string) bool {
		return monitorActed[n] && !slices.Contains(not, n) || slices.Contains(own, n)
	})
}

// actOn marks a kept F5 kind as one openltm acts on, with the settings it
// uses (and defaults-from, description, app-service, metadata); its
// other settings stay kept-only.
func actOn(k *Kind, help string, names ...string) *Kind {
	return acting(k, help, func(n string) bool {
		switch n {
		case "defaults-from", "description", "app-service", "metadata":
			return true
		}
		return slices.Contains(names, n)
	})
}

// httpRouterBounds bounds the httprouter profile's pending limits as
// BIG-IP does (max-pending-messages is 16 bits, max-pending-bytes 32).
func httpRouterBounds(k *Kind) *Kind {
	k.row("max-pending-messages").Max = 65535
	k.row("max-pending-bytes").Max = math.MaxUint32
	return k
}

// quicBounds bounds the quic profile's stream counts [M: F5 documents no
// range; 1 to 65535, since a client may open no request stream at 0 and
// QUIC's own limit, 2^60, is far past what one connection needs].
func quicBounds(k *Kind) *Kind {
	k.row("bidi-concurrent-streams-per-connection").Min = 1
	k.row("bidi-concurrent-streams-per-connection").Max = 65535
	k.row("uni-concurrent-streams-per-connection").Min = 3 // HTTP/3's control and QPACK streams
	k.row("uni-concurrent-streams-per-connection").Max = 65535
	return k
}

// http3Bounds bounds the http3 profile's header-table-size as the http2
// profile's is (0 to 65535) [M].
func http3Bounds(k *Kind) *Kind {
	k.row("header-table-size").Max = 65535
	return k
}

// ipfixElementBounds bounds an IPFIX element's numbers as the protocol
// does: a 32-bit enterprise number, a 15-bit id (the 16th bit is the
// enterprise bit) and a 16-bit length.
func ipfixElementBounds(k *Kind) *Kind {
	k.row("enterprise-id").Max = math.MaxUint32
	k.row("id").Max = 32767
	k.row("size").Max = 65535
	return k
}

// bound sets a row's range (1 to 1000 for a traffic group's
// ha-load-factor, as BIG-IP takes it) and returns the kind.
func (k *Kind) bound(name string, lo, hi int64) *Kind {
	p := k.row(name)
	p.Min, p.Max = lo, hi
	return k
}

// row finds a row before the kind is indexed (while tables are built).
func (k *Kind) row(name string) *Prop {
	for _, p := range k.Props {
		if p.Name == name {
			return p
		}
	}
	panic("objects: " + k.Key() + " has no row " + name)
}

const gtmMonSendRecvRows = `
send str none
recv str none
reverse ed disabled
transparent ed disabled
username str none
password str none
`

// gtmMonitorActed are the settings of every gtm monitor kind the GSLB
// runs (transparent is not: its probes go to the virtual server or the
// destination, never through it).
var gtmMonitorActed = map[string]bool{
	"defaults-from": true, "destination": true, "interval": true, "timeout": true,
	"probe-timeout": true, "ignore-down-response": true,
	"description": true, "app-service": true, "metadata": true,
}

// runGTMMonitor marks a gtm monitor kind as one the GSLB runs, with the
// settings of its own its probe uses beyond gtmMonitorActed.
func runGTMMonitor(k *Kind, own ...string) *Kind {
	return acting(k, "F5 "+k.Key()+" health monitor, run by the GSLB", func(n string) bool {
		return gtmMonitorActed[n] || slices.Contains(own, n)
	})
}

// gtmMonitorKind is a GSLB monitor kind openltm keeps without running it
// (the GSLB probes its members itself).
func gtmMonitorKind(typ, builtin, rows string) *Kind {
	key := "gtm monitor " + typ
	k := pk(key, "Monitor", "/Common/"+builtin, tmshRef(key)+restDefaults("/Common/"+builtin), `
defaults-from ref `+strings.ReplaceAll(key, " ", "+")+`
destination str *:*
interval int 30
timeout int 120
probe-timeout int 5
ignore-down-response ed disabled
`+rows)
	k.Lower = "monitor"
	return k
}

// persistKind is an F5 persistence kind openltm does not act on.
func persistKind(typ, builtin, rows string) *Kind {
	key := "ltm persistence " + typ
	k := pk(key, "Persistence", "/Common/"+builtin, tmshRef(key)+restDefaults("/Common/"+builtin), `
defaults-from ref `+strings.ReplaceAll(key, " ", "+")+`
timeout int 180
mirror ed disabled
match-across-pools ed disabled
match-across-services ed disabled
match-across-virtuals ed disabled
override-connection-limit ed disabled
`+rows)
	k.Lower = "persistence"
	return k
}

// persistActed are the settings of every persistence kind openltm runs.
var persistActed = map[string]bool{
	"defaults-from": true, "timeout": true, "match-across-pools": true,
	"match-across-services": true, "match-across-virtuals": true,
	"override-connection-limit": true, "description": true, "app-service": true, "metadata": true,
	"mirror": true,
}

// runPersist marks an F5 persistence kind as one openltm runs: the kind
// and its common settings and the named ones are acted on; the others
// stay kept-only (a warning when set).
func runPersist(k *Kind, acted ...string) *Kind {
	return acting(k, "F5 "+k.Key(), func(n string) bool { return persistActed[n] || slices.Contains(acted, n) })
}

// profileKind is an F5 profile kind openltm does not act on.
func profileKind(typ, builtin, rows string) *Kind {
	key := "ltm profile " + typ
	src := tmshRef(key)
	if builtin != "" {
		src += restDefaults("/Common/" + builtin)
	}
	parent := ""
	if builtin != "" {
		parent = "/Common/" + builtin
	}
	k := pk(key, "Profile", parent, src, "defaults-from ref "+strings.ReplaceAll(key, " ", "+")+"\n"+rows)
	k.Lower = "profile"
	return k
}

// mailRows are the rows the smtps, imap, pop3, client-ldap and
// server-ldap profiles share: when the virtual answers the client's
// STARTTLS (STLS) itself, or sends it to the member (server-ldap) [M:
// allow by default].
const mailRows = `
activation-mode enum allow none|allow|require
`

// adaptRows are the rows request-adapt and response-adapt share.
const adaptRows = `
allow-http-10 yn no
enabled yn yes
internal-virtual ref ltm+virtual none
preview-size int 1024
service-down-action enum ignore ignore|drop|reset
timeout int 0
`

const sslCommonRows = `
alert-timeout int indefinite
allow-expired-crl ed disabled
authenticate enum once once|always
authenticate-depth int 9
bypass-on-client-cert-fail ed disabled
bypass-on-handshake-alert ed disabled
ca-file ref sys+file+ssl-cert none
cache-size int 262144
cache-timeout int 3600
cert ref sys+file+ssl-cert none
chain ref sys+file+ssl-cert none
cipher-group ref ltm+cipher+group none
ciphers str DEFAULT
crl-file ref sys+file+ssl-crl none
generic-alert ed enabled
handshake-timeout str 10
key ref sys+file+ssl-key none
log-publisher ref sys+log-config+publisher none
max-active-handshakes int indefinite
mod-ssl-methods ed disabled
mode ed enabled
options list
passphrase str none
peer-cert-mode str ignore
proxy-ssl ed disabled
proxy-ssl-passthrough ed disabled
renegotiate-period str indefinite
renegotiate-size str indefinite
renegotiation ed enabled
retain-certificate tf true
server-name str none
session-mirroring ed disabled
session-ticket ed disabled
sni-default tf false
sni-require tf false
ssl-c3d ed disabled
ssl-forward-proxy ed disabled
ssl-forward-proxy-bypass ed disabled
ssl-forward-proxy-verified-handshake ed disabled
ssl-sign-hash enum any any|sha1|sha256|sha384
strict-resume ed disabled
unclean-shutdown ed enabled
`

func f5Kinds() []*Kind {
	vocab := "; property names: F5 tmsh reference as listed in openltm's vocabulary notes"
	ks := []*Kind{
		runMonitor(monitorKind("https", "https", monSendRecvRows+`
cert ref sys+file+ssl-cert none
key ref sys+file+ssl-key none
cipherlist str DEFAULT:+SHA:+3DES:+kEDH
compatibility ed enabled
ssl-profile ref ltm+profile+server-ssl none
`), "username", "password", "cert", "key", "cipherlist", "compatibility", "ssl-profile"),
		runMonitor(monitorKind("udp", "udp", monSendRecvRows+`
debug yn no
`), "debug"),
		runMonitor(monitorKind("dns", "dns", `
qname str none
qtype enum a a|aaaa
accept-rcode enum no-error no-error|anything
answer-contains enum query-type query-type|any-type|anything
recv str none
reverse ed disabled
transparent ed disabled
`)),
		runMonitor(monitorKind("icmp", "icmp", `
transparent ed disabled
`)),
		runMonitor(monitorKind("inband", "inband", `
failures int 3
failure-interval int 30
response-time int 10
retry-time int 300
`), "response-time"),
		pairs(runMonitor(monitorKind("external", "external", `
run ref sys+file+external-monitor none
args str none
user-defined raw
`)), "user-defined"),
		runMonitor(monitorKind("tcp-echo", "tcp_echo", `
transparent ed disabled
`)),
		runMonitor(monitorKind("http2", "http2", monSendRecvRows+`
ssl-profile ref ltm+profile+server-ssl /Common/serverssl
`), "username", "password", "ssl-profile"),
		monitorKind("none", "none", ""),
		runMonitor(monitorKind("ftp", "ftp", `
filename str none
mode enum passive passive|port
username str none
password str none
debug yn no
`), "filename", "mode", "username", "password"),
		runMonitor(monitorKind("smtp", "smtp", `
domain str none
debug yn no
`), "domain"),
		runMonitor(monitorKind("ldap", "ldap", `
base str none
filter str none
security enum none none|ssl|tls
mandatory-attributes yn no
chase-referrals yn yes
username str none
password str none
debug yn no
`), "base", "filter", "security", "mandatory-attributes", "chase-referrals", "username", "password"),
		runMonitor(monitorKind("mysql", "mysql", monDatabaseRows), "database", "send", "recv", "recv-row", "recv-column", "username", "password", "count", "debug"),
		runMonitor(monitorKind("mssql", "mssql", monDatabaseRows), "database", "send", "recv", "recv-row", "recv-column", "username", "password", "count", "debug"),
		monitorKind("oracle", "oracle", monDatabaseRows),
		runMonitor(monitorKind("postgresql", "postgresql", monDatabaseRows), "database", "send", "recv", "recv-row", "recv-column", "username", "password", "count", "debug"),
		runMonitor(monitorKind("radius", "radius", monRadiusRows), "nas-ip-address", "secret", "username", "password"),
		snmpDCAKind("snmp-dca", "snmp_dca", snmpDCARows),  // kinds_snmp.go
		snmpDCAKind("snmp-dca-base", "snmp_dca_base", ""), // kinds_snmp.go
		runMonitor(monitorKind("radius-accounting", "radius_accounting", monRadiusRows), "nas-ip-address", "secret", "username", "password"),
		runMonitor(monitorKind("imap", "imap", `
folder str INBOX
username str none
password str none
debug yn no
`), "folder", "username", "password"),
		runMonitor(monitorKind("pop3", "pop3", `
username str none
password str none
debug yn no
`), "username", "password"),
		runMonitor(monitorKind("nntp", "nntp", `
newsgroup str none
username str none
password str none
debug yn no
`), "newsgroup", "username", "password"),
		monitorKind("smb", "smb", `
server str none
service str none
get str none
username str none
password str none
debug yn no
`),
		runMonitor(monitorKind("scripted", "scripted", `
filename str none
debug yn no
`), "filename"),
		runMonitor(monitorKind("sip", "sip", monSipRows), monSipRun...),
		// The soap, rpc, diameter and mqtt rows follow F5's tmsh and REST
		// references. Choices [M]: soap-action's default (F5: the empty
		// string) is written none; parameter-type and return-type take
		// tmsh's types plus the REST reference's string; diameter's mode
		// defaults to tcp; mqtt-version is a word (F5 lists default 3 and
		// no values; the probe speaks 3 and 5).
		runMonitor(monitorKind("soap", "soap", monSoapRows), monSoapRun...),
		runMonitor(monitorRows(monitorKind("rpc", "rpc", `
program-number int none
version-number int none
mode enum tcp tcp|udp
debug yn no
`), "interval", "10", "timeout", "31", "program-number", "", "version-number", ""), "program-number", "version-number", "mode"),
		runMonitor(monitorRows(monitorKind("diameter", "diameter", `
origin-host str none
origin-realm str none
host-ip-address ip none
vendor-id int 3375
product-name str none
auth-application-id int none
acct-application-id int none
vendor-specific-vendor-id int none
vendor-specific-auth-application-id int none
vendor-specific-acct-application-id int none
mode enum tcp tcp|mr-tcp|mr-sctp
`), "interval", "10", "timeout", "31", "vendor-id", "", "auth-application-id", "", "acct-application-id", "",
			"vendor-specific-vendor-id", "", "vendor-specific-auth-application-id", "", "vendor-specific-acct-application-id", "",
			"product-name", "F5 BIGIP Diameter Health Monitoring"),
			"origin-host", "origin-realm", "host-ip-address", "vendor-id", "product-name", "auth-application-id", "acct-application-id",
			"vendor-specific-vendor-id", "vendor-specific-auth-application-id", "vendor-specific-acct-application-id", "mode"),
		runMonitor(monitorKind("mqtt", "mqtt", `
clientid str none
mqtt-version str 3
username str none
password str none
debug yn no
`), "clientid", "mqtt-version", "username", "password"),

		clientSSL0RTT(runTLS(profileKind("client-ssl", "clientssl", sslCommonRows+`
data-0rtt enum disabled disabled|enabled-with-anti-replay|enabled-no-anti-replay
secure-renegotiation enum require request|require|require-strict
cert-key-chain raw
inherit-certkeychain tf false
inherit-ca-certkeychain tf false
client-cert-ca ref sys+file+ssl-cert none
cert-extension-includes list
cert-lifespan int 30
cert-lookup-by-ipaddr-port ed disabled
allow-non-ssl ed disabled
allow-dynamic-record-sizing ed disabled
maximum-record-size int 16384
session-ticket-timeout int 0
renegotiate-max-record-delay str indefinite
max-renegotiations-per-minute int 5
max-aggregate-renegotiation-per-minute str indefinite
peer-no-renegotiate-timeout int 10
forward-proxy-bypass-default-action enum intercept intercept|bypass
proxy-ca-cert ref sys+file+ssl-cert none
proxy-ca-key ref sys+file+ssl-key none
proxy-ca-passphrase str none
proxy-ca-lifespan int 365
destination-ip-blacklist str none
destination-ip-whitelist str none
source-ip-blacklist str none
source-ip-whitelist str none
hostname-blacklist str none
hostname-whitelist str none
c3d-client-fallback-cert str none
c3d-drop-unknown-ocsp-status enum drop drop|ignore
c3d-ocsp str none
ocsp-stapling ed disabled
notify-cert-status-to-virtual-server ed disabled
hello-extension-includes list
crl ref sys+file+ssl-crl none
`), "F5 ltm profile client-ssl: TLS from clients, terminated on the virtual")),
		runTLS(profileKind("server-ssl", "serverssl", sslCommonRows+`
data-0rtt enum disabled disabled|enabled
secure-renegotiation enum require-strict request|require|require-strict
crl ref sys+file+ssl-crl none
ocsp str none
authenticate-name str none
expire-cert-response-control enum drop drop|ignore|mask
untrusted-cert-response-control enum drop drop|ignore|mask
revoked-cert-status-response-control enum drop drop|ignore|mask
unknown-cert-status-response-control enum ignore drop|ignore|mask
c3d-ca-cert str none
c3d-ca-key str none
c3d-ca-passphrase str none
c3d-cert-lifespan int 24
c3d-cert-extension-includes list
c3d-cert-extension-custom-oids list
`), "F5 ltm profile server-ssl: TLS to the pool members, originated by the virtual"),
		actOn(profileKind("udp", "udp", `
idle-timeout int 60
datagram-load-balancing ed disabled
allow-no-payload ed disabled
buffer-max-bytes int 655350
buffer-max-packets int 0
send-buffer-size int 655350
no-checksum ed disabled
proxy-mss ed disabled
ip-tos-to-client str 0
link-qos-to-client str 0
ip-df-mode enum pmtu pmtu|preserve|set|clear
ip-ttl-mode enum proxy proxy|preserve|decrement|set
ip-ttl-v4 int 255
ip-ttl-v6 int 64
`), "F5 ltm profile udp: idle-timeout and datagram-load-balancing of udp virtual servers", "idle-timeout", "datagram-load-balancing"),
		actOn(profileKind("dns", "dns", `
cache ref ltm+dns+cache+ none
dns-security str none
dns64 enum disabled disabled|immediate|secondary|v4-only
dns64-additional-section-rewrite enum disabled any|disabled|v4-only|v6-only
dns64-prefix str any6
edns0-client-subnet-insert ed disabled
enable-cache yn no
enable-dns-express yn yes
enable-dns-firewall yn no
enable-dnssec yn yes
enable-gtm yn yes
enable-hardware-query-validation yn no
enable-hardware-response-cache yn no
enable-logging yn no
enable-odoh yn no
enable-rapid-response yn no
log-profile ref ltm+profile+dns-logging none
process-rd yn yes
process-xfr yn no
rapid-response-last-action enum drop allow|drop|noerror|nxdomain|refuse|truncate
unhandled-query-action enum allow allow|drop|hint|noerror|reject
use-local-bind yn yes
`), "F5 ltm profile dns: the virtual answers DNS queries from wide IPs, static zones and its cache before its pool (dataplane/dnsvs)",
			"enable-gtm", "enable-dns-express", "enable-cache", "cache", "unhandled-query-action", "dns64", "dns64-prefix", "dns64-additional-section-rewrite", "edns0-client-subnet-insert", "process-rd", "enable-dnssec", "process-xfr", "enable-logging", "log-profile",
			"enable-rapid-response", "rapid-response-last-action", "use-local-bind"),
		actOn(profileKind("dns-logging", "", `
enable-query-logging yn yes
enable-response-logging yn no
include-complete-answer yn yes
include-query-id yn no
include-source yn yes
include-timestamp yn yes
include-view yn yes
log-publisher ref sys+log-config+publisher none
`), "F5 ltm profile dns-logging: a dns profile's queries and responses, logged through a log publisher (dataplane/dnsvs)",
			"enable-query-logging", "enable-response-logging", "include-complete-answer", "include-query-id", "include-source", "include-timestamp", "include-view", "log-publisher"),
		actOn(pk("ltm dns dnssec key", "DNSSEC Key", "", tmshRef("ltm dns dnssec key")+vocab, dnssecKeyRows),
			"F5 ltm dns dnssec key: a zone-signing or key-signing key the GSLB signs a dnssec zone's answers with (dataplane/dnssec)",
			"algorithm", "bit-width", "certificate-file", "enabled", "expiration-period", "key-file", "key-management", "key-type",
			"rollover-period", "signature-publication-period", "signature-validity-period", "ttl"),
		actOn(pk("ltm dns dnssec zone", "DNSSEC Zone", "", tmshRef("ltm dns dnssec zone")+vocab, `
enabled flag enabled|disabled
keys reflist ltm+dns+dnssec+key
`), "F5 ltm dns dnssec zone: the names at and below it are answered signed to queries with the DO bit (dataplane/dnssec)", "enabled", "keys"),
		actOn(responsePolicyZones(pk("ltm dns cache transparent", "DNS Cache", "", tmshRef("ltm dns cache transparent")+vocab, dnsCacheRows)),
			"F5 ltm dns cache transparent: the answers of a dns profile's pool, kept up to their TTL", "msg-cache-size", "max-concurrent-queries", "local-zones", "answer-default-zones",
			"max-concurrent-udp", "max-concurrent-tcp", "rrset-cache-size", "rrset-rotate", "response-policy-zones"),
		actOn(responsePolicyZones(forwardZones(pk("ltm dns cache resolver", "DNS Cache", "", tmshRef("ltm dns cache resolver")+vocab, dnsCacheRows+resolverRows))), "F5 ltm dns cache resolver: a dns profile's cache that resolves names from its root-hints (the names of its forward-zones from their name servers)", "msg-cache-size", "max-concurrent-queries", "forward-zones",
			"root-hints", "use-ipv4", "use-ipv6", "use-tcp", "use-udp", "randomize-query-name-case", "max-concurrent-tcp", "max-concurrent-udp", "allowed-query-time",
			"nameserver-cache-count", "rrset-cache-size", "rrset-rotate", "local-zones", "answer-default-zones", "response-policy-zones"),
		actOn(responsePolicyZones(forwardZones(pk("ltm dns cache validating-resolver", "DNS Cache", "", tmshRef("ltm dns cache validating-resolver")+vocab, dnsCacheRows+resolverRows+`
dlv-anchors list
ignore-cd yn no
key-cache-size int 10485760
trust-anchors list
`))), "F5 ltm dns cache validating-resolver: a resolver cache that validates DNSSEC from its trust-anchors (none: the root's KSK-2017)", "msg-cache-size", "max-concurrent-queries", "forward-zones",
			"root-hints", "use-ipv4", "use-ipv6", "use-tcp", "use-udp", "randomize-query-name-case", "max-concurrent-tcp", "max-concurrent-udp", "allowed-query-time",
			"nameserver-cache-count", "rrset-cache-size", "rrset-rotate", "local-zones", "answer-default-zones", "trust-anchors", "ignore-cd", "key-cache-size", "prefetch-key",
			"response-policy-zones"),
		// DNS Express (dataplane/dnsexpress): zones transferred from their
		// nameserver, answered by gtm listeners and dns-profile virtuals.
		actOn(pk("ltm dns tsig-key", "TSIG Key", "", tmshRef("ltm dns tsig-key")+vocab, `
algorithm enum hmac-md5 hmac-md5|hmac-sha1|hmac-sha256
secret str none
`), "F5 ltm dns tsig-key: the key that signs a DNS Express zone's transfers and verifies its NOTIFYs", "algorithm", "secret"),
		actOn(pk("ltm dns nameserver", "Nameserver", "", tmshRef("ltm dns nameserver")+vocab, `
address ip 127.0.0.1
port int 53
route-domain str 0
tsig-key ref ltm+dns+tsig-key none
`), "F5 ltm dns nameserver: the primary a DNS Express zone transfers from, or a secondary it transfers to", "address", "port", "tsig-key"),
		actOn(addrList(pk("ltm dns zone", "Zone", "", tmshRef("ltm dns zone")+vocab, `
dns-express-allow-notify list
dns-express-enabled yn yes
dns-express-notify-action enum consume bypass|consume|repeat
dns-express-notify-tsig-verify yn yes
dns-express-server ref ltm+dns+nameserver none
response-policy yn no
server-tsig-key ref ltm+dns+tsig-key none
transfer-clients reflist ltm+dns+nameserver
`), "dns-express-allow-notify"), "F5 ltm dns zone: a DNS Express zone, transferred from its dns-express-server, answered authoritatively and transferred on to its transfer-clients",
			"dns-express-allow-notify", "dns-express-enabled", "dns-express-notify-action", "dns-express-notify-tsig-verify", "dns-express-server", "server-tsig-key", "transfer-clients",
			"response-policy"),

		actOn(profileKind("http-compression", "httpcompression", `
allow-http-10 ed disabled
browser-workarounds ed disabled
buffer-size int 4096
cpu-saver ed enabled
cpu-saver-high int 90
cpu-saver-low int 75
content-type-exclude list
content-type-include list text/,application/(xml|x-javascript)
gzip-level int 1
gzip-memory-level int 8
gzip-window-size int 16
keep-accept-encoding ed disabled
method-prefer enum gzip deflate|gzip
min-size int 1024
selective ed disabled
uri-exclude list
uri-include list
vary-header ed enabled
`), "F5 ltm profile http-compression: gzip or deflate of HTTP responses for clients that accept it",
			"allow-http-10", "content-type-exclude", "content-type-include", "gzip-level", "keep-accept-encoding",
			"method-prefer", "min-size", "uri-exclude", "uri-include", "vary-header",
			"browser-workarounds", "selective", "cpu-saver", "cpu-saver-high", "cpu-saver-low", "buffer-size"),
		actOn(profileKind("web-acceleration", "webacceleration", `
applications raw
cache-aging-rate int 9
cache-client-cache-control-mode enum all all|max-age|none
cache-insert-age-header ed enabled
cache-max-age int 3600
cache-max-entries int 10000
cache-object-max-size int 50000
cache-object-min-size int 500
cache-size int 100
cache-uri-exclude list
cache-uri-include list
cache-uri-include-override list
cache-uri-pinned list
`), "F5 ltm profile web-acceleration: the RAM cache, answering repeated GETs from memory",
			"cache-client-cache-control-mode", "cache-insert-age-header", "cache-max-age", "cache-max-entries", "cache-object-max-size", "cache-object-min-size",
			"cache-size", "cache-uri-exclude", "cache-uri-include", "cache-uri-pinned", "cache-aging-rate", "cache-uri-include-override"),
		actOn(profileKind("http2", "http2", `
activation-modes list alpn
concurrent-streams-per-connection int 10
connection-idle-timeout int 300
enforce-tls-requirements ed enabled
frame-size int 2048
header-table-size int 4096
include-content-length ed disabled
insert-header ed disabled
insert-header-name str X-HTTP2
receive-window int 32
write-size int 16384
`), "F5 ltm profile http2: HTTP/2 from clients (ALPN h2 over client-ssl, or cleartext with prior knowledge); on the server side (context serverside, or all with an httprouter profile) HTTP/2 to members",
			"activation-modes", "concurrent-streams-per-connection", "connection-idle-timeout", "enforce-tls-requirements",
			"header-table-size", "insert-header", "insert-header-name", "receive-window",
			"frame-size", "write-size", "include-content-length"),
		// HTTP/3 (BIG-IP 15.1+): a UDP virtual with udp, quic, http3, http
		// and client-ssl profiles. The rows are F5's (defaults of the
		// built-in /Common/quic and /Common/http3 on 17.1). spin-bit and
		// header-table-size are kept only: the QUIC stack never sets the
		// spin bit and its QPACK encoder uses the static table alone.
		quicBounds(actOn(profileKind("quic", "quic", `
bidi-concurrent-streams-per-connection int 100
spin-bit ed enabled
uni-concurrent-streams-per-connection int 10
`), "F5 ltm profile quic: QUIC from clients on a UDP virtual server, under its http3 profile (TLS 1.3 from the client-ssl profile, ALPN h3)",
			"bidi-concurrent-streams-per-connection", "uni-concurrent-streams-per-connection")),
		http3Bounds(actOn(profileKind("http3", "http3", `
header-table-size int 4096
`), "F5 ltm profile http3: HTTP/3 from clients over the virtual's quic profile, each request going on as HTTP/1.1 through the virtual's http profile, rules and pool")),
		httpRouterBounds(actOn(profileKind("httprouter", "httprouter", `
ignore-client-port ed disabled
max-pending-bytes int 32768
max-pending-messages int 64
mirror ed disabled
mirrored-message-sweeper-interval int 1000
traffic-group str none
use-local-connection ed enabled
`), "F5 ltm profile httprouter: the HTTP message router an http2 profile on the server side needs (HTTP/2 to members); max-pending-bytes and max-pending-messages bound what a client's requests may hold waiting for members",
			"max-pending-bytes", "max-pending-messages")),
		actOn(profileKind("request-log", "request-log", `
log-request-logging-errors ed disabled
log-response-by-default ed enabled
log-response-logging-error ed disabled
proxy-close-on-error ed disabled
proxy-respond-on-logging-error ed disabled
proxy-response str none
request-log-error-pool ref ltm+pool none
request-log-error-protocol str mds-udp
request-log-error-template str none
request-log-pool ref ltm+pool none
request-log-protocol str mds-udp
request-log-template str none
request-logging ed disabled
response-log-error-pool ref ltm+pool none
response-log-error-protocol str mds-udp
response-log-error-template str none
response-log-pool ref ltm+pool none
response-log-protocol str mds-udp
response-log-template str none
response-logging ed disabled
`), "F5 ltm profile request-log: a line per HTTP request and response, from a template, to a logging pool over high-speed logging",
			"request-logging", "request-log-pool", "request-log-protocol", "request-log-template",
			"response-logging", "response-log-pool", "response-log-protocol", "response-log-template",
			"log-request-logging-errors", "request-log-error-pool", "request-log-error-protocol", "request-log-error-template",
			"log-response-logging-error", "response-log-error-pool", "response-log-error-protocol", "response-log-error-template",
			"proxy-respond-on-logging-error", "proxy-response", "proxy-close-on-error"),
		actOn(profileKind("websocket", "websocket", `
compress-mode enum preserved preserved|typed
compression ed enabled
masking enum unmask preserve|unmask|selective|remask
payload-protocol-profile str none
no-delay ed enabled
window-bits int 10
`), "F5 ltm profile websocket: upgraded WebSocket connections framed, masking and WS_ events and WS:: commands for the rules",
			"masking", "compression", "window-bits", "no-delay"),
		// The DoH profiles (BIG-IP 16.1+) have no settings of their own
		// (tmsh reference: defaults-from and description); what a
		// virtual does with one is dataplane/doh's.
		actOn(profileKind("doh-server", "doh-server", ""), "F5 ltm profile doh-server (BIG-IP 16.1+): DNS over HTTPS (RFC 8484) requests on an HTTP virtual answered by its dns profile (wide IPs, DNS Express, cache, pool)"),
		actOn(profileKind("doh-proxy", "doh-proxy", ""), "F5 ltm profile doh-proxy (BIG-IP 16.1+): DNS over HTTPS (RFC 8484) requests on an HTTP virtual sent as DNS queries to its pool"),
		actOn(profileKind("json", "json", `
maximum-bytes int 65536
maximum-entries int 2048
maximum-non-json-bytes int 32768
`), "F5 ltm profile json (BIG-IP 16.1+): JSON request and response bodies parsed for the JSON_ events and JSON:: commands of the rules",
			"maximum-bytes", "maximum-entries"),
		// The xml profile: namespace-mappings is a block of entries,
		// each a mapping-prefix and a mapping-namespace (REST
		// namespaceMappings [{mappingPrefix, mappingNamespace}]), kept
		// as written and read by the translation; xpath-queries holds
		// up to three queries. abort-on-error and max-buffer-size are
		// the settings of older versions (F5-BIGIP-LOCAL-MIB 11.5's
		// ltmXmlProfileAbortOnError and ltmXmlProfileMaxBufferSize,
		// deprecated; BIG-IP 14.1's REST has neither), taken so their
		// configurations load [M: their defaults are openltm's].
		actOn(profileKind("xml", "xml", `
abort-on-error ed disabled
max-buffer-size int 65536
multiple-query-matches ed disabled
namespace-mappings raw
xpath-queries list
`), "F5 ltm profile xml: request bodies of an http virtual parsed as XML (UTF-8, UTF-16 or the encoding the declaration names), its XPath queries evaluated and XML_CONTENT_BASED_ROUTING raised for the rules when one matches, and its parser events (XML_BEGIN_DOCUMENT ... XML_EVENT) when the rules handle them",
			"abort-on-error", "max-buffer-size", "multiple-query-matches", "namespace-mappings", "xpath-queries"),
		// The mqtt profile has no settings of its own [M: none are
		// documented beside defaults-from and description].
		actOn(profileKind("mqtt", "mqtt", ``), "F5 ltm profile mqtt: MQTT packets of a TCP virtual framed and checked, the member chosen at CONNECT, MQTT_ events and MQTT:: commands for the rules"),
		actOn(profileKind("statistics", "stats", `
field1 str none
field2 str none
field3 str none
field4 str none
field5 str none
field6 str none
field7 str none
field8 str none
field9 str none
field10 str none
field11 str none
field12 str none
field13 str none
field14 str none
field15 str none
field16 str none
field17 str none
field18 str none
field19 str none
field20 str none
field21 str none
field22 str none
field23 str none
field24 str none
field25 str none
field26 str none
field27 str none
field28 str none
field29 str none
field30 str none
field31 str none
field32 str none
`), "F5 ltm profile statistics: up to 32 named counters rules change with STATS:: (show ltm profile statistics)",
			"field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9", "field10", "field11", "field12", "field13", "field14", "field15", "field16",
			"field17", "field18", "field19", "field20", "field21", "field22", "field23", "field24", "field25", "field26", "field27", "field28", "field29", "field30", "field31", "field32"),
		actOn(profileKind("stream", "stream", `
chunk-size int 4096
chunking enum rechunk rechunk|preserve|unchunk|selective
source str none
target str none
`), "F5 ltm profile stream: search and replace in HTTP bodies (source and target, or STREAM:: commands)", "source", "target", "chunk-size"),
		actOn(profileKind("icap", "icap", `
header-from str none
host str none
preview-length int 0
referer str none
uri str none
user-agent str none
`), "F5 ltm profile icap: how an internal virtual server talks ICAP (RFC 3507) to its pool: the service URI, preview length and request headers",
			"header-from", "host", "preview-length", "referer", "uri", "user-agent"),
		actOn(profileKind("request-adapt", "requestadapt", adaptRows), "F5 ltm profile request-adapt: each HTTP request goes through REQMOD at the internal virtual server's ICAP pool before a member is chosen",
			"allow-http-10", "enabled", "internal-virtual", "preview-size", "service-down-action", "timeout"),
		actOn(profileKind("response-adapt", "responseadapt", adaptRows), "F5 ltm profile response-adapt: each member's HTTP response goes through RESPMOD at the internal virtual server's ICAP pool before the client",
			"allow-http-10", "enabled", "internal-virtual", "preview-size", "service-down-action", "timeout"),
		actOn(profileKind("ftp", "ftp", `
allow-ftps ed disabled
inherit-parent-profile ed disabled
log-profile str none
log-publisher str none
port int 20
security ed disabled
translate-extended ed enabled
`), "F5 ltm profile ftp: the FTP gateway, passive and active data connections through the virtual (port, translate-extended, allow-ftps)",
			"port", "translate-extended", "allow-ftps"),
		socksProfile(actOn(profileKind("socks", "socks", `
default-connect-handling enum deny deny|allow
dns-resolver ref net+dns-resolver none
ipv6 yn yes
protocol-versions list socks4,socks4a,socks5
route-domain str 0
tunnel-name str socks-tunnel
`), "F5 ltm profile socks: the virtual is a SOCKS 4, 4A and 5 proxy: each client names its destination (an address, or a name resolved by dns-resolver), reached directly with default-connect-handling allow or, with deny, only where a virtual server listens",
			"default-connect-handling", "dns-resolver", "ipv6", "protocol-versions")),
		actOn(profileKind("smtps", "smtps", mailRows), "F5 ltm profile smtps: STARTTLS offload for SMTP, the client's TLS ended with the virtual's client-ssl profile and the member kept in plaintext (activation-mode)",
			"activation-mode"),
		actOn(profileKind("imap", "imap", mailRows), "F5 ltm profile imap: STARTTLS offload for IMAP, the client's TLS ended with the virtual's client-ssl profile and the member kept in plaintext (activation-mode)",
			"activation-mode"),
		actOn(profileKind("pop3", "pop3", mailRows), "F5 ltm profile pop3: STLS offload for POP3, the client's TLS ended with the virtual's client-ssl profile and the member kept in plaintext (activation-mode)",
			"activation-mode"),
		actOn(profileKind("client-ldap", "clientldap", mailRows), "F5 ltm profile client-ldap: LDAP StartTLS answered by the virtual, the client's TLS ended with the virtual's client-ssl profile (activation-mode)",
			"activation-mode"),
		actOn(profileKind("server-ldap", "serverldap", mailRows), "F5 ltm profile server-ldap: LDAP StartTLS sent by the virtual to the member, whose TLS is then the virtual's server-ssl profile (activation-mode)",
			"activation-mode"),
		profileKind("ipother", "ipother", `
idle-timeout int 60
`),
		sipProfileKind(),              // kinds_sip.go
		radiusProfileKind(),           // kinds_radius.go
		tftpProfileKind(),             // kinds_tftp.go
		iiopProfileKind(),             // kinds_iiop.go
		pcpProfileKind(),              // kinds_pcp.go
		netflowProfileKind(),          // kinds_netflow.go
		gtpProfileKind(),              // kinds_gtp.go
		dhcpv4ProfileKind(),           // kinds_dhcp.go
		dhcpv6ProfileKind(),           // kinds_dhcp.go
		rewriteProfileKind(),          // kinds_rewrite.go
		fixProfileKind(),              // kinds_fix.go
		sseProfileKind(),              // kinds_sse.go
		rtspProfileKind(),             // kinds_rtsp.go
		fastHTTPProfileKind(),         // kinds_fasthttp.go
		ntlmProfileKind(),             // kinds_fasthttp.go
		diameterProfileKind(),         // kinds_diameter.go
		httpProxyConnectProfileKind(), // kinds_httpproxyconnect.go

		runPersist(persistKind("dest-addr", "dest_addr", `
mask str none
hash-algorithm enum default default|carp
`), "mask", "hash-algorithm"),
		runPersist(persistKind("hash", "hash", `
rule ref ltm+rule none
hash-algorithm enum default default|carp
hash-offset int 0
hash-length int 0
hash-start-pattern str none
hash-end-pattern str none
hash-buffer-limit int 0
`), "rule", "hash-algorithm", "hash-offset", "hash-length", "hash-start-pattern", "hash-end-pattern", "hash-buffer-limit"),
		runPersist(persistKind("ssl", "ssl", "")),
		runPersist(persistKind("host", "host", "")),
		runPersist(persistKind("msrdp", "msrdp", `
has-session-dir yn no
`), "has-session-dir"),
		runPersist(persistKind("sip", "sip_info", `
sip-info str Call-ID
`), "sip-info"),

		keptWhy(acting(pk("ltm nat", "NAT", "", tmshRef("ltm nat")+vocab, `
originating-address ip -
translation-address ip -
enabled flag enabled|disabled
arp ed enabled
auto-lasthop enum default default|enabled|disabled
inherited-traffic-group tf false
traffic-group str /Common/traffic-group-1
vlans list
vlans-disabled flag vlans-disabled|vlans-enabled
`), "F5 ltm nat: a one-to-one static NAT: connections to the translation address go to the originating address, and connections the originating address opens through a virtual server leave from the translation address",
			func(n string) bool {
				return n == "originating-address" || n == "translation-address" || n == "enabled" || n == "vlans" || n == "vlans-disabled"
			}), map[string]string{
			"arp":           "kept: openltm answers no ARP for its addresses",
			"auto-lasthop":  "kept: answers follow the routing table",
			"traffic-group": "kept: the NAT runs on this device",
		}),
		acting(pk("ltm snat", "SNAT", "", tmshRef("ltm snat")+vocab, `
automap bare
origins raw
snatpool ref ltm+snatpool none
translation str none
vlans list
vlans-disabled flag vlans-disabled|vlans-enabled
source-port enum preserve preserve|preserve-strict|change
mirror ed disabled
`), "F5 ltm snat: translates the source address of the server connections of the clients in its origins, on virtual servers without source-address-translation of their own",
			func(n string) bool {
				return n != "mirror" && n != "description" && n != "app-service" && n != "metadata"
			}),
		acting(pk("ltm snat-translation", "SNAT Translation", "", tmshRef("ltm snat-translation")+vocab, `
address ip -
arp ed enabled
connection-limit int 0
enabled str yes
inherited-traffic-group tf false
ip-idle-timeout str indefinite
tcp-idle-timeout str indefinite
udp-idle-timeout str indefinite
traffic-group str /Common/traffic-group-1
`), "F5 ltm snat-translation: a translation address's settings (enabled: whether SNATs and snatpools give it out; connection-limit: the server connections it holds at once; tcp- and udp-idle-timeout: its flows' idle timeout)",
			func(n string) bool {
				return n == "address" || n == "enabled" || n == "connection-limit" || n == "tcp-idle-timeout" || n == "udp-idle-timeout"
			}),

		clustered(pk("cm device", "Device", "", tmshRef("cm device")+vocab, `
configsync-ip ip none
unicast-address raw
mirror-ip ip any6
mirror-secondary-ip ip any6
multicast-interface str none
multicast-ip ip any6
multicast-port int 0
mgmt-unicast-mode enum both both|ipv4|ipv6
ha-capacity int 0
comment str none
contact str none
location str none
active-modules roraw
optional-modules roraw
time-limited-modules roraw
alternate-ip ro none
base-mac ro
build ro
cert ro
key ro
chassis-id ro
chassis-type ro individual
edition ro
failover-state ro
hostname ro
management-ip str -
marketing-name ro
platform-id ro
product ro
self-device tf false
time-zone ro
version ro
`)).bound("ha-capacity", 0, 2147483647),
		clustered(pk("cm device-group", "Device Group", "", tmshRef("cm device-group")+vocab, `
type enum sync-only sync-only|sync-failover
devices list
auto-sync ed disabled
save-on-auto-sync tf false
full-load-on-sync tf false
incremental-config-sync-size-max int 1024
network-failover ed disabled
asm-sync ed disabled
hidden tf false
`)),
		clustered(pk("cm traffic-group", "Traffic Group", "", tmshRef("cm traffic-group")+vocab, `
unit-id int 0
failover-method enum ha-order ha-order|ha-score
ha-order list
ha-group ref sys+ha-group none
ha-load-factor int 1
auto-failback-enabled tf false
auto-failback-time int 60
mac str none
monitor raw
is-floating tf true
`)).bound("ha-load-factor", 1, 1000),

		runGTMMonitor(gtmMonitorKind("http", "http", gtmMonSendRecvRows), "send", "recv", "reverse", "username", "password"),
		runGTMMonitor(gtmMonitorKind("https", "https", gtmMonSendRecvRows+`
cert ref sys+file+ssl-cert none
key ref sys+file+ssl-key none
cipherlist str DEFAULT:+SHA:+3DES:+kEDH
compatibility ed enabled
`), "send", "recv", "reverse", "username", "password", "cert", "key", "cipherlist", "compatibility"),
		runGTMMonitor(gtmMonitorKind("tcp", "tcp", gtmMonSendRecvRows), "send", "recv", "reverse"),
		runGTMMonitor(gtmMonitorKind("udp", "udp", gtmMonSendRecvRows+`
debug yn no
probe-attempts int 3
probe-interval int 1
`), "send", "recv", "reverse", "debug", "probe-attempts", "probe-interval"),
		runGTMMonitor(gtmMonitorKind("tcp-half-open", "tcp_half_open", `
transparent ed disabled
probe-attempts int 3
probe-interval int 1
`), "probe-attempts", "probe-interval"),
		runGTMMonitor(gtmMonitorKind("gateway-icmp", "gateway_icmp", `
transparent ed disabled
probe-attempts int 3
probe-interval int 1
`), "probe-attempts", "probe-interval"),
		gtmMonitorKind("bigip", "bigip", `
aggregate-dynamic-ratios enum none none|average-nodes|sum-nodes|average-members|sum-members
`),
		gtmMonitorKind("bigip-link", "bigip_link", ""),
		snmpGTMMonitorKind("snmp", "snmp_gtm"),       // kinds_snmp.go
		snmpGTMMonitorKind("snmp-link", "snmp_link"), // kinds_snmp.go

		pk("net route", "Route", "", tmshRef("net route")+vocab, `
network network -
gw ip -
pool ref ltm+pool,gtm+pool+ -
interface str -
blackhole bare
mtu int 0
`),
		// Route domain 0's service-policy is every virtual server's that
		// has none of its own (daemon/translate_timerpol.go), and a
		// route domain without one takes its parent's; a route
		// domain's connection-limit and flow-eviction-policy act on the
		// virtuals in it; strict disabled lets its virtuals' clients
		// take its parent's NATs and SNATs (RouteDomainReach); the rest
		// is kept, openltm binding in one routing table.
		actOn(pk("net route-domain", "Route Domain", "", tmshRef("net route-domain")+vocab, `
id int 0
parent str none
strict ed enabled
connection-limit int 0
bwc-policy str none
flow-eviction-policy ref ltm+eviction-policy none
fw-enforced-policy str none
fw-staged-policy str none
ip-intelligence-policy str none
security-nat-policy raw
service-policy ref net+service-policy
throughput-capacity int 0
routing-protocol list
vlans list
`), "F5 net route-domain: its connection-limit caps the connections of the virtual servers whose destination is in it (ADDRESS%ID; route domain 0 for the others), its flow-eviction-policy evicts among them at its high-water mark, its service-policy gives every virtual server in it without one of its own its timer policy (a route domain without one takes its parent's), and with strict disabled the clients of its virtual servers may take its parent's NATs and SNATs; the rest is kept (openltm binds in one routing table)", "id", "connection-limit", "flow-eviction-policy", "service-policy", "parent", "strict"),
		actOn(forwardZones(pk("net dns-resolver", "DNS Resolver", "", tmshRef("net dns-resolver")+vocab, `
answer-default-zones yn no
cache-size int 5767168
forward-zones raw
randomize-query-name-case yn yes
route-domain str 0
use-ipv4 yn yes
use-ipv6 yn yes
use-tcp yn yes
use-udp yn yes
`)), "F5 net dns-resolver: how an explicit proxy and OCSP validators resolve names (forward-zones, else from the root)", "forward-zones", "cache-size", "use-tcp", "use-udp",
			"use-ipv4", "use-ipv6", "randomize-query-name-case", "answer-default-zones"),
		pk("net tunnels tunnel", "Tunnel", "", tmshRef("net tunnels tunnel")+vocab, `
profile ref net+tunnels+ none
local-address ip any6
remote-address ip any6
secondary-address ip any6
key int 0
mode enum bidirectional bidirectional|inbound|outbound
mtu int 0
tos str preserve
auto-last-hop enum default default|enabled|disabled
idle-timeout int 300
traffic-group str none
transparent ed disabled
use-pmtu ed enabled
if-index ro -
`),
		pk("net tunnels gre", "GRE Profile", "/Common/gre", tmshRef("net tunnels gre")+vocab, `
defaults-from ref net+tunnels+gre none
encapsulation enum standard standard|nvgre|transparent-ethernet-bridging
flooding-type enum none none|multicast|replicator|multipoint
rx-csum ed disabled
tx-csum ed disabled
`),
		pk("net tunnels vxlan", "VXLAN Profile", "/Common/vxlan", tmshRef("net tunnels vxlan")+vocab, `
defaults-from ref net+tunnels+vxlan none
encapsulation-type enum vxlan vxlan|vxlan-gpe
flooding-type enum multicast none|multicast|replicator|multipoint
port int 4789
`),
		pk("net tunnels ipip", "IPIP Profile", "/Common/ipip", tmshRef("net tunnels ipip")+vocab, `
defaults-from ref net+tunnels+ipip none
`),
		pk("net tunnels geneve", "Geneve Profile", "/Common/geneve", tmshRef("net tunnels geneve")+vocab, `
defaults-from ref net+tunnels+geneve none
flooding-type enum multipoint none|multipoint
port int 6081
`),
		pk("net tunnels tcp-forward", "TCP Forward Profile", "/Common/tcp-forward", tmshRef("net tunnels tcp-forward")+vocab, `
defaults-from ref net+tunnels+tcp-forward none
`),

		single("sys ntp", tmshRef("sys ntp")+vocab, `
servers list
timezone str America/Los_Angeles
restrict raw
include str none
`),
		runNameServers(single("sys dns", tmshRef("sys dns")+vocab, `
name-servers list
search list
number-of-dots int 0
include str none
`)),
		pk("sys db", "Database Variable", "", tmshRef("sys db")+vocab, `
value str -
`),
		pk("sys management-route", "Management Route", "", tmshRef("sys management-route")+vocab, `
network network -
gateway ip -
mtu int 0
type enum interface interface|blackhole
`),
		pk("sys provision", "Provision", "", tmshRef("sys provision")+vocab, `
level enum none none|minimum|nominal|dedicated|custom
cpu-ratio int 0
disk-ratio int 0
memory-ratio int 0
`),
		single("sys httpd", tmshRef("sys httpd")+vocab, `
allow list
auth-name str BIG-IP
auth-pam-dashboard-timeout enum off on|off
auth-pam-idle-timeout int 1200
auth-pam-validate-ip enum on on|off
fastcgi-timeout int 300
hostname-lookup enum off on|off
include str none
log-level enum warn alert|crit|debug|emerg|error|info|notice|warn
max-clients int 10
redirect-http-to-https ed disabled
request-header-max-timeout str 20
request-body-max-timeout str 60
ssl-ca-cert-file str none
ssl-certchainfile str none
ssl-certfile str /etc/httpd/conf/ssl.crt/server.crt
ssl-certkeyfile str /etc/httpd/conf/ssl.key/server.key
ssl-ciphersuite str DEFAULT
ssl-include str none
ssl-port int 443
ssl-protocol str all
ssl-verify-client enum no no|require|optional|optional-no-ca
ssl-verify-depth int 10
`),
		single("sys sshd", tmshRef("sys sshd")+vocab, `
allow list
banner ed disabled
banner-text str none
fips-cipher-version int 0
inactivity-timeout int 0
include str none
log-level enum info debug|debug1|debug2|debug3|error|fatal|info|quiet|verbose
login ed enabled
port int 22
`),
		single("sys snmp", tmshRef("sys snmp")+vocab, `
agent-addresses list
agent-trap ed enabled
allowed-addresses list
auth-trap ed disabled
bigip-traps ed enabled
communities raw
disk-monitors raw
include str none
l2forward-vlan list
load-max1 int 12
load-max5 int 12
load-max15 int 12
process-monitors raw
snmpv1 ed enabled
snmpv2c ed enabled
sys-contact str none
sys-location str none
sys-services int 78
trap-community str public
trap-source str none
traps raw
users raw
v1-traps raw
v2-traps raw
`),
		pk("net interface", "Interface", "", tmshRef("net interface")+vocab, `
enabled flag enabled|disabled
bundle enum not-supported enabled|disabled|not-supported
bundle-speed enum not-supported 100G|40G|not-supported
flow-control enum tx-rx none|rx|tx|tx-rx
forward-error-correction enum auto auto|enabled|disabled|not-supported
lldp-admin enum txonly disable|txonly|rxonly|txrx
lldp-tlvmap int 130943
media-fixed str auto
media-max str auto
media-sfp str auto
port-fwd-mode enum l3 l3|passive|virtual-wire
prefer-port enum sfp sfp|fixed
qinq-ethertype str 0x8100
sflow raw
stp ed enabled
stp-auto-edge-port ed enabled
stp-edge-port tf true
stp-link-type enum auto auto|p2p|shared
if-index ro -
mac-address ro -
mtu ro -
`),
		pk("net trunk", "Trunk", "", tmshRef("net trunk")+vocab, `
interfaces list
lacp ed disabled
lacp-mode enum active active|passive
lacp-timeout enum long long|short
distribution-hash enum src-dst-ipport dst-mac|src-dst-ipport|src-dst-mac|index
link-select-policy enum auto auto|maximum-bandwidth
qinq-ethertype str 0x8100
stp ed enabled
`),
		single("auth source", tmshRef("auth source")+vocab, `
type enum local local|active-directory|ldap|radius|tacacs|client-cert-ldap
fallback tf false
`),
		single("auth remote-user", tmshRef("auth remote-user")+vocab, `
default-partition str all
default-role str no-access
remote-console-access enum disabled disabled|tmsh
`),
		single("auth password-policy", tmshRef("auth password-policy")+vocab, `
expiration-warning int 7
lockout-duration int 0
manual-unlock-disabled tf false
max-duration int 99999
max-login-failures int 0
min-duration int 0
minimum-length int 6
password-memory int 0
policy-enforcement ed disabled
required-lowercase int 0
required-numeric int 0
required-special int 0
required-uppercase int 0
`),
		pk("auth radius-server", "RADIUS Server", "", tmshRef("auth radius-server")+vocab, `
server str -
port int 1812
secret str -
timeout int 3
`),
		pk("auth radius", "RADIUS Configuration", "", tmshRef("auth radius")+vocab, `
servers list
accounting-bug ed disabled
client-id str none
debug ed disabled
retries int 3
service-type enum default default|authenticate-only|login|framed|callback-login|callback-framed|outbound|administrative|nas-prompt|call-check|callback-administrative
`),
		pk("auth tacacs", "TACACS+ Configuration", "", tmshRef("auth tacacs")+vocab, `
servers list
secret str -
service str -
protocol str -
encryption ed enabled
authentication enum use-first-server use-first-server|use-all-servers
accounting enum send-to-first-server send-to-first-server|send-to-all-servers
debug ed disabled
`),
		pk("sys management-ip", "Management IP", "", tmshRef("sys management-ip")+vocab, ""),
		pk("sys folder", "folder", "", tmshRef("sys folder")+vocab, `
device-group str none
traffic-group str /Common/traffic-group-1
hidden tf false
inherited-devicegroup tf true
inherited-traffic-group tf true
no-ref-check tf false
`),
		pk("auth partition", "partition", "", tmshRef("auth partition")+vocab, `
default-route-domain int 0
`),
		pk("auth user", "User", "", tmshRef("auth user")+vocab, `
encrypted-password str -
password str -
partition-access raw
shell enum none bash|tmsh|none
session-limit int -1
prompt-for-password bare
`),
		actedOn(pk("ltm policy-strategy", "Policy Strategy", "", tmshRef("ltm policy-strategy")+vocab, `
operands raw
`)),
		runTLS(pk("ltm cipher rule", "Cipher Rule", "", tmshRef("ltm cipher rule")+vocab, `
cipher str -
dh-groups str DEFAULT
signature-algorithms str DEFAULT
`), "F5 ltm cipher rule: a named cipher string and key-exchange groups (dh-groups) for cipher groups"),
		runTLS(pk("ltm cipher group", "Cipher Group", "", tmshRef("ltm cipher group")+vocab, `
allow raw
exclude raw
require raw
ordering enum default default|speed|strength|fips|hardware
`), "F5 ltm cipher group: the suites (and dh-groups) of its allow rules, narrowed by require, less exclude, in its ordering"),
		actOn(pk("sys log-config destination remote-syslog", "Log Destination", "", tmshRef("sys log-config destination remote-syslog")+vocab, `
remote-high-speed-log ref sys+log-config+destination+ none
format enum rfc5424 rfc5424|rfc3164|legacy-bigip
default-facility enum local0 kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|ntp|audit|alert|clock|local0|local1|local2|local3|local4|local5|local6|local7
default-severity enum info emerg|alert|crit|err|warning|notice|info|debug
`), "F5 sys log-config destination remote-syslog: a syslog header (format, default-facility, default-severity) before each message, sent through a remote-high-speed-log",
			"remote-high-speed-log", "format", "default-facility", "default-severity"),
		actOn(pk("sys log-config destination remote-high-speed-log", "Log Destination", "", tmshRef("sys log-config destination remote-high-speed-log")+vocab, `
pool-name ref ltm+pool none
distribution enum adaptive adaptive|balanced|replicated
protocol enum tcp tcp|udp
`), "F5 sys log-config destination remote-high-speed-log: messages to a pool over high-speed logging (adaptive: one member until it fails; balanced: by the pool's method; replicated: every member)",
			"pool-name", "distribution", "protocol"),
		actOn(pk("sys log-config destination local-syslog", "Log Destination", "", tmshRef("sys log-config destination local-syslog")+vocab, ""),
			"F5 sys log-config destination local-syslog: the system's own log (openltm: ltmd's log and STATE-DIR/log/ltm)"),
		pk("sys log-config destination local-database", "Log Destination", "", tmshRef("sys log-config destination local-database")+vocab, ""),
		actOn(pk("sys log-config destination splunk", "Log Destination", "", tmshRef("sys log-config destination splunk")+vocab, `
forward-to ref sys+log-config+destination+ none
`), "F5 sys log-config destination splunk: each message as Splunk's key=\"value\" pairs, forwarded to the forward-to destination", "forward-to"),
		actOn(pk("sys log-config destination arcsight", "Log Destination", "", tmshRef("sys log-config destination arcsight")+vocab, `
forward-to ref sys+log-config+destination+ none
`), "F5 sys log-config destination arcsight: each message in ArcSight's Common Event Format (CEF), forwarded to the forward-to destination", "forward-to"),
		actOn(pk("sys log-config destination ipfix", "Log Destination", "", tmshRef("sys log-config destination ipfix")+vocab, `
pool-name ref ltm+pool none
protocol-version enum ipfix ipfix|netflow-v9
serverssl-profile str none
template-delete-delay int 0
template-retransmit-interval int 600
transport-profile str none
`), "F5 sys log-config destination ipfix: IPFIX::destination send's records as IPFIX or NetFlow v9 to the pool's collectors, over UDP or TCP (transport-profile), TLS over TCP with a serverssl-profile, templates sent again every template-retransmit-interval on UDP",
			"pool-name", "protocol-version", "template-delete-delay", "template-retransmit-interval", "transport-profile"),
		// [M] data-type takes the data types' names as RFC 7012 and the
		// IANA registry write them (unsigned32, ipv4Address, string).
		ipfixElementBounds(actOn(pk("sys ipfix element", "IPFIX Information Element", "", tmshRef("sys ipfix element")+vocab, `
data-type enum - octetArray|unsigned8|unsigned16|unsigned32|unsigned64|signed8|signed16|signed32|signed64|float32|float64|boolean|macAddress|string|dateTimeSeconds|dateTimeMilliseconds|dateTimeMicroseconds|dateTimeNanoseconds|ipv4Address|ipv6Address
enterprise-id int 0
id int 0
size int 0
`), "F5 sys ipfix element: a custom (enterprise) information element IPFIX::template create names",
			"data-type", "enterprise-id", "id", "size")),
		pk("sys log-config destination management-port", "Log Destination", "", tmshRef("sys log-config destination management-port")+vocab, `
ip-address ip -
port int 0
protocol enum tcp tcp|udp
`),
		actOn(pk("sys log-config publisher", "Log Publisher", "", tmshRef("sys log-config publisher")+vocab, `
destinations refcoll sys+log-config+destination+
`), "F5 sys log-config publisher: each message HSL::open -publisher sends goes to every destination", "destinations"),
		pk("sys log-config filter", "Log Filter", "", tmshRef("sys log-config filter")+vocab, `
level str -
message-id str -
publisher ref sys+log-config+publisher none
source str all
`),
	}
	for _, k := range ks {
		if k.Lower == "" {
			k.Lower = strings.ToLower(k.Title)
		}
	}
	// Names of these kinds are not paths: sys db ui.advisory.enabled, auth
	// user admin, sys management-ip 10.1.1.245/24.
	for _, k := range ks {
		switch k.Key() {
		case "sys db", "auth user", "auth partition", "sys management-ip", "sys provision", "net interface":
			k.PlainNames = true
		}
		// BIG-IP has a db key for every name, and the interfaces of its
		// hardware (1.1, 2.3, mgmt) before any script modifies them.
		k.Implicit = k.Key() == "sys db" || k.Key() == "net interface"
		if k.Key() == "sys db" {
			for _, p := range k.Props {
				p.Quoted = p.Name == "value" // value "true", as BIG-IP writes db values
			}
		}
		// A partition or a folder is acted on: objects may be made in it
		// and cd goes there. Their own properties are only kept.
		if k.Key() == "auth partition" || k.Key() == "sys folder" {
			k.Passive = false
			k.Help = "F5 " + k.Key() + ": a folder for objects (its properties are kept and saved; openltm does not act on them)"
			if k.Key() == "sys folder" {
				k.Help = "F5 sys folder: a folder for objects; its traffic group (inherited from its parent folder unless set) is the one of the virtual addresses in it that inherit theirs"
			}
			for _, p := range k.Props {
				// inherited-devicegroup and inherited-traffic-group only
				// say where the folder's device group and traffic group
				// come from; the device group itself is written beside
				// them (BIG-IP saves the effective one) and warns when it
				// is not the default openltm works with. The traffic
				// group is acted on (CompleteTrafficGroups).
				p.Passive = p.Name != "inherited-devicegroup" && p.Name != "inherited-traffic-group" && p.Name != "traffic-group"
			}
		}
	}
	return ks
}

// responsePolicyZones gives a DNS cache its response-policy-zones,
// `response-policy-zones { ZONE { action nxdomain|walled-garden
// walled-garden LOCAL-ZONE } }` as tmsh writes them: the DNS Express
// zones (response-policy yes) whose triggers the cache applies
// (dataplane/rpz).
func responsePolicyZones(k *Kind) *Kind {
	k.Props = append(k.Props, help(&Prop{Name: "response-policy-zones", Type: TColl, Sub: &Kind{Title: "Response Policy Zone", Props: []*Prop{
		help(&Prop{Name: "action", Type: TEnum, Enum: []string{"nxdomain", "walled-garden"}, Default: "nxdomain"},
			"nxdomain: each trigger's own policy (CNAME . NXDOMAIN, CNAME *. NODATA, local data, rpz-passthru.); walled-garden: the walled-garden local zone's records"),
		help(&Prop{Name: "walled-garden", Type: TString, Default: "none"}, "the cache's local zone whose records answer a walled-garden hit"),
	}}}, "the DNS Express zones (response-policy yes) whose triggers (QNAME, rpz-client-ip, rpz-ip, rpz-nsdname, rpz-nsip) answer before the cache"))
	return k
}

// forwardZones gives a net dns-resolver's forward-zones their structure,
// `forward-zones { ZONE { nameservers { ADDR:PORT { } } } }`, so that
// they are listed and saved as BIG-IP writes them and edited with add,
// delete and replace-all-with at either level, as tmsh edits them.
func forwardZones(k *Kind) *Kind {
	p := k.row("forward-zones")
	p.Type = TColl
	p.Sub = &Kind{Title: "Forward Zone", Props: []*Prop{
		help(&Prop{Name: "nameservers", Type: TColl, Sub: &Kind{Title: "Nameserver"}}, "the zone's DNS servers, ADDR:PORT (IPv6 ADDR.PORT)"),
	}}
	return k
}

// socksProfile gives the socks profile's protocol-versions its words.
func socksProfile(k *Kind) *Kind {
	k.row("protocol-versions").Enum = []string{"socks4", "socks4a", "socks5"}
	return k
}

// addrList makes a list row one of IP addresses, each checked as it is
// set (a DNS Express zone's dns-express-allow-notify).
func addrList(k *Kind, name string) *Kind {
	k.row(name).Format = "ip"
	return k
}

// dnssecKeyRows are an ltm dns dnssec key's settings [M: defaults;
// key-management manual lets tmsh's `create ... key-file K
// certificate-file C` example stand alone; the periods are seconds,
// signature-publication-period two thirds of signature-validity-period].
const dnssecKeyRows = `
algorithm enum rsasha1 rsasha1|rsasha256|rsasha512|ecdsap256sha256|ecdsap384sha384
bit-width int 1024
certificate-file ref sys+file+ssl-cert none
enabled flag enabled|disabled
expiration-period int 0
hardware-security-module enum none none|internal|external
key-file ref sys+file+ssl-key none
key-management enum manual manual|automatic
key-type enum zsk zsk|ksk
rollover-period int 0
signature-publication-period int 403200
signature-validity-period int 604800
ttl int 86400
use-fips enum disabled disabled|enabled
`

// resolverRows are the settings a resolver and a validating-resolver
// share beyond dnsCacheRows.
const resolverRows = `
allowed-query-time int 200
forward-zones raw
prefetch-key yn yes
randomize-query-name-case yn yes
root-hints list
use-ipv4 yn yes
use-ipv6 yn yes
use-tcp yn yes
use-udp yn yes
`

// dnsCacheRows are the settings every ltm dns cache has [M: defaults as
// BIG-IP v14 lists them].
const dnsCacheRows = `
answer-default-zones yn no
local-zones raw
max-concurrent-queries int 1024
max-concurrent-tcp int 20
max-concurrent-udp int 8192
msg-cache-size int 1048576
nameserver-cache-count int 16536
route-domain str 0
rrset-cache-size int 10485760
rrset-rotate enum none none|query-id
`
