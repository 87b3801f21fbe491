package objects

// f5KindList names every object kind F5's tmsh has, one per line, as the
// words come before an object's name in bigip.conf and tmsh. A statement of a
// kind on this list that openltm has no property table for is kept verbatim
// and saved back (category 2); a statement of a kind on no list is refused,
// as BIG-IP refuses it.
//
// Source: the component index of F5's tmsh reference
// (https://clouddocs.f5.com/cli/tmsh-reference/latest/), with the REST
// collections a BIG-IP 14.1.2.1 lists under /mgmt/tm (ltm profile, ltm
// monitor, gtm monitor, net tunnels, sys file).
const f5KindList = `
ltm alg-log-profile
ltm auth crldp-server
ltm auth kerberos-delegation
ltm auth ldap
ltm auth ocsp-responder
ltm auth profile
ltm auth radius
ltm auth radius-server
ltm auth ssl-cc-ldap
ltm auth ssl-crldp
ltm auth ssl-ocsp
ltm auth tacacs
ltm cipher group
ltm cipher rule
ltm classification application
ltm classification auto-update settings
ltm classification auto-update status
ltm classification category
ltm classification ce
ltm classification signature-definition
ltm classification signature-update-schedule
ltm classification signature-version
ltm classification signatures
ltm classification stats application
ltm classification stats url-category
ltm classification stats urlcat-cloud
ltm classification update-signatures
ltm classification updates
ltm classification url-cat-policy
ltm classification url-category
ltm classification urldb-feed-list
ltm classification urldb-file
ltm clientssl ocsp-stapling-responses
ltm clientssl-proxy cached-certs
ltm data-group external
ltm data-group internal
ltm default-node-monitor
ltm dns analytics global-settings
ltm dns cache global-settings
ltm dns cache records all
ltm dns cache records key
ltm dns cache records msg
ltm dns cache records nameserver
ltm dns cache records rrset
ltm dns cache resolver
ltm dns cache transparent
ltm dns cache validating-resolver
ltm dns dns-express-db
ltm dns dnssec key
ltm dns dnssec zone
ltm dns hpke key
ltm dns hpke profile
ltm dns nameserver
ltm dns tsig-key
ltm dns zone
ltm eviction-policy
ltm global-settings connection
ltm global-settings general
ltm global-settings rule
ltm global-settings traffic-control
ltm html-rule comment-raise-event
ltm html-rule comment-remove
ltm html-rule tag-append-html
ltm html-rule tag-prepend-html
ltm html-rule tag-raise-event
ltm html-rule tag-remove
ltm html-rule tag-remove-attribute
ltm ifile
ltm lsn-log-profile
ltm lsn-pool
ltm message-routing diameter peer
ltm message-routing diameter profile router
ltm message-routing diameter profile session
ltm message-routing diameter route
ltm message-routing diameter transport-config
ltm message-routing generic peer
ltm message-routing generic protocol
ltm message-routing generic route
ltm message-routing generic router
ltm message-routing generic transport-config
ltm message-routing mqtt peer
ltm message-routing mqtt profile router
ltm message-routing mqtt profile session
ltm message-routing mqtt route
ltm message-routing mqtt transport-config
ltm message-routing sip peer
ltm message-routing sip profile router
ltm message-routing sip profile session
ltm message-routing sip route
ltm message-routing sip transport-config
ltm monitor diameter
ltm monitor dns
ltm monitor external
ltm monitor firepass
ltm monitor ftp
ltm monitor gateway-icmp
ltm monitor http
ltm monitor http2
ltm monitor https
ltm monitor icmp
ltm monitor imap
ltm monitor inband
ltm monitor ldap
ltm monitor module-score
ltm monitor mqtt
ltm monitor mssql
ltm monitor mysql
ltm monitor nntp
ltm monitor none
ltm monitor oracle
ltm monitor pop3
ltm monitor postgresql
ltm monitor radius
ltm monitor radius-accounting
ltm monitor real-server
ltm monitor rpc
ltm monitor sasp
ltm monitor scripted
ltm monitor sip
ltm monitor smb
ltm monitor smtp
ltm monitor snmp-dca
ltm monitor snmp-dca-base
ltm monitor soap
ltm monitor tcp
ltm monitor tcp-echo
ltm monitor tcp-half-open
ltm monitor udp
ltm monitor virtual-location
ltm monitor wap
ltm monitor wmi
ltm nat
ltm nat-stats
ltm node
ltm persistence cookie
ltm persistence dest-addr
ltm persistence global-settings
ltm persistence hash
ltm persistence host
ltm persistence msrdp
ltm persistence persist-records
ltm persistence sip
ltm persistence source-addr
ltm persistence ssl
ltm persistence universal
ltm policy
ltm policy-strategy
ltm pool
ltm profile analytics
ltm profile certificate-authority
ltm profile classification
ltm profile client-ldap
ltm profile client-ssl
ltm profile connector
ltm profile dhcpv4
ltm profile dhcpv6
ltm profile diameter
ltm profile dns
ltm profile dns-logging
ltm profile doh-proxy
ltm profile doh-server
ltm profile fasthttp
ltm profile fastl4
ltm profile fix
ltm profile ftp
ltm profile georedundancy
ltm profile gtp
ltm profile html
ltm profile http
ltm profile http-compression
ltm profile http-proxy-connect
ltm profile http2
ltm profile http3
ltm profile httprouter
ltm profile icap
ltm profile iiop
ltm profile ilx
ltm profile imap
ltm profile ipother
ltm profile ipsecalg
ltm profile json
ltm profile mapt
ltm profile mblb
ltm profile mqtt
ltm profile mr-ratelimit
ltm profile mr-ratelimit-action
ltm profile mssql
ltm profile netflow
ltm profile ntlm
ltm profile ocsp
ltm profile ocsp-stapling-params
ltm profile one-connect
ltm profile pcp
ltm profile pop3
ltm profile pptp
ltm profile qoe
ltm profile quic
ltm profile radius
ltm profile ramcache
ltm profile request-adapt
ltm profile request-log
ltm profile response-adapt
ltm profile rewrite
ltm profile rtsp
ltm profile sctp
ltm profile server-ldap
ltm profile server-ssl
ltm profile service
ltm profile sip
ltm profile smtp
ltm profile smtps
ltm profile socks
ltm profile splitsessionclient
ltm profile splitsessionserver
ltm profile sse
ltm profile statistics
ltm profile stream
ltm profile tcp
ltm profile tcp-analytics
ltm profile tdr
ltm profile tftp
ltm profile traffic-acceleration
ltm profile udp
ltm profile wa-cache
ltm profile web-acceleration
ltm profile web-security
ltm profile websocket
ltm profile xml
ltm rule
ltm rule-profiler
ltm snat
ltm snat-translation
ltm snatpool
ltm tacdb customdb
ltm tacdb customdb-file
ltm tacdb licenseddb
ltm tacdb licenseddb-file
ltm tacdb query
ltm traffic-class
ltm traffic-matching-criteria
ltm urlcat-cloud-cache
ltm urlcat-query
ltm virtual
ltm virtual-address
net address-list
net arp
net bwc policy
net bwc priority-group
net bwc probe
net bwc traffic-group
net clone-stats
net cmetrics
net cos global-settings
net cos map-8021p
net cos map-dscp
net cos traffic-priority
net dag-globals
net dns-resolver
net f5optics
net fdb tunnel
net fdb vlan
net ike-evt-stat
net ike-msg-stat
net interface
net interface-cos
net interface-ddm
net ipsec ike-daemon
net ipsec ike-peer
net ipsec ike-sa
net ipsec ipsec-policy
net ipsec ipsec-sa
net ipsec manual-security-association
net ipsec traffic-selector
net ipsec-stat
net ipv6-subscriber-prefix-length
net lacp-globals
net lldp-globals
net lldp-neighbors
net mroute
net multicast-globals
net ndp
net packet-filter
net packet-filter-trusted
net packet-tester security
net port-list
net port-mirror
net rate-shaping class
net rate-shaping color-policer
net rate-shaping drop-policy
net rate-shaping queue
net rate-shaping shaping-policy
net route
net route-domain
net router-advertisement
net routing access-list
net routing as-path
net routing bfd
net routing bgp
net routing community-list
net routing debug
net routing extcommunity-list
net routing prefix-list
net routing profile bgp
net routing route-map
net rst-cause
net self
net self-allow
net service-policy
net sfc chain
net sfc hop
net sfc sf
net sfc-stats
net stp
net stp-globals
net timer-policy
net trunk
net tunnels endpoint
net tunnels etherip
net tunnels fec
net tunnels fec-stat
net tunnels geneve
net tunnels gre
net tunnels ipip
net tunnels ipsec
net tunnels lw4o6
net tunnels map
net tunnels ppp
net tunnels tcp-forward
net tunnels tunnel
net tunnels v6rd
net tunnels vxlan
net tunnels wccp
net vlan
net vlan-allowed
net vlan-group
net wccp
sys air-filter-reset
sys alert lcd
sys aom
sys appiq config
sys application apl-script
sys application custom-stat
sys application service
sys application template
sys autoscale-group
sys availability
sys clock
sys cluster
sys config
sys config-diff
sys connection
sys console
sys core
sys cpu
sys crypto acceleration-strategy
sys crypto allow-key-export
sys crypto ca-bundle-manager
sys crypto cert
sys crypto cert-order-manager
sys crypto cert-validation-response ocsp
sys crypto cert-validator crl
sys crypto cert-validator ocsp
sys crypto check-cert
sys crypto client
sys crypto crl
sys crypto csr
sys crypto encrypted-attributes
sys crypto fips by-handle
sys crypto fips external-hsm
sys crypto fips key
sys crypto fips nethsm-partition
sys crypto key
sys crypto master-key
sys crypto pkcs12
sys crypto server
sys daemon-ha
sys daemon-log-settings clusterd
sys daemon-log-settings csyncd
sys daemon-log-settings icr-eventd
sys daemon-log-settings icrd
sys daemon-log-settings lind
sys daemon-log-settings mcpd
sys daemon-log-settings tmm
sys datastor
sys db
sys default-config
sys diags ihealth
sys diags ihealth-request
sys diags ihealth-result
sys disk application-volume
sys disk directory
sys disk logical-disk
sys dns
sys dynad instrumentation
sys dynad key
sys dynad rpm
sys dynad settings
sys dynad status
sys ecm cloud-provider
sys ecm config
sys ecm register
sys failover
sys feature-module
sys file apache-ssl-cert
sys file browser-capabilities-db
sys file dashboard-viewset
sys file data-group
sys file device-capabilities-db
sys file external-monitor
sys file ifile
sys file lwtunneltbl
sys file rewrite-rule
sys file ssl-cert
sys file ssl-crl
sys file ssl-csr
sys file ssl-key
sys file system-ssl-cert
sys file system-ssl-key
sys fix-connection
sys folder
sys fpga firmware-config
sys fpga info
sys fpga turboflex-profile
sys geoip
sys global-settings
sys ha-group
sys ha-status
sys hardware
sys host-info
sys httpd
sys hypervisor-info
sys iapp-restricted-key
sys icall event
sys icall handler periodic
sys icall handler perpetual
sys icall handler triggered
sys icall istats-trigger
sys icall publisher
sys icall script
sys icmp-stat
sys icontrol-soap
sys integrity status-check
sys internal-proxy
sys ip-address
sys ip-stat
sys ipfix destination
sys ipfix element
sys ipfix irules
sys iprep-status
sys license
sys log
sys log-config destination alertd
sys log-config destination arcsight
sys log-config destination ipfix
sys log-config destination local-database
sys log-config destination local-syslog
sys log-config destination management-port
sys log-config destination remote-high-speed-log
sys log-config destination remote-syslog
sys log-config destination splunk
sys log-config filter
sys log-config publisher
sys log-rotate
sys mac-address
sys management-dhcp
sys management-ip
sys management-ovsdb
sys management-proxy-config
sys management-route
sys mcp-state
sys memory
sys nethsm async-queue-stat
sys nethsm pkcs11d-stat
sys nethsm sync-queue-stat
sys ntp
sys outbound-smtp
sys performance all-stats
sys performance connections
sys performance dnsexpress
sys performance dnssec
sys performance gtm
sys performance ramcache
sys performance system
sys performance throughput
sys pfman consumer
sys pfman device
sys proc-info
sys provision
sys pva-traffic
sys raid array
sys raid bay
sys raid disk
sys ready
sys scriptd
sys service
sys sflow data-source http
sys sflow data-source interface
sys sflow data-source system
sys sflow data-source vlan
sys sflow global-settings http
sys sflow global-settings interface
sys sflow global-settings system
sys sflow global-settings vlan
sys sflow receiver
sys smtp-server
sys snmp
sys software block-device-hotfix
sys software block-device-image
sys software hotfix
sys software image
sys software signature
sys software status
sys software update
sys software update-status
sys software volume
sys sshd
sys state-mirroring
sys sync-sys-files
sys syslog
sys tmm-info
sys tmm-traffic
sys traffic
sys turboflex features
sys turboflex profile all
sys turboflex profile feature
sys turboflex profile-config
sys turboflex warning
sys ucs
sys url-db download-result
sys url-db download-schedule
sys url-db url-category
sys version
gtm add
gtm datacenter
gtm distributed-app
gtm global-settings general
gtm global-settings load-balancing
gtm global-settings metrics
gtm global-settings metrics-exclusions
gtm iquery
gtm ldns
gtm link
gtm listener
gtm listener-doh-proxy
gtm listener-doh-server
gtm monitor bigip
gtm monitor bigip-link
gtm monitor external
gtm monitor firepass
gtm monitor ftp
gtm monitor gateway-icmp
gtm monitor gtp
gtm monitor http
gtm monitor https
gtm monitor imap
gtm monitor ldap
gtm monitor mssql
gtm monitor mysql
gtm monitor nntp
gtm monitor none
gtm monitor oracle
gtm monitor pop3
gtm monitor postgresql
gtm monitor radius
gtm monitor radius-accounting
gtm monitor real-server
gtm monitor scripted
gtm monitor sip
gtm monitor smtp
gtm monitor snmp
gtm monitor snmp-link
gtm monitor soap
gtm monitor tcp
gtm monitor tcp-half-open
gtm monitor udp
gtm monitor wap
gtm monitor wmi
gtm path
gtm persist
gtm pool a
gtm pool aaaa
gtm pool cname
gtm pool https
gtm pool mx
gtm pool naptr
gtm pool srv
gtm pool svcb
gtm pool
gtm prober-pool
gtm region
gtm rule
gtm server
gtm topology
gtm traffic
gtm wideip a
gtm wideip aaaa
gtm wideip cname
gtm wideip https
gtm wideip mx
gtm wideip naptr
gtm wideip srv
gtm wideip svcb
cm add-to-trust
cm cert
cm config-sync
cm device
cm device-group
cm failover-status
cm ha-group
cm key
cm remove-from-trust
cm sha1-fingerprint
cm sniff-updates
cm sync-status
cm traffic-group
cm trust-domain
cm watch-devicegroup-device
cm watch-sys-device
cm watch-trafficgroup-device
auth apm-auth
auth cert-ldap
auth ldap
auth login-failures
auth partition
auth password
auth password-policy
auth radius
auth radius-server
auth remote-role
auth remote-user
auth source
auth tacacs
auth user
security analytics settings
security anti-fraud engine-update
security anti-fraud profile
security anti-fraud signatures-update
security blacklist-publisher all-blacklist-publisher
security blacklist-publisher blacklist-publisher-stats
security blacklist-publisher by-addr
security blacklist-publisher by-category
security blacklist-publisher category
security blacklist-publisher profile
security bot-defense anomaly
security bot-defense anomaly-category
security bot-defense class
security bot-defense micro-service
security bot-defense profile
security bot-defense signature
security bot-defense signature-category
security bot-defense template
security cloud-services cmd
security cloud-services connector
security datasync background-tasks
security datasync device-stats
security datasync global-profile
security datasync local-profile
security debug drop-redirect-stats
security debug matcher
security debug register
security device device-context
security device-id attribute
security dos auto-thresholds heavy-urls
security dos auto-thresholds stress-based
security dos auto-thresholds top-device-ids
security dos auto-thresholds top-geolocations
security dos auto-thresholds top-source-ips
security dos auto-thresholds top-urls
security dos auto-thresholds tps-based
security dos autodos-file-object
security dos behavioral-signature
security dos bot-signature
security dos bot-signature-category
security dos device-config
security dos dns-nxdomain-stat
security dos dos-signature
security dos dynamic-signatures
security dos ip-uncommon-protolist
security dos l4bdos-file-object
security dos network-whitelist
security dos profile
security dos spva-stats
security dos stress-stats
security dos udp-portlist
security dos virtual
security firewall address-list
security firewall config-change-log
security firewall config-entity-id
security firewall container-stat
security firewall context-stat
security firewall current-state
security firewall fqdn-entity
security firewall fqdn-info
security firewall global-fqdn-policy
security firewall global-rules
security firewall ipi-category-info
security firewall management-ip-rules
security firewall matching-rule
security firewall on-demand-compilation
security firewall on-demand-rule-deploy
security firewall policy
security firewall port-list
security firewall port-misuse-policy
security firewall rule-list
security firewall rule-stat
security firewall schedule
security firewall user-domain
security firewall user-list
security firewall uuid-default-autogenerate
security flowspec-route-injector flowspec-advertised-route-info
security flowspec-route-injector profile
security http file-type
security http mandatory-header
security http profile
security ip-intelligence blacklist-category
security ip-intelligence feed-list
security ip-intelligence global-policy
security ip-intelligence info
security ip-intelligence policy
security log antifraud-storage-field
security log network-storage-field
security log profile
security log protocol-dns-storage-field
security log protocol-sip-storage-field
security log remote-format
security log storage-field
security malicious-sources device-ids
security malicious-sources ip-addresses
security nat destination-translation
security nat policy
security nat source-translation
security packet-filter default-rules
security packet-filter policy
security packet-filter rule-stat
security presentation tmui netflow-details
security presentation tmui netflow-list
security presentation tmui signature-details
security presentation tmui signature-list
security protected zone
security protected-servers netflow-tmc-stat
security protocol-inspection auto-update settings
security protocol-inspection auto-update status
security protocol-inspection common-config
security protocol-inspection compliance
security protocol-inspection compliance-enums
security protocol-inspection learning-stats
security protocol-inspection learning-suggestions
security protocol-inspection profile
security protocol-inspection profile-status
security protocol-inspection service
security protocol-inspection signature
security protocol-inspection staging
security protocol-inspection system
security protocol-inspection updates
security protocol-inspection virtual-servers
security scrubber dwbl-scrubber-category-stats
security scrubber dwbl-scrubber-stat
security scrubber profile
security scrubber unredirect
security shared-objects port-list
security ssh ciphers
security ssh profile
security zone
`

// f5OtherModules are the tmsh modules whose kinds F5 documents apart from
// the list above (access policy, web application firewall, analytics, ...).
// openltm keeps their objects verbatim and does not act on them.
//
// Source: F5's tmsh reference, module index
// (https://clouddocs.f5.com/cli/tmsh-reference/latest/modules/); api-protection
// from the tmsh reference's v16 component index.
var f5OtherModules = map[string]bool{
	"apm": true, "asm": true, "analytics": true, "cli": true, "ilx": true,
	"pem": true, "vcmp": true, "wom": true, "wam": true, "util": true,
	"api-protection": true,
}
