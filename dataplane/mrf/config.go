package mrf

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/timerpol"
)

// ConnMode is a peer's connection-mode: which outgoing connections a
// message routed to the peer may use.
type ConnMode uint8

// The connection modes. openltm is one traffic process (one TMM, one
// blade), so per-blade and per-tmm share connections as per-peer does,
// and the per-client variants are per-client.
const (
	PerPeer ConnMode = iota
	PerBlade
	PerTMM
	PerClient
)

// ParseConnMode reads a connection-mode word (the alternate-tmm and
// per-client-per-* variants fold into the mode they reduce to on one
// TMM).
func ParseConnMode(s string) (ConnMode, bool) {
	switch s {
	case "per-peer", "per-peer-alternate-tmm":
		return PerPeer, true
	case "per-blade":
		return PerBlade, true
	case "per-tmm":
		return PerTMM, true
	case "per-client", "per-client-per-blade", "per-client-per-tmm", "per-client-alternate-tmm":
		return PerClient, true
	}
	return 0, false
}

func (m ConnMode) String() string {
	return [...]string{"per-peer", "per-blade", "per-tmm", "per-client"}[m]
}

// Peer is a generic peer: where its messages go (a pool, or one host for
// a peer a rule made with MR::peer) and how connections to it are kept.
type Peer struct {
	Name string
	// Pool is the pool a member is chosen from for each new connection.
	Pool string
	// Host, when valid, is the one address of the peer (MR::peer host).
	Host netip.AddrPort
	// Transport is the transport-config's name ("": the virtual's own);
	// TC the transport-config itself, when configured (a peer a rule
	// made finds it by name in Config.Transports).
	Transport string
	TC        *Transport
	Mode      ConnMode
	// Conns is number-connections: how many connections to the peer a
	// shared mode keeps (at least 1).
	Conns int
	// Ratio weighs the peer in a ratio route.
	Ratio int
	// AutoInit, when not 0, is auto-initialization enabled: the peer's
	// connections are opened as the virtual starts and, every AutoInit,
	// opened again where they closed.
	AutoInit time.Duration
}

// Transport is a transport-config: how the connections to a peer naming
// it are made (F5: each connection is made by a transport, the virtual's
// or a transport-config's, and a connection made by one transport is not
// used for a peer naming another).
type Transport struct {
	Name string
	// SNAT is its source-address-translation: SNATAutomap (the virtual's
	// address [M: openltm has no self IPs for the peer side]), SNATPool
	// (SNATAddrs in turn), SNATLSN (a translation of the lsn pool LSN,
	// LSNDialer), or "" (none: the virtual's lsn pool when it has one,
	// else the host's own address).
	SNAT      string
	SNATAddrs []netip.Addr
	// SNATPool names the snatpool SNATAddrs are of: its addresses are
	// counted and held against their ltm snat-translation on an Env
	// that is a SNATHolder (snathold.go).
	SNATPool string
	LSN      string
	// TCP is its tcp profile's socket settings (nil: the kernel's).
	TCP *sockopt.Side
	// UDP: its profiles name a udp profile, so its connections are UDP
	// flows (each message one datagram), whatever the virtual's own
	// transport; Idle is that udp profile's idle-timeout (0: the
	// router's).
	UDP  bool
	Idle time.Duration
	// Rules are its iRules as the Env runs them (RuleEnv; nil: none),
	// RulesKey what tells one list of them from another, so that a
	// commit that changes them makes new connections.
	Rules    any
	RulesKey string

	next atomic.Uint32
}

// The source-address-translation types of a transport-config.
const (
	SNATAutomap = "automap"
	SNATPool    = "snat"
	SNATLSN     = "lsn"
)

// source is the address a new connection to dst leaves from (invalid:
// the host chooses); local is the virtual's address.
func (t *Transport) source(local netip.Addr, dst netip.Addr) netip.Addr {
	if t == nil {
		return netip.Addr{}
	}
	family := func(a netip.Addr) bool { return a.IsValid() && a.Is4() == dst.Is4() }
	switch t.SNAT {
	case SNATAutomap:
		if family(local) {
			return local
		}
	case SNATPool:
		n := len(t.SNATAddrs)
		start := int(t.next.Add(1))
		for i := range n {
			if a := t.SNATAddrs[(start+i)%n]; family(a) {
				return a
			}
		}
	}
	return netip.Addr{}
}

func (t *Transport) key() string {
	if t == nil {
		return "-"
	}
	return fmt.Sprintf("%q %q %v %q %q %+v %t %d %q", t.Name, t.SNAT, t.SNATAddrs, t.SNATPool, t.LSN, t.TCP, t.UDP, t.Idle, t.RulesKey)
}

// PersistBy is a session profile's persist-key: what a request is
// persisted by when a rule gives it no key of its own.
type PersistBy uint8

// The persist-keys. PersistCustom persists only by the key a rule gives
// (SIP::persist KEY), as no persistence does; it is kept apart so that a
// commit that changes it is seen.
const (
	PersistNone PersistBy = iota
	PersistCallID
	PersistSrcAddr
	PersistCustom
	// PersistAVP persists by a value the protocol reads from the
	// request (PersistKeyer: a Diameter session profile's persist-avp,
	// Session-Id by default).
	PersistAVP
)

// LostAction is a session profile's retransmission-action.
type LostAction uint8

// The retransmission-actions: LostFail (disabled) fails the request
// (MR_FAILED, then the protocol's failure answer), LostRetransmit routes
// it again, LostBusy and LostUnable answer it from the virtual (a
// Diameter DIAMETER_TOO_BUSY or DIAMETER_UNABLE_TO_DELIVER).
const (
	LostFail LostAction = iota
	LostRetransmit
	LostBusy
	LostUnable
)

// LostAnswerer is a protocol that answers a request whose peer
// connection closed under it (LostBusy, LostUnable).
type LostAnswerer interface {
	// LostAnswer is the answer to m (busy: too busy; else unable to
	// deliver); nil: none.
	LostAnswer(m *Message, busy bool) []byte
}

// AnswerRetrier is a protocol whose answers may ask for the request to
// be sent again elsewhere (a Diameter session profile's
// array-retransmission-result-codes), with retransmission-action
// retransmit.
type AnswerRetrier interface {
	// RetryOn says whether answer a (its bytes) sends its request to
	// another peer rather than back to its originator.
	RetryOn(a []byte) bool
}

// CallIDer is a protocol whose requests carry a call's identity (SIP's
// Call-ID), for PersistCallID.
type CallIDer interface {
	// CallID is the request's call identity, a view of data (nil: none).
	CallID(data []byte) []byte
}

// PersistKeyer is a protocol whose requests carry a value a session
// profile persists by (Diameter's persist-avp), for PersistAVP.
type PersistKeyer interface {
	// PersistKey is the request's persistence value, a view of data
	// (nil: none; the request is routed as any other).
	PersistKey(data []byte) []byte
}

// Watchdogger is a protocol that probes a peer connection it has heard
// nothing from (Diameter's Device-Watchdog-Request, RFC 6733 5.5 and RFC
// 3539), for Config.Watchdog.
type Watchdogger interface {
	// Watchdog appends the probe to dst; its answer is a message the
	// protocol handles by itself (Local).
	Watchdog(dst []byte) []byte
}

// Route is a static route: messages whose source and destination
// addresses match go to one of its peers.
type Route struct {
	Name string
	// Src and Dst are the addresses matched ("": any).
	Src, Dst string
	// Keys are a protocol's route fields ("": any; see
	// Protocol.RouteKeys), for a router with a Protocol.
	Keys  RouteKeys
	Peers []*Peer
	// Ratio: peer-selection-mode ratio; else sequential.
	Ratio bool
}

// Config is a virtual's generic protocol and router profiles, resolved.
type Config struct {
	Protocol, Router string
	// Proto is the message protocol (nil: the generic protocol, cut on
	// Term and answered in order).
	Proto Protocol
	// Term is the message-terminator (nil: the stream is not cut).
	Term []byte
	// Max is max-message-size (0: none).
	Max int
	// NoResponse: messages are not requests; no answer is waited for.
	NoResponse bool
	// DisableParser: the protocol does not read the stream at all.
	DisableParser bool
	// MaxPending is max-pending-messages and MaxPendingBytes
	// max-pending-bytes: how many messages, and bytes of them, may wait
	// for a peer connection to open; a message past either fails
	// (MR_FAILED) (0: no bound).
	MaxPending, MaxPendingBytes int
	// MaxRetries bounds MR::retry per message.
	MaxRetries int
	// IgnorePort is the router's ignore-client-port: each client
	// connection starts with MR::ignore_peer_port set (Session.SetPortMatch).
	IgnorePort bool
	Routes     []*Route
	// Peers are the configured peers by full name.
	Peers map[string]*Peer
	// DefaultPool is the virtual's pool, for a message no route takes.
	DefaultPool string
	// Local is the virtual's address (a transport-config's automap).
	Local netip.Addr
	// LSN is the virtual's lsn pool (source-address-translation type
	// lsn; "": none): the peer connections whose transport-config has no
	// source-address-translation of its own translate through it
	// (LSNDialer).
	LSN string
	// Transports are the transport-configs by full name, for peers a
	// rule makes (MR::peer ... transport NAME).
	Transports map[string]*Transport
	// Idle closes a shared peer connection with no request in flight
	// after that long (0: never).
	Idle time.Duration
	// Timers is the virtual's timer policy (its service-policy's; nil:
	// none): a peer connection the router opens takes the idle timeout
	// of its rule for the connection's protocol (tcp, udp) and the
	// peer's port, in place of Idle and the transport-config's [M: F5
	// documents timer policies for a virtual's flows; openltm times the
	// member-side connections of message routing by them too, read once
	// when the connection opens].
	Timers *timerpol.Policy
	// UDP: the virtual's own transport is UDP (a udp profile): its
	// clients' messages are datagrams, and the connections of peers
	// with no transport-config of their own are UDP flows.
	UDP bool
	// ConnectBack is the session profile's do-not-connect-back
	// disabled: on a UDP virtual an answer due to a client whose flow
	// has ended still goes to its address (a datagram needs no
	// connection to be made again); on a TCP virtual over a connection
	// back to the address the answer names (connectback.go).
	ConnectBack bool
	// Persist is the session profile's persistence (persist-type
	// session): which key a request with none from a rule is routed by,
	// so that a call's requests go to one peer member; PersistTTL is its
	// persist-timeout (0: DefaultPersistTTL).
	Persist    PersistBy
	PersistTTL time.Duration
	// OnLost is the session profile's retransmission-action: what
	// becomes of a request whose peer connection closes before its
	// answer; MaxRetransmit is max-retransmissions.
	OnLost        LostAction
	MaxRetransmit int
	// Watchdog is the session profile's watchdog-timeout: a peer
	// connection the virtual has received nothing on for that long is
	// sent its protocol's probe (Watchdogger); each Watchdog that then
	// passes with no reply counts a failure, and MaxWatchdogFailures of
	// them in a row (max-watchdog-failures, at least 1) close the
	// connection, its requests in flight treated as OnLost says (0: no
	// watchdog).
	Watchdog            time.Duration
	MaxWatchdogFailures int
	// Handshake bounds a protocol's handshake on a new peer connection
	// (Diameter's handshake-timeout; 0: DefaultHandshake).
	Handshake time.Duration

	once   sync.Once
	router *Router
}

// stuck says whether each client's messages all go on one peer
// connection of its own, and what that connection sends comes back to
// the client as it is: a Sticky protocol's (MQTT), and the generic
// protocol's with disable-parser, whose bytes pass through unparsed
// [M: F5 leaves the stream to the rules, GENERICMESSAGE::message create
// making the messages; openltm routes each read as one message, with no
// answer awaited, over a connection the client keeps].
func (c *Config) stuck() bool {
	return c.DisableParser || c.Proto != nil && sticky(c.Proto)
}

// RouterFor is the config's one router, made by mk the first time (the
// caller keeps a router across commits that leave its settings alone:
// see Same).
func (c *Config) RouterFor(mk func() *Router) *Router {
	c.once.Do(func() { c.router = mk() })
	return c.router
}

// Same says whether c and o route alike, so that a commit that leaves a
// virtual's message routing alone keeps its router and the peer
// connections it holds.
func (c *Config) Same(o *Config) bool { return c.key() == o.key() }

// Translates says whether any peer connection of the router may leave
// from an lsn pool's translation (the virtual's, or a transport-config's
// source-address-translation type lsn): the host then names each
// client session's subscriber (Session.SetSubscriber).
func (c *Config) Translates() bool {
	if c.LSN != "" {
		return true
	}
	for _, t := range c.Transports {
		if t.SNAT == SNATLSN {
			return true
		}
	}
	return false
}

func (c *Config) key() string {
	var b strings.Builder
	if c.Proto != nil {
		fmt.Fprintf(&b, "%s %s|", c.Proto.Name(), c.Proto.String())
	}
	fmt.Fprintf(&b, "%q %d %t %t %d %d %d %q %v %q %d %d %d|", c.Term, c.Max, c.NoResponse, c.DisableParser, c.MaxPending, c.MaxPendingBytes, c.MaxRetries, c.DefaultPool, c.Local, c.LSN, c.Idle, c.Persist, c.PersistTTL)
	fmt.Fprintf(&b, "%d %d %d %d %d %t %t %t|", c.OnLost, c.MaxRetransmit, c.Watchdog, c.MaxWatchdogFailures, c.Handshake, c.UDP, c.ConnectBack, c.IgnorePort)
	if c.Timers != nil {
		fmt.Fprintf(&b, "%+v|", *c.Timers)
	}
	for _, r := range c.Routes {
		fmt.Fprintf(&b, "%q %q %q %q %t", r.Name, r.Src, r.Dst, r.Keys, r.Ratio)
		for _, p := range r.Peers {
			fmt.Fprintf(&b, " %q", p.Name)
		}
		b.WriteByte('|')
	}
	names := make([]string, 0, len(c.Peers))
	for n := range c.Peers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := c.Peers[n]
		fmt.Fprintf(&b, "%q %q %v %q %s %d %d %d %d|", p.Name, p.Pool, p.Host, p.Transport, p.TC.key(), p.Mode, p.Conns, p.Ratio, p.AutoInit)
	}
	names = names[:0]
	for n := range c.Transports {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s|", c.Transports[n].key())
	}
	return b.String()
}

// autoPeers are the shared-mode peers of the router's routes with
// auto-initialization, by name.
func (c *Config) autoPeers() []*Peer {
	var out []*Peer
	seen := map[string]bool{}
	for _, r := range c.Routes {
		for _, p := range r.Peers {
			if p.AutoInit > 0 && p.Mode != PerClient && !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AutoInit says whether a peer of the config is kept connected
// (auto-initialization), so that its router starts with the virtual.
func (c *Config) AutoInit() bool { return len(c.autoPeers()) > 0 }

// Lookup is the route for a message from src to dst: the best scoring of
// the static routes (both addresses match, then the destination, then
// the source, then a route with neither set), nil when none matches.
func (c *Config) Lookup(src, dst string) *Route {
	r, _ := lookup(nil, -1, c.Routes, nil, &RouteKeys{src, dst})
	return r
}

// lookup scores routes against a message's route fields (the generic
// protocol's: its source and destination addresses), starting from best
// with score bestScore; a later route wins a tie.
func lookup(best *Route, bestScore int, routes []*Route, p Protocol, keys *RouteKeys) (*Route, int) {
	for _, r := range routes {
		s := 0
		rk := &r.Keys
		if p == nil {
			rk = &RouteKeys{r.Src, r.Dst}
		}
		ok := true
		for i, v := range rk {
			if v == "" {
				continue
			}
			if p == nil && !addrMatch(v, keys[i]) || p != nil && !p.MatchKey(i, v, keys[i]) {
				ok = false
				break
			}
			s += 1 << i
		}
		if ok && s >= bestScore {
			best, bestScore = r, s
		}
	}
	return best, bestScore
}

// addrMatch says whether a route's address matches a message's: equal
// [M: F5 documents matching, not its rules; openltm compares the words
// exactly, as the generic protocol's addresses are free text].
func addrMatch(route, msg string) bool { return strings.EqualFold(route, msg) }
