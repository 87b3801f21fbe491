package rules

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/ssefilter"
	"github.com/openltm/openltm/rules/tcl"
)

// Statics holds the static:: variables, global to every rule and
// connection. Reads are lock-free (an atomic snapshot) because every event
// may read them; writes, meant for RULE_INIT, copy the map.
type Statics struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]tcl.Value]
}

// NewStatics returns a static variable store holding only
// static::tcl_platform.
func NewStatics() *Statics {
	s := &Statics{}
	m := map[string]tcl.Value{}
	s.m.Store(&m)
	seedPlatform(s) // platform.go
	return s
}

// Get reads static::name (name includes the static:: prefix).
func (s *Statics) Get(name string) (tcl.Value, bool) {
	v, ok := (*s.m.Load())[name]
	return v, ok
}

// Set writes a static variable.
func (s *Statics) Set(name string, v tcl.Value) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.m.Load()
	m := make(map[string]tcl.Value, len(old)+1)
	for k, x := range old {
		m[k] = x
	}
	m[name] = forceString(v)
	s.m.Store(&m)
	return nil
}

// forceString caches the string form so that concurrent readers never
// race to build it.
func forceString(v tcl.Value) tcl.Value { return tcl.Str(v.String()) }

// Env is what rules share across connections: the log, data groups, the
// session table and static variables. The daemon builds one per running
// configuration.
type Env struct {
	// LSN is the running lsn pools' tables, for LSN::inbound-entry,
	// LSN::persistence-entry, XLAT::listen and
	// XLAT::src_endpoint_reservation (commands_lsnentry.go); nil: they
	// are Tcl errors.
	LSN LSNTables
	// Log receives log lines; facility is like "local0.info" and line is
	// already in BIG-IP's form ("Rule /Common/r <EVENT>: text").
	Log func(facility, line string)
	// DataGroup finds a data group by name (bare or /Partition/name).
	DataGroup func(name string) (*DataGroup, bool)
	// Table is the session table behind the table command.
	Table *Table
	// Statics holds static:: variables.
	Statics *Statics
	// Steps bounds the commands one event may run (0: DefaultSteps).
	Steps int
	// Timeout bounds the wall time of one event (0: DefaultTimeout).
	Timeout time.Duration
	// LogRemote sends a `log ADDR facility.level text` line to that
	// syslog server instead of the local log (nil: the local log).
	LogRemote func(to netip.AddrPort, facility, line string)
	// IFile finds an iFile by the name a rule gives (bare names are in
	// /Common); IFiles lists them all for `ifile listall`.
	IFile  func(name string) (*IFile, bool)
	IFiles func() []string
	// HSL sends HSL::send's messages; nil makes HSL::open a Tcl error.
	HSL HSL
	// Stats holds the statistics profiles' fields (STATS::); nil makes
	// those commands Tcl errors.
	Stats *StatsProfiles
	// IStats is the store of ISTATS:: keys; nil makes those commands
	// Tcl errors.
	IStats *IStats
	// Resolver answers RESOLV::lookup; nil makes it a Tcl error.
	Resolver Resolver
	// NetResolver finds a net dns-resolver by its full path, for
	// RESOLVER::name_lookup; nil (or not found) makes it a Tcl error.
	NetResolver func(name string) (MsgResolver, bool)
	// VirtualAddr finds a virtual server's address by its full path, for
	// a sideband `connect` naming one; nil: only addresses are taken.
	VirtualAddr func(name string) (netip.AddrPort, bool)
	// PassOver makes the steering of wildcard and network virtuals pass
	// over dst (udp: a UDP destination) until release, for a sideband
	// `connect` to an address the rule computed, which the commit could
	// not pass over; nil: nothing is steered.
	PassOver func(dst netip.AddrPort, udp bool) (release func())
	// VLANTag is the tag of the net vlan a Linux interface (by index)
	// carries, for LINK::vlan_id; nil or false: the interface is in no
	// VLAN.
	VLANTag func(ifindex int) (int, bool)
	// FlowTable answers FLOWTABLE::count and FLOWTABLE::limit; nil makes
	// them Tcl errors.
	FlowTable FlowTable
	// Geo answers whereis; nil answers every address with empty strings.
	Geo Geolocator
	// TrafficGroup names the traffic group of a virtual server's
	// address (its full path) for traffic_group, which rules read to
	// keep table entries apart per traffic group; nil answers
	// DefaultTrafficGroup.
	TrafficGroup func(virtual string) string
	// TrafficClasses are the traffic classes a virtual server (its full
	// path) names in its traffic-classes, for LB::class; nil: none.
	TrafficClasses func(virtual string) []TrafficClass
	// HAStatus says whether this device is active for the traffic group
	// of a virtual server's address ("" : the device itself), for
	// HA::status, which rules ask before opening sideband or log
	// connections a standby should not; nil answers active.
	HAStatus func(virtual string) bool
	// CPUUsage is ltmd's processor load averaged over an interval, a
	// percent of all the host's processors, for cpu usage, which rules
	// ask to shed work when busy; nil makes cpu usage a Tcl error.
	CPUUsage func(interval time.Duration) float64
	// IPFIX answers the IPFIX:: commands; nil makes them Tcl errors.
	IPFIX IPFIX
	// Auth finds the auth profile AUTH::start names (commands_auth.go);
	// nil makes AUTH::start a Tcl error.
	Auth AuthService
	// ILX reaches the ilx plugins' extensions (ILX::init, ILX::call,
	// ILX::notify; commands_ilx.go); nil makes them Tcl errors.
	ILX ILX
	// AAA finds the internal virtual server AAA::auth_send and
	// AAA::acct_send name (commands_aaa.go); nil makes them Tcl errors.
	AAA AAAService
}

// budget is the steps and the time one event (or one script `after`
// scheduled) may take: the Env's, else the defaults.
func (env *Env) budget() (steps int, timeout time.Duration) {
	steps, timeout = env.Steps, env.Timeout
	if steps <= 0 {
		steps = DefaultSteps
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return steps, timeout
}

func (e *Env) virtualAddr() func(string) (netip.AddrPort, bool) {
	if e == nil {
		return nil
	}
	return e.VirtualAddr
}

func (e *Env) passOver() func(netip.AddrPort, bool) func() {
	if e == nil {
		return nil
	}
	return e.PassOver
}

func (e *Env) resolver() Resolver {
	if e == nil {
		return nil
	}
	return e.Resolver
}

// Default budgets for one event.
const (
	DefaultSteps   = 1_000_000
	DefaultTimeout = 500 * time.Millisecond
)

func (e *Env) log(facility, line string) {
	if e != nil && e.Log != nil {
		e.Log(facility, line)
	}
}

// RuntimeError is an error raised by a rule while handling an event. The
// caller resets that connection only; Line is the log line already sent.
type RuntimeError struct {
	Rule  string
	Event Event
	Msg   string
	// Where is rule:line:column of the failing command when known.
	Where string
	Line  string
}

func (e *RuntimeError) Error() string { return e.Line }

// Program is the ordered list of rules attached to one virtual server,
// with the handlers of each event sorted by priority (stable, so rules in
// list order break ties).
type Program struct {
	env      *Env
	rules    []*Rule
	handlers [numEvents][]progHandler
	pool     sync.Pool
	secrets  bool
	sessions bool // ControlsSessions
	records  bool // SizesRecords
	// checksPeers: a rule names SSL::authenticate or
	// SSL::secure_renegotiation (ChecksPeers).
	checksPeers bool
	// uncleans: a rule names SSL::unclean_shutdown.
	uncleans bool
	profiles bool
	waits    bool
	syn      bool
	link     bool
	// switchesH2: a rule has HTTP2::disable or HTTP2::enable.
	switchesH2 bool
	// bwc: a rule calls BWC::policy or IP::ingress_rate_limit
	// (AttachesBWC).
	bwc bool
	// clones: a rule has a clone pool command (Clones).
	clones bool
	// steersLSN: a rule has an LSN:: steering command (SteersLSN).
	steersLSN bool
	// fixMaps are FIX::tag map's sender tag maps (commands_fix.go).
	fixMaps fixMaps
}

type progHandler struct {
	h  *Handler
	ri int
}

// NewProgram combines rules in the order they are listed on the virtual.
func NewProgram(env *Env, rules ...*Rule) *Program {
	if env == nil {
		env = &Env{}
	}
	if env.Statics == nil {
		env.Statics = NewStatics()
	}
	if env.Table == nil {
		env.Table = NewTable()
	}
	p := &Program{env: env, rules: rules}
	for i, r := range rules {
		p.secrets = p.secrets || r.keepsSecrets
		p.sessions = p.sessions || r.controlsSessions
		p.records = p.records || r.sizesRecords
		p.checksPeers = p.checksPeers || r.checksPeers
		p.uncleans = p.uncleans || r.uncleans
		p.profiles = p.profiles || r.choosesProfile
		p.syn = p.syn || r.readsSYN
		p.link = p.link || r.readsLink
		p.waits = p.waits || r.waits
		p.switchesH2 = p.switchesH2 || r.switchesH2
		p.bwc = p.bwc || r.attachesBWC
		p.clones = p.clones || r.clones
		p.steersLSN = p.steersLSN || r.steersLSN
		for _, h := range r.handlers {
			p.handlers[h.Event] = append(p.handlers[h.Event], progHandler{h: h, ri: i})
		}
	}
	for ev := range p.handlers {
		sort.SliceStable(p.handlers[ev], func(i, j int) bool {
			return p.handlers[ev][i].h.Priority < p.handlers[ev][j].h.Priority
		})
	}
	return p
}

// Rules returns the program's rules in list order.
func (p *Program) Rules() []*Rule { return p.rules }

// Handles reports whether any rule handles ev, so the dataplane can skip
// work (collecting data, creating sessions) nobody asked for.
// FLOW_INIT handlers count for CLIENT_ACCEPTED, whose run carries them out.
func (p *Program) Handles(ev Event) bool {
	return len(p.handlers[ev]) > 0 || ev == ClientAccepted && len(p.handlers[FlowInit]) > 0
}

// KeepsSecrets reports whether a rule reads TLS key material
// (SSL::sessionsecret, SSL::tls13_secret): crypto/tls gives it only to a
// key-log writer set before the handshake, which the dataplane then sets
// on these connections alone, so that the others pay nothing for it.
func (p *Program) KeepsSecrets() bool { return p.secrets }

// ControlsSessions reports whether a rule acts on or reads the client's
// TLS session or hello after the handshake (SSL::session invalidate,
// SSL::sessionticket, SSL::is_renegotiation_secure): the dataplane names
// these connections' tickets and keeps their hello's signal, and the
// others pay nothing for it.
func (p *Program) ControlsSessions() bool { return p != nil && p.sessions }

// SizesRecords reports whether a rule may change a client's
// allow-dynamic-record-sizing (SSL::allow_dynamic_record_sizing): the
// dataplane then lets the handshake's configuration follow the rule,
// which costs a configuration per handshake where it does.
func (p *Program) SizesRecords() bool { return p != nil && p.records }

// ChecksPeers reports whether a rule changes how a connection checks its
// TLS peers (SSL::authenticate, SSL::secure_renegotiation): the
// dataplane then lets the handshakes follow the rule, which costs a
// configuration per handshake where it does, and the others nothing.
func (p *Program) ChecksPeers() bool { return p != nil && p.checksPeers }

// UncleanShutdowns reports whether a rule names SSL::unclean_shutdown,
// which an http virtual's clients on the event loops could not follow:
// they stay on the goroutine front stage.
func (p *Program) UncleanShutdowns() bool { return p != nil && p.uncleans }

// ChoosesSSLProfile reports whether a rule switches a connection's
// client-ssl or server-ssl profile (SSL::profile): the commit then builds
// the profiles it may name for this virtual alone, and the others pay
// nothing for them.
func (p *Program) ChoosesSSLProfile() bool { return p != nil && p.profiles }

// ReadsSYN reports whether a rule reads the client's SYN (TCP::option
// get, IP::ttl, IP::hops, IP::tos without a value): Linux keeps a SYN's
// headers only when the listener asked before the client came, which
// the dataplane then does for these virtuals alone.
func (p *Program) ReadsSYN() bool { return p != nil && p.syn }

// ReadsLink reports whether a rule asks which VLAN a connection came in
// on (LINK::vlan_id): Linux tells an accepted connection's arrival
// interface only when its listener asked before the client came
// (IP_PKTINFO), which the dataplane then does for these virtuals alone.
func (p *Program) ReadsLink() bool { return p != nil && p.link }

// Waits reports whether a rule suspends its event: `after ms` (no
// script), as tarpits do, or a command that waits on the network
// (sideband connect and recv, RESOLV::lookup). The dataplane runs such a
// virtual's connections on goroutines of their own, where waiting holds
// up no other client, instead of on its event loops (Blocker).
func (p *Program) Waits() bool { return p != nil && p.waits }

// AttachesBWC reports whether a rule calls BWC::policy or
// IP::ingress_rate_limit: a message-based virtual then gives its clients
// a connection a bandwidth controller or an ingress limit can pace (one
// test per read and write while none is set), on goroutines of their own
// since a pace waits, which other virtuals do not pay for.
func (p *Program) AttachesBWC() bool { return p != nil && p.bwc }

// Clones reports whether a rule has a clone pool command: a path that
// must prepare per message to take one (a dns virtual's query) does so
// for these virtuals alone.
func (p *Program) Clones() bool { return p != nil && p.clones }

// SteersLSN reports whether a rule has an LSN:: steering command
// (LSN::pool, address, port, persistence, inbound, disable): an http
// virtual then finds the client's choice when it opens a member
// connection, which a virtual whose rules have none does not look for.
func (p *Program) SteersLSN() bool { return p != nil && p.steersLSN }

// Init runs every RULE_INIT handler once, as BIG-IP does when a rule is
// loaded or modified.
func (p *Program) Init() error {
	if !p.Handles(RuleInit) {
		return nil
	}
	s := p.NewConnState(nil)
	defer s.Release()
	return s.Run(RuleInit)
}

// Session is one connection's rule state: its variables, disabled events
// and the connection. The dataplane makes one per flow that has rules.
type ConnState struct {
	prog     *Program
	conn     Conn
	in       *tcl.Interp
	disabled []eventBits // per rule: bit per event
	event    Event
	cur      *Handler
	curIdx   int
	side     Side
	// searches are the open class startsearch positions.
	searches  map[string]int
	searchSeq int
	// respondedTo is the number of the request a rule answered with
	// HTTP::respond or HTTP::redirect (0: none).
	respondedTo int
	// addrs caches the text of each endpoint's address.
	addrs [4]addrText
	// shard is the copy of the rules' counters this state counts into.
	shard uint32
	// ended is set when the running handler rejects, drops or discards.
	ended bool
	// crypto holds the CRYPTO:: -ctx contexts not yet finished, by name.
	crypto map[string]*cryptoCtx
	// flowStarted is set once the flow's first event ran (FLOW_INIT's
	// handlers before it).
	flowStarted bool
	// stream is the stream filter's state (nil: no stream profile).
	stream *StreamState
	// rewrite is the rewrite profile's switch (commands_rewrite.go).
	rewrite *RewriteState
	// icap is the ICAP message in hand in ICAP_REQUEST and
	// ICAP_RESPONSE (nil otherwise).
	icap *ICAPMessage
	// pcp is the PCP request or answer in hand in PCP_REQUEST and
	// PCP_RESPONSE (nil otherwise; commands_pcp.go).
	pcp *PCPMessage
	// json is the JSON:: commands' handles and the event's document
	// (commands_json.go; nil until a rule uses them).
	json *jsonState
	// html is the html profile's state (commands_html.go; nil: no html
	// profile).
	html *HTMLState
	// sse is the sse profile's event in hand (commands_sse.go).
	sse *ssefilter.Event
	// mqtt is the MQTT packet in hand in the MQTT_ events
	// (commands_mqtt.go; nil without an mqtt profile).
	mqtt *MQTTState
	// fix is the FIX message in hand in FIX_HEADER and FIX_MESSAGE
	// (commands_fix.go; nil without a fix profile).
	fix *FIXState
	// rtsp is the RTSP message in hand in the RTSP_ events
	// (commands_rtsp.go; nil without an rtsp profile).
	rtsp *RTSPState
	// diameter is the Diameter message in hand in the DIAMETER_ events
	// (commands_diameter.go; nil without a diameter profile).
	diameter *DiameterState
	// mr is the generic message in hand in the GENERICMESSAGE_ and MR_
	// events and the connection's router (commands_mrf.go; nil without
	// a generic protocol profile).
	mr *MRState
	// gtp is the GTP message in hand in the GTP_ events and the messages
	// the rule made (commands_gtp.go; nil without a gtp profile).
	gtp *GTPState
	// compress is the COMPRESS:: commands' state (nil: no
	// http-compression profile).
	compress *CompressState
	// cache is the CACHE:: commands' state (nil: no web-acceleration
	// profile).
	cache *CacheState
	// adapt is the ADAPT:: commands' state (nil: no request-adapt or
	// response-adapt profile; commands_adapt.go).
	adapt *AdaptState
	// ws is the WS:: commands' state (nil: no websocket profile).
	ws *WSState
	// sip is the SIP:: commands' state (nil: no sip profile).
	sip *SIPState
	// radius: the virtual server has a radius profile (commands_radius.go).
	radius bool
	// dhcp is the version of the virtual server's dhcpv4 or dhcpv6
	// profile, 0 without one (commands_dhcp.go).
	dhcp int
	// sidebands are the rule's open sideband connections, by id
	// (commands_sideband.go); sidebandSeq numbers them.
	sidebands   map[string]*sideband
	sidebandSeq int
	// listeners are when the related listeners the rules opened close
	// (commands_listen.go).
	listeners []time.Time
	// afters are the scripts `after` scheduled (commands_after.go); nil
	// until the first one.
	afters *afterState
	// names are the NAME::lookup queries not yet answered to the rule,
	// in the order asked; nameResp is NAME::response's answer
	// (commands_name.go).
	names    []*nameLookup
	nameResp tcl.Value
	// ipfix is the IPFIX::msg messages of the connection
	// (commands_ipfix.go; nil until a rule makes one).
	ipfix *ipfixState
	// xml is the xml profile's state (commands_xml.go; nil until used).
	xml *XMLState
	// auth are the AUTH:: sessions (commands_auth.go); nil until the
	// first AUTH::start.
	auth *authState
	// aaa are the AAA:: requests (commands_aaa.go); nil until the
	// first AAA::auth_send or AAA::acct_send.
	aaa *aaaState
}

// addrText is an endpoint's address and its text.
type addrText struct {
	ap   netip.AddrPort
	text tcl.Value
}

// NewConnState starts the rule state for a connection. States are pooled;
// call Release when the connection ends.
func (p *Program) NewConnState(c Conn) *ConnState {
	s, _ := p.pool.Get().(*ConnState)
	if s == nil {
		s = &ConnState{prog: p, in: tcl.NewInterp(commandTable())}
		s.in.Data = s
		s.in.Statics = p.env.Statics
		s.in.MaxDepth = 100
		s.disabled = make([]eventBits, len(p.rules))
		s.shard = shardSeq.Add(1)
	}
	s.conn = c
	return s
}

// Release returns the session to its program's pool.
func (s *ConnState) Release() {
	s.in.ResetVars()
	clear(s.disabled)
	clear(s.searches)
	clear(s.crypto)
	s.flowStarted = false
	s.stream = nil
	s.compress = nil
	s.icap = nil
	s.pcp = nil
	s.html = nil
	if s.json != nil {
		s.SetJSON(nil)
	}
	s.cache = nil
	s.ws = nil
	s.sip = nil
	s.mqtt = nil
	s.fix = nil
	s.diameter = nil
	s.gtp = nil
	s.closeSidebands()
	s.listeners = s.listeners[:0]
	s.cancelAfters()
	s.cancelNames()
	if s.ipfix != nil {
		s.ipfix.reset()
	}
	s.endAuth()
	s.endAAA()
	s.nameResp = tcl.Value{}
	s.xml = nil
	s.sidebandSeq = 0
	s.searchSeq = 0
	s.respondedTo = 0
	s.addrs = [4]addrText{}
	s.conn = nil
	s.cur = nil
	s.prog.pool.Put(s)
}

// Conn returns the connection the session serves.
func (s *ConnState) Conn() Conn { return s.conn }

// monoEpoch is the origin of the events' clock reads: time.Since of it
// reads the monotonic clock alone, about half the cost of time.Now, and
// a deadline made from it compares by the monotonic clock.
var monoEpoch = time.Now()

// Run runs every enabled handler of ev in priority order. A Tcl error stops
// the event, is logged as "TCL error: /Common/r <EVENT> - message" and is
// returned as a *RuntimeError: the caller resets this connection only.
//
// The flow's first event runs FLOW_INIT's handlers before its own, as
// BIG-IP raises FLOW_INIT once when a flow starts, before
// CLIENT_ACCEPTED (or a DNS listener's DNS_REQUEST): rules set up their
// per-connection variables there. A flow FLOW_INIT rejects or drops
// runs no further handlers of that event.
func (s *ConnState) Run(ev Event) error {
	if !s.flowStarted && ev != RuleInit && ev != FlowInit {
		s.flowStarted = true
		if len(s.prog.handlers[FlowInit]) > 0 {
			if err := s.Run(FlowInit); err != nil || s.ended {
				return err
			}
		}
	}
	hs := s.prog.handlers[ev]
	if len(hs) == 0 {
		return nil
	}
	env := s.prog.env
	steps, timeout := env.budget()
	// One clock read starts the event; each handler's end is read once
	// and starts the next one's time. Both read the monotonic clock only.
	start := time.Since(monoEpoch)
	limit := start + timeout // the event's deadline, after monoEpoch
	s.event = ev
	for _, ph := range hs {
		h := ph.h
		if s.disabled[ph.ri].has(ev) {
			continue
		}
		s.cur = h
		s.curIdx = ph.ri
		s.side = ev.side()
		if s.fix != nil { // the member's FIX messages run on its side (commands_fix.go)
			s.side = s.fixSide(ev)
		}
		s.ended = false
		s.in.SetBudgetAfter(steps, monoEpoch, limit)
		_, err := s.in.Eval(h.body)
		end := time.Since(monoEpoch)
		d := end - start
		start = end
		if err != nil && !tcl.IsReturn(err) {
			o := ranFailed
			if errors.Is(err, tcl.ErrBudget) {
				o = ranAborted
			}
			h.stats.record(s.shard, d, o)
			return s.fail(h, err)
		}
		o := ranOK
		if s.ended {
			o = ranAborted
		}
		h.stats.record(s.shard, d, o)
	}
	s.cur = nil
	if s.auth.waiting() {
		if err := s.raiseAuthResults(ev); err != nil || s.names == nil { // commands_auth.go
			return err
		}
	}
	if s.names != nil && ev != NameResolved {
		return s.raiseNameResolved(ev) // commands_name.go
	}
	return nil
}

func (s *ConnState) fail(h *Handler, err error) error {
	msg := err.Error()
	where := ""
	var te *tcl.Error
	if errors.As(err, &te) {
		where = te.Where()
	}
	if errors.Is(err, tcl.ErrBudget) {
		msg = fmt.Sprintf("%s (more than %d commands or %v)", msg, max(s.prog.env.Steps, 0), s.prog.env.Timeout)
		if s.prog.env.Steps <= 0 || s.prog.env.Timeout <= 0 {
			msg = tcl.ErrBudget.Error()
		}
	}
	line := fmt.Sprintf("TCL error: %s <%s> - %s", h.rule.Name, h.Event, msg)
	if where != "" {
		line += "     at " + where
	}
	s.prog.env.log("local0.err", line)
	if te != nil && te.Stack != "" {
		// A bug of the interpreter's, not the rule's: its stack is
		// for the report.
		s.prog.env.log("local0.err", fmt.Sprintf("TCL internal error: %s <%s> - %s", h.rule.Name, h.Event, te.Stack))
	}
	s.cur = nil
	return &RuntimeError{Rule: h.rule.Name, Event: h.Event, Msg: msg, Where: where, Line: line}
}

// Var reads a connection variable, for tests and diagnostics.
func (s *ConnState) Var(name string) (string, bool) {
	v, err := s.in.GetVar(name)
	if err != nil {
		return "", false
	}
	return v.String(), true
}

// sessionOf finds the session behind an interpreter.
func sessionOf(in *tcl.Interp) *ConnState {
	s, _ := in.Data.(*ConnState)
	return s
}

// logLine formats a log command's text the way BIG-IP writes it to the
// ltm log.
func (s *ConnState) logLine(text string, noname bool) string {
	if noname || s.cur == nil {
		return text
	}
	return "Rule " + s.cur.rule.Name + " <" + s.event.String() + ">: " + text
}

var _ = strings.TrimSpace

// eventBits is a set of events, one bit each (there are more than 64).
type eventBits [(int(numEvents) + 63) / 64]uint64

func (b *eventBits) has(ev Event) bool { return b[ev/64]&(1<<(ev%64)) != 0 }

// set puts ev (or, with all, every event) in the set, or takes it out.
func (b *eventBits) set(ev Event, all, on bool) {
	if all {
		for i := range b {
			if on {
				b[i] = ^uint64(0)
			} else {
				b[i] = 0
			}
		}
		return
	}
	if on {
		b[ev/64] |= 1 << (ev % 64)
	} else {
		b[ev/64] &^= 1 << (ev % 64)
	}
}
