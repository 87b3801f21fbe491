// Package sockopt carries a tcp or fastl4 profile's socket settings
// (nagle, delayed-acks, buffers, congestion-control, keep-alives, MSS,
// SYN retries, FIN-WAIT-2, TTL, DF, deferred accept, fast open, linger,
// user timeout, MD5 signatures), its close handling (Close) and a
// pool's IP ToS from the configuration to the
// proxy's sockets. A side whose profile keeps every default is nil, and a
// nil side costs one comparison per connection: the sockets keep the
// kernel's behaviour (TCP_NODELAY on, autotuned buffers, the system's
// congestion control), which is what openltm did before the settings were
// acted on.
package sockopt

import (
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/synhdr"
)

// Side is what one side's sockets (the client's, or every member
// connection's) are set to when the flow starts. The zero value changes
// nothing but Nagle (left off, as every proxy socket has it).
type Side struct {
	// Nagle is nagle enabled: TCP_NODELAY is cleared so that small writes
	// are held while data is unacknowledged. disabled and auto keep
	// TCP_NODELAY (auto leaves coalescing to Linux's autocorking).
	Nagle bool
	// QuickAck is delayed-acks disabled: TCP_QUICKACK is set when the
	// socket starts. Linux leaves quick-ack mode on its own after a while
	// (it is not a sticky option), so delayed ACKs can come back on a long
	// connection; openltm does not re-arm it on every read.
	QuickAck bool
	// SendBuffer and RecvBuffer are send-buffer-size and
	// receive-window-size in bytes (SO_SNDBUF, SO_RCVBUF); 0 leaves the
	// kernel's autotuning. Linux doubles what is asked (its bookkeeping)
	// and clamps it to net.core.wmem_max / rmem_max.
	SendBuffer, RecvBuffer int
	// Congestion is the Linux name of congestion-control's algorithm
	// ("" : the system's default). An algorithm the kernel lacks is left
	// out by the daemon (with a warning at commit), so setting it never
	// fails for that reason.
	Congestion string
	// TOS, when SetTOS, is the IP ToS byte of the side's packets (a pool's
	// ip-tos-to-client or ip-tos-to-server as a number).
	TOS    uint8
	SetTOS bool
	// Priority, when SetPriority, is the queueing priority of the side's
	// packets (SO_PRIORITY: a bandwidth controller's link-qos).
	Priority    int
	SetPriority bool

	// KeepAlive is keep-alive-interval in seconds: SO_KEEPALIVE with
	// TCP_KEEPIDLE and TCP_KEEPINTVL both at it, so a dead peer is found
	// after the first idle interval and a few more; KeepAliveOff (an
	// interval of 0, or fastl4's disabled) clears SO_KEEPALIVE.
	KeepAlive    int
	KeepAliveOff bool
	// MaxSeg is max-segment-size (fastl4: mss-override): TCP_MAXSEG, set
	// before the member connect so the SYN advertises it, and on the
	// listener so the SYN-ACK does; 0 leaves the route's MSS.
	MaxSeg int
	// SynRetries is syn-max-retrans: TCP_SYNCNT of member connects, set
	// before the SYN leaves; 0 keeps net.ipv4.tcp_syn_retries.
	SynRetries int
	// Linger2 is fin-wait-2-timeout in seconds (TCP_LINGER2; Linux caps
	// it at 120); 0 keeps net.ipv4.tcp_fin_timeout.
	Linger2 int
	// TTL and TTL6, when not 0, are ip-ttl-v4 and ip-ttl-v6 of ip-ttl-mode
	// set (IP_TTL, IPV6_UNICAST_HOPS).
	TTL, TTL6 uint8
	// DF is ip-df-mode: DFSet or DFClear; 0 (pmtu, preserve) leaves
	// Linux's path MTU discovery.
	DF uint8
	// DeferAccept (seconds, TCP_DEFER_ACCEPT) and FastOpen (the queue of
	// TCP_FASTOPEN) are deferred-accept and fast-open: listener settings,
	// set by ApplyListener on the virtual's listening sockets.
	DeferAccept, FastOpen int
	// ConnectTimeout, when not 0, bounds a member connect instead of the
	// plane's connect timeout (fastl4's tcp-handshake-timeout).
	ConnectTimeout time.Duration
	// NoChecksum is the udp profile's no-checksum: SO_NO_CHECK, UDP over
	// IPv4 sent without a checksum (IPv6 requires one).
	NoChecksum bool

	// NoLinger is time-wait-timeout 0 (fastl4: tcp-time-wait-timeout 0):
	// SO_LINGER with a time of 0, so that the socket's close sends a RST
	// and leaves no TIME-WAIT behind (HAProxy's nolinger). Linux's
	// TIME-WAIT lasts 60 s and cannot be shortened per socket, so other
	// values keep it.
	NoLinger bool
	// UserTimeout is how long sent data may stay unacknowledged before
	// the kernel gives the connection up (TCP_USER_TIMEOUT): the time
	// max-retrans retransmissions take from minimum-rto, Linux having no
	// per-socket retransmission count or minimum RTO.
	UserTimeout time.Duration
	// MD5Key is md5-signature-passphrase with md5-signature enabled:
	// every segment carries an RFC 2385 signature (TCP_MD5SIG), on member
	// connects for the member's address (ApplyPeer) and on the listener
	// for any client.
	MD5Key string
	// NotSentLowat is proxy-buffer-high: the most bytes the socket keeps
	// queued and not yet sent (TCP_NOTSENT_LOWAT). Past it, writes to the
	// socket fail with EAGAIN, so the proxy stops reading from the other
	// side; Linux wakes the writer again when the queue is below half of
	// it. 0 leaves the queue to the send buffer.
	NotSentLowat int
	// NotSentLow is proxy-buffer-low: reading the other side resumes once
	// fewer bytes than this wait unsent. Linux wakes a writer at half of
	// TCP_NOTSENT_LOWAT, so while a flow waits on the socket the event
	// loops move TCP_NOTSENT_LOWAT to twice this, and back to
	// NotSentLowat once woken (LowWait, LowResume). 0: Linux's wake-up.
	NotSentLow int
	// PacingRate is rate-pace-max-rate in bytes per second with rate-pace
	// enabled: SO_MAX_PACING_RATE, the most the kernel's pacing (fq, or
	// TCP's own) lets the socket send. 0: unbounded.
	PacingRate int
	// MPTCP is mptcp enabled: the side's sockets are Multipath TCP
	// (IPPROTO_MPTCP), which talk plain TCP to a peer without it. On the
	// client side it is the virtual's listener's, on the server side the
	// member connections'.
	MPTCP bool
	// TCPOptions is tcp-options (client side): the option kinds of the
	// client's SYN the rules may read with TCP::option get. Naming any
	// makes the listener keep SYNs (SavesSYN).
	TCPOptions synhdr.Picks
	// ProxyMSS is proxy-mss enabled (server side): a member connection's
	// SYN advertises the client's MSS, read from the client's SYN.
	ProxyMSS bool
}

// Close is how a flow's end is handled (the fastl4 profile's loose-close,
// reset-on-client-fin, tcp-close-timeout and client-timeout, the tcp
// profile's close-wait-timeout, fin-wait-timeout and zero-window-timeout).
// A virtual whose profiles keep these at their defaults has none (nil):
// its flows end as the sockets do, which is one comparison per FIN and per
// flow on the loops' tick.
type Close struct {
	// Loose is loose-close: the first FIN from either side closes both
	// sides (the other with a FIN too), without waiting for its FIN.
	Loose bool
	// ResetOnClientFIN is reset-on-client-fin: the client's FIN resets
	// both sides instead of half-closing the flow.
	ResetOnClientFIN bool
	// AfterFIN bounds how long a flow is kept once one side has sent its
	// FIN (fastl4 tcp-close-timeout, tcp close-wait-timeout): then both
	// sides are reset. 0: no bound.
	AfterFIN time.Duration
	// FinWait bounds how long a FIN passed on may wait unacknowledged
	// (the socket in FIN-WAIT-1: tcp fin-wait-timeout) before both sides
	// are reset. 0: no bound.
	FinWait time.Duration
	// ZeroWindow bounds how long bytes may wait for a receiver that takes
	// none of them (it advertises a zero window: zero-window-timeout)
	// before both sides are reset. 0: no bound.
	ZeroWindow time.Duration
	// ClientTimeout bounds how long a client waits before its server
	// connection exists (connect attempts and the connection queue:
	// fastl4 client-timeout); then the client is reset. 0: no bound.
	ClientTimeout time.Duration
}

// ip-df-mode's values acted on (Side.DF).
const (
	DFSet   = 1 // IP_PMTUDISC_DO: the DF bit on every packet, never fragmented here
	DFClear = 2 // IP_PMTUDISC_DONT: no DF bit, fragmented on the way if need be
)

// Listener is the part of a side that belongs on the listening socket:
// zero leaves the kernel's behaviour (and takes back what an earlier
// configuration set).
type Listener struct {
	DeferAccept, FastOpen, MaxSeg int
	MD5Key                        string
	// SaveSYN: the listener keeps each client's SYN for the accepted
	// connection to read (TCP_SAVE_SYN), for tcp-options, proxy-mss and
	// the rules that read the SYN.
	SaveSYN bool
	// Device binds the listener to one interface (SO_BINDTODEVICE): a
	// virtual enabled on one VLAN of one interface; "" unbinds.
	Device string
	// Arrival keeps, on each accepted connection, the interface its SYN
	// came in on (IP_PKTINFO, IPV6_RECVPKTINFO), for a virtual's VLAN
	// list to be checked against (rawsock.ArrivalIf).
	Arrival bool
}

// ListenerOf is s's listener part; nil gives the zero Listener.
func (s *Side) ListenerOf() Listener {
	if s == nil {
		return Listener{}
	}
	return Listener{DeferAccept: s.DeferAccept, FastOpen: s.FastOpen, MaxSeg: s.MaxSeg, MD5Key: s.MD5Key}
}

// SavesSYN reports whether a virtual with client side c and server side
// sv needs its clients' SYNs, whose headers only the listener can keep:
// c names tcp-options or sv proxies the MSS. Nil sides do not.
func SavesSYN(c, sv *Side) bool {
	return c != nil && !c.TCPOptions.Empty() || sv != nil && sv.ProxyMSS
}

// WantsMPTCP reports whether s asks for Multipath TCP; nil does not.
func (s *Side) WantsMPTCP() bool { return s != nil && s.MPTCP }

// Timeout is the member connect timeout of s: def unless s sets one.
func (s *Side) Timeout(def time.Duration) time.Duration {
	if s != nil && s.ConnectTimeout > 0 {
		return s.ConnectTimeout
	}
	return def
}

// TOS is a pool's ip-tos-to-client or ip-tos-to-server: Set with a value
// 0-255 marks the packets; the zero value is pass-through (the socket is
// not touched).
type TOS struct {
	Value uint8
	Set   bool
}

// Congestion maps BIG-IP's congestion-control names to the Linux module
// of the same algorithm. Linux's reno is NewReno, so both new-reno and
// reno choose it. Names missing here (woodside, chd, none) have no Linux
// module.
var Congestion = map[string]string{
	"reno": "reno", "new-reno": "reno", "newreno": "reno", "cubic": "cubic",
	"high-speed": "highspeed", "highspeed": "highspeed", "scalable": "scalable",
	"vegas": "vegas", "illinois": "illinois", "westwood": "westwood",
	"cdg": "cdg", "bbr": "bbr", "hybla": "hybla", "htcp": "htcp",
}

// Names are congestion-control's values, as tmsh lists them.
var Names = []string{"bbr", "cdg", "chd", "cubic", "high-speed", "illinois", "new-reno", "none", "reno", "scalable", "vegas", "westwood", "woodside"}

// ParseAvailable reads the kernel's list of congestion controls, as
// /proc/sys/net/ipv4/tcp_available_congestion_control writes it.
func ParseAvailable(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Fields(s) {
		out[f] = true
	}
	return out
}

// UserTimeout is the TCP_USER_TIMEOUT that stands for max-retrans
// retransmissions starting at minimum-rto: the original transmission's
// timeout and each retransmission's, doubling every time up to Linux's
// largest RTO (120 s), added up.
func UserTimeout(maxRetrans int, minRTO time.Duration) time.Duration {
	const maxRTO = 120 * time.Second
	if maxRetrans < 0 || minRTO <= 0 {
		return 0
	}
	var total time.Duration
	rto := minRTO
	for i := 0; i <= maxRetrans && i < 64; i++ {
		total += rto
		if rto = 2 * rto; rto > maxRTO {
			rto = maxRTO
		}
	}
	return total
}
