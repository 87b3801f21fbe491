// Package config holds the configuration the daemon hands the dataplane:
// one fully resolved generation (virtuals, pools, members, nodes,
// monitors, persistence, message-based balancing), the rule hook each
// virtual carries and the events it is asked about. It is pure data and
// owns no behaviour beyond reading itself; package dataplane re-exports
// every name (type aliases), so the daemon only ever imports dataplane,
// and the dataplane's internal packages can share these types without
// importing the dataplane root.
package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/evict"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/h2member"
	"github.com/openltm/openltm/dataplane/http3"
	"github.com/openltm/openltm/dataplane/ilx"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/netflow"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/recursor"
	"github.com/openltm/openltm/dataplane/rpz"
	"github.com/openltm/openltm/dataplane/socks"
	"github.com/openltm/openltm/dataplane/timerpol"
	"github.com/openltm/openltm/rules"
)

// Config is one fully resolved configuration generation as the dataplane
// needs it: references are names that resolve inside the same Config,
// defaults are already filled in, enums are parsed. The daemon builds it from
// the object store after each commit, so the dataplane never reads the store
// and never parses text. A Config handed to Apply must not be modified
// afterwards: the running plane keeps pointers into it.
type Config struct {
	// Virtuals by full path (/Common/vs).
	Virtuals map[string]*Virtual
	// EvictionContexts are the route domains with a connection-limit or
	// a flow-eviction-policy and the global flow-eviction-policy: each
	// acts on the connections of the virtuals in it (dataplane/evict.go).
	EvictionContexts []*EvictionContext
	// BWC is the bandwidth controllers (`net bwc policy`) by full path:
	// the ones virtuals name and the ones rules attach with BWC::policy.
	BWC map[string]*BWCPolicy
	// RateClasses are the rate classes (`net rate-shaping class`) by
	// full path: the ones virtuals name (rate-class) and the ones rules
	// put flows in (rateclass).
	RateClasses map[string]*RateClass
	// LSN is the large-scale NAT pools (`ltm lsn-pool`) by full path.
	LSN map[string]*LSNPool
	// Pools by full path.
	Pools map[string]*Pool
	// Nodes by full path. A member whose node is missing here gets an
	// implicit node with default settings, as BIG-IP auto-creates one.
	Nodes map[string]*Node
	// Monitors by full path, including the built-in ones the configuration
	// references (/Common/tcp, /Common/http ...).
	Monitors map[string]*Monitor
	// SelfIPs are the addresses of `net self` objects; SNAT automap takes the
	// first one of the server's address family.
	SelfIPs []netip.Addr
	// NATs are the `ltm nat` objects (static NAT, dataplane/natobj):
	// connections to a translation address go to its originating
	// address, and the originating address's server connections leave
	// from its translation address; nil when there are none.
	NATs []NAT
	// SnatPools maps a snatpool's full path to its translation addresses
	// (without those whose ltm snat-translation is disabled).
	SnatPools map[string][]netip.Addr
	// SNATs are the `ltm snat` objects, which translate the source of a
	// virtual's server connections when the virtual has no
	// source-address-translation of its own; nil when there are none.
	SNATs []SNATObject
	// SNATTranslations are the addresses of the ltm snat-translation
	// objects, whose counters a commit keeps while they are disabled.
	SNATTranslations []netip.Addr
	// SNATSettings are the ltm snat-translation settings that act on the
	// connections given an address (connection-limit, the idle
	// timeouts), for the addresses that set one; nil for none.
	SNATSettings map[netip.Addr]SNATTranslation
	// DefaultNodeMonitor is `ltm default-node-monitor { rule ... }`, used by
	// nodes whose Monitor is nil (`monitor default`).
	DefaultNodeMonitor MonitorRule
	// NameServers resolve FQDN nodes (`sys dns name-servers`, host or
	// host:port); none means the system resolver.
	NameServers []string
	// DNSSearch and DNSNDots complete FQDN nodes' names for NameServers
	// (`sys dns search` and `number-of-dots`), as a stub resolver's
	// search list and ndots do; the system resolver has its own.
	DNSSearch []string
	DNSNDots  int
	// OwnDests are destinations this process connects to that the rest
	// of Config does not name (log destinations, auth servers, the
	// nameservers rules ask, an iRule's literal node or connect): a
	// virtual on every port or a network virtual passes them over
	// where it would take them (dataplane/anyport.go ownDests); nil for
	// none.
	OwnDests []netip.AddrPort
	// OwnDestNames are such destinations written as host names (an auth
	// profile's server named by its host name): the plane resolves each
	// as an FQDN node is resolved, and passes the addresses in service
	// over as it passes OwnDests (dataplane/fqdnowndests.go); nil for
	// none.
	OwnDestNames []NamedDest
}

// NamedDest is a destination written as a host name and a port: what a
// server the process connects to names when it is not an address.
type NamedDest struct {
	// Name is the host name, resolved for A and AAAA records both.
	Name string
	// Port is the destination port (0: every port of the addresses).
	Port uint16
}

// SnatPool resolves a snatpool a rule names (snatpool, or SERVER_INIT's
// snat on any virtual): a full path, or a bare name in /Common; false on
// a nil Config or an unknown name.
func (c *Config) SnatPool(name string) ([]netip.Addr, bool) {
	if c == nil {
		return nil, false
	}
	for _, n := range []string{name, "/Common/" + name} {
		if a, ok := c.SnatPools[n]; ok {
			return a, true
		}
		if strings.HasPrefix(name, "/") {
			break
		}
	}
	return nil, false
}

// Virtual is an `ltm virtual`: where clients connect and where they are sent.
type Virtual struct {
	Name string
	// Profiles is the virtual's profiles by type and full path, for the
	// rules' PROFILE::exists (what the data paths run comes from the
	// fields below).
	Profiles []rules.ProfileRef
	// Destination is the listening address; port 0 (`any`) without
	// PortRanges is a virtual on every port of the address (AnyPort).
	Destination netip.AddrPort
	// IPForward is an `ip-forward` virtual: without a pool (or a rule's
	// decision) a connection goes on to the address and port the client
	// asked for, as BIG-IP's forwarding (IP) virtual sends it.
	IPForward bool
	// NAT names the `ltm nat` whose inbound traffic this virtual carries
	// ("" for every configured virtual): the plane makes such virtuals
	// itself (dataplane/nat.go), and they keep the client's address
	// whatever SNAT or NAT objects say.
	NAT string
	// Network is a network virtual's destination (`destination
	// 10.0.0.0:any mask 255.0.0.0`): every address of it this host
	// delivers locally, save those a more specific virtual takes; invalid
	// for a host virtual. Destination's address is its first.
	Network netip.Prefix
	// PortRanges, from traffic-matching-criteria destination-port-inline,
	// replace Destination's port: every port of every range is bound.
	PortRanges []PortRange
	// Addresses, from traffic-matching-criteria (a destination prefix or
	// address list), replace Destination's address: every address is
	// bound on every port (Listeners). Destination holds the first.
	Addresses []netip.Addr
	// FQDNs are the names of the criteria's destination address list:
	// the plane resolves them as FQDN nodes are (fqdnvirtual.go) and
	// listens on their addresses too, beside Addresses. A virtual with
	// names and no address of its own has no Destination until one
	// resolves.
	FQDNs []string
	// SourceFQDNs are the names of the criteria's source address list:
	// the plane resolves them as it resolves FQDNs and admits clients
	// from their addresses too, rebuilding Match as the answers change
	// (no listener moves). Match is then never nil.
	SourceFQDNs []string
	// Match is the traffic-matching-criteria's source filter (addresses
	// and ports); nil, as without criteria, admits every client at one
	// nil check.
	Match *SourceMatch
	// VLANs is vlans-enabled or vlans-disabled with a list (vlans.go);
	// nil, the default (disabled on none), listens on every interface at
	// one nil check.
	VLANs *VLANFilter
	// Enabled is false for a `disabled` virtual: new connections are reset,
	// existing ones go on.
	Enabled bool
	// Reject is a reject type virtual (the `reject` flag): every
	// connection it admits is reset at once, every datagram dropped, and
	// counted in its total connections.
	Reject bool
	// DownImmediate is service-down-immediate-action: with reset or drop
	// ("" or none: accepted as usual), a new connection while every
	// member of the default pool is down or forced offline is refused
	// at once, before any byte is read (state.Admit).
	DownImmediate ServiceDownAction
	// ConnectionLimit caps concurrent client connections; 0 is unlimited.
	ConnectionLimit int
	// Eviction is the virtual's flow-eviction-policy (dataplane/evict),
	// acted on against ConnectionLimit; nil for none, and without a
	// connection-limit (the daemon says so).
	Eviction *evict.Policy
	// RouteDomain is the route domain id of the virtual's destination
	// (ADDRESS%ID), which puts it in that route domain's flow-eviction
	// context (EvictionContext).
	RouteDomain int
	// RouteDomainReach is the route domains beyond RouteDomain whose
	// ltm nat and ltm snat objects may translate the virtual's clients
	// when none of RouteDomain does, nearest first: its route domain's
	// parent when that route domain has strict isolation disabled, and
	// so up while the route domains have it disabled. nil (strict, the
	// default): its own route domain only, so the lookups pay one nil
	// test on a miss and nothing more. Made once per commit per route
	// domain and shared by its virtuals: never changed.
	RouteDomainReach []int
	// Address is the virtual's ltm virtual-address where it acts (enabled
	// no, a connection-limit: vaddr.go); nil costs nothing per connection.
	Address *VirtualAddress
	// RateLimit caps new client connections per second (rate-limit; 0:
	// none), counted as RateLimitMode and the masks say (ratelimit.go).
	RateLimit     int
	RateLimitMode RateLimitMode
	// Source restricts which clients are accepted; the zero Prefix means
	// 0.0.0.0/0 (any).
	Source netip.Prefix
	// TranslateAddress false forwards to the client's original destination
	// address instead of the member's (transparent, forwarding virtuals).
	TranslateAddress bool
	// TranslatePort false (or a member on port 0) keeps the client's
	// destination port.
	TranslatePort bool
	// SNAT is source-address-translation.
	SNAT SNAT
	// Pool is the default pool's full path; "" means none.
	Pool string
	// IdleTimeout comes from the tcp profile (the udp profile on a UDP
	// virtual); 0 means the profile's default (300 s, 60 s for udp), a
	// negative value means never (`indefinite`).
	IdleTimeout time.Duration
	// Timers is the timer policy of the virtual's service-policy
	// (dataplane/timerpol): a flow whose protocol and destination port a
	// rule matches gets that rule's idle timeout in place of IdleTimeout,
	// chosen once when it opens; nil for none, one nil check per flow.
	Timers *timerpol.Policy
	// Protocol is ip-protocol: ProtoTCP ("" too) or ProtoUDP. A UDP
	// virtual is served by the datagram path and may share its address
	// and port with a TCP one.
	Protocol Protocol
	// DatagramLB is the udp profile's datagram-load-balancing: each
	// client datagram is balanced on its own (answers still go back to
	// the client that asked), instead of every datagram of a client
	// address and port following the first one's member.
	DatagramLB bool
	// SIP is the sip profile on a UDP virtual: each datagram is one SIP
	// message, balanced by itself (dataplane/internal/udp/sip.go); nil
	// without the profile.
	SIP *SIPDatagram
	// RADIUS is the radius profile on a UDP virtual: each datagram is one
	// RADIUS packet, balanced by itself and persisted on an attribute
	// (dataplane/internal/udp/radius.go); nil without the profile.
	RADIUS *RADIUSProfile
	// TFTP is the tftp profile on a UDP virtual: the member's answers
	// from its transfer port reach the client (dataplane/internal/udp/tftp.go);
	// nil without the profile.
	TFTP *TFTPProfile
	// BWC is the full path of the virtual's bandwidth controller
	// (bwc-policy): every byte its flows send either way waits on the
	// policy's token bucket (dataplane/bwc); empty without one.
	BWC string
	// RateClass is the full path of the virtual's rate class
	// (rate-class): its flows' bytes in the class's direction wait on
	// the class's buckets (dataplane/bwc/class.go); empty without one.
	RateClass string
	// NetFlow is the virtual's netflow profile: each connection's end is
	// reported to its log publisher's ipfix destinations
	// (dataplane/netflow); nil without one, which costs a nil check.
	NetFlow *netflow.Profile
	// GTP is the gtp profile on a UDP virtual: each datagram is one GTP
	// message, checked, balanced by itself and shown to the GTP_ events
	// (dataplane/internal/udp/gtp.go); nil without the profile.
	GTP *GTPProfile
	// DHCP is the dhcpv4 or dhcpv6 profile on a UDP virtual: the virtual
	// is a DHCP relay (dataplane/internal/udp/dhcp.go); nil without one.
	DHCP *DHCPProfile
	// DNS is the dns profile: the virtual answers DNS queries itself
	// (wide IPs, static zones, its cache) before it forwards any to its
	// pool (dataplane/dnsvs); nil without the profile.
	DNS *DNSProfile
	// DoH is the doh-server or doh-proxy profile of an HTTP virtual: its
	// clients' HTTP requests carry DNS queries (dataplane/doh), which
	// DNS (doh-server) or the pool answers; nil without one. Its TLS is
	// the client-ssl profiles, whose handshakes the DoH service runs.
	DoH *DoH
	// HoldPackets and HoldBytes are the udp profile's buffer-max-packets
	// and buffer-max-bytes: the client datagrams UDP::hold keeps until
	// UDP::release (0 packets keeps one, the datagram that made the flow;
	// 0 bytes, no byte bound); later ones are dropped.
	HoldPackets, HoldBytes int
	// AllowNoPayload is the udp profile's allow-no-payload: datagrams
	// without a payload are forwarded; false drops them, both ways, as
	// BIG-IP does by default.
	AllowNoPayload bool
	// Persist is the persistence profile marked `default yes`: clients
	// with a record go back to its member before any load balancing; nil
	// means none.
	Persist *Persistence
	// FallbackPersist is fallback-persistence, used for a flow the default
	// profile finds no key for (cookie persistence without HTTP, universal
	// without a `persist uie` in the rules).
	FallbackPersist *Persistence
	// Rules is the compiled iRule list the rules engine attaches; nil means
	// no rule. The proxy calls it at each event it declares.
	Rules Rules
	// MBLB, from the mblb profile, makes the virtual balance each message
	// of a long-lived client connection on its own rather than the
	// connection (seed 000); nil is a plain L4 virtual.
	MBLB *MBLB
	// TLS, from the client-ssl and server-ssl profiles, terminates and
	// originates TLS (tls.go); nil: plaintext on both sides.
	TLS *TLS
	// Stream is the stream profile of a plain TCP virtual, which
	// rewrites both directions' bytes (an HTTP virtual's is in its
	// MBLB's HTTP options: it rewrites bodies only); nil: none.
	Stream *mblb.StreamOptions
	// HTTP2 is the http2 profile of an HTTP virtual: clients that
	// negotiate h2 (ALPN, over client-ssl), or with Always that send the
	// HTTP/2 preface in cleartext, are served by dataplane/h2gw, which
	// passes each stream to the virtual's HTTP engine; nil: HTTP/1 only.
	HTTP2 *HTTP2
	// HTTP3 is the quic and http3 profiles of a UDP virtual with an http
	// profile: its socket speaks QUIC and HTTP/3 (dataplane/http3), each
	// request going to the virtual's HTTP engine (MBLB) as an HTTP/1.1
	// client's; nil: a plain UDP virtual.
	HTTP3 *http3.Config
	// FTP is the ftp profile of a plain TCP virtual, whose flows the
	// FTP gateway serves (ftp.go); nil: none.
	FTP *FTP
	// Socks is the socks profile of a TCP virtual: each client speaks
	// SOCKS first and names where it goes (l4/socks.go); nil: none.
	Socks *socks.Proxy
	// ILX is the ilx profile of a TCP virtual: each client connection
	// is streamed through the plugin's extension (l4/ilx.go,
	// dataplane/ilx); nil: none.
	ILX *ilx.StreamProfile
	// MQTT is the mqtt profile of a plain TCP virtual, whose flows are
	// served packet by packet (l4/mqtt.go); nil: none.
	MQTT *MQTT
	// FIX is the fix profile of a plain TCP virtual, whose flows are
	// served message by message (l4/fix.go); nil: none.
	FIX *FIX
	// RTSP is the rtsp profile of a plain TCP virtual, whose flows are
	// served message by message with their data channels (l4/rtsp.go);
	// nil: none.
	RTSP *RTSP
	// Diameter is the diameter profile of a plain TCP virtual, whose
	// flows are served message by message, each message balanced on its
	// own (l4/diameter.go); nil: none.
	Diameter *Diameter
	// MRF is the generic message-routing framework of a plain TCP
	// virtual with a generic protocol and router profile: its flows are
	// cut into messages, each routed to a peer (l4/mrf.go); nil: none.
	MRF *MRF
	// STARTTLS is the smtps, imap, pop3 or client-ldap profile of a virtual with a
	// client-ssl profile: the client's TLS starts at its STARTTLS (or
	// STLS), answered by the virtual, and the member stays in plaintext
	// (starttls.go in l4); nil: TLS, if any, from the first byte.
	STARTTLS *STARTTLS
	// ServerLDAP is the server-ldap profile of a virtual with a
	// server-ssl profile: the virtual sends the member StartTLS before
	// server-ssl's handshake (ldap.go in l4); nil: server-ssl, if any,
	// from the first byte.
	ServerLDAP *ServerLDAP
	// Clone is clone-pools: pools that get a copy of the client's
	// traffic (clone.go); nil: none.
	Clone []ClonePool
	// ClientTCP and ServerTCP are the tcp profile's socket settings for
	// the client's socket (with the default pool's ip-tos-to-client) and
	// the member connections' (profile context clientside, serverside or
	// all); nil keeps every default, at no cost per connection.
	ClientTCP, ServerTCP *sockopt.Side
	// IdleFIN is reset-on-timeout disabled: an idle flow is closed with a
	// FIN on both sides instead of reset.
	IdleFIN bool
	// TCPClose is how the flows' ends are handled (loose-close,
	// reset-on-client-fin, the close and zero-window timers); nil keeps
	// the sockets' own ends, at one comparison per FIN.
	TCPClose *sockopt.Close
}

// HTTP2 is a virtual's http2 profile.
type HTTP2 struct {
	h2gw.Config
	// ALPN: activation-modes alpn, h2 offered in the TLS handshake.
	ALPN bool
	// Always: activation-modes always, a cleartext client that starts
	// with the HTTP/2 preface speaks HTTP/2 (others HTTP/1.1 [M]).
	Always bool
}

// Protocol is a virtual's ip-protocol as the dataplane serves it.
type Protocol string

// The protocols the dataplane serves.
const (
	ProtoTCP Protocol = "tcp"
	ProtoUDP Protocol = "udp"
)

// IsUDP reports whether the virtual is served by the datagram path.
func (v *Virtual) IsUDP() bool { return v.Protocol == ProtoUDP }

// MBLB is a virtual's message-based load balancing: the mblb profile, with
// openltm's framing extension, and the one-connect profile when the
// virtual has one. It is compared by value between commits: an unchanged
// MBLB keeps the running engine, its sessions and its pooled connections.
type MBLB struct {
	// Profile is the mblb profile's full path.
	Profile string
	// Request frames what clients send and Response what members answer
	// (its per-read zero value follows Request). Rule framing takes the
	// boundaries from the rules' TCP::notify; a virtual whose rules do not
	// handle CLIENT_DATA falls back to per-read.
	Request, Response mblb.Framing
	// MaxMessageSize bounds one message (0: 1 MiB); a larger one resets
	// the client.
	MaxMessageSize int
	// MaxInFlight bounds a client's unanswered requests (0: 64).
	MaxInFlight int
	// DisableRetry stops re-sending the unanswered messages of a failed
	// member, for requests that must never run twice.
	DisableRetry bool
	// ResponseTimeout fails a member connection whose oldest request saw
	// no answer for this long; 0 waits (the idle timeout still applies).
	ResponseTimeout time.Duration
	// ShutdownTimeout keeps a member connection open for the answers
	// still owed on it after its client has gone, or after a commit
	// disabled or removed its member (drained); 0 closes it at once.
	ShutdownTimeout time.Duration
	// MinConn is the mblb profile's min-conn: connections kept open to
	// each member of the default pool ahead of need, shared with
	// one-connect (of source-mask any), else each taken by a client as
	// its own; 0: none.
	MinConn int
	// PropagateAbort is the mblb profile's isolate-abort disabled: a
	// reset on one side resets the flows of the other it carried.
	PropagateAbort bool
	// PropagateServerClose, PropagateExpire and KeepOnClientClose are
	// isolate-server disabled, isolate-expire disabled and
	// isolate-client enabled: which ends of one side reach the other.
	PropagateServerClose, PropagateExpire, KeepOnClientClose bool
	// Flow is the mblb profile's ingress and egress water marks and the
	// httprouter profile's pending bounds (a value, so that an unchanged
	// profile keeps the running engine).
	Flow mblb.FlowControl
	// OneConnect, from the one-connect profile, shares server connections
	// among all clients; nil gives each client its own.
	OneConnect *OneConnect
	// MemberHTTP2, from an http2 profile on the server side (with the
	// httprouter profile), sends the requests to members as HTTP/2
	// streams (dataplane/h2member); nil: HTTP/1.1 to members.
	MemberHTTP2 *h2member.Config
	// ExplicitProxy, from an http profile with proxy-type explicit, makes
	// the virtual a forward proxy (dataplane/fwdproxy): each request
	// names its origin, which the proxy resolves and connects itself;
	// the pool is not used. nil: a reverse proxy.
	ExplicitProxy *fwdproxy.Config
}

// OneConnect is the one-connect profile as message-based load balancing
// applies it (reference §6.1).
type OneConnect struct {
	// Profile is the one-connect profile's full path, for its show.
	Profile string
	// SourceMask is source-mask: clients whose server-side source
	// addresses agree under it share connections; the zero Addr is any.
	SourceMask netip.Addr
	// MaxSize caps the connections per member (0: 10000).
	MaxSize int
	// MaxAge and MaxReuse retire a connection (0: 86400 s, 1000).
	MaxAge   time.Duration
	MaxReuse int
	// IdleTimeoutOverride closes idle pooled connections: 0 is disabled
	// (the tcp profile's idle timeout), negative is indefinite.
	IdleTimeoutOverride time.Duration
	// LimitType is limit-type: how the pooled connections count toward a
	// member's connection limit ("" and none: only busy ones; idle: every
	// one, an idle one closed to make room; strict: every one).
	LimitType string
}

// PortRange is an inclusive range of ports.
type PortRange struct{ Low, High uint16 }

// SNATType is source-address-translation's type.
type SNATType string

// The SNAT types the dataplane implements.
const (
	SNATNone    SNATType = "none"
	SNATAutomap SNATType = "automap"
	SNATPool    SNATType = "snat"
)

// SNATObject is one `ltm snat`: clients whose address falls in one of
// Origins have their server connections translated to one of Addrs (the
// translation address, or the snatpool's addresses in turn) or, with
// Automap, as automap translates.
type SNATObject struct {
	Name    string
	Origins []netip.Prefix
	Automap bool
	// Addrs is the translation address, or the snatpool's enabled
	// addresses; Pool is the snatpool's full path ("" for a translation
	// address or automap).
	Addrs []netip.Addr
	Pool  string
	// ChangePort is source-port change: the server connection takes any
	// port, not the client's.
	ChangePort bool
	// StrictPort is source-port preserve-strict: the server connection
	// keeps the client's port or fails.
	StrictPort bool
	// VLANs is vlans-enabled or vlans-disabled with a list: the SNAT
	// translates only the connections arriving on (or not on) those
	// interfaces; nil: every VLAN.
	VLANs *VLANFilter
	// RouteDomain is the route domain id of the origins (ADDRESS%ID):
	// the SNAT translates only the clients of the virtuals in that
	// route domain (Virtual.RouteDomain), as openltm has one routing
	// table and a virtual's %ID is the only route domain a client has.
	RouteDomain int
}

// SNATTranslation is one ltm snat-translation's settings for the server
// connections given its address.
type SNATTranslation struct {
	// ConnLimit is connection-limit: the server connections the address
	// holds at once at most (0: no limit).
	ConnLimit uint64
	// TCPIdle and UDPIdle are tcp-idle-timeout and udp-idle-timeout: the
	// idle timeout of a TCP or UDP flow whose server side has the
	// address, instead of its profile's. 0: indefinite, the translation
	// sets none (the profile's applies).
	TCPIdle, UDPIdle time.Duration
}

// SNAT is what source address the server side uses.
type SNAT struct {
	Type SNATType
	// Pool is the snatpool's full path when Type is SNATPool.
	Pool string
	// ChangePort is the virtual's source-port change: its server
	// connections take any port, not the client's, whatever address
	// they leave from (automap, snatpool, none, an ltm nat's
	// translation address). An ltm snat that
	// translates a connection decides by its own source-port instead.
	ChangePort bool
	// StrictPort is the virtual's source-port preserve-strict: its
	// server connections keep the client's port or fail (reset), where
	// preserve (neither set) takes another port when it is in use.
	StrictPort bool
}

// LBMode is a pool's load-balancing-mode keyword, spelled as tmsh spells it.
type LBMode string

// The load-balancing modes the dataplane implements (reference §4.1).
const (
	RoundRobin                     LBMode = "round-robin"
	RatioMember                    LBMode = "ratio-member"
	RatioNode                      LBMode = "ratio-node"
	LeastConnectionsMember         LBMode = "least-connections-member"
	LeastConnectionsNode           LBMode = "least-connections-node"
	WeightedLeastConnectionsMember LBMode = "weighted-least-connections-member"
	WeightedLeastConnectionsNode   LBMode = "weighted-least-connections-node"
	RatioLeastConnectionsMember    LBMode = "ratio-least-connections-member"
	RatioLeastConnectionsNode      LBMode = "ratio-least-connections-node"
	ObservedMember                 LBMode = "observed-member"
	PredictiveMember               LBMode = "predictive-member"
	FastestNode                    LBMode = "fastest-node"
	// DynamicRatioMember and DynamicRatioNode weigh members by the
	// dynamic ratio their (or their node's) snmp-dca monitors give.
	DynamicRatioMember LBMode = "dynamic-ratio-member"
	DynamicRatioNode   LBMode = "dynamic-ratio-node"
)

// ServiceDownAction is what happens to a member's existing flows when it
// goes down (reference §4.5).
type ServiceDownAction string

// The service-down-action values.
const (
	DownNone     ServiceDownAction = "none"
	DownReset    ServiceDownAction = "reset"
	DownDrop     ServiceDownAction = "drop"
	DownReselect ServiceDownAction = "reselect"
)

// Pool is an `ltm pool`.
type Pool struct {
	Name    string
	LBMode  LBMode // "" means round-robin
	Members []Member
	// Monitor is the pool's monitor rule, used by members without their own.
	Monitor           MonitorRule
	MinActiveMembers  int
	SlowRampTime      time.Duration
	ServiceDownAction ServiceDownAction // "" means none
	ReselectTries     int
	// NoSNAT is allow-snat no: connections to the pool's members keep
	// the client's source address whatever the virtual's
	// source-address-translation says (a rule's snat still applies).
	NoSNAT bool
	// NoNAT is allow-nat no: connections to the pool's members are not
	// given an ltm nat's translation address as their source (the
	// virtual's own translation and the SNAT objects still apply).
	NoNAT bool
	// QueueOnConnLimit holds a new connection in a FIFO queue while every
	// usable member is at its connection limit, instead of resetting it
	// (queue-on-connection-limit); QueueDepthLimit (0: unlimited) bounds
	// how many wait and QueueTimeLimit (0: unlimited) how long each does.
	QueueOnConnLimit bool
	QueueDepthLimit  int
	QueueTimeLimit   time.Duration
	// FQDNMembers are members on FQDN nodes: templates (Addr holds only the
	// port) that the plane turns into one ephemeral member per address
	// the node's name resolves to (fqdn.go).
	FQDNMembers []Member
	// ToSServer is ip-tos-to-server: the IP ToS of the pool's member
	// connections (the zero value is pass-through, untouched).
	ToSServer sockopt.TOS
}

// AdminSession is the member/node `session` setting a user types.
type AdminSession string

// The session values a user sets.
const (
	SessionEnabled      AdminSession = "user-enabled"
	SessionUserDisabled AdminSession = "user-disabled"
)

// AdminState is the member/node `state` setting a user types.
type AdminState string

// The state values a user sets.
const (
	StateUserUp   AdminState = "user-up"
	StateUserDown AdminState = "user-down"
)

// Member is one pool member, named `<node>:<port>` like BIG-IP.
type Member struct {
	// Node is the node's full path (/Common/10.1.1.1 or /Common/web1).
	Node string
	// Addr is the member's address; port 0 (`any`) keeps the client's
	// destination port.
	Addr  netip.AddrPort
	Ratio int // 0 means 1
	// DynamicRatio is the member's dynamic-ratio (0 means 1): its weight
	// in a dynamic-ratio-member pool until an snmp-dca monitor gives one.
	DynamicRatio    int
	PriorityGroup   int
	ConnectionLimit int
	Session         AdminSession // "" means user-enabled
	State           AdminState   // "" means user-up
	// Monitor overrides the pool's rule when it names monitors.
	Monitor MonitorRule
	// RateLimit caps the new connections per second sent to the member
	// (rate-limit; 0: none).
	RateLimit int
	// Logging (logging enabled) traces every probe of the member's
	// monitors, as a node's does.
	Logging bool
}

// Name is the member's display name, /Common/10.1.1.1:80, as BIG-IP logs
// and shows it (IPv6 members join with '.').
func (m *Member) Name() string {
	return JoinPort(m.Node, m.Addr.Port())
}

// Node is an `ltm node`: an address whose state and counters are shared by
// every member on it.
type Node struct {
	Name            string
	Addr            netip.Addr
	Session         AdminSession
	State           AdminState
	ConnectionLimit int
	Ratio           int
	// DynamicRatio is the node's dynamic-ratio (0 means 1): its weight
	// in a dynamic-ratio-node pool until an snmp-dca monitor gives one.
	DynamicRatio int
	// Monitor is nil for `monitor default` (Config.DefaultNodeMonitor);
	// an empty rule is `monitor none`.
	Monitor *MonitorRule
	// FQDN, for a node written with an fqdn block, is the name it follows;
	// Addr is then unset.
	FQDN *FQDN
	// RateLimit caps the new connections per second sent to the node's
	// members together (rate-limit; 0: none).
	RateLimit int
	// Logging (logging enabled) traces every probe of the node's
	// monitors to the log, as a monitor's debug does.
	Logging bool
}

// MonitorRule is `monitor a and b` (MinUp 0: all must be up) or
// `monitor min N of { a b c }`. No names means no monitor.
type MonitorRule struct {
	Names []string
	MinUp int
}

// IsZero reports whether the rule names no monitor.
func (r MonitorRule) IsZero() bool { return len(r.Names) == 0 }

// String is the rule as tmsh writes it.
func (r MonitorRule) String() string {
	if len(r.Names) == 0 {
		return "none"
	}
	if r.MinUp > 0 {
		s := "min " + itoa(r.MinUp) + " of {"
		for _, n := range r.Names {
			s += " " + n
		}
		return s + " }"
	}
	s := r.Names[0]
	for _, n := range r.Names[1:] {
		s += " and " + n
	}
	return s
}

// MonitorType is a monitor's type keyword.
type MonitorType string

// The monitor types the dataplane implements.
const (
	MonitorTCP         MonitorType = "tcp"
	MonitorTCPHalfOpen MonitorType = "tcp-half-open"
	MonitorHTTP        MonitorType = "http"
	MonitorGatewayICMP MonitorType = "gateway-icmp"
	MonitorHTTPS       MonitorType = "https"
	MonitorUDP         MonitorType = "udp"
	MonitorICMP        MonitorType = "icmp"
	MonitorDNS         MonitorType = "dns"
	// MonitorHTTP2 is http2: the send string as an HTTP/2 stream, over
	// TLS with ALPN h2 (TLS set, the ssl-profile) or cleartext (h2c).
	MonitorHTTP2 MonitorType = "http2"
)

// Monitor is an `ltm monitor <type>` with its defaults-from chain resolved.
type Monitor struct {
	Name         string
	Type         MonitorType
	Interval     time.Duration
	Timeout      time.Duration
	TimeUntilUp  time.Duration
	UpInterval   time.Duration // 0 means Interval
	ManualResume bool
	Send         string
	Recv         string // regular expression; "" accepts any answer
	RecvDisable  string // regular expression; a match means up but disabled
	Reverse      bool   // a Recv match means down
	// Destination is `*:*` when zero: the member's address and port. An
	// invalid Addr or a zero Port each mean "the member's".
	Destination netip.AddrPort
	// DNS is the dns monitor's query, as the user set it.
	DNS *DNSCheck
	// External, Inband and Login are those monitors' settings
	// (monitors_ext.go); Login is the smtp, pop3, imap and ftp monitors'.
	External *ExternalMonitor
	Inband   *InbandMonitor
	Login    *MonitorLogin
	LDAP     *LDAPMonitor
	SIP      *SIPMonitor
	RADIUS   *RADIUSMonitor
	DB       *DBMonitor
	Script   *ScriptMonitor
	SOAP     *SOAPMonitor
	RPC      *RPCMonitor
	Diameter *DiameterMonitor
	MQTT     *MQTTMonitor
	// GTPVersion is a gtp monitor's protocol-version (1 or 2).
	GTPVersion int
	SNMP       *SNMPMonitor
	// Username and Password, DSCP, TLS and Adaptive are the settings of
	// monitor_opts.go.
	Username, Password string
	DSCP               int
	TLS                *MonitorTLS
	Adaptive           *AdaptiveMonitor
	// Debug (debug yes, udp and database monitors) writes each probe's
	// exchange and verdict to the log.
	Debug bool
}

// DNSCheck is a dns monitor's settings: the query (qname, qtype: a or
// aaaa), the rcodes accepted (no-error, anything), what the answer must
// hold (query-type, any-type, anything) and recv, an address the answer
// must contain ("" or none: any).
type DNSCheck struct {
	QName, QType, AcceptRcode, AnswerContains, Recv string
}

// MaxPortsPerVirtual caps how many ports one virtual may bind through
// traffic-matching-criteria port ranges.
const MaxPortsPerVirtual = 4096

// AnyPort reports a virtual on every port of its address (`ADDR:any`
// without port ranges): it binds one listener at port 0 (any free port),
// and the plane steers every other port of the address to it (anyport.go).
func (v *Virtual) AnyPort() bool { return v.Destination.Port() == 0 && len(v.PortRanges) == 0 }

// Ports lists every port the virtual binds; an AnyPort virtual's is 0.
func (v *Virtual) Ports() ([]uint16, error) {
	if len(v.PortRanges) == 0 {
		return []uint16{v.Destination.Port()}, nil
	}
	total := 0
	for _, r := range v.PortRanges {
		if r.Low == 0 || r.High < r.Low {
			return nil, fmt.Errorf("port range %d-%d is not valid", r.Low, r.High)
		}
		total += int(r.High) - int(r.Low) + 1
	}
	if total > MaxPortsPerVirtual {
		return nil, fmt.Errorf("port ranges cover %d ports; at most %d ports per virtual server can be bound", total, MaxPortsPerVirtual)
	}
	seen := make(map[uint16]bool, total)
	out := make([]uint16, 0, total)
	for _, r := range v.PortRanges {
		for p := int(r.Low); p <= int(r.High); p++ {
			if !seen[uint16(p)] {
				seen[uint16(p)] = true
				out = append(out, uint16(p))
			}
		}
	}
	return out, nil
}

// JoinPort writes name:port the way BIG-IP names members and flows:
// "/Common/10.1.1.1:80", and '.' before the port after an IPv6 address
// ("dead:beef::1.80"), port 0 as "any" only where callers ask for it.
func JoinPort(name string, port uint16) string {
	sep := ":"
	base := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		base = name[i+1:]
	}
	if strings.Contains(base, ":") {
		sep = "."
	}
	return name + sep + strconv.Itoa(int(port))
}

func itoa(i int) string { return strconv.Itoa(i) }

// PersistMethod is a persistence profile's type, as `ltm persistence
// <type>` names it.
type PersistMethod string

// The persistence profile types the dataplane knows. Cookie persistence
// needs the HTTP profile: on an L4 virtual a cookie profile finds no key,
// so its fallback applies. Hash and universal take their key from a
// rule (`persist hash`, `persist uie`); dest-addr keys on the address the
// client connected to.
const (
	PersistSourceAddr PersistMethod = "source-addr"
	PersistUniversal  PersistMethod = "universal"
	PersistCookie     PersistMethod = "cookie"
	PersistHash       PersistMethod = "hash"
	PersistDestAddr   PersistMethod = "dest-addr"
	// PersistSSL keys on the TLS session ID of a connection passed
	// through (no client-ssl): the ServerHello's ID is recorded, and a
	// client resuming that session returns to its member.
	PersistSSL PersistMethod = "ssl"
	// PersistMSRDP keys on the routing cookie of an RDP client's first
	// packet (mstshash, the user; msts, a session broker's token), so a
	// user's reconnections go to the server holding the session.
	PersistMSRDP PersistMethod = "msrdp"
	// PersistSIP (sip_info) keys on a SIP header field, Call-ID by
	// default, so that every message of a dialog reaches one member.
	PersistSIP PersistMethod = "sip"
	// PersistHost keys on an HTTP request's Host header (an http
	// profile's virtual only), so that the clients of one site share a
	// member and its cache.
	PersistHost PersistMethod = "host"
)

// Peeks reports whether the persistence's key is in the client's first
// bytes, which the flow must read before it balances.
func (p *Persistence) Peeks() bool {
	return p != nil && (p.Method == PersistSSL || p.Method == PersistMSRDP || (p.Method == PersistHash && p.Payload != nil))
}

// Persistence is a persistence profile as a virtual applies it, with its
// defaults-from chain resolved.
type Persistence struct {
	// Profile is the profile's full path.
	Profile string
	Method  PersistMethod
	// Timeout is how long a record lives after its last use; 0 is
	// indefinite.
	Timeout time.Duration
	// Mask groups source addresses under one record (source-addr `mask`);
	// the zero Addr keeps the whole address.
	Mask netip.Addr
	// MatchAcrossServices, MatchAcrossVirtuals and MatchAcrossPools widen
	// which records a lookup may use (reference §7.1).
	MatchAcrossServices bool
	MatchAcrossVirtuals bool
	MatchAcrossPools    bool
	// OverrideConnectionLimit lets a persisted client reach a member (or
	// node) past its connection limit.
	OverrideConnectionLimit bool
	// CARP (hash-algorithm carp) maps a key to a member by hashing, with
	// no record: the member whose hash with the key is highest among the
	// pool's available ones, so that a member going away moves only its
	// own keys.
	CARP bool
	// SessionDir (msrdp has-session-dir yes): a client's routing token
	// from a Terminal Services session directory (msts=ADDR.PORT.0000)
	// names the member it goes to.
	SessionDir bool
	// Payload (a hash profile's hash-offset, hash-length, patterns and
	// hash-buffer-limit) finds the key in the client's first bytes; nil
	// when the profile takes its key from a rule only.
	Payload *persist.Payload
	// Proxies (source-addr map-proxy-class, with map-proxies enabled)
	// maps the clients of proxy networks to one key; nil maps none.
	Proxies *ProxyMap
}

// ProxyMap is a source-addr profile's proxy networks, whose clients
// persist as one: on Addr (map-proxy-address) when valid, else on their
// network's address, so that a megaproxy spreading one user over many
// addresses keeps that user on one member.
type ProxyMap struct {
	Nets []netip.Prefix // masked
	Addr netip.Addr
}

// SourceKey is the source-address key of a client at a: under the
// profile's mask, or its proxy network's key when a is in one.
func (p *Persistence) SourceKey(a netip.Addr) persist.Key {
	if pm := p.Proxies; pm != nil {
		u := a.Unmap()
		for _, n := range pm.Nets {
			if n.Contains(u) {
				if pm.Addr.IsValid() {
					return persist.AddrKey(persist.SourceAddress, pm.Addr, netip.Addr{})
				}
				return persist.AddrKey(persist.SourceAddress, n.Addr(), netip.Addr{})
			}
		}
	}
	return persist.AddrKey(persist.SourceAddress, a, p.Mask)
}

// Mode is the table's mode for the profile's records.
func (p *Persistence) Mode() persist.Mode {
	switch p.Method {
	case PersistSourceAddr:
		return persist.SourceAddress
	case PersistUniversal:
		return persist.Universal
	case PersistCookie:
		return persist.Cookie
	case PersistHash:
		return persist.Hash
	case PersistDestAddr:
		return persist.DestAddress
	case PersistSSL:
		return persist.SSLSessionID
	case PersistMSRDP:
		return persist.MSRDP
	case PersistSIP:
		return persist.SIP
	case PersistHost:
		return persist.Host
	}
	return 0
}

// DefaultPersistTimeout is a record's timeout when a rule persists on a
// virtual without a profile of that type (the built-in profiles' 180 s).
const DefaultPersistTimeout = 180 * time.Second

// ProfileFor returns the virtual's profile (default, then fallback) whose
// records have mode m, or nil.
func (v *Virtual) ProfileFor(m persist.Mode) *Persistence {
	for _, p := range []*Persistence{v.Persist, v.FallbackPersist} {
		if p != nil && p.Mode() == m {
			return p
		}
	}
	return nil
}

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
	// EventPersistDown runs when persistence would send the flow to a
	// member that is down or forced offline, before it is balanced anew.
	EventPersistDown Event = "PERSIST_DOWN"
	// EventLBQueued runs when a new connection joins its pool's
	// connection queue (queue-on-connection-limit).
	EventLBQueued Event = "LB_QUEUED"
	// EventSIPRequest and EventSIPResponse run for each SIP message of a
	// UDP virtual with a sip profile, either way (dataplane/internal/udp,
	// sip.go); message-based SIP virtuals run them themselves.
	EventSIPRequest  Event = "SIP_REQUEST"
	EventSIPResponse Event = "SIP_RESPONSE"
	// EventSIPRequestSend and EventSIPResponseSend run as a SIP message
	// is about to leave (a client's request with its member chosen),
	// EventSIPRequestDone and EventSIPResponseDone once it has left.
	EventSIPRequestSend  Event = "SIP_REQUEST_SEND"
	EventSIPRequestDone  Event = "SIP_REQUEST_DONE"
	EventSIPResponseSend Event = "SIP_RESPONSE_SEND"
	EventSIPResponseDone Event = "SIP_RESPONSE_DONE"
	// The gtp profile's events run for each GTP message of a UDP virtual
	// with the profile (dataplane/internal/udp/gtp.go): the *Ingress ones
	// as it arrives from either side, the *Egress ones as it leaves.
	EventGTPGPDUIngress       Event = "GTP_GPDU_INGRESS"
	EventGTPGPDUEgress        Event = "GTP_GPDU_EGRESS"
	EventGTPPrimeIngress      Event = "GTP_PRIME_INGRESS"
	EventGTPPrimeEgress       Event = "GTP_PRIME_EGRESS"
	EventGTPSignallingIngress Event = "GTP_SIGNALLING_INGRESS"
	EventGTPSignallingEgress  Event = "GTP_SIGNALLING_EGRESS"
	// EventServerInit runs once a member is chosen (after LB_SELECTED),
	// just before the connection to it is opened: a standard virtual's
	// server connection, each member connection an http or message-based
	// virtual opens (not one OneConnect lends), each server-side flow of
	// a UDP virtual. A rule's snat or snatpool there sets its source.
	EventServerInit Event = "SERVER_INIT"
	// EventSAPicked runs when a virtual's lsn pool gave a server side
	// (a standard or UDP virtual's flow, an http virtual's member
	// connection) its translation, before it is opened from it.
	EventSAPicked Event = "SA_PICKED"
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
	{EventPersistDown, rules.PersistDown},
	{EventLBQueued, rules.LBQueued},
	{EventSIPRequest, rules.SIPRequest},
	{EventSIPResponse, rules.SIPResponse},
	{EventSIPRequestSend, rules.SIPRequestSend},
	{EventSIPRequestDone, rules.SIPRequestDone},
	{EventSIPResponseSend, rules.SIPResponseSend},
	{EventSIPResponseDone, rules.SIPResponseDone},
	{EventGTPGPDUIngress, rules.GTPGPDUIngress},
	{EventGTPGPDUEgress, rules.GTPGPDUEgress},
	{EventGTPPrimeIngress, rules.GTPPrimeIngress},
	{EventGTPPrimeEgress, rules.GTPPrimeEgress},
	{EventGTPSignallingIngress, rules.GTPSignallingIngress},
	{EventGTPSignallingEgress, rules.GTPSignallingEgress},
	{EventServerInit, rules.ServerInit},
	{EventSAPicked, rules.SAPicked},
}

// The array's size below fails to compile (a negative length) once
// proxyEvents holds more events than an event mask (uint32, Lookup) has
// bits: widen the mask then. The TLS events (CLIENTSSL_*, SERVERSSL_*)
// are not proxy events: the flows ask the program (Program.Handles, a
// slice length) once per handshake.
var _ [32 - len(proxyEvents)]struct{}

// Lookup is the one translation of a proxy event: its bit in an event
// mask and the iRules event it is; ok is false for an event the proxy
// does not raise.
//
// It runs for every event of every flow (the per-message events of a
// message-balanced virtual among them), so it is a switch rather than a
// walk of proxyEvents comparing names (TestEventLookupAndMask keeps the
// two alike).
func (ev Event) Lookup() (bit uint32, rev rules.Event, ok bool) {
	i := -1
	switch ev {
	case EventClientAccepted:
		i = 0
	case EventClientData:
		i = 1
	case EventLBSelected:
		i = 2
	case EventLBFailed:
		i = 3
	case EventServerConnected:
		i = 4
	case EventServerData:
		i = 5
	case EventServerClosed:
		i = 6
	case EventClientClosed:
		i = 7
	case EventPersistDown:
		i = 8
	case EventLBQueued:
		i = 9
	case EventSIPRequest:
		i = 10
	case EventSIPResponse:
		i = 11
	case EventSIPRequestSend:
		i = 12
	case EventSIPRequestDone:
		i = 13
	case EventSIPResponseSend:
		i = 14
	case EventSIPResponseDone:
		i = 15
	case EventGTPGPDUIngress:
		i = 16
	case EventGTPGPDUEgress:
		i = 17
	case EventGTPPrimeIngress:
		i = 18
	case EventGTPPrimeEgress:
		i = 19
	case EventGTPSignallingIngress:
		i = 20
	case EventGTPSignallingEgress:
		i = 21
	case EventServerInit:
		i = 22
	case EventSAPicked:
		i = 23
	}
	if i < 0 {
		return 0, rev, false
	}
	return 1 << i, proxyEvents[i].rev, true
}

// SIPSendEvent is the send event (SIP_REQUEST_SEND, SIP_RESPONSE_SEND)
// or, with done, the done event of a request or a response: the one
// choice every transport makes the same way.
func SIPSendEvent(request, done bool) Event {
	switch {
	case request && done:
		return EventSIPRequestDone
	case request:
		return EventSIPRequestSend
	case done:
		return EventSIPResponseDone
	}
	return EventSIPResponseSend
}

// SIPSendBits and SIPDoneBits are the event-mask bits of the SIP send
// and done events: a flow whose mask has neither pays one AND per SIP
// message for them.
var (
	SIPSendBits = eventBit(EventSIPRequestSend) | eventBit(EventSIPResponseSend)
	SIPDoneBits = eventBit(EventSIPRequestDone) | eventBit(EventSIPResponseDone)
)

func eventBit(ev Event) uint32 {
	b, _, _ := ev.Lookup()
	return b
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

// RuleConn is the view of one flow (or, on a message-balanced virtual,
// one client connection) that a rule hook runs on: what the iRules
// commands read and decide (rules.Conn), and the flow's iRules session.
// Every data path's flow implements it, so one adapter runs the rules on
// all of them. Calls are made from the goroutine running the event; they
// never block on I/O.
type RuleConn interface {
	rules.Conn
	// RuleSession returns the flow's session of prog, made at the flow's
	// first event (with the flow as its rules.Conn) and released by the
	// flow when it ends.
	RuleSession(prog *rules.Program) *rules.ConnState
}

// EventMask asks r once, at commit time, which proxy events it handles:
// bit i is the i-th event Lookup knows, so that asking "does a rule handle
// this?" on the data path is a bit test, not an interface call.
func EventMask(r Rules) uint32 {
	if r == nil {
		return 0
	}
	var m uint32
	for i := range proxyEvents {
		if r.Handles(proxyEvents[i].ev) {
			m |= 1 << i
		}
	}
	return m
}

// PersistKey names a persistence decision made outside the L4 proxy, such
// as message-based load balancing's per-message `persist uie`: the same
// table and the same rules (match-across settings and timeout of the
// virtual's profile of that mode, member states) apply as for
// connections.
type PersistKey struct {
	// Virtual and Pool are full paths: the virtual the message arrived on
	// and the pool it is balanced in.
	Virtual, Pool string
	// Mode is the record's mode; Key its key (for SourceAddress, an
	// address, masked by the profile's mask).
	Mode persist.Mode
	Key  string
	// Client is the client's address, shown in persist-records.
	Client netip.Addr
	// Timeout overrides the profile's timeout when positive (a rule's
	// `persist uie key timeout`); 0 uses the virtual's profile of the mode
	// (180 s without one).
	Timeout time.Duration
}

// SIPDatagram is the sip profile on a UDP virtual.
type SIPDatagram struct {
	// PersistHeader names the field whose value keys sip_info
	// persistence (Call-ID by default); "" without that persistence.
	PersistHeader string

	// The profile's proxy settings, as mblb.SIPOptions has them over
	// TCP (dataplane/internal/udp/sipproxy.go): the Via and Record-Route
	// inserted into the client's requests, BYE ending the member's
	// binding, dialogs followed to their member, and the registration
	// bounds (with DialogAware). All off: each datagram goes as it came.
	Via, SecureVia, RecordRoute bool
	UserVia                     string
	TerminateOnBye, DialogAware bool
	// 0: no timer, no bound.
	DialogTimeout, SessionTimeout, RegistrationTimeout time.Duration
	MaxRegistrations, MaxSessionsPerRegistration       int
}

// Proxies reports whether any proxy setting is on: a flow then keeps
// SIP state of its own.
func (s *SIPDatagram) Proxies() bool {
	return s.Via || s.SecureVia || s.UserVia != "" || s.RecordRoute || s.TerminateOnBye || s.DialogAware
}

// RADIUSProfile is the radius profile on a UDP virtual.
type RADIUSProfile struct {
	// PersistAVP is the attribute whose value persists a request to a
	// member (persist-avp, 31 for Calling-Station-Id); 0 for none.
	PersistAVP uint8
	// Clients are the clients data group's networks and their shared
	// secrets, most specific first: what an edited packet is signed
	// again with.
	Clients []RADIUSClient
}

// TFTPProfile is the tftp profile on a UDP virtual.
type TFTPProfile struct {
	// Idle is the transfer's flow's idle timeout (idle-timeout), which
	// replaces the udp profile's; 0 keeps the udp profile's.
	Idle time.Duration
}

// GTPProfile is the gtp profile on a UDP virtual.
type GTPProfile struct {
	// IngressMax is the profile's ingress-max, kept for show; messages
	// are handled as they arrive, so no queue forms [M].
	IngressMax int
}

// DHCPProfile is a dhcpv4 or dhcpv6 profile on a UDP virtual.
type DHCPProfile struct {
	// V6: the dhcpv6 profile (DHCPv6 messages, Relay-Forward and
	// Relay-Reply); false: dhcpv4.
	V6 bool
	// Forwarding is mode forwarding: messages go to one member, as they
	// came, and answers back as they came; false is mode relay.
	Forwarding bool
	// Idle is the profile's idle-timeout, which replaces the udp
	// profile's; 0 keeps the udp profile's.
	Idle time.Duration
	// MaxHops is dhcpv4's max-hops: a request that already passed
	// through this many relays is dropped.
	MaxHops uint8
	// AgentInfo is option 82's data a dhcpv4 relay adds to requests that
	// have none (relay-agent-id add); nil adds none.
	AgentInfo []byte
	// StripAgentInfo removes option 82 from answers before they reach
	// the client (relay-agent-id remove).
	StripAgentInfo bool
	// V6Options are the options a dhcpv6 relay adds to its Relay-Forward
	// (remote-id-option, subscriber-id-option with add true), as code
	// and data.
	V6Options []DHCPv6Option
}

// DHCPv6Option is one option a dhcpv6 relay adds.
type DHCPv6Option struct {
	Code uint16
	Data []byte
}

// RADIUSClient is one record of a radius profile's clients data group.
type RADIUSClient struct {
	Net    netip.Prefix
	Secret []byte
}

// Secret is the shared secret of client a, nil when no record holds it.
func (r *RADIUSProfile) Secret(a netip.Addr) []byte {
	a = a.Unmap()
	for _, c := range r.Clients {
		if c.Net.Contains(a) {
			return c.Secret
		}
	}
	return nil
}

// DNSProfile is an ltm profile dns as the virtual acts on it: what
// answers a query, in BIG-IP's order.
type DNSProfile struct {
	// Name is the profile's full path (logs).
	Name string
	// GTM (enable-gtm) lets the GSLB's wide IPs answer.
	GTM bool
	// Express (enable-dns-express) lets the static zones answer.
	Express bool
	// DNSSEC (enable-dnssec) lets the GSLB sign what it answers for
	// the names of an ltm dns dnssec zone.
	DNSSEC bool
	// Unhandled is unhandled-query-action: allow, drop, reject, hint or
	// noerror.
	Unhandled string
	// Cache is the DNS cache of enable-cache yes with cache NAME; nil for
	// none.
	Cache *DNSCache
	// DNS64 is dns64: disabled (""), secondary, immediate or v4-only;
	// DNS64Prefix its /96 prefix.
	DNS64       string
	DNS64Prefix netip.Addr
	// DNS64Additional is dns64-additional-section-rewrite with dns64
	// on: "" (disabled), v6-only, v4-only or any — what becomes of the
	// A and AAAA records of the additional section of an answer the
	// pool gives, so that a v6-only client gets glue it can reach.
	DNS64Additional string
	// NoProcessRD is process-rd no: a query with Recursion Desired set
	// skips the wide IPs, zones and cache and goes to Unhandled.
	NoProcessRD bool
	// ClientSubnet is edns0-client-subnet-insert: a query forwarded to
	// the pool carries the client's address in an EDNS client subnet
	// option (RFC 7871).
	ClientSubnet bool
	// ProcessXfr is process-xfr yes: an AXFR or IXFR over TCP is answered
	// from DNS Express to the zone's transfer-clients.
	ProcessXfr bool
	// Rapid is enable-rapid-response yes: a UDP query is answered from
	// DNS Express's zones before anything else, and one they do not
	// answer gets RapidLast (rapid-response-last-action: allow, drop,
	// noerror, nxdomain, refuse or truncate), allow sending it on
	// through the profile's steps.
	Rapid     bool
	RapidLast string
	// NoLocalBIND is use-local-bind no: on a gtm listener, the static
	// zones (BIG-IP's local BIND, which stands in for a pool there) do
	// not answer, and a resolver cache resolves what nothing else does.
	NoLocalBIND bool
	// Log is enable-logging yes with log-profile NAME: the queries and
	// responses logged through the logging profile's publisher; nil for
	// none.
	Log *DNSLog
}

// DNSLog is an ltm profile dns-logging as a dns profile uses it.
type DNSLog struct {
	// Name is the logging profile's full path; Publisher its
	// log-publisher's; Hostname what each line names the system by.
	Name, Publisher, Hostname string
	// Query and Response are enable-query-logging and
	// enable-response-logging.
	Query, Response bool
	// CompleteAnswer, QueryID, Source, Timestamp and View are the
	// include-* settings: what each line carries.
	CompleteAnswer, QueryID, Source, Timestamp, View bool
}

// DNSCache is an ltm dns cache transparent or resolver: answers from the
// pool kept up to their TTL.
type DNSCache struct {
	// Name is the cache's full path; Kind transparent or resolver.
	Name, Kind string
	// MsgCacheSize (msg-cache-size) bounds the bytes of kept answers.
	MsgCacheSize int
	// MaxConcurrent (max-concurrent-queries) bounds the queries sent to
	// the pool and not yet answered; a query beyond is dropped.
	MaxConcurrent int
	// Forward are a resolver's forward-zones: zone (lower case, fully
	// qualified) to its name servers. A resolver sends the names under
	// a forward zone there instead of to the pool.
	Forward map[string][]netip.AddrPort
	// Resolver holds what the cache answers itself: its local-zones and
	// default zones and, with Recurse, how it resolves from the root
	// hints (dataplane/recursor); nil when the cache answers nothing
	// itself.
	Resolver *recursor.Config
	// Recurse (a resolver cache) resolves the names outside Forward from
	// the root hints instead of asking the pool: always with root-hints
	// set (Hinted), from the Internet's root servers when the virtual
	// has no pool [M].
	Recurse, Hinted bool
	// A transparent cache's max-concurrent-udp and max-concurrent-tcp
	// (MaxUDP, MaxTCP: the queries to the pool not yet answered, by
	// transport; 0 unbounded), rrset-cache-size (RRsetBytes: the bytes
	// of the records of its kept answers; 0 unbounded) and rrset-rotate
	// query-id (Rotate: a kept answer's record sets rotated by the
	// query's ID). A resolver has them in Resolver.
	MaxUDP, MaxTCP, RRsetBytes int
	Rotate                     bool
	// RPZ are response-policy-zones, in order: the DNS Express zones
	// whose triggers answer a query before the cache does
	// (dataplane/rpz); nil for none.
	RPZ []rpz.Zone
}

// BWCPolicy is a `net bwc policy`: rates in bits per second, 0 for no
// limit. A static policy's flows share MaxRate; a dynamic one gives each
// instance (a user: what BWC::policy attach names, or the client's
// address on a virtual) up to MaxUserRate, all of them together MaxRate.
type BWCPolicy struct {
	Name        string
	MaxRate     uint64
	MaxUserRate uint64
	// MaxUserPPS bounds each instance's writes per second (a write
	// stands for a packet here); 0: none.
	MaxUserPPS uint64
	Dynamic    bool
	// Mark is the policy's ip-tos and link-qos: the ToS byte (IP_TOS) and
	// the queueing priority (SO_PRIORITY) of its flows' sockets.
	Mark BWCMark
	// Categories are a dynamic policy's categories (BWC::color set puts
	// a flow in one), each with its own rate and marks; nil: none.
	Categories []BWCCategory
	// Priority is the policy's priority group (traffic-priority-map):
	// each level's weight in the policy's rate; nil: none, and a higher
	// level simply goes first.
	Priority *BWCPriorityGroup
	// Measure is measure enabled: the policy, its categories and every
	// instance are measured (BWC::measure starts a flow's or an
	// instance's own measurement besides).
	Measure bool
	// LogPublisher is log-publisher's full path ("": none), which gets a
	// line per measured thing each LogPeriod.
	LogPublisher string
	LogPeriod    time.Duration
}

// BWCPriorityGroup is a `net bwc priority-group` as a policy uses it.
type BWCPriorityGroup struct {
	Name string
	// Weights are the levels' weights by level number (0 to 7); 0 for a
	// level the group does not list.
	Weights [8]int
	// Levels names the group's levels, for BWC::priority NAME and a
	// category's traffic-priority-map.
	Levels map[string]int
}

// BWCMark is the marking of a policy or a category: TOS and QoS are the
// ToS byte and the link priority, -1 for pass-through (the socket is
// left as it is).
type BWCMark struct {
	TOS, QoS int
}

// BWCCategory is one of a dynamic policy's categories: MaxRate (bits per
// second, max-cat-rate or max-cat-rate-percentage of the policy's
// max-rate) is shared by the category's flows, within the policy's
// rates.
type BWCCategory struct {
	Name    string
	MaxRate uint64
	Mark    BWCMark
	// Leveled: the category's flows take priority level Level (its
	// traffic-priority-map, a level of the policy's group).
	Leveled bool
	Level   int
}

// DoH is a virtual's DNS over HTTPS (dataplane/doh).
type DoH struct {
	// Profile is the doh profile's name, whose counters show ltm
	// profile doh-server (doh-proxy) shows.
	Profile string
	// Proxy: a doh-proxy profile, whose queries go to the pool (through
	// DNS's steps when the virtual has a dns profile); else doh-server.
	Proxy bool
	// ALPN and H2C are the http2 profile's activation-modes: h2 offered
	// in the TLS handshake (alpn), a cleartext client's HTTP/2 preface
	// taken (always). Both false: HTTP/1.1 only.
	ALPN, H2C bool
}

// RateClass is a `net rate-shaping class` as the dataplane shapes with
// it: rates in bits per second (Rate guaranteed, Ceiling the most it
// reaches borrowing from its parent; Ceiling == Rate: no borrowing),
// MaxBurst bytes beyond the rate after a pause, the direction it shapes,
// and its parent's full path ("": a root class).
type RateClass struct {
	Name     string
	Rate     uint64
	Ceiling  uint64
	MaxBurst uint64
	// Direction is what the class shapes: RateAny, RateToClient or
	// RateToServer.
	Direction int
	Parent    string
	// Queue and Drop are the class's queue discipline and drop policy,
	// which a UDP flow's datagrams in the class meet (dataplane/bwc/
	// qdisc.go); the zero values are BIG-IP's defaults, sfq and tail.
	Queue RateQueue
	Drop  RateDrop
}

// RateQueue is a rate class's queue discipline (net rate-shaping queue):
// FIFO (pfifo) puts the datagrams of all the class's flows in one queue
// of the class, bounded at Limit packets (pfifo-min-packets; 0: the
// class's byte bound alone); else (sfq) each flow queues on its own,
// served in turn, bounded at Depth packets (sfq-bucket-depth; 0: the
// byte bound alone).
type RateQueue struct {
	FIFO         bool
	Limit, Depth int
}

// The drop policies of a rate class (net rate-shaping drop-policy type).
const (
	DropTail = iota
	DropRED
	DropFRED
)

// RateDrop is a rate class's drop policy (net rate-shaping
// drop-policy): what a queue drops before it is full. Type is DropTail
// (nothing: only a full queue drops), DropRED or DropFRED; the numbers
// are the drop policy's, 0 where it gives none (dataplane/bwc/qdisc.go
// says what 0 means for each).
type RateDrop struct {
	Type int
	// MinThreshold and MaxThreshold bound the average queue (packets)
	// between which datagrams are dropped at random, at most
	// MaxProbability percent of them; InverseWeight is the average's
	// 1/weight; AvgPacket the bytes of a typical datagram (the
	// average's decay while the queue is idle); HardLimit the packets
	// past which every datagram is dropped.
	MinThreshold, MaxThreshold, MaxProbability, InverseWeight, AvgPacket, HardLimit int
	// FRED's: the flows that may have datagrams queued at once
	// (MaxActive), the packets a flow may queue without an early drop
	// (MinDrop) and past which its datagrams are always dropped
	// (MaxDrop).
	MaxActive, MinDrop, MaxDrop int
}

// The directions a rate class shapes (direction any, to-client,
// to-server).
const (
	RateAny = iota
	RateToClient
	RateToServer
)

// EvictionContext is a route domain's or the global flow-eviction
// context: BIG-IP measures a policy attached there against the route
// domain's connection-limit, or the system's capacity.
type EvictionContext struct {
	// Name is the route domain's name ("0", "/Common/rd1"), or "global".
	Name string
	// Global is the global context: every virtual is in it.
	Global bool
	// RouteDomain is the route domain's id: the virtuals whose
	// RouteDomain it is are in the context.
	RouteDomain int
	// Limit is the connection-limit (route domain) or capacity (global)
	// the policy's water marks are percentages of; 0: none, and then the
	// context does nothing.
	Limit int
	// Policy is the flow-eviction-policy; nil: Limit refuses new
	// clients, as a route domain's connection-limit alone does.
	Policy *evict.Policy
}

// NAT is one `ltm nat`: a one-to-one static NAT between Orig (the
// originating address, a host behind the system) and Xlat (its
// translation address, where clients reach it). A Disabled NAT
// translates nothing either way; its counters are kept.
type NAT struct {
	Name       string
	Orig, Xlat netip.Addr
	Disabled   bool
	// OutboundOnly: the way in is not served (the plane cannot steer
	// every port here), the way out is.
	OutboundOnly bool
	// VLANs is vlans-enabled or vlans-disabled with a list: the NAT
	// takes connections to its translation address, and translates its
	// originating address's, only from those interfaces (or all but
	// those); nil: every VLAN.
	VLANs *VLANFilter
	// RouteDomain is the route domain id of the NAT's addresses
	// (ADDRESS%ID): the way out translates only the clients of the
	// virtuals in that route domain (Virtual.RouteDomain), and the way
	// in is in it as a virtual whose destination has the %ID is.
	RouteDomain int
	// RouteDomainReach is Virtual.RouteDomainReach for the virtuals of
	// the way in (the route domains whose NATs and SNATs the
	// connections to the translation address may also take).
	RouteDomainReach []int
	// Timers is the timer policy of the NAT's route domain's
	// service-policy (or its parents'), which the way in's flows take as
	// a virtual's in that route domain without a service-policy of its
	// own do; nil for none.
	Timers *timerpol.Policy
}
