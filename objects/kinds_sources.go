package objects

// modeledSources says where the property tables of the kinds openltm acts
// on come from, kind by kind: F5's tmsh reference page for the names and
// types, and the REST output of the built-in parents on a BIG-IP 14.1.2.1
// for the defaults. Rows marked "openltm extension" are openltm's own.
var modeledSources = map[string]string{
	"ltm virtual":                        tmshRef("ltm virtual") + "; defaults: REST of a new virtual server on BIG-IP 14.1",
	"ltm pool":                           tmshRef("ltm pool") + restDefaults("a new pool"),
	"ltm node":                           tmshRef("ltm node") + restDefaults("a new node"),
	"ltm monitor tcp":                    tmshRef("ltm monitor tcp") + restDefaults("/Common/tcp"),
	"ltm monitor tcp-half-open":          tmshRef("ltm monitor tcp-half-open") + restDefaults("/Common/tcp_half_open"),
	"ltm monitor http":                   tmshRef("ltm monitor http") + restDefaults("/Common/http"),
	"ltm monitor gateway-icmp":           tmshRef("ltm monitor gateway-icmp") + restDefaults("/Common/gateway_icmp"),
	"ltm profile tcp":                    tmshRef("ltm profile tcp") + restDefaults("/Common/tcp"),
	"ltm profile fastl4":                 tmshRef("ltm profile fastl4") + restDefaults("/Common/fastL4"),
	"ltm profile http":                   tmshRef("ltm profile http") + restDefaults("/Common/http"),
	"ltm profile one-connect":            tmshRef("ltm profile one-connect") + restDefaults("/Common/oneconnect"),
	"ltm profile mblb":                   tmshRef("ltm profile mblb") + restDefaults("/Common/mblb"),
	"ltm persistence source-addr":        tmshRef("ltm persistence source-addr") + restDefaults("/Common/source_addr"),
	"ltm persistence cookie":             tmshRef("ltm persistence cookie") + restDefaults("/Common/cookie"),
	"ltm persistence universal":          tmshRef("ltm persistence universal") + restDefaults("/Common/universal"),
	"ltm rule":                           tmshRef("ltm rule"),
	"ltm policy":                         tmshRef("ltm policy") + "; condition and action words: the fields of iControl REST's policy rule conditions and actions, written as bigip.conf files saved by BIG-IP show them",
	"ltm snatpool":                       tmshRef("ltm snatpool"),
	"ltm data-group internal":            tmshRef("ltm data-group internal"),
	"ltm traffic-matching-criteria":      tmshRef("ltm traffic-matching-criteria"),
	"ltm virtual-address":                tmshRef("ltm virtual-address") + restDefaults("a virtual address"),
	"ltm default-node-monitor":           tmshRef("ltm default-node-monitor"),
	"gtm datacenter":                     tmshRef("gtm datacenter") + restDefaults("a new datacenter"),
	"gtm distributed-app":                tmshRef("gtm distributed-app") + "; defaults: the tmsh reference (dependency-level none, persistence disabled, ttl-persistence 3600); disabled-contexts items NAME { type datacenter|server|link } are openltm's form [M]",
	"gtm server":                         tmshRef("gtm server") + "; defaults: REST of a gtm server on BIG-IP 13.1",
	"gtm link":                           tmshRef("gtm link"),
	"gtm prober-pool":                    tmshRef("gtm prober-pool") + "; members, order and load-balancing-mode: BIG-IP DNS implementations, Configuring Device-Specific Probing",
	"gtm region":                         tmshRef("gtm region"),
	"gtm topology":                       tmshRef("gtm topology"),
	"gtm pool a":                         tmshRef("gtm pool a") + "; defaults: REST of a new gtm pool a on BIG-IP 12.1",
	"gtm wideip a":                       tmshRef("gtm wideip a") + restDefaults("a new wide IP"),
	"gtm pool aaaa":                      tmshRef("gtm pool aaaa") + "; as gtm pool a",
	"gtm wideip aaaa":                    tmshRef("gtm wideip aaaa") + "; as gtm wideip a",
	"gtm pool cname":                     tmshRef("gtm pool cname") + "; members as in bigip_gtm.conf files saved by BIG-IP (name { member-order ratio static-target })",
	"gtm wideip cname":                   tmshRef("gtm wideip cname") + "; as gtm wideip a",
	"gtm pool mx":                        tmshRef("gtm pool mx") + "; member fields: openltm's reading of the MX record (priority)",
	"gtm wideip mx":                      tmshRef("gtm wideip mx") + "; as gtm wideip a",
	"gtm pool srv":                       tmshRef("gtm pool srv") + "; member fields: openltm's reading of the SRV record (priority, weight, port)",
	"gtm wideip srv":                     tmshRef("gtm wideip srv") + "; as gtm wideip a",
	"gtm pool naptr":                     tmshRef("gtm pool naptr") + "; member fields: openltm's reading of the NAPTR record (preference, flags, service)",
	"gtm wideip naptr":                   tmshRef("gtm wideip naptr") + "; as gtm wideip a",
	"gtm pool svcb":                      tmshRef("gtm pool svcb") + "; member fields: alpn and hpke-key are F5's; priority, port, no-default-alpn, ipv4hint, ipv6hint, mandatory, ech are openltm's reading of RFC 9460, dohpath of RFC 9461",
	"gtm wideip svcb":                    tmshRef("gtm wideip svcb") + "; as gtm wideip a",
	"gtm pool https":                     tmshRef("gtm pool https") + "; as gtm pool svcb",
	"gtm wideip https":                   tmshRef("gtm wideip https") + "; as gtm wideip a",
	"gtm listener":                       tmshRef("gtm listener"),
	"gtm listener-doh-server":            tmshRef("gtm listener-doh-server") + "; port 443 and ip-protocol tcp as F5's DNS lab guide says",
	"gtm listener-doh-proxy":             tmshRef("gtm listener-doh-proxy") + "; port 443 and ip-protocol tcp as F5's DNS lab guide says",
	"gtm rule":                           tmshRef("gtm rule"),
	"gtm zone":                           "openltm extension (BIG-IP keeps zones in ZoneRunner, outside bigip.conf)",
	"gtm global-settings load-balancing": tmshRef("gtm global-settings load-balancing") + restDefaults("gtm global-settings load-balancing"),
	"gtm global-settings metrics":        tmshRef("gtm global-settings metrics") + restDefaults("gtm global-settings metrics"),
	"gtm global-settings general":        tmshRef("gtm global-settings general") + restDefaults("gtm global-settings general"),
	"net vlan":                           tmshRef("net vlan") + restDefaults("a VLAN (/Common/External)"),
	"net self":                           tmshRef("net self"),
	"sys global-settings":                tmshRef("sys global-settings"),
}

// moreModeledRows are the F5 properties of modeled kinds that openltm keeps
// without acting on, beyond those in the kinds' own tables.
var moreModeledRows = map[string]string{
	"ltm virtual": `
auth raw
traffic-classes raw
flow-eviction-policy str none
transparent-nexthop str none
eviction-protected ed disabled
auto-discovery ed enabled
mobile-app-tunnel ed disabled
fw-staged-policy str none
security-nat-policy raw
syn-cookie-status ro -
ip-intelligence-policy str none
throughput-capacity str infinite
`,
	"ltm virtual-address": `
persist tf false
`,
	"ltm profile fastl4": `
client-timeout int 30
explicit-flow-migration ed disabled
hardware-syn-cookie ed enabled
ip-df-mode enum pmtu pmtu|preserve|set|clear
ip-tos-to-client str pass-through
ip-tos-to-server str pass-through
ip-ttl-mode enum decrement proxy|preserve|decrement|set
ip-ttl-v4 int 255
ip-ttl-v6 int 64
keep-alive-interval str disabled
late-binding ed disabled
link-qos-to-client str pass-through
link-qos-to-server str pass-through
mss-override int 0
other-pva-clientpkts-threshold int 0
other-pva-offload-direction enum bidirectional bidirectional|client-to-server-only|server-to-client-only
other-pva-serverpkts-threshold int 0
other-pva-whento-offload enum after-packets-both-direction after-packets-both-direction|after-packets-per-direction
priority-to-client str pass-through
priority-to-server str pass-through
pva-acceleration enum full dedicated|full|none|partial
pva-dynamic-client-packets int 1
pva-dynamic-server-packets int 0
pva-flow-aging ed enabled
pva-flow-evict ed enabled
pva-offload-dynamic ed enabled
pva-offload-dynamic-priority str disable
pva-offload-initial-priority enum medium high|low|medium
pva-offload-state enum embryonic embryonic|establish
reassemble-fragments ed disabled
receive-window-size int 0
reset-on-client-fin ed disabled
rtt-from-client ed disabled
rtt-from-server ed disabled
server-sack ed disabled
server-timestamp ed disabled
software-syn-cookie ed disabled
syn-cookie-dsr-flow-reset-by enum none bigip|client|none
syn-cookie-enable ed enabled
syn-cookie-mss int 0
syn-cookie-whitelist ed disabled
tcp-close-timeout int 5
tcp-generate-isn ed disabled
tcp-handshake-timeout int 5
tcp-pva-offload-direction enum bidirectional bidirectional|client-to-server-only|server-to-client-only
tcp-pva-whento-offload enum establish embryonic|establish
tcp-strip-sack ed disabled
tcp-time-wait-timeout int 0
tcp-timestamp-mode enum preserve preserve|rewrite|strip
tcp-wscale-mode enum preserve preserve|rewrite|strip
timeout-recovery enum disconnect disconnect|fallback
`,
	"ltm monitor http": `
adaptive-sampling-timespan int 300
`,
	"ltm monitor tcp": `
adaptive-sampling-timespan int 300
`,
	"ltm monitor tcp-half-open": `
adaptive-sampling-timespan int 300
`,
	"ltm monitor gateway-icmp": `
adaptive-sampling-timespan int 300
`,
	"ltm pool": `
gateway-failsafe-device str none
autoscale-group-id str none
`,
	"ltm node": `
ephemeral tf false
`,
	"ltm profile tcp": `
close-wait-timeout int 5
fin-wait-timeout int 5
fin-wait-2-timeout int 300
time-wait-timeout int 2000
time-wait-recycle ed enabled
keep-alive-interval int 1800
zero-window-timeout int 20000
minimum-rto int 1000
syn-rto-base int 3000
syn-max-retrans int 3
max-retrans int 8
init-cwnd int 10
init-rwnd int 10
auto-proxy-buffer-size ed disabled
auto-receive-window-size ed disabled
auto-send-buffer-size ed disabled
max-segment-size int 1460
proxy-mss ed enabled
proxy-options ed disabled
tcp-options str none
ack-on-push ed enabled
abc ed enabled
selective-acks ed enabled
selective-nack ed disabled
dsack ed disabled
ecn ed enabled
limited-transmit ed enabled
early-retransmit ed enabled
tail-loss-probe ed enabled
enhanced-loss-recovery ed enabled
rexmt-thresh int 3
slow-start ed enabled
timestamps ed enabled
rate-pace ed enabled
rate-pace-max-rate int 0
delay-window-control ed disabled
pkt-loss-ignore-rate int 0
pkt-loss-ignore-burst int 0
cmetrics-cache ed enabled
cmetrics-cache-timeout int 0
push-flag enum default default|none|one|auto
deferred-accept ed disabled
verified-accept ed disabled
fast-open ed enabled
fast-open-cookie-expiration int 21600
syn-cookie-enable ed enabled
hardware-syn-cookie ed enabled
syn-cookie-whitelist ed disabled
ip-tos-to-client str 0
link-qos-to-client str 0
ip-df-mode enum pmtu pmtu|preserve|set|clear
ip-ttl-mode enum proxy proxy|preserve|decrement|set
ip-ttl-v4 int 255
ip-ttl-v6 int 64
mptcp enum disabled disabled|enabled|passthrough
mptcp-csum ed disabled
mptcp-csum-verify ed disabled
mptcp-debug ed disabled
mptcp-fallback enum reset reset|retransmit|active-accept|accept
mptcp-fastjoin ed disabled
mptcp-idle-timeout int 300
mptcp-join-max int 5
mptcp-makeafterbreak ed disabled
mptcp-nojoindssack ed disabled
mptcp-rtomax int 5
mptcp-rxmitmin int 1000
mptcp-subflowmax int 6
mptcp-timeout int 3600
md5-signature ed disabled
md5-signature-passphrase str none
`,
	"ltm profile http": `
basic-auth-realm str none
fallback-host str none
fallback-status-codes list
header-erase str none
header-insert str none
xff-alternative-names list
lws-separator str none
lws-width int 80
response-headers-permitted list
via-host-name str none
via-request enum preserve append|preserve|remove
via-response enum preserve append|preserve|remove
encrypt-cookies list
encrypt-cookie-secret str none
`,
	"ltm persistence cookie": `
cookie-encryption-passphrase str none
`,
	"net vlan": `
customer-tag int 0
dag-tunnel enum outer outer|inner
dag-round-robin ed disabled
dag-adjustment enum none none|bit-roll|xor-5mid-xor-5low|nibble-roll
failsafe-action enum failover-restart-tm failover|failover-restart-tm|reboot|restart-all
failsafe-timeout int 90
fwd-mode enum l3 l3|passive|virtual-wire|none
learning enum enable-forward enable-forward|disable-forward|disable-drop
source-checking ed disabled
hardware-syncookie ed disabled
syncache-threshold int 6000
syn-flood-rate-limit int 1000
ipv6-prefix-len int 0
if-index ro -
`,
	"net self": `
address-source enum from-user from-user|from-management
fw-enforced-policy str none
fw-staged-policy str none
service-policy ref net+service-policy
`,
	"sys global-settings": `
aws-access-key str none
aws-secret-key str none
aws-api-max-concurrency int 1
file-blacklist-path-prefix str -
file-blacklist-read-only-path-prefix str -
custom-addr str none
failsafe-action str go-offline-restart-tm
file-local-path-prefix str -
gui-audit ed disabled
gui-expired-cert-alert ed enabled
host-addr-mode enum management custom|management|state-mirror
hosts-allow-include str none
ssh-session-limit ed disabled
ssh-root-session-limit ed enabled
ssh-max-session-limit int 10
ssh-max-session-limit-per-user int 10
password-prompt str Password
username-prompt str Username
`,
	"gtm pool a": `
min-members-up-mode enum off off|number|percent
min-members-up-value int 0
`,
	"gtm server": `
iquery-cipher-list str none
iquery-minimum-tls-version str none
`,
}

// moreItemRows are the further F5 rows of collection items, by kind key and
// collection name.
var moreItemRows = map[string]string{
	"gtm server virtual-servers": `
ltm-name str none
explicit-link-name str none
limit-max-pps int 0
limit-max-pps-status ed disabled
`,
	"gtm pool a members": `
description str none
static-target yn no
limit-max-bps int 0
limit-max-bps-status ed disabled
limit-max-pps int 0
limit-max-pps-status ed disabled
`,
}

// describeModeled gives the modeled kinds their sources and their further
// F5 rows.
func describeModeled(ks []*Kind) {
	for _, k := range ks {
		key := ""
		if len(k.Words) > 0 {
			key = joinWords(k.Words)
		}
		if k.Source == "" {
			k.Source = modeledSources[key]
		}
		addRows(k, key, moreModeledRows[key])
		for _, p := range k.Props {
			if p.Sub != nil {
				addRows(p.Sub, key, moreItemRows[key+" "+p.Name])
			}
		}
	}
}

// addRows appends the rows of a table that k does not have yet.
func addRows(k *Kind, key, rows string) {
	if rows == "" {
		return
	}
	have := map[string]bool{}
	for _, p := range k.Props {
		have[p.Name] = true
	}
	for _, p := range table(key, rows) {
		if !have[p.Name] {
			p.Source = tmshRef(key) + "; property names: F5 tmsh reference as listed in openltm's vocabulary notes"
			k.Props = append(k.Props, p)
		}
	}
}
