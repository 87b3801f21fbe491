package objects

import (
	"fmt"
	"strconv"
	"strings"
)

// bounded sets an integer property's range: a value outside it is
// refused where it is read.
func bounded(p *Prop, lo, hi int64) *Prop {
	p.Min, p.Max = lo, hi
	return p
}

// validToS reports whether s is a value of ip-tos-to-client or
// ip-tos-to-server (a pool's, a profile's): pass-through, mimic or a ToS
// byte 0-255.
func validToS(s string) bool {
	if s == "pass-through" || s == "mimic" {
		return true
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 255 && strconv.Itoa(n) == s
}

// checkTCPOptions says what is wrong with a tcp profile's tcp-options
// ("" when nothing): none, or "{KIND first|last} ..." with each KIND an
// option kind from 2 to 255 named once, as BIG-IP takes it.
func checkTCPOptions(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return ""
	}
	seen := map[int]bool{}
	for s != "" {
		end := strings.IndexByte(s, '}')
		if s[0] != '{' || end < 0 {
			return fmt.Sprintf("tcp-options %q: expected {KIND first|last} ...", s)
		}
		f := strings.Fields(s[1:end])
		s = strings.TrimSpace(s[end+1:])
		if len(f) != 2 || f[1] != "first" && f[1] != "last" {
			return fmt.Sprintf("tcp-options {%s}: expected {KIND first|last}", strings.Join(f, " "))
		}
		k, err := strconv.Atoi(f[0])
		if err != nil || k < 2 || k > 255 {
			return fmt.Sprintf("tcp-options {%s}: the option kind must be from 2 to 255", strings.Join(f, " "))
		}
		if seen[k] {
			return fmt.Sprintf("tcp-options: option %d is named twice", k)
		}
		seen[k] = true
	}
	return ""
}

// socketRow is a kept F5 row of a profile that openltm puts on its
// sockets: its range (max 0: no upper bound) and help.
type socketRow struct {
	name     string
	min, max int64
	help     string
}

// socketRows are the tcp, fastl4 and udp profile settings the dataplane sets
// on its sockets (dataplane/internal/sockopt), and the udp profile's bounds
// of UDP::hold; the ranges are what the kernel takes, where BIG-IP's own
// are not documented.
var socketRows = map[string][]socketRow{
	"ltm profile tcp": {
		{"keep-alive-interval", 0, 32767, "seconds an idle connection waits before a keep-alive probe, and between probes (SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL); 0 turns them off; left at the default, Linux's (off)"},
		{"deferred-accept", 0, 0, "enabled: the listener hands a connection over only once the client has sent data (TCP_DEFER_ACCEPT, 10 s)"},
		{"fast-open", 0, 0, "enabled: the listener takes TCP Fast Open (TCP_FASTOPEN, a queue of 1024) when net.ipv4.tcp_fastopen allows servers; left at the default, off"},
		{"max-segment-size", 0, 65535, "the MSS advertised and used (TCP_MAXSEG, at least 88); 0 or the default: the route's"},
		{"syn-max-retrans", 0, 127, "SYN retransmissions of a member connect (TCP_SYNCNT, at least 1); left at the default, net.ipv4.tcp_syn_retries"},
		{"fin-wait-2-timeout", 0, 0, "seconds in FIN-WAIT-2 (TCP_LINGER2, Linux caps it at 120); 0 or the default: net.ipv4.tcp_fin_timeout"},
		{"ip-ttl-mode", 0, 0, "set: ip-ttl-v4 and ip-ttl-v6 on every packet; proxy, preserve and decrement keep the system's TTL"},
		{"ip-ttl-v4", 0, 255, "the IPv4 TTL with ip-ttl-mode set (0: the system's)"},
		{"ip-ttl-v6", 0, 255, "the IPv6 hop limit with ip-ttl-mode set (0: the system's)"},
		{"ip-df-mode", 0, 0, "set: DF on every packet (IP_PMTUDISC_DO); clear: never (IP_PMTUDISC_DONT); pmtu and preserve: Linux's path MTU discovery"},
		{"ip-tos-to-client", 0, 0, "pass-through, mimic (acted on as pass-through) or 0-255: the IP ToS of the client's packets (the default pool's, when set, wins)"},
		{"close-wait-timeout", 0, 0, "seconds a flow is kept once one side has sent its FIN, then both sides are reset; 0 or the default: until both have closed"},
		{"fin-wait-timeout", 0, 0, "seconds a FIN passed on may wait unacknowledged (FIN-WAIT-1) before both sides are reset; 0 or the default: the kernel's retransmissions"},
		{"time-wait-timeout", 0, 0, "milliseconds; 0 closes the sockets with a reset (SO_LINGER 0), leaving no TIME-WAIT; other values keep Linux's TIME-WAIT (60 s)"},
		{"zero-window-timeout", 0, 0, "milliseconds a peer may advertise a zero window while data waits for it before both sides are reset; 0 or the default: no bound"},
		{"max-retrans", 0, 0, "retransmissions before a connection is given up, counted from minimum-rto doubling (TCP_USER_TIMEOUT); left at the default with minimum-rto, Linux's"},
		{"minimum-rto", 0, 0, "milliseconds of the first retransmission timeout in the time max-retrans gives (TCP_USER_TIMEOUT); Linux has no per-socket minimum RTO"},
		{"md5-signature", 0, 0, "enabled: RFC 2385 signatures (TCP_MD5SIG) with md5-signature-passphrase on the side's sockets: the listener for clientside, member connections for serverside"},
		{"md5-signature-passphrase", 0, 0, "the MD5 signature key, 1 to 80 characters (kept encrypted with the master key)"},
		{"proxy-buffer-high", 1, 1 << 30, "bytes the side's sockets may queue unsent before reading from the other side stops (TCP_NOTSENT_LOWAT); reading resumes below half of it, or below proxy-buffer-low when set; left at the default, the send buffer's bound"},
		{"proxy-buffer-low", 1, 1 << 30, "bytes below which the side's unsent queue lets reading from the other side resume (L4 flows without TLS); not above proxy-buffer-high; left at the default, half of proxy-buffer-high"},
		{"rate-pace", 0, 0, "enabled with rate-pace-max-rate: the side's sockets send at most that rate (SO_MAX_PACING_RATE)"},
		{"rate-pace-max-rate", 0, 1<<32 - 2, "bytes per second the side's sockets may send with rate-pace enabled (SO_MAX_PACING_RATE, kernel pacing); 0: no bound"},
		{"tcp-options", 0, 0, "none or \"{KIND first|last} ...\": the options (kinds 2-255) of the client's SYN that TCP::option get may read, the first or the last of each kind; the listener then keeps SYNs (TCP_SAVE_SYN)"},
		{"proxy-mss", 0, 0, "enabled (set in the profile or a parent): member connections advertise the client's SYN MSS (TCP_MAXSEG before the connect, no larger than max-segment-size); left at the default, the route's MSS"},
		{"mptcp", 0, 0, "enabled: Multipath TCP (IPPROTO_MPTCP) on the side's sockets, the virtual's listener for clientside, member connections for serverside; plain TCP peers are served as before; passthrough is kept and acted on as disabled"},
	},
	"ltm profile fastl4": {
		{"keep-alive-interval", 0, 32767, "disabled or seconds between keep-alive probes on both sides (SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL)"},
		{"mss-override", 0, 65535, "the MSS advertised and used on both sides (TCP_MAXSEG, at least 88); 0: the route's"},
		{"ip-tos-to-client", 0, 0, "pass-through, mimic (acted on as pass-through) or 0-255: the IP ToS of the client's packets"},
		{"ip-tos-to-server", 0, 0, "pass-through, mimic (acted on as pass-through) or 0-255: the IP ToS of the member connections' packets"},
		{"ip-ttl-mode", 0, 0, "set: ip-ttl-v4 and ip-ttl-v6 on every packet; proxy, preserve and decrement keep the system's TTL"},
		{"ip-ttl-v4", 0, 255, "the IPv4 TTL with ip-ttl-mode set (0: the system's)"},
		{"ip-ttl-v6", 0, 255, "the IPv6 hop limit with ip-ttl-mode set (0: the system's)"},
		{"ip-df-mode", 0, 0, "set: DF on every packet (IP_PMTUDISC_DO); clear: never (IP_PMTUDISC_DONT); pmtu and preserve: Linux's path MTU discovery"},
		{"receive-window-size", 0, 1 << 30, "bytes of SO_RCVBUF on both sides; 0: Linux autotunes"},
		{"tcp-handshake-timeout", 0, 0, "seconds a member connect may take before the next member is tried; 0 or the default: the plane's connect timeout"},
		{"loose-close", 0, 0, "enabled: the first FIN from either side closes both sides, without waiting for the other's FIN"},
		{"reset-on-client-fin", 0, 0, "enabled: the client's FIN resets both sides instead of half-closing the flow"},
		{"tcp-close-timeout", 0, 0, "seconds a flow is kept once one side has sent its FIN, then both sides are reset; 0 or the default: until both have closed"},
		{"tcp-time-wait-timeout", 0, 0, "milliseconds; set to 0, the sockets close with a reset (SO_LINGER 0), leaving no TIME-WAIT; otherwise Linux's TIME-WAIT (60 s)"},
		{"client-timeout", 0, 0, "seconds a client may wait for its server connection (connect attempts, connection queue) before it is reset; 0 or the default: no bound beyond the connect timeout"},
	},
	"ltm profile udp": {
		{"ip-tos-to-client", 0, 0, "pass-through, mimic (acted on as pass-through) or 0-255: the IP ToS of the datagrams to clients"},
		{"ip-ttl-mode", 0, 0, "set: ip-ttl-v4 and ip-ttl-v6 on every datagram; proxy, preserve and decrement keep the system's TTL"},
		{"ip-ttl-v4", 0, 255, "the IPv4 TTL with ip-ttl-mode set (0: the system's)"},
		{"ip-ttl-v6", 0, 255, "the IPv6 hop limit with ip-ttl-mode set (0: the system's)"},
		{"ip-df-mode", 0, 0, "set: DF on every datagram (IP_PMTUDISC_DO); clear: never (IP_PMTUDISC_DONT); pmtu and preserve: Linux's path MTU discovery"},
		{"send-buffer-size", 0, 1 << 30, "bytes of SO_SNDBUF on the virtual's and the member sockets; left at the default, openltm's (4 MiB on the virtual's, Linux's on members)"},
		{"no-checksum", 0, 0, "enabled: IPv4 datagrams leave without a UDP checksum (SO_NO_CHECK)"},
		{"allow-no-payload", 0, 0, "enabled: datagrams without a payload are forwarded; disabled drops them, both ways"},
		{"buffer-max-packets", 0, 0, "client datagrams UDP::hold keeps until UDP::release (0 keeps one); the next is dropped"},
		{"buffer-max-bytes", 0, 0, "bytes of client datagrams UDP::hold keeps (0: no byte bound); the datagram past it is dropped"},
	},
}

// actSocketRows makes socketRows acted on (no warning when set), with
// their ranges and help. fastl4's keep-alive-interval becomes an integer
// that also takes its default, disabled.
func actSocketRows(ks []*Kind) {
	for _, k := range ks {
		if len(k.Words) == 0 {
			continue
		}
		for _, r := range socketRows[joinWords(k.Words)] {
			p := k.row(r.name)
			if p == nil {
				panic("objects: no row " + r.name + " in " + joinWords(k.Words))
			}
			p.Passive, p.Help = false, r.help
			if p.Type == TInt || r.name == "keep-alive-interval" {
				p.Type, p.Min, p.Max = TInt, r.min, r.max
			}
		}
	}
}
