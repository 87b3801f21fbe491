// Package sockopt carries a tcp profile's socket settings (nagle,
// delayed-acks, send-buffer-size, receive-window-size,
// congestion-control) and a pool's IP ToS from the configuration to the
// proxy's sockets. A side whose profile keeps every default is nil, and a
// nil side costs one comparison per connection: the sockets keep the
// kernel's behaviour (TCP_NODELAY on, autotuned buffers, the system's
// congestion control), which is what openltm did before the settings were
// acted on.
package sockopt

import "strings"

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
