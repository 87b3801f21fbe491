package dataplane

import (
	"errors"
	"net/netip"

	"github.com/openltm/openltm/rules"
)

// Event names an iRule event the proxy raises.
type Event string

// The events the L4 proxy raises, in the order a flow meets them.
const (
	EventClientAccepted  Event = "CLIENT_ACCEPTED"
	EventClientData      Event = "CLIENT_DATA"
	EventLBSelected      Event = "LB_SELECTED"
	EventLBFailed        Event = "LB_FAILED"
	EventServerConnected Event = "SERVER_CONNECTED"
	EventServerData      Event = "SERVER_DATA"
	EventServerClosed    Event = "SERVER_CLOSED"
	EventClientClosed    Event = "CLIENT_CLOSED"
)

// proxyEvents lists the events the proxy raises; a virtual's event mask is
// indexed by position here so that asking "does a rule handle this?" on the
// data path is a bit test, not an interface call.
var proxyEvents = [...]struct {
	ev  Event
	rev rules.Event
}{
	{EventClientAccepted, rules.ClientAccepted},
	{EventClientData, rules.ClientData},
	{EventLBSelected, rules.LBSelected},
	{EventLBFailed, rules.LBFailed},
	{EventServerConnected, rules.ServerConnected},
	{EventServerData, rules.ServerData},
	{EventServerClosed, rules.ServerClosed},
	{EventClientClosed, rules.ClientClosed},
}

// lookup is the one translation of a proxy event: its bit in an event
// mask and the iRules event it is; ok is false for an event the proxy
// does not raise.
func (ev Event) lookup() (bit uint16, rev rules.Event, ok bool) {
	for i := range proxyEvents {
		if proxyEvents[i].ev == ev {
			return 1 << i, proxyEvents[i].rev, true
		}
	}
	return 0, rev, false
}

// eventBit is ev's bit in an event mask (0 for an event the proxy does not
// raise).
func eventBit(ev Event) uint16 {
	bit, _, _ := ev.lookup()
	return bit
}

// eventMask asks r once, at commit time, which proxy events it handles.
func eventMask(r Rules) uint16 {
	if r == nil {
		return 0
	}
	var m uint16
	for i := range proxyEvents {
		if r.Handles(proxyEvents[i].ev) {
			m |= 1 << i
		}
	}
	return m
}

// Rules is the hook the rules engine fills: the compiled rule list of one
// virtual. The dataplane asks which events the rules handle once per commit
// (so a virtual without a CLIENT_DATA handler never buffers data) and runs
// them with a view of the flow. NewRules adapts the iRules engine; tests may
// plug in simpler hooks.
type Rules interface {
	// Handles reports whether any rule of the list has a handler for ev.
	Handles(ev Event) bool
	// Run runs every handler for ev in priority order. An error is a rule
	// failure (TCL error): the proxy resets the flow, and logs the error
	// unless it is a *rules.RuntimeError, which the engine logged itself.
	Run(ev Event, c RuleConn) error
}

// RuleConn is the narrow view of one flow that simple rule hooks use. The
// flow passed to Run also implements rules.Conn, which the iRules adapter
// uses. Calls are made from the goroutine running the event; they never
// block on I/O.
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

// iRules runs a compiled rules.Program on proxied flows: one rules.Session
// per flow, created at the flow's first event and released when it ends.
type iRules struct {
	prog *rules.Program
}

// NewRules adapts a compiled iRules program (the rules of one virtual, in
// list order) to the proxy's hook. The daemon builds one program per
// distinct rule list and shares it between virtuals; nil gives nil, so
// that a virtual without rules pays nothing.
func NewRules(p *rules.Program) Rules {
	if p == nil {
		return nil
	}
	return &iRules{prog: p}
}

// Program returns the iRules program behind a hook made by NewRules, or nil.
func Program(r Rules) *rules.Program {
	if ir, ok := r.(*iRules); ok {
		return ir.prog
	}
	return nil
}

// Handles implements Rules.
func (r *iRules) Handles(ev Event) bool {
	_, rev, ok := ev.lookup()
	return ok && r.prog.Handles(rev)
}

var errNotProxied = errors.New("iRules run only on proxied flows")

// Run implements Rules.
func (r *iRules) Run(ev Event, c RuleConn) error {
	pr, ok := c.(*proxied)
	if !ok || pr.rs == nil {
		return errNotProxied
	}
	_, rev, _ := ev.lookup()
	if pr.rs.sess == nil {
		pr.rs.sess = r.prog.NewSession(pr)
	}
	return pr.rs.sess.Run(rev)
}
