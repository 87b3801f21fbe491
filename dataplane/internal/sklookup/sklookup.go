// Package sklookup steers TCP connections and UDP datagrams for every
// port of an address to one socket of each protocol, so that a virtual
// server whose destination port is any (`destination 192.0.2.1:any`)
// carries traffic on Linux without a listener per port and without NAT.
//
// It is a BPF sk_lookup program (Linux 5.9 and later) attached to the
// process's network namespace, the way Cloudflare serves every port of
// an address: the kernel runs it for a SYN before its own listener
// lookup, and it hands the SYN to the wildcard virtual's listener, whose
// accepted socket then has the address and port the client asked for as
// its local address (getsockname); a steered datagram keeps its
// destination too, which the UDP socket reads per datagram with
// IP_RECVORIGDSTADDR. Nothing is rewritten and nothing is
// left in the kernel when the process exits: the program's link is a
// file descriptor.
//
// Most specific wins [M]: a SYN for an address and port where the same
// plane has a port-specific listener (a virtual on that port) is passed
// to the kernel's own lookup, which finds that listener; so is one a
// flow opened for a while (Pass: an FTP gateway's data listener on the
// virtual's address). A connection
// whose source is the destination address itself (the host talking to
// its own address, which is how the plane forwards to an address of this
// host) is never steered, so that a forwarding virtual does not loop.
//
// A network (Wildcard.Net) is served on every port or on one port
// (Wildcard.Port). The order is BIG-IP's, most specific first: a
// port-specific listener of the address (passed), the address on every
// port, then the longest network holding the address, on the port or on
// every port, the one on the port when both are as long [M: the longest
// destination mask first, then the port]. The program makes at most two
// hash lookups and two trie lookups per SYN or datagram, and runs only
// while a Steer is open.
package sklookup

import "net/netip"

// Wildcard is an address whose every port of one protocol goes to one
// socket.
type Wildcard struct {
	Addr netip.Addr
	// FD is the listening TCP socket, or the bound UDP socket (the first
	// of a SO_REUSEPORT group: the kernel picks among the group as for
	// its own lookup), bound to Addr (any port).
	FD int
	// UDP: the socket is a UDP one and takes the address's datagrams;
	// otherwise a TCP listener takes its SYNs.
	UDP bool
	// Net is a network virtual's network (invalid for one address):
	// every address in it that no host entry (an address on every port,
	// a port-specific listener) takes goes to FD, the longest network
	// first, as BIG-IP picks the most specific virtual.
	Net netip.Prefix
	// Port is a network virtual's port (0: every port; only with Net):
	// the network's addresses on that port go to FD, bound at Net's
	// address and that port. A longer network wins over it, on any
	// port; as long a network on every port loses to it.
	Port uint16
}

func (w Wildcard) proto() string {
	if w.UDP {
		return "udp"
	}
	return "tcp"
}

// Specific is a port-specific socket on a wildcard's address, passed
// over: the kernel's own lookup finds it. UDP: a UDP socket (it passes
// datagrams only; a TCP one, SYNs only).
//
// It is also how the plane's own traffic stays its own: a destination the
// plane connects to (a pool member, a monitor's target) inside a network
// or a wildcard it steers is passed over too, so that the connection
// reaches that member, not the virtual again. Port 0 there is the
// address on every port (a member at port any), passed over unless an
// address on every port (a Wildcard without Net) is the same address:
// that one is steered.
type Specific struct {
	Addr netip.AddrPort
	UDP  bool
}

// MaxWildcards bounds how many addresses and networks one Steer serves,
// counted once per protocol (the socket map's size).
const MaxWildcards = 256

// MaxSpecific bounds the port-specific listeners and the plane's own
// destinations one Steer passes over [M].
const MaxSpecific = 16384

// MaxPassed bounds the short-lived sockets (Steer.Pass: FTP data
// listeners, RTSP data channels) passed over at once [M].
const MaxPassed = 4096
