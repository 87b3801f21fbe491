// Package rules is openltm's iRules engine: rules are compiled once when a
// configuration is committed, then run per connection event by the
// dataplane through the narrow Conn interface, so that the engine never
// touches sockets itself and can be tested with a fake connection.
package rules

import (
	"net/netip"
	"strings"
)

// Side is the half of a proxied connection a command acts on: the event's
// own side unless the rule says clientside or serverside.
type Side uint8

// The two sides of a flow.
const (
	ClientSide Side = iota
	ServerSide
)

func (s Side) String() string {
	if s == ServerSide {
		return "serverside"
	}
	return "clientside"
}

// Endpoint names one of the four addresses of a full proxy flow.
type Endpoint uint8

// The endpoints, as IP:: and TCP:: commands see them.
const (
	// EndClient is the client's address and port.
	EndClient Endpoint = iota
	// EndVirtual is the virtual server's address and port the client reached.
	EndVirtual
	// EndServerLocal is the proxy's own address and port on the server side
	// (self address or SNAT), zero until the server connection exists.
	EndServerLocal
	// EndServer is the selected member's address and port, zero until a
	// load-balancing decision.
	EndServer
)

// DecisionKind says what a rule decided about the flow.
type DecisionKind uint8

// Decisions rules can take; the dataplane applies them when the event ends.
const (
	DecidePool     DecisionKind = iota // pool Pool
	DecideMember                       // pool Pool member Addr
	DecideNode                         // node Addr
	DecideSnat                         // snat Addr
	DecideSnatAuto                     // snat automap
	DecideSnatNone                     // snat none
	DecideSnatPool                     // snatpool Pool [member Addr]
	DecideDrop                         // drop: silently discard the flow
	DecideReject                       // reject: reset the client
	DecideDiscard                      // discard: drop the current data
	DecideForward                      // forward: route without load balancing
	DecideReselect                     // LB::reselect [pool/member/node]
	DecideDetach                       // LB::detach: release the server connection
	DecideLBMode                       // LB::mode Mode
	DecideVirtual                      // virtual Pool: hand the flow to another virtual server
)

var decisionNames = [...]string{"pool", "member", "node", "snat", "snat automap", "snat none", "snatpool", "drop", "reject", "discard", "forward", "LB::reselect", "LB::detach", "LB::mode", "virtual"}

func (k DecisionKind) String() string {
	if int(k) < len(decisionNames) {
		return decisionNames[k]
	}
	return "unknown"
}

// Decision is one routing or flow decision. It is passed by value so that
// taking a decision allocates nothing.
type Decision struct {
	Kind DecisionKind
	// Pool names the pool or SNAT pool, as written in the rule.
	Pool string
	// Addr is the member, node or SNAT address; Port 0 means "any port".
	Addr netip.AddrPort
	// Mode is the load-balancing mode for LB::mode.
	Mode string
}

// NotifyKind is the message boundary a rule signals with TCP::notify.
type NotifyKind uint8

// Message boundaries for message-based load balancing.
const (
	NotifyRequest NotifyKind = iota
	NotifyResponse
	NotifyEOM
)

// Conn is what a rule sees of one connection. The dataplane implements it;
// every method is called from the goroutine running the event and must not
// block on the network (collect and release only record intent; the
// dataplane acts on it when the event returns).
type Conn interface {
	// Addr returns an endpoint of the flow, or the zero AddrPort when it
	// does not exist yet.
	Addr(e Endpoint) netip.AddrPort
	// Protocol is the IP protocol number (6 for TCP, 17 for UDP).
	Protocol() int
	// Decide records a load-balancing or flow decision. An error (unknown
	// pool, decision not valid in this event) becomes a Tcl error.
	Decide(d Decision) error

	// Collect asks for data on a side to be held and delivered to
	// CLIENT_DATA/SERVER_DATA: length 0 means each arrival, otherwise once
	// at least length bytes are buffered; skip bytes are passed through
	// first. On the client side it also delays the server connection until
	// the rule decides (delayed binding).
	Collect(s Side, length, skip int) error
	// Release lets held data continue; length < 0 releases all of it.
	Release(s Side, length int) error
	// Payload is the data collected on a side, not to be modified.
	Payload(s Side) []byte
	// ReplacePayload replaces length bytes at offset in the collected data.
	ReplacePayload(s Side, offset, length int, data []byte) error
	// Respond sends data to the peer of a side (the client for the client
	// side), even when no server was ever chosen.
	Respond(s Side, data []byte) error
	// Close closes a side after pending responses are flushed.
	Close(s Side) error
	// Notify marks a message boundary for message-based load balancing.
	Notify(s Side, n NotifyKind) error

	// LBSelect runs load balancing now and returns its choice without
	// connecting.
	LBSelect() (pool string, member netip.AddrPort, err error)
	// LBServer returns the current choice, ok false when none was made.
	LBServer() (pool string, member netip.AddrPort, ok bool)
	// MemberStatus returns up, down, session_enabled or session_disabled
	// for a pool member; an empty pool means the current selection.
	MemberStatus(pool string, member netip.AddrPort) (string, error)
	// ActiveMembers lists the members of a pool that can take traffic.
	ActiveMembers(pool string) ([]netip.AddrPort, error)
}

// LBInfo is implemented by a Conn that can describe its virtual server and
// pools, found by type assertion as PersistConn is; the commands that read
// it (virtual, members, LB::mode without a mode, LB::server priority,
// ratio and weight) are Tcl errors on a Conn without it.
type LBInfo interface {
	// VirtualName is the full name of the virtual server the client reached.
	VirtualName() string
	// LBMode is a pool's load-balancing mode as configured
	// (round-robin, ...); an empty pool means the current one.
	LBMode(pool string) (string, error)
	// Members lists every member of a pool, whatever its state.
	Members(pool string) ([]netip.AddrPort, error)
	// MemberInfo describes one member of a pool.
	MemberInfo(pool string, member netip.AddrPort) (MemberInfo, error)
}

// ProfileRef is one profile of a virtual server as PROFILE:: commands
// ask about it: its type as iRules spell it (ProfileType) and its full
// path for PROFILE::exists and PROFILE::list, its context and settings
// for PROFILE::tcp idle_timeout and the like.
type ProfileRef struct {
	Type, Name string
	// Context is the profile's context on the virtual (clientside or
	// serverside; "" or all for both): a virtual may have a tcp profile
	// per side, and a rule reads the one of the side it runs on.
	Context string
	// Attrs is the profile's settings as tmsh shows them (inherited
	// through defaults-from, defaults included), by tmsh property name;
	// nil when the translation did not fill them.
	Attrs map[string]string
}

// ProfileLister is implemented by a Conn that knows its virtual server's
// profiles, found by type assertion; PROFILE::exists answers from it for
// every type (without it, only http and dns, from the Conn's own
// interfaces).
type ProfileLister interface {
	VirtualProfiles() []ProfileRef
}

// ProfileType is a profile type as PROFILE:: commands name it: tmsh's
// kind without its hyphens, any case (client-ssl and clientssl,
// fastL4 and fastl4, one-connect and oneconnect are one type).
func ProfileType(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "-", ""))
}

// LBQueuer is implemented by a Conn whose pools may queue connections
// at their connection limit, found by type assertion: LB::queue reads
// it, in LB_QUEUED for instance, to log how deep the queue is.
type LBQueuer interface {
	// LBQueue describes a pool's connection queue; an empty pool means
	// the current one.
	LBQueue(pool string) (QueueInfo, error)
}

// QueueInfo is what LB::queue reports of a pool's connection queue.
type QueueInfo struct {
	// On is queue-on-connection-limit; DepthLimit and TimeLimit (ms)
	// its limits (0: none).
	On                    bool
	DepthLimit, TimeLimit int
	// Depth is how many connections (or requests) wait now.
	Depth int
}

// LBNamer is implemented by a Conn whose pool members have names of
// their own, found by type assertion: a GSLB pool's member is a virtual
// server (server:vs), or, in a CNAME, MX, SRV or NAPTR pool, a domain
// name with no address. LB::server name reports the name; for a domain
// name (target true) LB::server addr and the list form report it in
// place of the address. Without it, LB::server name is the address, as
// an LTM node's name is.
type LBNamer interface {
	LBServerName() (name string, target bool)
}

// MemberInfo is what LB::server reports about a pool member.
type MemberInfo struct {
	Ratio, Priority int
	// Weight is the member's current weight as the pool's mode computes it.
	Weight int
}
