package objects

import "strings"

// builtinMoreText declares the rest of F5's built-ins of kinds openltm acts
// on (f5BuiltinList), with the settings F5's REST listings give them where
// they differ from openltm's defaults for the kind: so that a bigip.conf
// naming /Common/http-explicit, wom-tcp-wan-optimized or the cipher group
// f5-default works as on a BIG-IP, `list ... all-properties` prints their
// values, and a save leaves them out unless modified (Config.Text).
//
// Sources: the REST listings of a BIG-IP 14.1.2.1 (ltm/profile/tcp, udp,
// fastl4, web-acceleration; ltm/cipher/rule and group;
// ltm/data-group/internal), the client-ssl listing of a BIG-IP 11.5.3
// (wom-default-clientssl's allow-non-ssl), the bigip_base.conf of a
// BIG-IP 15.1 (the self-allow port lists). ca-bundle.crt has no
// source-path: the daemon reads the system's CA bundle for it
// (daemon/cabundle.go). A tcp profile's values are its
// effective ones in REST, written where they differ from openltm's row
// defaults or from what its parent (builtinText: tcp-legacy,
// tcp-lan-optimized, tcp-wan-optimized, with F5's values too) would give,
// so that each matches its listing (TestBuiltinTCPValues).
// What none of them gives is [M] in objects/README.md: http-explicit and
// http-transparent set proxy-type only; the client-ssl and server-ssl
// profiles other than wom-default-clientssl, and full-acceleration, only
// their parent.
const builtinMoreText = `
ltm profile http /Common/http-explicit { defaults-from /Common/http proxy-type explicit }
ltm profile http /Common/http-transparent { defaults-from /Common/http proxy-type transparent }
ltm profile udp /Common/udp_decrement_ttl { defaults-from /Common/udp ip-ttl-mode decrement }
ltm profile udp /Common/udp_preserve_ttl { defaults-from /Common/udp ip-ttl-mode preserve }
ltm profile fastl4 /Common/full-acceleration { defaults-from /Common/fastL4 }
ltm profile fastl4 /Common/apm-forwarding-fastL4 { defaults-from /Common/fastL4 idle-timeout 7200 }
ltm profile tcp /Common/apm-forwarding-client-tcp { defaults-from /Common/tcp-legacy early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 3 init-rwnd 3 keep-alive-interval 60 nagle enabled proxy-options enabled rate-pace disabled send-buffer-size 131072 slow-start disabled tail-loss-probe disabled }
ltm profile tcp /Common/apm-forwarding-server-tcp { defaults-from /Common/tcp-legacy early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 3 init-rwnd 3 keep-alive-interval 60 nagle enabled proxy-options enabled rate-pace disabled send-buffer-size 131072 slow-start disabled tail-loss-probe disabled }
ltm profile tcp /Common/mptcp-mobile-optimized { defaults-from /Common/tcp-legacy abc disabled congestion-control illinois delayed-acks disabled early-retransmit disabled ecn enabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 16 init-rwnd 3 mptcp enabled nagle enabled proxy-buffer-high 131072 proxy-buffer-low 131072 proxy-options enabled rate-pace enabled receive-window-size 131072 reset-on-timeout disabled send-buffer-size 262144 syn-cookie-enable disabled tail-loss-probe disabled }
ltm profile tcp /Common/splitsession-default-tcp { defaults-from /Common/tcp-wan-optimized delayed-acks disabled early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled idle-timeout 600 init-cwnd 3 init-rwnd 3 nagle enabled pkt-loss-ignore-burst 8 pkt-loss-ignore-rate 10000 proxy-buffer-high 196608 proxy-buffer-low 131072 proxy-options enabled rate-pace disabled receive-window-size 458752 selective-nack enabled send-buffer-size 458752 slow-start disabled tail-loss-probe disabled zero-window-timeout 300000 }
ltm profile tcp /Common/wam-tcp-lan-optimized { defaults-from /Common/tcp-lan-optimized early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled init-cwnd 16 init-rwnd 16 proxy-buffer-high 131072 proxy-buffer-low 98304 proxy-options enabled rate-pace disabled slow-start enabled tail-loss-probe disabled }
ltm profile tcp /Common/wam-tcp-wan-optimized { defaults-from /Common/tcp-wan-optimized delayed-acks disabled early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled idle-timeout 600 init-cwnd 10 init-rwnd 3 nagle enabled pkt-loss-ignore-burst 8 pkt-loss-ignore-rate 10000 proxy-buffer-high 196608 proxy-buffer-low 131072 proxy-mss disabled proxy-options enabled rate-pace disabled selective-nack enabled send-buffer-size 458752 tail-loss-probe disabled zero-window-timeout 300000 }
ltm profile tcp /Common/wom-tcp-lan-optimized { defaults-from /Common/tcp-lan-optimized cmetrics-cache disabled delayed-acks disabled early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled idle-timeout 600 init-cwnd 3 init-rwnd 3 nagle enabled proxy-buffer-high 131072 proxy-buffer-low 98304 proxy-options enabled rate-pace disabled slow-start enabled tail-loss-probe disabled }
ltm profile tcp /Common/wom-tcp-wan-optimized { defaults-from /Common/tcp-wan-optimized delayed-acks disabled early-retransmit disabled ecn disabled enhanced-loss-recovery disabled fast-open disabled idle-timeout 600 init-cwnd 3 init-rwnd 3 nagle enabled pkt-loss-ignore-burst 8 pkt-loss-ignore-rate 10000 proxy-buffer-high 196608 proxy-buffer-low 131072 proxy-options enabled rate-pace disabled receive-window-size 458752 selective-nack enabled send-buffer-size 458752 slow-start disabled tail-loss-probe disabled zero-window-timeout 300000 }
ltm profile web-acceleration /Common/optimized-acceleration { defaults-from /Common/webacceleration cache-object-max-size 67108864 cache-object-min-size 0 cache-size 6144 }
ltm profile web-acceleration /Common/apm-enduser-if-cache { defaults-from /Common/webacceleration cache-max-age 36000 cache-max-entries 1000 cache-object-max-size 12000000 cache-object-min-size 5 cache-size 50 }
ltm profile client-ssl /Common/crypto-server-default-clientssl { defaults-from /Common/clientssl }
ltm profile client-ssl /Common/splitsession-default-clientssl { defaults-from /Common/clientssl }
ltm profile client-ssl /Common/wom-default-clientssl { defaults-from /Common/clientssl allow-non-ssl enabled }
ltm profile server-ssl /Common/apm-default-serverssl { defaults-from /Common/serverssl }
ltm profile server-ssl /Common/crypto-client-default-serverssl { defaults-from /Common/serverssl }
ltm profile server-ssl /Common/pcoip-default-serverssl { defaults-from /Common/serverssl }
ltm profile server-ssl /Common/splitsession-default-serverssl { defaults-from /Common/serverssl }
ltm profile server-ssl /Common/wom-default-serverssl { defaults-from /Common/serverssl }
ltm cipher rule /Common/f5-aes { cipher AES-GCM:AES description "Cipher suites that use the AES cipher." }
ltm cipher rule /Common/f5-default { cipher DEFAULT description "The recommended default cipher suites." }
ltm cipher rule /Common/f5-ecc { cipher ECDHE:ECDHE_ECDSA description "Cipher suites that utilize Elliptical Curve Ephemeral Diffie-Hellman key exchange." }
ltm cipher rule /Common/f5-hw_keys { cipher ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-SHA384:ECDHE-RSA-AES256-CBC-SHA:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES256-SHA256:DHE-RSA-AES256-SHA:ECDH-RSA-AES256-GCM-SHA384:ECDH-RSA-AES256-SHA384:ECDH-RSA-AES256-SHA:AES256-GCM-SHA384:AES256-SHA256:AES256-SHA:ECDHE-RSA-DES-CBC3-SHA:DHE-RSA-DES-CBC3-SHA:ECDH-RSA-DES-CBC3-SHA:DES-CBC3-SHA:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-SHA256:ECDHE-RSA-AES128-CBC-SHA:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES128-SHA256:DHE-RSA-AES128-SHA:ECDH-RSA-AES128-GCM-SHA256:ECDH-RSA-AES128-SHA256:ECDH-RSA-AES128-SHA:AES128-GCM-SHA256:AES128-SHA256:AES128-SHA:RC4-SHA:RC4-MD5:DHE-RSA-DES-CBC-SHA:DHE-RSA-CAMELLIA256-SHA:CAMELLIA256-SHA:DHE-RSA-CAMELLIA128-SHA:!TLSv1:!TLSv1_1:!SSLv3:!DTLSv1 description "Cipher suites eligible for use with a Hardware Security Module." }
ltm cipher rule /Common/f5-secure { cipher ECDHE:RSA:ECDHE_ECDSA:!SSLV3:!RC4:!EXP:!DES:!3DES description "Cipher suites that maximize regulatory compliance." }
ltm cipher group /Common/f5-aes { allow { /Common/f5-aes { } } }
ltm cipher group /Common/f5-default { allow { /Common/f5-default { } } }
ltm cipher group /Common/f5-ecc { allow { /Common/f5-ecc { } } }
ltm cipher group /Common/f5-hw_keys { allow { /Common/f5-hw_keys { } } }
ltm cipher group /Common/f5-secure { allow { /Common/f5-secure { } } }
ltm data-group internal /Common/aol { records { 64.12.96.0/19 { } 195.93.16.0/20 { } 195.93.48.0/22 { } 195.93.64.0/19 { } 195.93.96.0/19 { } 198.81.0.0/22 { } 198.81.8.0/23 { } 198.81.16.0/20 { } 202.67.65.128/25 { } 205.188.112.0/20 { } 205.188.146.144/30 { } 205.188.192.0/20 { } 205.188.208.0/23 { } 207.200.112.0/21 { } } type ip }
ltm data-group internal /Common/images { records { .bmp { } .gif { } .jpg { } } type string }
ltm data-group internal /Common/private_net { records { 10.0.0.0/8 { } 172.16.0.0/12 { } 192.168.0.0/16 { } } type ip }
ltm data-group internal /Common/sys_APM_MS_Office_OFBA_DG { description "This internal data-group is used in _sys_APM_MS_Office_OFBA_Support irule" records { ie_sp_session_sharing_enabled { data 0 } ie_sp_session_sharing_inactivity_timeout { data 60 } ofba_auth_dialog_size { data 800x600 } useragent1 { data "microsoft data access internet publishing provider" } useragent2 { data "office protocol discovery" } useragent3 { data "microsoft office" } useragent4 { data non-browser } useragent5 { data "msoffice 12" } useragent6 { data microsoft-webdav-miniredir } useragent7 { data webdav-miniredir } useragent9 { data "ms frontpage 1[23456789]" } useragent10 { data onenote } } type string }
sys file ssl-cert /Common/ca-bundle.crt { }
net port-list /Common/_sys_self_allow_tcp_defaults { ports { 22 { } 53 { } 161 { } 443 { } 1029-1043 { } 4353 { } } }
net port-list /Common/_sys_self_allow_udp_defaults { ports { 53 { } 161 { } 520 { } 1026 { } 4353 { } } }
net route-domain /Common/0 { id 0 }
`

// unshippedBuiltins are F5's built-ins of kinds openltm acts on that it
// does not ship, each with the reason. A BIG-IP has them, so a reference
// to one resolves (KeptBuiltin): tmsh create/modify and a loaded file keep
// it with the kept-kind warning and this reason, rather than refusing it
// (01020036). Every other entry of f5BuiltinList of an acted-on kind is
// shipped (builtinText, builtinMoreText, authBuiltinText): TestF5BuiltinsResolve.
var unshippedBuiltins = map[string]map[string]string{
	"ltm rule": apmRules(
		"_sys_APM_ExchangeSupport_OA_BasicAuth", "_sys_APM_ExchangeSupport_OA_NtlmAuth",
		"_sys_APM_ExchangeSupport_helper", "_sys_APM_ExchangeSupport_main",
		"_sys_APM_MS_Office_OFBA_Support", "_sys_APM_Office365_SAML_BasicAuth", "_sys_APM_activesync"),
	"cm device-group": {
		"/Common/device_trust_group": "BIG-IP's own device trust group; openltm's cluster sync keeps its own peers",
		"/Common/gtm":                "BIG-IP's GTM sync group; openltm's cluster sync keeps its own peers",
	},
	"sys file ssl-cert": {
		"/Common/f5-ca-bundle.crt": "F5's own CA certificates; openltm does not ship them",
		"/Common/f5-irule.crt":     "F5's iRule signing certificate; openltm does not sign or check rule signatures",
	},
	"sys log-config publisher": logPublishers(
		"default-ipsec-log-publisher", "default-mgmt-acl-log-publisher", "local-db-publisher",
		"sys-db-access-publisher", "sys-sslo-publisher", "sys-sso-access-publisher"),
}

func apmRules(names ...string) map[string]string {
	m := map[string]string{"/Common/_sys_auth_krbdelegate": "F5's Kerberos delegation iRule (APM); its body is F5's and openltm keeps ltm auth kerberos-delegation without acting on it"}
	for _, n := range names {
		m["/Common/"+n] = "F5's APM iRule; its body is F5's and openltm does not run APM"
	}
	return m
}

func logPublishers(names ...string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m["/Common/"+n] = "BIG-IP's publisher for its own subsystems (local database, IPsec, SSO, SSLO); F5 does not document its destinations"
	}
	return m
}

// unshippedWhy is the reason openltm does not ship the F5 built-in name of
// kind, "" when it ships it or it is no built-in of that kind.
func unshippedWhy(kind, name string) string {
	m := unshippedBuiltins[kind]
	if m == nil {
		return ""
	}
	if r := m[name]; r != "" {
		return r
	}
	return m[builtinPath(kind, name[strings.LastIndexByte(name, '/')+1:])]
}
