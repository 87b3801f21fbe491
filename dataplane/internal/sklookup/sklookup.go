// Package sklookup steers TCP connections for every port of an address
// to one listening socket, so that a virtual server whose destination
// port is any (`destination 192.0.2.1:any`) carries traffic on Linux
// without a listener per port and without NAT.
//
// It is a BPF sk_lookup program (Linux 5.9 and later) attached to the
// process's network namespace, the way Cloudflare serves every port of
// an address: the kernel runs it for a SYN before its own listener
// lookup, and it hands the SYN to the wildcard virtual's listener, whose
// accepted socket then has the address and port the client asked for as
// its local address (getsockname). Nothing is rewritten and nothing is
// left in the kernel when the process exits: the program's link is a
// file descriptor.
//
// Most specific wins [M]: a SYN for an address and port where the same
// plane has a port-specific listener (a virtual on that port) is passed
// to the kernel's own lookup, which finds that listener. A connection
// whose source is the destination address itself (the host talking to
// its own address, which is how the plane forwards to an address of this
// host) is never steered, so that a forwarding virtual does not loop.
package sklookup

import "net/netip"

// Wildcard is an address whose every port goes to one listener.
type Wildcard struct {
	Addr netip.Addr
	// FD is the listening TCP socket, bound to Addr (any port).
	FD int
}

// MaxWildcards bounds how many addresses one Steer serves (the socket
// map's size).
const MaxWildcards = 256

// MaxSpecific bounds the port-specific listeners one Steer passes over.
const MaxSpecific = 8192
