// Package gslb is openltm's global server load balancer: an authoritative
// DNS server that answers for wide IPs with the virtual server best placed
// for the asking local DNS server (LDNS), the way BIG-IP DNS (GTM) does,
// and answers the static names of its zones like a plain DNS server.
//
// The daemon translates the `gtm` objects of each committed configuration
// into a Config, compiles it (Compile) and hands the Plan to
// Server.ApplyPlan; the package never reads the object store. Runtime state (probe results, metrics fed by the LTM side,
// the RTT table, LDNS persistence and counters) lives outside the Config,
// keyed by object name, so it survives every Apply that keeps the object.
package gslb

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/dnssec"
	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/rules"
)

// Config is one fully resolved GTM configuration generation. References
// are full paths (/Common/dc1) that resolve inside the same Config;
// defaults are already filled in by the daemon, except where a field's
// comment gives the meaning of its zero value. A Config handed to Compile
// or Apply must not be modified afterwards.
type Config struct {
	// Listeners are the `gtm listener` objects: where DNS is served.
	Listeners []Listener
	// Datacenters by full path.
	Datacenters map[string]*Datacenter
	// Links by full path.
	Links map[string]*Link
	// Servers are the `gtm server` objects by full path. They are called
	// Host here because Server is the DNS server itself.
	Servers map[string]*Host
	// Pools are the `gtm pool` objects by Key(type, full path).
	Pools map[string]*Pool
	// WideIPs are the `gtm wideip` objects by Key(type, full path); the
	// path's last element is the DNS name (/Common/www.example.com).
	WideIPs map[string]*WideIP
	// Regions by full path.
	Regions map[string]*Region
	// DistApps are the `gtm distributed-app` objects by full path
	// (distapp.go).
	DistApps map[string]*DistApp
	// Topology is every `gtm topology` record.
	Topology []TopologyRecord
	// Zones are the static zones served like a plain DNS server (what
	// BIG-IP keeps in ZoneRunner/BIND): SOA, NS, MX, A and other records.
	Zones []Zone
	// Settings are the `gtm global-settings` the package acts on.
	Settings Settings
	// RuleEnv is what the rules of listeners and wide IPs share (log,
	// data groups, table, static:: variables); nil gives them an Env of
	// their own.
	RuleEnv *rules.Env
	// Geo is the geolocation database the continent, country, state and
	// isp matches read; it is a store, so reloading the databases needs
	// no new plan. nil (or an empty store): they never match.
	Geo *geoip.Store
	// DNSSEC signs the answers of the names of its zones (`ltm dns
	// dnssec zone`) for queries with the DO bit; nil signs nothing.
	DNSSEC *dnssec.Signer
	// ProberPools are the `gtm prober-pool` objects by full path.
	ProberPools map[string]*ProberPool
	// Self is the gtm server (full path) that is this device, so prober
	// selection knows which datacenter this device probes from; "" when
	// none is: this device then probes only as outside-datacenter or
	// any-available.
	Self string
}

// Listener is a `gtm listener`: one address and port DNS is served on.
type Listener struct {
	Name string
	Addr netip.AddrPort
	// Protocol is "udp" or "tcp" as ip-protocol says; "" serves both, the
	// usual pair of BIG-IP listeners in one.
	Protocol string
	Disabled bool
	// Rules are the listener's iRules, in order: DNS_REQUEST for every
	// query it receives, DNS_RESPONSE for every answer it sends.
	Rules []*rules.Rule
	// Log, its dns profile's enable-logging, logs each query and answer
	// (nil: none); ProcessXfr, its process-xfr, has DNS Express answer
	// zone transfers; Rapid, its enable-rapid-response, has DNS Express
	// answer UDP queries first, RapidLast (rapid-response-last-action)
	// ending the others (listener_dns.go).
	Log        QueryLog
	ProcessXfr bool
	Rapid      bool
	RapidLast  string
	// NoGTM (enable-gtm no) keeps the wide IPs from answering, NoExpress
	// (enable-dns-express no) DNS Express's zones and NoBIND
	// (use-local-bind no) the static zones, BIG-IP's local BIND; Steps,
	// the profile's cache and unhandled-query-action, answers what
	// DNS Express and the wide IPs did not (nil: the static zones do).
	NoGTM, NoExpress, NoBIND bool
	Steps                    ProfileSteps
	// VLANs is the listener's vlans-enabled or vlans-disabled list (nil:
	// every VLAN), as the virtual servers' (vlans_linux.go).
	VLANs *config.VLANFilter
}

// Datacenter is a `gtm datacenter`. Disabling it takes every server,
// link and virtual server in it out of load balancing.
type Datacenter struct {
	Name     string
	Disabled bool
	// Prober is the source address of the RTT probes that measure this
	// datacenter's path to an LDNS (BIG-IP's big3d in the datacenter).
	// The zero value means the first address of the datacenter's first
	// server that has one. The address must be local to this host for
	// the probe to run; see README.md.
	Prober netip.Addr
	// ProberPreference, ProberFallback and ProberPool are what its
	// servers inherit (prober.go): "" is inside-datacenter and
	// any-available.
	ProberPreference, ProberFallback, ProberPool string
}

// Link is a `gtm link`: one uplink to an ISP. Virtual servers reached
// over it are unavailable while it is down, disabled or over a limit.
type Link struct {
	Name       string
	Datacenter string
	Disabled   bool
	// Prober is the source address of RTT probes over this link
	// (uplink-address). When set, members on this link are measured by
	// this path rather than by their datacenter's, so two links of one
	// datacenter are told apart.
	Prober netip.Addr
	// Limits in bits per second, 0 when the limit's -status is disabled.
	LimitInboundBps  int64
	LimitOutboundBps int64
	LimitTotalBps    int64
	// Ratio is link-ratio; 0 means 1.
	Ratio int
	// Monitor probes each of RouterAddresses (the link's monitor, BIG-IP's
	// gateway_icmp or a tcp check of the router): while the monitor finds
	// every router address down the link is down, and the virtual
	// servers reached over it leave the answers. The zero Monitor, or no
	// router address, probes nothing.
	Monitor         Monitor
	RouterAddresses []netip.Addr
}

// Host is a `gtm server`: a device in a datacenter hosting virtual servers.
type Host struct {
	Name       string
	Datacenter string
	Disabled   bool
	// Addresses are the device's addresses (addresses/devices).
	Addresses []netip.Addr
	// LimitMaxConnections caps the sum of its virtual servers' current
	// connections; 0 means no limit.
	LimitMaxConnections int64
	// Resource limits (limit-cpu-usage, limit-mem-avail, limit-max-bps,
	// limit-max-pps, each with its -status enabled; 0 means none): a
	// server whose CPU usage (percent) reaches LimitCPUUsage, whose
	// available memory (kilobytes) falls to LimitMemAvail or below, or
	// whose throughput (bits/s) or packet rate reaches its limit gets no
	// new users, so a site near saturation sheds load to the others. CPU
	// and memory come from the server's own report (SetServerMetrics);
	// throughput and packets from it too, else from the sum of its
	// virtual servers' metrics. A figure nobody reported does not count.
	LimitCPUUsage int64
	LimitMemAvail int64
	LimitMaxBps   int64
	LimitMaxPps   int64
	// BigIP (product bigip) makes the server a device that can probe for
	// the GSLB (a prober, over iQuery).
	BigIP bool
	// NoServiceCheck (iq-allow-service-check no) keeps a BIG-IP from
	// being asked to probe other servers' virtual servers: a device whose
	// owner allows it no service checks is never chosen as their prober.
	NoServiceCheck bool
	// ProberPreference, ProberFallback ("" or inherit: the datacenter's)
	// and ProberPool ("": the datacenter's) choose which device probes
	// its virtual servers (prober.go).
	ProberPreference, ProberFallback, ProberPool string
	// VirtualServers in configuration order.
	VirtualServers []*VirtualServer
}

// VirtualServer is one entry of a server's virtual-servers: an address
// the answer can point at.
type VirtualServer struct {
	Name        string
	Destination netip.AddrPort
	Disabled    bool
	// Link is the full path of the link this virtual server is reached
	// over; "" means none (only its datacenter and server gate it).
	Link string
	// Limits: 0 means no limit (the -status is disabled).
	LimitMaxConnections int64
	LimitMaxBps         int64
	// Monitor is how availability is probed; the zero value probes
	// nothing and leaves status to SetVirtualServerMetrics.
	Monitor Monitor
	// Score is gtm-score, for virtual-server-score.
	Score int
}

// MonitorType names a probe the package runs itself.
type MonitorType string

// The monitor types. Any BIG-IP monitor that checks a TCP service (tcp,
// tcp_half_open, http, https, gateway_icmp towards a TCP port) is mapped
// by the daemon to MonitorTCP; bigip (iQuery status) is MonitorNone plus
// SetVirtualServerMetrics.
const (
	MonitorNone MonitorType = ""
	MonitorTCP  MonitorType = "tcp"
)

// Monitor says how a virtual server's (or a pool member's) availability
// is probed.
type Monitor struct {
	// Spec, when set, is the probe itself, compiled as the LTM compiles
	// its monitors (http send/recv, https, udp, dns, ...): the GSLB runs
	// it at the destination; Type, Interval and Timeout are then unused.
	Spec *monitor.Spec
	Type MonitorType
	// Interval between probes; 0 means 30 s (BIG-IP's gtm tcp default).
	Interval time.Duration
	// Timeout: a virtual server with no successful probe for this long is
	// marked down; 0 means 3×Interval+1 s as BIG-IP computes it.
	Timeout time.Duration
	// Destination is the monitor's own destination (a gtm monitor's
	// destination other than *:*), where BIG-IP sends its probes instead
	// of the virtual server: its address, when set, replaces the virtual
	// server's, and its port, when not 0, the virtual server's port.
	Destination netip.AddrPort
}

// Mode is a load-balancing method keyword, spelled as tmsh spells it.
type Mode string

// The methods (reference §10.2). Preferred and fallback accept all of
// them; alternate only the static ones; pool-lb-mode only round-robin,
// ratio, topology and global-availability. completion-rate and
// fewest-hops are accepted and behave as a dynamic method whose metrics
// are missing: they fall through to the next level (quality-of-service
// too, when none of its metrics is known; cpu when no server reported
// its CPU usage).
const (
	RoundRobin            Mode = "round-robin"
	Ratio                 Mode = "ratio"
	Topology              Mode = "topology"
	GlobalAvailability    Mode = "global-availability"
	StaticPersistence     Mode = "static-persistence"
	ReturnToDNS           Mode = "return-to-dns"
	DropPacket            Mode = "drop-packet"
	FallbackIP            Mode = "fallback-ip"
	None                  Mode = "none"
	LowestRoundTripTime   Mode = "lowest-round-trip-time"
	LeastConnections      Mode = "least-connections"
	KilobytesPerSecond    Mode = "kilobytes-per-second"
	PacketRate            Mode = "packet-rate"
	VirtualServerCapacity Mode = "virtual-server-capacity"
	VirtualServerScore    Mode = "virtual-server-score"
	CompletionRate        Mode = "completion-rate"
	CPU                   Mode = "cpu"
	FewestHops            Mode = "fewest-hops"
	QualityOfService      Mode = "quality-of-service"
)

// Pool is a `gtm pool` of one record type.
type Pool struct {
	Name     string
	Type     RRType // "" is TypeA
	Disabled bool
	// Mode, Alternate and Fallback are load-balancing-mode, alternate-mode
	// and fallback-mode; "" means round-robin, round-robin, return-to-dns.
	Mode      Mode
	Alternate Mode
	Fallback  Mode
	// FallbackIP is fallback-ip; the zero value is `any` (no address).
	FallbackIP netip.Addr
	// TTL is the answer's TTL in seconds; 0 means 30.
	TTL uint32
	// MaxAnswers is max-answers-returned; 0 means 1.
	MaxAnswers int
	// Limits: the pool is out of the answers while its members' reported
	// connections, throughput (bits/s) or packet rate together reach one;
	// 0 means no limit (the -status is disabled).
	LimitMaxConnections int64
	LimitMaxBps         int64
	LimitMaxPps         int64
	// NoVerify answers with members whatever their virtual servers' and
	// their own monitors' up or down status (verify-member-availability
	// disabled); disabled objects and limits still count.
	NoVerify bool
	// QoS weighs the metrics of quality-of-service (the pool's qos-*
	// settings); nil means BIG-IP's defaults (DefaultQoS).
	QoS *QoSWeights
	// ManualResume (manual-resume enabled) keeps a member that went down
	// (its virtual server, server or own monitor said so) out of the
	// answers once its checks pass again, until the operator re-enables
	// it: a flapping site is not given users back unattended.
	ManualResume bool
	// MinUpMode and MinUpValue (min-members-up-mode, -value) make the
	// pool unavailable while fewer members than the value (at-least) or
	// than that share of its members (percent) are available, so the
	// wide IP's next pool answers before this one is overloaded. ""
	// (off) never does.
	MinUpMode  MinUpMode
	MinUpValue int
	// DynamicRatio (dynamic-ratio enabled) makes the dynamic methods
	// share the answers in proportion to each member's measured metric
	// instead of giving them all to the best member, so the best one is
	// not overrun while its figures catch up.
	DynamicRatio bool
	// Members in configuration order; member-order sorts them.
	Members []PoolMember
}

// QoSWeights are a pool's qos-* coefficients: quality-of-service scores
// each member by the weighted sum of its metrics, each normalised against
// the best candidate's.
type QoSWeights struct {
	RTT          int // qos-rtt: the LDNS's round trip over the member's path
	HitRatio     int // qos-hit-ratio: the share of probes of the LDNS over the member's path answered
	Hops         int // qos-hops: the hops between the member's path and the LDNS (fewer is better)
	Topology     int // qos-topology: the topology score
	PacketRate   int // qos-packet-rate: packets per second (fewer is better)
	Kbps         int // qos-kilobytes-second: throughput (less is better)
	VSCapacity   int // qos-vs-capacity: nodes up behind the virtual server
	VSScore      int // qos-vs-score: gtm-score
	LinkCapacity int // qos-lcs: the share of the link's limit still free
}

// DefaultQoS are BIG-IP's defaults of the qos-* settings.
var DefaultQoS = QoSWeights{RTT: 50, HitRatio: 5, Hops: 0, Topology: 0, PacketRate: 1, Kbps: 3, VSCapacity: 0, VSScore: 0, LinkCapacity: 30}

// MinUpMode is a pool's min-members-up-mode: whether its
// min-members-up-value is a count of members or a share of them, so a
// pool that grows keeps the same margin.
type MinUpMode string

// The min-members-up modes; "" is off.
const (
	MinUpOff     MinUpMode = "off"
	MinUpAtLeast MinUpMode = "at-least"
	MinUpPercent MinUpMode = "percent"
)

// PoolMember is one member of a gtm pool: `<server>:<virtual server>` in
// A and AAAA pools, a domain name (Target) in the other types.
type PoolMember struct {
	// Server is the gtm server's full path, VirtualServer the name of one
	// of its virtual servers.
	Server        string
	VirtualServer string
	// Target is the domain name a CNAME, MX, SRV or NAPTR member answers
	// with. A target that names an A or AAAA wide IP of this
	// configuration is available while that wide IP is, unless
	// StaticTarget says it is a name outside the GSLB (always available).
	Target       string
	StaticTarget bool
	// Priority is an MX member's preference, an SRV member's priority and
	// an SVCB or HTTPS member's SvcPriority;
	// Weight and Port are an SRV member's; Preference, Flags and Service a
	// NAPTR member's (its order is Order).
	Priority   uint16
	Weight     uint16
	Port       uint16
	Preference uint16
	Flags      string
	Service    string
	Order      int
	// SVCB are an SVCB or HTTPS member's SvcParams; its SvcPriority is
	// Priority (0: alias mode) and its port SvcParam Port (0: none).
	SVCB SVCBParams
	// Monitor is the gtm pool's monitor, or the member's own: probed at
	// the member's virtual server, it must find it up too for the pool
	// to answer with it (the virtual server's own monitor still counts).
	Monitor  Monitor
	Ratio    int // 0 means 1
	Disabled bool
	// LimitMaxConnections: 0 means no limit.
	LimitMaxConnections int64
}

// WideIP is a `gtm wideip` of one record type: it answers the queries of
// its type for its names (a CNAME wide IP answers every type), from pools
// of its type.
type WideIP struct {
	// Name is the full path; its last element is the DNS name.
	Name     string
	Type     RRType // "" is TypeA
	Disabled bool
	// Aliases are further names, possibly with * and ? wildcards.
	Aliases []string
	// PoolLBMode is pool-lb-mode; "" means round-robin.
	PoolLBMode Mode
	Pools      []WideIPPool
	// CNAMEPools are pools-cname: CNAME pools (by Key(TypeCNAME, path))
	// an A or AAAA wide IP balances with its Pools, by order and ratio
	// (on equal order a pool of Pools comes first); when one is chosen
	// the answer is its CNAME record, and the resolver follows it.
	CNAMEPools []WideIPPool
	// Persistence keeps an LDNS on its answer for PersistTTL (0 means
	// 3600 s), matching LDNS addresses under PersistCIDR4/6 (0 means 32
	// and 128).
	Persistence  bool
	PersistTTL   time.Duration
	PersistCIDR4 int
	PersistCIDR6 int
	// LastResortPool is tried when every pool fails; "" means none.
	LastResortPool string
	// FailureResponse answers a query the wide IP cannot resolve (no
	// member available, the wide IP disabled) with FailureRcode and the
	// zone's SOA at FailureTTL instead of returning to DNS
	// (failure-rcode-response, failure-rcode, failure-rcode-ttl).
	FailureResponse bool
	FailureRcode    int
	FailureTTL      uint32
	// FullResponse adds the zone's NS records to the authority section of
	// an answer and their addresses to the additional one
	// (minimal-response disabled).
	FullResponse bool
	// TopologyPreferECS is topology-prefer-edns0-client-subnet enabled:
	// a resolver that forwards its client's subnet (EDNS0 Client Subnet,
	// RFC 7871) is served for where that client is, not where the
	// resolver is, so topology (pool and member level, the records' LDNS
	// side and its geolocation) scores the subnet's address; the answer
	// echoes the option with the source prefix as its scope.
	TopologyPreferECS bool
	// DecisionLog is load-balancing-decision-log-verbosity: which steps
	// of each decision the server log gets, for tuning a wide IP without
	// a packet capture; 0 logs nothing.
	DecisionLog DecisionLog
	// Rules are the wide IP's iRules, in order: DNS_REQUEST for each A
	// query of its names, before load balancing; `pool`, `cname`, `host`,
	// `DNS::return` and `DNS::drop` there decide the answer.
	Rules []*rules.Rule
}

// WideIPPool is one entry of a wide IP's pools.
type WideIPPool struct {
	Pool  string
	Order int
	Ratio int // 0 means 1
}

// Region is a `gtm region`: a named set of matches, any of which puts an
// address (or a datacenter, pool, ...) in the region.
type Region struct {
	Name    string
	Members []Match
}

// MatchKind is what a topology or region entry matches on.
type MatchKind string

// The match kinds. Continent, country, state and isp look the address up
// in Config.Geo; without a database loaded they never match (a negated
// one always does), and README.md says so.
const (
	MatchSubnet     MatchKind = "subnet"
	MatchRegion     MatchKind = "region"
	MatchDatacenter MatchKind = "datacenter"
	MatchPool       MatchKind = "pool"
	MatchContinent  MatchKind = "continent"
	MatchCountry    MatchKind = "country"
	MatchState      MatchKind = "state"
	MatchISP        MatchKind = "isp"
)

// Match is one side of a topology record, or one region member:
// `[not] subnet 10.0.0.0/8`, `[not] region /Common/r`, `datacenter /Common/dc1`.
type Match struct {
	Not    bool
	Kind   MatchKind
	Prefix netip.Prefix // for MatchSubnet
	Name   string       // for the other kinds: a full path or a code
}

// TopologyRecord is `gtm topology ldns: <LDNS> server: <Server> { order score }`.
type TopologyRecord struct {
	LDNS   Match
	Server Match
	Order  int
	Score  int
}

// Zone is a static zone in master-file format; Origin is its apex.
type Zone struct {
	Origin string
	// Data is the zone's records, one per line as in a BIND zone file
	// ($TTL and $ORIGIN allowed; relative names are under Origin).
	Data string
}

// Settings are the global settings the package acts on. The zero value is
// BIG-IP's default for each.
type Settings struct {
	// LDNSPrefix4/6 group LDNS addresses in the RTT table: 0 means /24
	// and /64 (every resolver of a site shares its paths); 32/128 keep
	// each address apart.
	LDNSPrefix4 int
	LDNSPrefix6 int
	// PathTTL is how long an RTT measurement is used before the LDNS is
	// probed again; 0 means 2400 s (BIG-IP's path-ttl).
	PathTTL time.Duration
	// ProbeTimeout bounds one RTT probe; 0 means 2 s.
	ProbeTimeout time.Duration
	// ProbePort is the LDNS port probed; 0 means 53.
	ProbePort uint16
	// ProbeProtocols are tried in order until one gets an answer:
	// "dns_dot" (a UDP query for `. NS`; any reply counts) and "tcp" (a
	// TCP handshake with ProbePort; a reset counts too). nil means both.
	ProbeProtocols []string
	// MaxProbes bounds LDNS probes in flight; 0 means 64.
	MaxProbes int
	// StaticPersistCIDR4/6 mask the LDNS for static-persistence; 0 means
	// 32 and 128.
	StaticPersistCIDR4 int
	StaticPersistCIDR6 int
	// TopologyOrderOnly is topology-longest-match no: records are tried
	// by their order field alone.
	TopologyOrderOnly bool
	// TopologyDenyZeroScores is topology-allow-zero-scores no.
	TopologyDenyZeroScores bool
	// NoVerifyVS is verify-vs-availability no: every pool answers as
	// with verify-member-availability disabled, whatever the monitors
	// and reports say, for sites whose checks are run elsewhere.
	NoVerifyVS bool
	// RespectFallback is respect-fallback-dependency yes: a pool's
	// fallback method picks among available members only. By default
	// (no), when no member is available, it picks among the members the
	// operator has not disabled whatever their monitors say, as BIG-IP's
	// fallback ignores availability: the answer is a site that may be
	// down rather than none.
	RespectFallback bool
	// IgnorePathTTL is ignore-path-ttl yes: an RTT measurement older
	// than PathTTL still decides while the LDNS is probed again; without
	// it an expired measurement counts as none, and the alternate method
	// answers until the new one arrives.
	IgnorePathTTL bool
	// NoDrainPersistent is drain-persistent-requests no: an LDNS whose
	// persistence record names a member the operator disabled (the
	// member, its virtual server or its server) is load balanced afresh
	// at once. By default (yes) it keeps that member while it is
	// otherwise up, so disabling drains the site as persistence expires.
	NoDrainPersistent bool
	// MonitorDisabled is monitor-disabled-objects yes: disabled virtual
	// servers and members are still probed, so their status is known
	// when they are enabled; by default their probes stop.
	MonitorDisabled bool
	// InactiveLDNSTTL is inactive-ldns-ttl: an LDNS that has not asked
	// for that long leaves the LDNS table with its measurements, so the
	// table holds the resolvers that use this GSLB, not every one that
	// ever did; 0 means 2419200 s (28 days, BIG-IP's default).
	InactiveLDNSTTL time.Duration
	// InactivePathsTTL is inactive-paths-ttl: a path's measurement to
	// an LDNS not renewed for that long is dropped (a path no longer
	// probed, one whose LDNS stopped asking), so `show gtm ldns` and the
	// RTT methods do not keep what no probe confirms; 0 means 604800 s
	// (7 days).
	InactivePathsTTL time.Duration
	// NoCacheLDNS is cache-ldns-servers no: no LDNS is remembered, so
	// none is probed and the methods measured per LDNS (round trip,
	// hops, hit ratio) have no figure and pass to the next level; the
	// table is emptied.
	NoCacheLDNS bool
	// UseClientSubnet makes an EDNS client-subnet option stand for the
	// LDNS address in topology, static-persistence and persistence
	// decisions (RTT stays with the LDNS, the only address one can probe).
	UseClientSubnet bool
	// NoProbe is gtm global-settings metrics-exclusions' addresses: LDNS
	// addresses never probed for path metrics (a resolver whose owner
	// asked not to be probed, or one behind a firewall that alarms on
	// probes). Such an LDNS is still answered; its paths stay unmeasured,
	// so the round-trip methods pass to the next level for it, as for an
	// LDNS not measured yet.
	NoProbe []netip.Addr
	// MetricsProtocols is metrics-collection-protocols: the protocols a
	// path measurement tries, in order, before ProbeProtocols ("icmp":
	// an ICMP echo from the path's source; "dns_dot", "tcp" as there).
	// nil: ProbeProtocols alone.
	MetricsProtocols []string
}

// excluded reports whether the LDNS at a is one never probed.
func (st *Settings) excluded(a netip.Addr) bool {
	for _, x := range st.NoProbe {
		if x == a {
			return true
		}
	}
	return false
}
