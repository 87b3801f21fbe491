package dataplane

import "net/netip"

// Event names an iRule event the proxy raises.
type Event string

// The events the L4 proxy raises, in the order a flow meets them.
const (
	EventClientAccepted  Event = "CLIENT_ACCEPTED"
	EventLBSelected      Event = "LB_SELECTED"
	EventServerConnected Event = "SERVER_CONNECTED"
	EventClientClosed    Event = "CLIENT_CLOSED"
)

// Rules is the hook the rules engine fills: the compiled rule list of one
// virtual. The dataplane knows nothing of Tcl; it asks which events the rules
// handle (so a virtual without a CLIENT_ACCEPTED handler pays nothing for it)
// and runs them with a narrow view of the flow.
type Rules interface {
	// Handles reports whether any rule of the list has a handler for ev.
	Handles(ev Event) bool
	// Run runs every handler for ev in priority order. An error is a rule
	// failure (TCL error): the proxy logs it and resets the flow.
	Run(ev Event, c RuleConn) error
}

// RuleConn is what iRule commands may see and change of one flow. Calls are
// made from the goroutine running the event; they never block on I/O.
type RuleConn interface {
	// VirtualName is the virtual server's full path ([virtual name]).
	VirtualName() string
	// ClientAddr is the client's address and port (IP::client_addr,
	// TCP::client_port).
	ClientAddr() netip.AddrPort
	// LocalAddr is the address and port the client connected to
	// (IP::local_addr, TCP::local_port).
	LocalAddr() netip.AddrPort
	// SetPool selects the pool for this flow (`pool name`); it fails when
	// the pool does not exist.
	SetPool(name string) error
	// SetMember selects one member of a pool (`pool p member a p`,
	// `node a p`); pool "" means the current pool.
	SetMember(pool string, addr netip.AddrPort) error
	// Reject resets the client connection after the event (`reject`).
	Reject()
	// Discard closes the client connection quietly after the event (`drop`,
	// `discard`).
	Discard()
	// Server is the chosen member once a member is selected (LB::server).
	Server() (pool string, addr netip.AddrPort, ok bool)
}
