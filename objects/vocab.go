package objects

import (
	"strings"
	"sync"
)

var f5KindSet = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(f5KindList, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[l] = true
		}
	}
	return m
})

// F5Kind reports whether the leading words of a statement name an F5 object
// kind (or a module whose kinds F5 documents apart), and which: what BIG-IP
// accepts, even where openltm has no property table for it.
func F5Kind(words []string) (string, bool) {
	set := f5KindSet()
	for n := min(len(words), 5); n > 0; n-- {
		k := strings.Join(words[:n], " ")
		if set[k] {
			return k, true
		}
	}
	if len(words) > 0 && f5OtherModules[words[0]] {
		return words[0], true
	}
	return "", false
}

// f5BuiltinList names the objects a BIG-IP has in /Common out of the box,
// by kind, one kind per line: "kind: name name ...". References to them
// resolve on a BIG-IP; those openltm does not ship (see builtinText,
// builtinMoreText, and unshippedBuiltins for the reasons) are kept with a
// warning rather than refused.
//
// Source: the REST listings of a BIG-IP 14.1.2.1 VE with ltm, gtm, apm, asm,
// afm and avr provisioned (/mgmt/tm/ltm/profile/*, ltm/monitor/*,
// ltm/persistence/*, ltm/rule, ltm/cipher/*, ltm/data-group/internal,
// net/*, sys/*, gtm/monitor/*), and the bigip_base.conf a BIG-IP 15.1
// saves (folders, partitions, tunnels, port lists).
const f5BuiltinList = `
ltm profile http: http http-explicit http-transparent
ltm profile http2: http2
ltm profile http-compression: httpcompression wan-optimized-compression
ltm profile http-proxy-connect: http-proxy-connect
ltm profile httprouter: httprouter
ltm profile fasthttp: fasthttp
ltm profile websocket: websocket
ltm profile doh-server: doh-server
ltm profile doh-proxy: doh-proxy
ltm profile web-acceleration: webacceleration optimized-acceleration optimized-caching apm-enduser-if-cache
ltm profile html: html
ltm profile xml: xml
ltm profile rewrite: rewrite rewrite-portal rewrite-uri-translation
ltm profile stream: stream
ltm profile request-log: request-log
ltm profile request-adapt: requestadapt
ltm profile response-adapt: responseadapt
ltm profile icap: icap
ltm profile ntlm: ntlm
ltm profile statistics: stats
ltm profile client-ssl: clientssl clientssl-insecure-compatible clientssl-secure crypto-server-default-clientssl splitsession-default-clientssl wom-default-clientssl
ltm profile server-ssl: serverssl serverssl-insecure-compatible apm-default-serverssl crypto-client-default-serverssl pcoip-default-serverssl splitsession-default-serverssl wom-default-serverssl
ltm profile certificate-authority: certificateauthority
ltm profile tcp: tcp tcp-lan-optimized tcp-wan-optimized tcp-mobile-optimized tcp-legacy f5-tcp-lan f5-tcp-wan f5-tcp-mobile f5-tcp-progressive mptcp-mobile-optimized apm-forwarding-client-tcp apm-forwarding-server-tcp splitsession-default-tcp wam-tcp-lan-optimized wam-tcp-wan-optimized wom-tcp-lan-optimized wom-tcp-wan-optimized
ltm profile udp: udp udp_decrement_ttl udp_gtm_dns udp_preserve_ttl
ltm profile fastl4: fastL4 full-acceleration apm-forwarding-fastL4
ltm profile sctp: sctp
ltm profile ipother: ipother
ltm profile one-connect: oneconnect
ltm profile tcp-analytics: tcp-analytics
ltm profile dns: dns
ltm profile dhcpv4: dhcpv4 dhcpv4_fwd
ltm profile dhcpv6: dhcpv6 dhcpv6_fwd
ltm profile ftp: ftp
ltm profile tftp: tftp
ltm profile iiop: iiop
ltm profile pcp: pcp
ltm profile sip: sip
ltm profile rtsp: rtsp
ltm profile diameter: diameter
ltm profile radius: radiusLB radiusLB-subscriber-aware
ltm profile mblb: mblb
ltm profile mqtt: mqtt
ltm profile fix: fix
ltm profile gtp: gtp
ltm profile socks: socks
ltm profile smtps: smtps
ltm profile imap: imap
ltm profile pop3: pop3
ltm profile pptp: pptp
ltm profile ipsecalg: ipsecalg
ltm profile qoe: qoe
ltm profile netflow: netflow
ltm profile client-ldap: clientldap
ltm profile server-ldap: serverldap
ltm profile connector: connector access-logonpage-protection-connector
ltm profile service: service access-logonpage-protection-service
ltm profile splitsessionclient: splitsessionclient
ltm profile splitsessionserver: splitsessionserver
ltm monitor http: http http_head_f5
ltm monitor https: https https_head_f5
ltm monitor http2: http2
ltm monitor tcp: tcp
ltm monitor tcp-half-open: tcp_half_open
ltm monitor tcp-echo: tcp_echo
ltm monitor udp: udp
ltm monitor icmp: icmp
ltm monitor gateway-icmp: gateway_icmp
ltm monitor dns: dns
ltm monitor inband: inband
ltm monitor none: none
ltm monitor external: external
ltm monitor ftp: ftp
ltm monitor imap: imap
ltm monitor pop3: pop3
ltm monitor smtp: smtp
ltm monitor nntp: nntp
ltm monitor ldap: ldap
ltm monitor mssql: mssql
ltm monitor mysql: mysql
ltm monitor oracle: oracle
ltm monitor postgresql: postgresql
ltm monitor radius: radius
ltm monitor radius-accounting: radius_accounting
ltm monitor sip: sip
ltm monitor soap: soap
ltm monitor wap: wap
ltm monitor wmi: wmi
ltm monitor rpc: rpc
ltm monitor sasp: sasp
ltm monitor scripted: scripted
ltm monitor smb: smb
ltm monitor snmp-dca: snmp_dca
ltm monitor snmp-dca-base: snmp_dca_base
ltm monitor real-server: real_server
ltm monitor virtual-location: virtual_location
ltm monitor module-score: module_score
ltm monitor firepass: firepass
ltm monitor diameter: diameter
ltm monitor mqtt: mqtt
ltm persistence source-addr: source_addr
ltm persistence dest-addr: dest_addr
ltm persistence cookie: cookie
ltm persistence universal: universal
ltm persistence hash: hash
ltm persistence host: host
ltm persistence msrdp: msrdp
ltm persistence sip: sip_info
ltm persistence ssl: ssl
ltm rule: _sys_https_redirect _sys_auth_ldap _sys_auth_radius _sys_auth_tacacs _sys_auth_ssl_cc_ldap _sys_auth_ssl_crldp _sys_auth_ssl_ocsp _sys_auth_krbdelegate _sys_APM_ExchangeSupport_OA_BasicAuth _sys_APM_ExchangeSupport_OA_NtlmAuth _sys_APM_ExchangeSupport_helper _sys_APM_ExchangeSupport_main _sys_APM_MS_Office_OFBA_Support _sys_APM_Office365_SAML_BasicAuth _sys_APM_activesync
ltm data-group internal: aol images private_net sys_APM_MS_Office_OFBA_DG
ltm cipher rule: f5-default f5-secure f5-ecc f5-aes f5-hw_keys
ltm cipher group: f5-default f5-secure f5-ecc f5-aes f5-hw_keys
ltm policy-strategy: first-match best-match all-match
ltm eviction-policy: default-eviction-policy
ltm auth profile: ldap radius tacacs ssl_cc_ldap ssl_crldp ssl_ocsp krbdelegate
ltm message-routing generic protocol: genericmsg
ltm message-routing generic router: messagerouter
ltm message-routing sip profile router: siprouter
ltm message-routing sip profile session: sipsession
ltm message-routing diameter profile router: diameterrouter
ltm message-routing diameter profile session: diametersession
ltm message-routing mqtt profile router: mqttrouter
ltm message-routing mqtt profile session: mqttsession
ltm tacdb licenseddb: licensed-tacdb
net route-domain: 0
net tunnels tunnel: http-tunnel socks-tunnel
net tunnels etherip: etherip
net tunnels fec: fec
net tunnels geneve: geneve
net tunnels gre: gre nvgre
net tunnels ipip: dslite ip4ip4 ip4ip6 ip6ip4 ip6ip6 ipip
net tunnels ipsec: ipsec
net tunnels lw4o6: lw4o6
net tunnels map: map
net tunnels ppp: ppp
net tunnels tcp-forward: tcp-forward
net tunnels v6rd: v6rd
net tunnels vxlan: vxlan vxlan-gpe vxlan-multipoint vxlan-ovsdb vxlan-ovsdb-multipoint vxlan-ovsdb-no-flooding
net tunnels wccp: wccpgre
net port-list: _sys_self_allow_tcp_defaults _sys_self_allow_udp_defaults
net stp: cist
net ipsec ike-daemon: ikedaemon
net ipsec ike-peer: anonymous
net ipsec ipsec-policy: default-ipsec-policy default-ipsec-policy-interface default-ipsec-policy-isession
net ipsec traffic-selector: default-traffic-selector-interface
net rate-shaping drop-policy: fred red tail
net rate-shaping queue: pfifo sfq
cm traffic-group: traffic-group-1 traffic-group-local-only
cm trust-domain: Root
cm device-group: device_trust_group gtm
cm cert: dtca.crt dtca-bundle.crt dtdi.crt
cm key: dtca.key dtdi.key
gtm monitor bigip: bigip
gtm monitor bigip-link: bigip_link
gtm monitor gateway-icmp: gateway_icmp
gtm monitor tcp: tcp
gtm monitor tcp-half-open: tcp_half_open
gtm monitor udp: udp
gtm monitor http: http http_head_f5
gtm monitor https: https https_head_f5
gtm monitor ftp: ftp
gtm monitor imap: imap
gtm monitor pop3: pop3
gtm monitor smtp: smtp
gtm monitor nntp: nntp
gtm monitor ldap: ldap
gtm monitor mssql: mssql
gtm monitor mysql: mysql
gtm monitor oracle: oracle
gtm monitor postgresql: postgresql
gtm monitor radius: radius
gtm monitor radius-accounting: radius_accounting
gtm monitor sip: sip
gtm monitor soap: soap
gtm monitor wap: wap
gtm monitor wmi: wmi
gtm monitor scripted: scripted
gtm monitor external: external
gtm monitor real-server: real_server
gtm monitor gtp: gtp
gtm monitor none: none
gtm monitor firepass: firepass_gtm
gtm monitor snmp: snmp_gtm
gtm monitor snmp-link: snmp_link
sys folder: / /Common /Common/Drafts
auth partition: Common
auth user: admin
sys file ssl-cert: default.crt ca-bundle.crt f5-ca-bundle.crt f5-irule.crt
sys crypto cert: default.crt ca-bundle.crt f5-ca-bundle.crt f5-irule.crt
sys file ssl-key: default.key
sys crypto key: default.key
sys crypto ca-bundle-manager: ca-bundle
sys log-config destination local-syslog: local-syslog
sys log-config destination local-database: local-db
sys log-config destination alertd: alertd
sys log-config publisher: default-ipsec-log-publisher default-mgmt-acl-log-publisher local-db-publisher sys-db-access-publisher sys-sslo-publisher sys-sso-access-publisher
sys management-dhcp: sys-mgmt-dhcp-config
sys provision: afm am apm asm avr dos fps gtm ilx lc ltm pem sslo swg urldb
sys application apl-script: f5.apl_common
sys url-db url-category: Uncategorized User-Defined
sys url-db download-schedule: urldb
`

// f5Builtins maps kind keys to the full names of F5's built-in objects.
var f5Builtins = sync.OnceValue(func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for _, l := range strings.Split(f5BuiltinList, "\n") {
		kind, names, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		set := map[string]bool{}
		for _, n := range strings.Fields(names) {
			set[builtinPath(kind, n)] = true
		}
		m[kind] = set
	}
	return m
})

// builtinPath is the name a built-in of kind is referred to by.
func builtinPath(kind, name string) string {
	switch kind {
	case "sys folder", "auth partition", "auth user", "sys provision":
		return name
	}
	return "/Common/" + name
}

// isBuiltinOf reports whether name (full or plain) is one of F5's built-in
// objects of exactly this kind.
func isBuiltinOf(kind, name string) bool {
	set := f5Builtins()[kind]
	if set == nil {
		return false
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	return set[name] || set[builtinPath(kind, base)]
}

// IsF5Builtin reports whether name is one of F5's built-in objects of a kind
// spec allows (kind keys, or prefixes ending in a space): a reference BIG-IP
// resolves even where openltm does not ship the object.
func IsF5Builtin(spec []string, name string) bool {
	if !strings.HasPrefix(name, "/") {
		name = "/Common/" + name
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	for kind, set := range f5Builtins() {
		if refMatches(spec, kind) && (set[name] || set["/Common/"+base]) {
			return true
		}
	}
	return false
}
