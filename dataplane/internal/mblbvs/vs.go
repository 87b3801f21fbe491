package mblbvs

import (
	"context"
	"crypto/tls"
	"errors"
	"hash/fnv"
	"log/slog"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rstcause"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/dataplane/snatobj"
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// Env is what the plane gives message-based balancing: where flows are
// listed, where lines are logged, how a server is dialled, and the
// running commit's pools and persistence.
type Env struct {
	Table          *flows.Table
	Log            *slog.Logger
	ConnectTimeout time.Duration
	// Dial connects from src (see state.SNATSource) to dst on a goroutine.
	Dial func(src, dst netip.AddrPort) (*net.TCPConn, error)
	// DialSide, when set, is Dial with the virtual's server-side tcp
	// settings put on the socket before its SYN (tcpopts.go).
	DialSide func(src, dst netip.AddrPort, side *sockopt.Side) (*net.TCPConn, error)
	// DialExact is DialSide from exactly src, its port included, with
	// no other port tried (source-port preserve-strict: snathold.go).
	DialExact func(src, dst netip.AddrPort, side *sockopt.Side) (*net.TCPConn, error)
	// Pass makes the steering of wildcard and network virtuals pass
	// over ap until release (the plane's passPort): a node a rule
	// computed, which the commit could not pass over; nil, or a nil
	// release: nothing steered, nothing to release.
	Pass func(ap netip.AddrPort, udp bool) (release func())
	// Pools is the running commit's pool index, as the pointer each
	// commit replaces, so that a lookup in it can be kept until the next
	// commit (mblbRules.namedPool).
	Pools func() *state.Pools
	// PersistFind, PersistLookup, PersistSave and PersistDelete are the
	// plane's persistence table under the virtuals' profiles (see
	// dataplane.Plane.PersistLookup).
	PersistFind   func(k config.PersistKey) (*state.Pool, *state.Member)
	PersistLookup func(k config.PersistKey) (pool string, member netip.AddrPort, ok bool)
	PersistSave   func(k config.PersistKey, pool string, member netip.AddrPort) error
	PersistDelete func(k config.PersistKey)
	// PersistDown reports whether k's record names a member that is down
	// or forced offline (PERSIST_DOWN).
	PersistDown func(k config.PersistKey) bool
	// Rst reports the resets sent to clients (tm.rstcause.log); nil
	// reports none.
	Rst *rstcause.Log
	// Virtual is the running virtual server of a full name, or nil: the
	// explicit proxy's HTTP::proxy chain connects to its destination.
	Virtual func(name string) *state.Virtual
	// BWC is the running bandwidth controllers, which rules attach
	// clients to (BWC::policy).
	BWC *bwc.Set
	// SnatPool resolves a snatpool a rule names in SERVER_INIT (a full
	// path, or a bare name in /Common); nil resolves none.
	SnatPool func(name string) ([]netip.Addr, bool)
	// LSN is the running lsn pools, which rules choose with LSN::pool.
	LSN *lsn.Set
}

// rstArea is the code location the message-based virtuals print in their
// reset lines, as dataplane/mblb's sessions do.
const rstArea = "mblb"

// Set is the plane's message balancing engines, one per virtual with an
// mblb profile, rebuilt only when the virtual's MBLB settings change.
type Set struct {
	env Env
	mu  sync.Mutex
	cur atomic.Pointer[map[*state.Virtual]*VS]
}

// NewSet starts an empty set.
func NewSet(env Env) *Set { return &Set{env: env} }

// VS is one virtual's engine and what its callbacks need.
type VS struct {
	env   *Env
	vs    *state.Virtual
	cfg   config.MBLB
	idle  time.Duration
	close mblb.CloseTimers // the tcp profile's close timers (closeTimers)
	ruled bool             // the rules frame messages (TCP::notify)
	waits bool             // the rules suspend events (after ms): no event loops
	eng   *mblb.Engine
	h2    *memberHTTP2 // HTTP/2 to members, nil: HTTP/1.1 (h2member.go)

	legs sync.Map // *mblb.Leg -> *legFlow
	// asked is the destinations clients asked for lately, which min-conn
	// warms a member that follows the client on (warmasked.go); nil
	// without min-conn.
	asked *warmAsked

	// suspects are members whose connection just failed: they are passed
	// over while another member can take the message, so that a dead
	// member costs one failed connect per second, not one per message,
	// until its monitor marks it down.
	smu      sync.Mutex
	suspects []suspect
	nsuspect atomic.Int32

	// tlsClients are the clients of a server-ssl virtual whose rules run
	// SERVERSSL_HANDSHAKE or SERVER_CONNECTED, by address (tls.go).
	tlsClients sync.Map
	// clientSNI holds the server name each client of a virtual with
	// serverssl-use-sni sent, by its address, while it is connected, for
	// the member connections dialled for it (tls.go).
	clientSNI sync.Map
	// clientC3D holds, on a C3D virtual, the certificate each client's
	// member connections are shown a copy of, by its address (tls.go).
	clientC3D sync.Map
	// ranConnected holds the local addresses of server connections whose
	// SERVER_CONNECTED ran before their handshake (connectedBeforeTLS),
	// until legOpened sees them.
	ranConnected sync.Map
	// initSrc holds, by client address, the source a client's
	// SERVER_INIT chose (snat, snatpool) for the server connection
	// about to be dialled, until its dial takes it (serverinit.go).
	initSrc sync.Map
	// arrivals holds, by client address, the arrival interface of each
	// client while a SNAT or NAT has a VLAN list (arrival.go).
	arrivals sync.Map
	// lsnLegs holds, by a server connection's local address, its lsn
	// translation (source-address-translation type lsn), released when
	// the connection closes (lsn.go).
	lsnLegs sync.Map
	// lsnHeld counts lsnLegs' entries, so that a virtual without an lsn
	// pool closes its server connections without looking there.
	lsnHeld atomic.Int64
	// snatLegs holds, by its two ends (legKey), the ltm
	// snat-translation address a server connection holds, given back
	// when it closes (snathold.go); snatHeld counts them, so that a
	// virtual whose connections hold none closes them without looking.
	snatLegs sync.Map
	snatHeld atomic.Int64
	// lsnShared holds, by local address, the translations of HTTP/2
	// member connections, which outlive the engine legs that share
	// them and give their translation back when they close
	// (h2member.go).
	lsnShared sync.Map
	// lsnClients are the clients of a virtual with an lsn pool whose
	// rules run SA_PICKED, by address (lsn.go).
	lsnClients sync.Map

	// room decides whether a member's connection limit lets it take a
	// request, with OneConnect (connqueue.go); nil: its connections
	// against its limit.
	room func(*state.Member) bool

	// fwd is the explicit forward proxy of an http profile with
	// proxy-type explicit (fwdproxy.go); nil: a reverse proxy.
	fwd *fwdproxy.Proxy
}

type suspect struct {
	m     *state.Member
	until int64
}

// suspectFor is how long a failed member is passed over.
const suspectFor = time.Second

// same reports whether a running engine can go on serving v.
func (mv *VS) same(cfg *config.MBLB, idle time.Duration, ct mblb.CloseTimers, ruled, waits bool) bool {
	return mv.idle == idle && mv.close == ct && mv.ruled == ruled && mv.waits == waits && reflect.DeepEqual(mv.cfg, *cfg)
}

// closeTimers is what of a virtual's close handling its message engine
// runs: close-wait-timeout for a client that half-closed and
// zero-window-timeout on both sides. loose-close, reset-on-client-fin
// and client-timeout are fastl4's, which no message virtual has;
// fin-wait-timeout has nothing to time, the engine closing a socket once
// its FIN is due (Linux then retries it on its own).
func closeTimers(c *sockopt.Close) mblb.CloseTimers {
	if c == nil {
		return mblb.CloseTimers{}
	}
	return mblb.CloseTimers{AfterFIN: c.AfterFIN, ZeroWindow: c.ZeroWindow}
}

// ruledBy reports whether r frames messages itself: rule framing needs a
// CLIENT_DATA handler (an iRules program, not a test hook).
func ruledBy(cfg *config.MBLB, r config.Rules) bool {
	return cfg.Request.Mode == mblb.Rule && irules.Program(r) != nil && r.Handles(config.EventClientData)
}

// Apply builds, keeps or retires the engines after a commit swapped in
// virtuals and members (the commit's pool members by key), and drains
// the kept engines' connections to members the commit disabled or
// removed (drainMembers).
func (s *Set) Apply(virtuals map[string]*state.Virtual, members map[string]*state.Member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A copy: the published map is read without a lock (For) and
	// must never change.
	old := map[*state.Virtual]*VS{}
	if cur := s.cur.Load(); cur != nil {
		for v, mv := range *cur {
			old[v] = mv
		}
	}
	next := map[*state.Virtual]*VS{}
	for _, v := range virtuals {
		snap := v.Snap.Load()
		cfg := snap.Cfg.MBLB
		if cfg == nil {
			continue
		}
		ruled := ruledBy(cfg, snap.Cfg.Rules)
		prog := irules.Program(snap.Cfg.Rules)
		waits := prog.Waits() || prog.AttachesBWC() // a paced client waits too
		ct := closeTimers(snap.Cfg.TCPClose)
		if mv := old[v]; mv != nil && mv.same(cfg, snap.Idle, ct, ruled, waits) {
			next[v] = mv
			delete(old, v)
			mv.drainMembers(members)
			continue
		}
		mv, err := s.newVS(v, cfg, snap.Idle, ct, ruled, waits)
		if err != nil {
			s.env.Log.Error("Virtual " + v.Name + ": message-based load balancing: " + err.Error())
			continue
		}
		next[v] = mv
	}
	for _, mv := range old {
		mv.drainMembers(members) // its clients stay until they leave
		go mv.retire()
	}
	s.cur.Store(&next)
}

// Close stops every engine (Plane.Close).
func (s *Set) Close() {
	s.mu.Lock()
	cur := s.cur.Swap(nil)
	s.mu.Unlock()
	if cur == nil {
		return
	}
	for _, mv := range *cur {
		mv.eng.Close()
		mv.h2.close()
	}
}

// For returns the running engine of vs, or nil.
func (s *Set) For(vs *state.Virtual) *VS {
	if cur := s.cur.Load(); cur != nil {
		return (*cur)[vs]
	}
	return nil
}

// drainMembers takes out of service the server connections to members
// that the commit removed from their pool, or disabled or forced offline
// (the member or its node), as BIG-IP drains them: their answers owed
// come, within the mblb profile's shutdown-timeout, and nothing new goes
// on them. A virtual balancing HTTP per connection (an http profile
// without one-connect) is the exception for a disabled member: as on
// BIG-IP its clients' connections to it go on, only a removed member's
// are drained [M].
func (mv *VS) drainMembers(members map[string]*state.Member) {
	perConn := mv.cfg.Request.Mode == mblb.HTTP && mv.cfg.OneConnect == nil
	n := mv.eng.DrainMembers(func(m mblb.Member) bool {
		sm, ok := m.Ref.(*state.Member)
		if !ok {
			return false // a node a rule named: no pool to leave
		}
		if members[sm.Key] != sm {
			return true
		}
		return !perConn && adminOff(sm)
	})
	if n > 0 {
		mv.env.Log.Info("Virtual " + mv.vs.Name + ": draining " + strconv.Itoa(n) + " member connection(s) after the commit")
	}
}

// warmMembers are the members min-conn keeps connections open to: the
// virtual's default pool's members that may be balanced to (neither
// down, disabled nor forced offline; their connection limits are
// OneConnect.MayOpen's), so that a member a commit disables or removes is
// not kept warm while it drains. Asked once per tick of the engine's
// janitor.
func (mv *VS) warmMembers() []mblb.Member {
	snap := mv.vs.Snap.Load()
	if snap.Pool == nil {
		return nil
	}
	ps := snap.Pool.Snap.Load()
	if ps == nil {
		return nil
	}
	out := make([]mblb.Member, 0, len(ps.Members))
	var dests []askedDest
	var vias []netip.Addr
	if reachesMany(snap.Cfg) && mv.asked != nil {
		dests = mv.asked.dests(time.Now())
		if snap.Cfg.SNAT.Type == config.SNATAutomap {
			vias = viaAddrs(dests)
		}
	}
	for _, m := range ps.Members {
		if !m.Usable() {
			continue
		}
		a := m.Cfg.Load().Addr
		if reachesMany(snap.Cfg) && followsClient(snap.Cfg, a) {
			// Where it goes is each client's destination: warmed on each
			// one asked for lately (warmasked.go) [M], from the address
			// reached where automap leaves from it.
			for _, d := range dests {
				wm := mblb.Member{ID: memberID(m), Addr: state.Translate(snap.Cfg, a, d.to),
					Pool: m.Pool.Name, Name: m.Name, Ref: m}
				if d.via && vias != nil {
					wm.Via = d.to.Addr()
				}
				out = append(out, wm)
			}
			continue
		}
		wm := mblb.Member{ID: memberID(m), Addr: state.Translate(snap.Cfg, a, snap.Cfg.Destination),
			Pool: m.Pool.Name, Name: m.Name, Ref: m}
		out = append(out, wm)
		for _, v := range vias {
			// Automap from each address clients reached lately: warmed
			// from there too (warmasked.go) [M].
			wm.Via = v
			out = append(out, wm)
		}
	}
	return out
}

// reachesMany reports whether a virtual's clients reach other addresses
// and ports than its Destination: every port (or a criteria port list),
// a network, a criteria address list. Each client's own local address is
// then where translation starts from (dest), as on the L4 path.
func reachesMany(cfg *config.Virtual) bool {
	return cfg.Destination.Port() == 0 || len(cfg.Addresses) > 0 || len(cfg.FQDNs) > 0 || cfg.Network.IsValid()
}

// viaLocal reports whether automap starts from the address local the
// client at client reached (arriving on the interface ifx, 0: not
// known), not from the virtual's Destination: on a virtual that is a
// network or on every port, where the virtual's source-address-translation
// or the client's ltm snat object is automap (VirtualSnap.AutomapFor).
// Automap then leaves from that address (sourceHeld, through
// mblb.Member.Via), and OneConnect groups the connections by it. On
// every port of the virtual's own address it is that address: nothing
// changes (min-conn's connections opened ahead, from there, serve its
// clients). Cost per client: reachesMany's tests, then an address
// comparison, then AutomapFor's.
func viaLocal(snap *state.VirtualSnap, client, local netip.AddrPort, ifx int) bool {
	return reachesMany(snap.Cfg) && local.Addr() != snap.Cfg.Destination.Addr() && snap.AutomapFor(client.Addr(), ifx)
}

// followsClient reports whether a member at a goes wherever the client
// was going, in part: a member at port any, or translate-port or
// translate-address disabled.
func followsClient(cfg *config.Virtual, a netip.AddrPort) bool {
	return a.Port() == 0 || !cfg.TranslatePort || !cfg.TranslateAddress
}

// dest is the destination the client of a message connected to, which
// translation starts from: the virtual's, or on a virtual that
// reachesMany, the client connection's own local address (tag is the
// engine session's, an *mblbFlow). A virtual on one address and port
// pays four comparisons per message.
func dest(snap *state.VirtualSnap, tag any) netip.AddrPort {
	if reachesMany(snap.Cfg) {
		if f, ok := tag.(*mblbFlow); ok && f.Local.IsValid() {
			return f.Local
		}
	}
	return snap.Cfg.Destination
}

// adminOff reports whether a commit took m out of service: disabled or
// forced offline, itself or its node (a monitor's verdict is not a
// commit's and follows the pool's service-down-action instead).
func adminOff(m *state.Member) bool {
	c, n := m.Cfg.Load(), m.Node.Cfg.Load()
	return c.Session == config.SessionUserDisabled || c.State == config.StateUserDown ||
		n.Session == config.SessionUserDisabled || n.State == config.StateUserDown
}

// retire lets an engine replaced by a commit finish its clients (a
// profile change applies to new connections, as on BIG-IP), then closes
// it and its pooled connections.
func (mv *VS) retire() {
	for mv.eng.Stats().Sessions > 0 {
		time.Sleep(200 * time.Millisecond)
	}
	mv.eng.Close()
	mv.h2.close()
}

// newVS starts the engine of one virtual.
func (s *Set) newVS(vs *state.Virtual, cfg *config.MBLB, idle time.Duration, ct mblb.CloseTimers, ruled, waits bool) (*VS, error) {
	mv := &VS{env: &s.env, vs: vs, cfg: *cfg, idle: idle, close: ct, ruled: ruled, waits: waits}
	ec := mblb.Config{
		Rst:             s.env.Rst,
		Pick:            mv.pickTLS, // tls.go
		Dial:            mv.dial,
		ServerInit:      mv.serverInit, // serverinit.go
		Request:         cfg.Request,
		Response:        cfg.Response,
		MaxMessageSize:  cfg.MaxMessageSize,
		MaxInFlight:     cfg.MaxInFlight,
		DisableRetry:    cfg.DisableRetry,
		ResponseTimeout: cfg.ResponseTimeout,
		ShutdownTimeout: cfg.ShutdownTimeout,
		PropagateAbort:  cfg.PropagateAbort,
		// isolate-server, isolate-expire, isolate-client
		PropagateServerClose: cfg.PropagateServerClose,
		PropagateExpire:      cfg.PropagateExpire,
		KeepOnClientClose:    cfg.KeepOnClientClose,
		Flow:                 &mv.cfg.Flow,
		IdleTimeout:          idle,
		Close:                ct,
		ConnectTimeout:       s.env.ConnectTimeout,
		Waits:                waits,
		Events: mblb.Events{
			LegOpened:    mv.legOpened,
			LegClosed:    mv.legClosed,
			MemberFailed: mv.memberFailed,
			Log:          func(msg string) { s.env.Log.Info(msg) },
		},
	}
	ec.DialFD = mv.dialFD()
	if h := &cfg.Request.HTTP; h.RequestAdapt != nil || h.ResponseAdapt != nil {
		ec.PoolPick = s.poolPick // adapt.go
		ec.RequestAdaptCounts = &mv.vs.Prof.RequestAdapt
		ec.ResponseAdaptCounts = &mv.vs.Prof.ResponseAdapt
	}
	ec.Clone = mv.cloneRequest  // clone.go
	ec.IdleReset = mv.idleReset // tcpopts.go
	if mv.h2 = newMemberHTTP2(cfg); mv.h2 != nil {
		ec.DialFD = nil // the bridges are goroutines (h2member.go)
	}
	if cfg.Request.Mode == mblb.HTTP {
		ec.ObserveRequest = mv.observeRequest
		ec.ObserveResponse = mv.vs.Prof.HTTP.Response
		ec.Pipelined = mv.vs.Prof.HTTP.NotePipelined
		ec.CookieInserted = mv.vs.Prof.HTTP.NoteCookieInsert
		ec.Compressed = mv.vs.Prof.Compress.Done
		ec.CookieRecords = mv.cookieRecords() // persist.go
	}
	if cfg.Request.Mode == mblb.Rule && !ruled {
		// No rule finds the boundaries: one read is one message.
		ec.Request, ec.Response = mblb.Framing{}, mblb.Framing{}
	}
	if oc := cfg.OneConnect; oc != nil {
		ec.OneConnect = &mblb.OneConnect{SourceMask: oc.SourceMask, MaxSize: oc.MaxSize,
			MaxAge: oc.MaxAge, MaxReuse: oc.MaxReuse, IdleTimeoutOverride: oc.IdleTimeoutOverride,
			// A rule's framing cannot be trusted with two clients' answers
			// in one read (seed 000's rule releases whatever arrived as one
			// response): a shared connection carries one message at a
			// time, as BIG-IP's HTTP OneConnect does. Declarative framing
			// knows its boundaries and pipelines.
			Exclusive: ec.Request.Mode == mblb.Rule}
		mv.oneConnectLimits(ec.OneConnect, oc.LimitType) // connqueue.go
		if cfg.MinConn > 0 && (!oc.SourceMask.IsValid() || oc.SourceMask.IsUnspecified()) {
			ec.OneConnect.MinConn = cfg.MinConn
			ec.OneConnect.Members = mv.warmMembers
		}
	} else if cfg.MinConn > 0 {
		// Without one-connect a client takes one as its own.
		ec.MinConn, ec.MinConnMembers = cfg.MinConn, mv.warmMembers
	}
	if ec.MinConnMembers != nil || ec.OneConnect != nil && ec.OneConnect.Members != nil {
		mv.asked = &warmAsked{}
	}
	eng, err := mblb.New(ec)
	if err != nil {
		return nil, err
	}
	mv.eng = eng
	if cfg.ExplicitProxy != nil {
		mv.fwd = fwdproxy.New(*cfg.ExplicitProxy)
	}
	return mv, nil
}

// mblbFlow is a client connection of a message-balanced virtual: a flow
// without server legs of its own (any6.any any6.any) whose messages the
// engine's session spreads over members.
type mblbFlow struct {
	flows.Flow
	mv   *VS
	vs   *state.Virtual
	sess *mblb.ClientConn
	rr   *mblbRules // nil without iRules
	// front is the client's TLS (tls.go); nil without client-ssl.
	front *frontConn
	// loopFront: the client's TLS is the event loops' (tlsloop_linux.go):
	// loopTLS is its session once handshaken, which SSL:: commands read;
	// loopClear is SSL::disable in CLIENT_ACCEPTED, before the handshake
	// (the client then speaks plaintext), which only that event may turn
	// off or on.
	loopFront bool
	loopClear bool
	loopTLS   *tls.Conn
	// stls is a new server connection's TLS during its SERVERSSL_HANDSHAKE.
	stls *tls.Conn
	// hello is the client's TLS hello while CLIENTSSL_CLIENTHELLO runs.
	hello *tls.ClientHelloInfo
	// fwdBypass is an SSL forward proxy's bypass decision while
	// CLIENTSSL_CLIENTHELLO runs over the hello it was made on, which
	// SSL::forward_proxy policy reads and changes (sslfwd.go); nil
	// elsewhere.
	fwdBypass *bool
	// serverClear: SSL::disable serverside, the client's messages go to
	// their members in plaintext (tls.go).
	serverClear atomic.Bool
	// ruleClone is the client's clone connections a rule's clone command
	// opened (clone.go); nil without, closed by finish. Published anew
	// by each clone, as an HTTP/2 client's lanes read it concurrently.
	ruleClone atomic.Pointer[clone.Flow]
	// ruleCloned are the rule's clones the client has, so that a clone
	// run again (HTTP_REQUEST of each request) opens no second copy;
	// under the rules' lock.
	ruleCloned []ruleCloneKey
	// addr is its virtual address's runtime when admitted (nil: none
	// that acts), whose count finish gives back.
	addr *state.VAddr
	// bwc is the bucket of the bandwidth controller the client's bytes
	// wait on (bwc.go): the virtual's, or the one a rule attached; nil
	// without one. pace is the client's connection that waits on it;
	// nil when neither the virtual nor its rules have one. Under bwcMu.
	bwcMu sync.Mutex
	bwc   *bwc.Bucket
	pace  *bwc.Conn
	// cssl holds the client's TLS connection in its client-ssl profile's
	// current connections (tls.go), until finish.
	cssl state.SSLHeld
	// sni is the server name the client sent, kept in mv.clientSNI for
	// serverssl-use-sni until finish; "" when not kept. sniTag marks the
	// members picked for it (sniTagOf), 0 without.
	sni    string
	sniTag atomic.Uint64
	// sslTLS is the TLS a rule's SSL::profile made for the client's
	// following messages (its server-ssl profile), nil for the
	// virtual's; profTag marks the members picked for them (the
	// profile's Choosable.Tag), 0 without (tls.go).
	sslTLS  atomic.Pointer[config.TLS]
	profTag atomic.Uint64
	// clientTLS is the TLS of the client-ssl profile SSL::profile chose
	// in CLIENT_ACCEPTED, nil for the virtual's: set before the
	// handshake, read by it and after (tls.go).
	clientTLS *config.TLS
	// stlsCfg is the TLS stls was made with (SSL::profile's, or the
	// virtual's), while SERVERSSL_HANDSHAKE runs.
	stlsCfg *config.TLS
	// c3d is the client's delegation on a C3D virtual (tls.go); nil
	// until its handshake or an SSL::c3d command.
	c3d *flowC3D
	// arrivalKept: the client's arrival interface is in mv.arrivals
	// (arrival.go).
	arrivalKept bool
	// ended runs once the client is gone (the loop's count of its
	// clients, StartOnLoop); nil on goroutines.
	ended func()
	// h2Requests, for an HTTP/2 client, are its engine sessions'
	// requests together (http2.go); f.sess is the one whose request
	// event ran last, and lanes tells its sessions apart.
	h2Requests uint64
	lanes      *h2Lanes
	// quicTLS is an HTTP/3 client's handshake, set (under the rules'
	// lock) once QUIC finished it, which SSL:: commands read from
	// CLIENTSSL_HANDSHAKE on (http3.go); nil before and otherwise.
	quicTLS *tls.ConnectionState
	// sslTag names the client's TLS session for ssl persistence
	// (persist.go), nil without it; sslKey is the name, hex, once the
	// handshake is done ("" when the session has none: tickets off).
	sslTag *tlsprof.SessionTag
	sslKey string
}

// Received implements mblb.Meter for the client side.
func (f *mblbFlow) Received(n int) {
	pk := state.Packets(n)
	f.BytesIn.Add(uint64(n))
	f.PktsIn.Add(pk)
	f.vs.Stats.In(n, pk)
}

// Sent implements mblb.Meter for the client side.
func (f *mblbFlow) Sent(n int) {
	pk := state.Packets(n)
	f.BytesOut.Add(uint64(n))
	f.PktsOut.Add(pk)
	f.vs.Stats.Out(n, pk)
}

// legFlow is one server connection in the connection table: its client
// side is any6.any (it belongs to no client, or to one client among
// many), its server side the SNAT address and the member.
type legFlow struct {
	flows.Flow
	leg flows.Leg
	m   *state.Member // nil for a node a rule named
	// clock times the member's answers for its inband monitor's
	// response-time (nil without one).
	clock *monitor.ResponseClock
}

// Received implements mblb.Meter for a server connection.
func (lf *legFlow) Received(n int) {
	pk := state.Packets(n)
	lf.leg.BytesIn.Add(uint64(n))
	lf.leg.PktsIn.Add(pk)
	now := time.Now().UnixNano()
	lf.Touch(now)
	if m := lf.m; m != nil {
		m.Stats.In(n, pk)
		m.Pool.Stats.In(n, pk)
		m.Node.Stats.In(n, pk)
		if lf.clock != nil {
			lf.clock.Answered(now)
		}
	}
}

// Sent implements mblb.Meter for a server connection.
func (lf *legFlow) Sent(n int) {
	pk := state.Packets(n)
	lf.leg.BytesOut.Add(uint64(n))
	lf.leg.PktsOut.Add(pk)
	now := time.Now().UnixNano()
	lf.Touch(now)
	if m := lf.m; m != nil {
		m.Stats.Out(n, pk)
		m.Pool.Stats.Out(n, pk)
		m.Node.Stats.Out(n, pk)
		if lf.clock != nil {
			lf.clock.Sent(now)
		}
	}
}

// Serve runs one accepted client connection of a message-balanced
// virtual to its end, on goroutines. The virtual's connection count is
// already taken.
func (s *Set) Serve(vs *state.Virtual, snap *state.VirtualSnap, c *net.TCPConn) {
	s.ServeHanded(vs, snap, c, nil)
}

// ServeHanded is Serve for a connection another virtual server handed on
// after reading head of it (the TLS hello of `virtual NAME` in
// CLIENTSSL_CLIENTHELLO): the client's TLS, or the engine, reads head
// before the socket.
func (s *Set) ServeHanded(vs *state.Virtual, snap *state.VirtualSnap, c *net.TCPConn, head []byte) {
	mv := s.For(vs)
	if mv == nil {
		c.SetLinger(0)
		c.Close()
		vs.Leave(snap.Addr)
		return
	}
	if mv.fwd != nil {
		mv.serveExplicit(snap, c, head) // fwdproxy.go
		return
	}
	if tc := snap.Cfg.TLS; tc != nil && tc.Forward != nil {
		mv.serveForward(snap, c, head) // sslfwd.go
		return
	}
	if snap.Cfg.HTTP2 != nil {
		mv.serveHTTP2Capable(snap, c, head) // http2.go
		return
	}
	f, opts := mv.newFlow(snap, rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr()))
	mv.noteArrival(snap, f, c, &opts) // arrival.go
	if snap.SYN && f.rr != nil {
		rawsock.Control(c, func(fd int) error { f.rr.syn = synhdr.Read(fd); return nil }) // rules.go
	}
	conn := clientTLS(c, head, snap.Cfg.TLS, f.rr, f.sslTag) // tls.go
	f.front, _ = conn.(*frontConn)
	if needsPace(f, snap.BWC) {
		conn = f.paced(conn, snap.BWC, snap.RateClass) // bwc.go
	}
	f.sess = mv.eng.NewClientConn(conn, opts)
	sess := f.sess
	f.End = sess
	s.env.Table.Add(&f.Flow)
	defer f.finish()
	defer mv.trackTLS(f, snap.Cfg.TLS)() // tls.go
	defer mv.trackLSN(f, snap)()         // lsn.go
	if f.rr != nil && !f.rr.accepted() {
		return
	}
	if f.front != nil && !f.handshake(conn, snap.Cfg.TLS) {
		sess.Close(true)
		return
	}
	sess.Run()
}

// newFlow is the connection-table record of a new client of the virtual,
// and what its engine session needs to know of it.
func (mv *VS) newFlow(snap *state.VirtualSnap, client, local netip.AddrPort) (*mblbFlow, mblb.ClientOptions) {
	f := &mblbFlow{mv: mv, vs: mv.vs, addr: snap.Addr}
	f.Client = client
	f.Local = local
	f.Virtual = mv.vs.Name
	f.Protocol = "tcp"
	f.SetIdleTimeout(snap.Idle)
	if sslPersists(snap.Cfg) {
		f.sslTag = new(tlsprof.SessionTag)
	}
	opts := mblb.ClientOptions{Tag: f, Touch: f.Touch, Meter: f, Local: local}
	if snap.Cfg.Timers != nil { // a service-policy's timer policy (state/timers.go)
		if idle := snap.FlowIdle(local); idle != snap.Idle {
			f.SetIdleTimeout(idle)
			opts.OwnIdle, opts.Idle = true, idle
		}
	}
	from := snap.Cfg.Destination
	if viaLocal(snap, client, local, 0) {
		from, opts.ViaLocal = local, true
	}
	if mv.asked != nil && reachesMany(snap.Cfg) {
		// min-conn warms members on it, from it under the virtual's
		// automap (warmasked.go)
		mv.asked.note(local, opts.ViaLocal && snap.Cfg.SNAT.Type == config.SNATAutomap, time.Now())
	}
	src := state.SNATSourceUncounted(mv.vs, snap, f.Client, from, snap.Cfg.Destination, snap.Pool) // OneConnect's grouping: no connection yet
	opts.Source = src.Addr()
	if irules.Program(snap.Cfg.Rules) != nil {
		f.rr = newMBLBRules(f, snap)
		if mv.ruled {
			opts.Rule = f.rr
		}
		if mv.cfg.Request.Mode == mblb.HTTP {
			if h := newHTTPRules(f.rr); h != nil {
				opts.HTTPRule = h
			}
		}
		if mv.cfg.Request.Mode == mblb.SIP {
			if h := newSIPRules(f.rr); h != nil {
				opts.SIPRule = h // sip.go
			}
		}
	}
	return f, opts
}

// finish takes an ended client out of the table and the virtual's counts.
func (f *mblbFlow) finish() {
	f.ruleClone.Load().Close()
	if f.rr != nil {
		f.rr.end()
	}
	if s := f.vs.Snap.Load(); s != nil && s.Cfg.NetFlow != nil { // netflow profile (dataplane/netflow)
		s.Cfg.NetFlow.Export(&f.Flow)
	}
	f.mv.env.Table.Remove(&f.Flow)
	f.vs.Leave(f.addr)
	f.vs.Durs.Note(uint64(time.Since(f.Created()) / time.Millisecond))
	if f.sess != nil && f.mv.cfg.Request.Mode == mblb.HTTP {
		n := f.sess.Stats().Requests
		if f.h2Requests > 0 {
			n = f.h2Requests
		}
		f.vs.Prof.HTTP.ConnEnded(n) // profilestats
	}
	f.cssl.Release()
	f.bwc.Release() // bwc.go
	if f.sni != "" {
		f.mv.clientSNI.CompareAndDelete(f.Client, f.sni)
	}
	if f.c3d != nil && f.c3d.src != nil {
		f.mv.clientC3D.CompareAndDelete(f.Client, f.c3d.src) // the *c3dChoice stored last
	}
	f.mv.forgetArrival(f) // arrival.go
	if f.ended != nil {
		f.ended()
	}
}

// memberID numbers a member for the engine: stable across commits (the
// runtime's key is), and distinct from every node a rule may name.
func memberID(m *state.Member) mblb.MemberID {
	h := fnv.New64a()
	h.Write([]byte(m.Key))
	return mblb.MemberID(h.Sum64()) &^ (1<<63 | plainBit)
}

func nodeID(a netip.AddrPort) mblb.MemberID {
	h := fnv.New64a()
	b, _ := a.MarshalBinary()
	h.Write(b)
	return mblb.MemberID(h.Sum64())&^plainBit | 1<<63
}

// member describes m to the engine and counts the message on it: Total
// Requests of a member of a message-balanced virtual are its messages.
// dst is where the client connected (dest).
func (mv *VS) member(snap *state.VirtualSnap, m *state.Member, dst netip.AddrPort) mblb.Member {
	m.Stats.Requests.Add(1)
	m.Pool.Stats.Requests.Add(1)
	m.Node.Stats.Requests.Add(1)
	return mblb.Member{ID: memberID(m), Addr: state.Translate(snap.Cfg, m.Cfg.Load().Addr, dst), Pool: m.Pool.Name, Name: m.Name, Ref: m}
}

// pick is the engine's Pick: one member for one message, then the
// client's LB_SELECTED for it.
func (mv *VS) pick(c mblb.Choice) (mblb.Member, error) {
	if c.Queueable {
		return mv.pickQueued(c) // connqueue.go
	}
	m, err := mv.choose(c)
	return mv.picked(c, m, err)
}

// picked is pick after the member choice: LB_FAILED when there is none,
// LB_SELECTED when there is.
func (mv *VS) picked(c mblb.Choice, m mblb.Member, err error) (mblb.Member, error) {
	if err != nil {
		if persistDownEnded(err) { // persist.go
			return m, err
		}
		if f, ok := c.Tag.(*mblbFlow); ok && f.rr != nil {
			t, err := f.rr.noMember()
			if !t.IsZero() && errors.Is(err, mblb.ErrNoMember) {
				// LB_FAILED chose where the message goes instead: once;
				// if that fails too, the client is reset.
				c.Target = t
				return mv.choose(c)
			}
			return m, err
		}
		return m, err
	}
	if c.Stay && m.Addr == c.Target.Member {
		return m, nil // the connection's member again: no new decision
	}
	if f, ok := c.Tag.(*mblbFlow); ok && f.rr != nil && f.rr.onLBSelected {
		return mv.selected(c, f.rr, m) // lbselected.go
	}
	return m, nil
}

// choose is pick's member choice.
func (mv *VS) choose(c mblb.Choice) (mblb.Member, error) {
	snap := mv.vs.Snap.Load()
	pool := snap.Pool
	t := c.Target
	dst := dest(snap, c.Tag)
	if t.Node && t.Member.IsValid() {
		a := t.Member
		if a.Port() == 0 {
			a = netip.AddrPortFrom(a.Addr(), dst.Port())
		}
		if id := nodeID(a); !excludedID(c.Exclude, id) {
			return mblb.Member{ID: id, Addr: a, Name: a.String()}, nil
		}
		// The node the rule named failed this message: balance it instead.
	} else if t.Pool != "" && (pool == nil || t.Pool != pool.Name) {
		// (A rule naming the virtual's own pool needs no lookup.)
		if named := mv.env.Pools().Named(mv.vs.Name, t.Pool); named != nil {
			pool = named
		}
	}
	if pool == nil {
		return mblb.Member{}, mblb.ErrNoMember
	}
	// A persistence cookie naming a member that cannot take the request:
	// PERSIST_DOWN (persist.go), then its decision or a new choice.
	if nt, down, err := mv.cookieDown(pool, c); err != nil {
		return mblb.Member{}, err
	} else if down {
		c.Target, c.Cookie = nt, false
		return mv.choose(c)
	}
	ps := pool.Snap.Load()
	if ps == nil {
		return mblb.Member{}, mblb.ErrNoMember
	}
	var exclude []*state.Member
	if len(c.Exclude) > 0 {
		for _, m := range ps.Members {
			if excludedID(c.Exclude, memberID(m)) {
				exclude = append(exclude, m)
			}
		}
	}
	// `pool p member a p`: that member, unless it is forced offline, down
	// or already failed this message; then persistence: the rule's
	// `persist uie <key>` for this message, else a source-address profile
	// keyed on the client (persist.go); then the pool's balancing,
	// passing over members that just failed while others can take it.
	if t.IsZero() {
		// PERSIST_DOWN (persist.go): the rule may answer, end the
		// client, or choose where the message goes instead.
		nt, err := mv.persistDown(snap, pool, c)
		if err != nil {
			return mblb.Member{}, err
		}
		if !nt.IsZero() {
			c.Target = nt
			return mv.choose(c)
		}
	}
	var named state.Target
	if !t.Node {
		named = state.Target{Addr: t.Member, Accept: state.AvailDisabled}
		if (c.Stay || c.Cookie) && (dst != snap.Cfg.Destination || !snap.Cfg.TranslatePort || !snap.Cfg.TranslateAddress) {
			// The connection's member, or the persistence cookie's, of
			// which the engine knows where its connection went: the
			// member translated there.
			named.Addr = untranslate(snap.Cfg, ps, t.Member, dst)
		}
	}
	// The message's keys, found once for the lookup and the record (a
	// hash profile's payload key is a scan of the message).
	ks, n := mv.persistKeys(snap, pool, c)
	how := state.Chooser{Avoid: mv.suspected(), Room: mv.room}
	if f, ok := c.Tag.(*mblbFlow); ok && f.rr != nil && f.rr.limited.Load() {
		how.Limits, how.Holds = f.rr.ruleLimits(), &f.rr.holds // connlimit.go
		if how.Limits.VirtualOver(mv.vs, how.Holds) {
			return mblb.Member{}, mblb.ErrNoMember
		}
	}
	m, _, by := state.Choose(pool, named, func() (*state.Pool, *state.Member) { return mv.persistLookup(&ks, n) },
		exclude, how)
	if m == nil {
		return mblb.Member{}, mblb.ErrNoMember
	}
	if by == state.ByBalancing {
		mv.persistRecord(&ks, n, pool, m)
	}
	if c.DecisionLog {
		mv.logDecision(c, pool, m, by)
	}
	return mv.member(snap, m, dst), nil
}

// untranslate is the address of the member of ps that a client which
// reached dst is sent to at a: a itself when no member translates there.
func untranslate(cfg *config.Virtual, ps *state.PoolSnap, a, dst netip.AddrPort) netip.AddrPort {
	for _, m := range ps.Members {
		if ma := m.Cfg.Load().Addr; state.Translate(cfg, ma, dst) == a {
			return ma
		}
	}
	return a
}

func excludedID(list []mblb.MemberID, id mblb.MemberID) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

// suspected returns the members passed over while others can take a
// message, dropping those whose time is up.
func (mv *VS) suspected() []*state.Member {
	if mv.nsuspect.Load() == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	var out []*state.Member
	mv.smu.Lock()
	keep := mv.suspects[:0]
	for _, s := range mv.suspects {
		if s.until > now {
			keep = append(keep, s)
			out = append(out, s.m)
		}
	}
	mv.suspects = keep
	mv.nsuspect.Store(int32(len(keep)))
	mv.smu.Unlock()
	return out
}

// memberFailed is the engine's report of a failed connect or connection.
func (mv *VS) memberFailed(m mblb.Member, err error) {
	rt, ok := m.Ref.(*state.Member)
	if !ok || errors.Is(err, snatobj.ErrFull) || errors.Is(err, errSNATPort) { // every SNAT address full, or preserve-strict's port taken: not the member's failure (snathold.go)
		return
	}
	rt.ConnectFailed()
	until := time.Now().Add(suspectFor).UnixNano()
	mv.smu.Lock()
	found := false
	for i := range mv.suspects {
		if mv.suspects[i].m == rt {
			mv.suspects[i].until, found = until, true
		}
	}
	if !found {
		mv.suspects = append(mv.suspects, suspect{m: rt, until: until})
	}
	mv.nsuspect.Store(int32(len(mv.suspects)))
	mv.smu.Unlock()
}

// poolOf is the pool of an engine member (nil when it has none).
func poolOf(m mblb.Member) *state.Pool {
	if sm, ok := m.Ref.(*state.Member); ok {
		return sm.Pool
	}
	return nil
}

// dial is the engine's Dial: SNAT as the virtual says, keeping the
// client's port on the first server connection when it is free (seed 000
// §2.2 saw the first server flow reuse the client's source port and the
// second take another).
func (mv *VS) dial(ctx context.Context, client netip.AddrPort, m mblb.Member) (net.Conn, error) {
	snap := mv.vs.Snap.Load()
	if m.Ref == nil && mv.env.Pass != nil {
		// A node the rule named (maybe computed): passed over by the
		// steering until the connect is done (its SYN's only lookup).
		if release := mv.env.Pass(m.Addr, false); release != nil {
			defer release()
		}
	}
	if mv.h2 != nil {
		return mv.dialHTTP2(ctx, snap, client, m) // h2member.go
	}
	var c *net.TCPConn
	var err error
	lp, want := mv.lsnChoice(snap, client) // lsn.go
	if lp != nil {
		c, err = mv.dialLSN(snap, lp, want, client, m) // lsn.go
	} else {
		h := mv.sourceHeld(snap, client, m) // snathold.go
		if h.Err != nil {
			return nil, refused(h.Err)
		}
		c, err = mv.dialFrom(snap, h, m.Addr) // snathold.go
		if err != nil {
			if h.Hold != nil {
				h.Hold.Release()
			}
			err = refused(err)
		}
		if err == nil && h.Hold != nil {
			remote := rawsock.AddrPortOf(c.RemoteAddr())
			if !remote.IsValid() {
				remote = m.Addr
			}
			mv.holdSNAT(rawsock.AddrPortOf(c.LocalAddr()), remote, h.Hold)
		}
	}
	if err != nil {
		return nil, err
	}
	mv.serverOpts(m, c)                                      // tcpopts.go
	sc, err := mv.serverTLS(ctx, client, c, snap.Cfg.TLS, m) // tls.go
	if err != nil {
		// No leg will close and give the translation back.
		if lp != nil {
			mv.releaseLSN(rawsock.AddrPortOf(c.LocalAddr())) // lsn.go
		}
		mv.releaseSNAT(rawsock.AddrPortOf(c.LocalAddr()), rawsock.AddrPortOf(c.RemoteAddr())) // snathold.go
	}
	return sc, err
}

// legOpened puts a new server connection in the connection table and on
// its member's counters, and runs SERVER_CONNECTED for its client.
func (mv *VS) legOpened(l *mblb.Leg) {
	lf := &legFlow{}
	snap := mv.vs.Snap.Load()
	lf.Local = snap.Cfg.Destination
	lf.Virtual = mv.vs.Name
	lf.Protocol = "tcp"
	lf.SetIdleTimeout(mv.idle)
	lf.leg = flows.Leg{Client: l.Local, Server: l.Remote, Pool: l.Member.Pool, Member: l.Member.Name}
	if m, ok := l.Member.Ref.(*state.Member); ok {
		m.ConnectSucceeded()
		lf.m = m
		lf.clock = m.ResponseClock()
		lf.leg.Owner = m
		m.Stats.TryOpen(0)
		m.Node.Stats.TryOpen(0)
		m.Pool.Stats.TryOpen(0)
		m.SlotFreed() // a request woken from a queue is counted: wake the next (connqueue.go)
	}
	lf.AddLeg(&lf.leg)
	if d := mv.snatIdle(l); d > 0 { // snathold.go: its translation address's tcp-idle-timeout
		lf.SetIdleTimeout(d)
	}
	lf.Closer = func(bool) { l.Abort() }
	l.Meter = lf
	mv.legs.Store(l, lf)
	mv.env.Table.Add(&lf.Flow)
	// SERVER_CONNECTED runs for the client whose message opened the
	// connection, a shared OneConnect one included, as on BIG-IP.
	// (Before the handshake on a server-ssl virtual: connectedBeforeTLS.
	// The table is looked at only for rules that handle the event.)
	if f, ok := l.Opener.(*mblbFlow); ok && f.rr != nil && f.rr.rules.Handles(config.EventServerConnected) {
		if _, ran := mv.ranConnected.LoadAndDelete(l.Local); !ran {
			f.rr.serverConnected(l)
		}
	}
}

// legClosed takes a server connection out of the table and its counts.
func (mv *VS) legClosed(l *mblb.Leg) {
	// What the connection holds is given back for a leg closed while
	// connecting, or never kept by an engine a commit retired, too.
	mv.releaseSNAT(l.Local, l.Remote) // snathold.go
	mv.releaseLSN(l.Local)            // lsn.go
	v, ok := mv.legs.LoadAndDelete(l)
	if !ok {
		return
	}
	lf := v.(*legFlow)
	mv.env.Table.Remove(&lf.Flow)
	if m := lf.m; m != nil {
		lf.clock.Stop()
		m.Release() // and wakes a connection queue waiting for the room
		m.Pool.Stats.Close()
	}
}

// OneConnectStats sums `show ltm profile one-connect` for one profile
// over the message-balanced virtuals using it; ok is false when none does.
func (s *Set) OneConnectStats(profile string) (st mblb.OneConnectStats, ok bool) {
	cur := s.cur.Load()
	if cur == nil {
		return st, false
	}
	for _, mv := range *cur {
		if oc := mv.cfg.OneConnect; oc == nil || oc.Profile != profile {
			continue
		}
		es, has := mv.eng.OneConnectStats()
		if !has {
			continue
		}
		ok = true
		st.CurrentIdle += es.CurrentIdle
		st.Maximum += es.Maximum
		st.TotalReuses += es.TotalReuses
		st.New += es.New
	}
	return st, ok
}

// Stats returns the engine counters of a message-balanced virtual.
func (s *Set) Stats(virtual string) (mblb.Stats, bool) {
	cur := s.cur.Load()
	if cur == nil {
		return mblb.Stats{}, false
	}
	for vs, mv := range *cur {
		if vs.Name == virtual {
			return mv.eng.Stats(), true
		}
	}
	return mblb.Stats{}, false
}

// ProfileStats sums the engine counters of the message-balanced virtuals
// using one mblb profile; ok is false when none does.
func (s *Set) ProfileStats(profile string) (st mblb.Stats, ok bool) {
	cur := s.cur.Load()
	if cur == nil {
		return st, false
	}
	for _, mv := range *cur {
		if mv.cfg.Profile != profile {
			continue
		}
		ok = true
		es := mv.eng.Stats()
		st.Messages += es.Messages
		st.Responses += es.Responses
		st.Retries += es.Retries
		st.Oversize += es.Oversize
		st.Resets += es.Resets
		st.ServerFailures += es.ServerFailures
		st.Unsolicited += es.Unsolicited
		st.IIOPTimeouts += es.IIOPTimeouts
		st.IIOPSlowResets += es.IIOPSlowResets
		st.IIOPLost += es.IIOPLost
		st.ServerConnsOpened += es.ServerConnsOpened
		st.SpareConnsOpened += es.SpareConnsOpened
		st.Drained += es.Drained
		st.Sessions += es.Sessions
		st.ServerConns += es.ServerConns
		st.FlowPauses += es.FlowPauses
		st.FlowQueued += es.FlowQueued
		st.FlowQueuedPeak = max(st.FlowQueuedPeak, es.FlowQueuedPeak)
	}
	return st, ok
}

// logDecision writes a message's member choice to the ltm log, as a
// rule's LB::enable_decisionlog asked (the same line as a standard
// virtual's, without the address connected to: a message may go on a
// pooled connection).
func (mv *VS) logDecision(c mblb.Choice, pool *state.Pool, m *state.Member, how state.ChosenBy) {
	by := "load balancing"
	switch {
	case c.Stay:
		by = "the connection's member"
	case how == state.ByName:
		by = "the rule"
	case how == state.ByPersistence:
		by = "persistence"
	}
	mv.env.Log.Info("LB decision: virtual " + mv.vs.Name + " client " + c.Client.String() +
		" pool " + pool.Name + " member " + m.Name + " (" + m.Cfg.Load().Addr.String() + ") chosen by " + by)
}
