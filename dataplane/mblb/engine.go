// Package mblb is message-based load balancing: one long-lived client
// connection carries many requests, each balanced on its own, and each
// response finds its way back to the client that asked, in that client's
// request order. It is the engine behind a virtual server with the mblb
// profile (and OneConnect's shared server connections); the L4 proxy owns
// listening, member choice, SNAT and the connection table and hands each
// accepted client connection to a Session.
//
// The pipe: client reader → framer (declarative or iRule-driven) →
// dispatcher (Pick) → server connection (the client's own, or one shared
// from the OneConnect pool) whose FIFO of pending requests pairs each
// framed response with the oldest unanswered request → the client's
// ordered response queue → client writer.
package mblb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// MemberID identifies a pool member (or node) to the engine. The proxy
// chooses the numbering; it must stay the same for a member across
// configuration commits so that exclusion on retry and OneConnect reuse keep
// working.
type MemberID uint64

// Member is the proxy's answer to "where does this message go".
type Member struct {
	ID MemberID
	// Addr is where the server connection goes, already translated.
	Addr netip.AddrPort
	// Pool and Name label the member in the connection table and logs.
	Pool, Name string
	// Ref is the proxy's own member record, handed back in events so the
	// proxy need not look it up again.
	Ref any
	// Via is the address the client reached, given to Dial and DialFD
	// when the server connection's source depends on it
	// (ClientOptions.ViaLocal); invalid otherwise.
	Via netip.Addr
}

// Target is a per-message choice made by a rule, which overrides plain
// load balancing: `pool p`, `pool p member a p`, `node a p`.
type Target struct {
	// Pool names the pool; "" is the virtual's default pool.
	Pool string
	// Member, when valid, is the one member (or node with Node) to use.
	Member netip.AddrPort
	Node   bool
}

// IsZero reports whether no rule made a choice.
func (t Target) IsZero() bool { return t == Target{} }

// Choice is what the engine knows when it asks for a member. It is passed
// by value so that asking costs no allocation.
type Choice struct {
	// Exclude lists members that already failed this message; Pick must
	// not return them.
	Exclude []MemberID
	// Target is the rule's direction for this message, if any.
	Target Target
	// Persist is the rule's persistence key (`persist uie <key>`), if any.
	Persist string
	// Client is the client connection's address.
	Client netip.AddrPort
	// Tag is the session's ClientOptions.Tag.
	Tag any
	// Stay: Target is the member the client connection already uses (an
	// HTTP virtual without OneConnect balances the connection once), so
	// no new load-balancing decision is being made for this message.
	Stay bool
	// Cookie: Target is the member the request's persistence cookie
	// names (insert, rewrite, passive), not a rule's decision; when that
	// member cannot take it, PERSIST_DOWN runs.
	Cookie bool
	// NoPersist: a rule's `persist none` is in force: Pick neither looks
	// up nor makes persistence records for the message.
	NoPersist bool
	// Msg is the message's bytes (an HTTP request's head and what of its
	// body came with it), for a hash persistence profile's payload key;
	// Pick must not keep it.
	Msg []byte
	// SIPKey is a SIP message's sip_info persistence key (the value of
	// the profile's sip-info field, Call-ID by default), so that every
	// message of a dialog goes to one member.
	SIPKey string
	// Queueable: the message may wait in a connection queue (Pick may
	// return *Queued); Ticket is its place from an earlier Pick, which
	// this one settles.
	Queueable bool
	Ticket    QueueTicket
	// DecisionLog: a rule asked for the choice to be logged
	// (LB::enable_decisionlog).
	DecisionLog bool
}

// ErrNoMember is what a Pick should return when no member can take the
// message; the client is then reset.
var ErrNoMember = errors.New("mblb: no member available")

// Answered is the error a Pick returns when no member can take the
// message but the proxy answered it itself (an LB_FAILED rule's
// HTTP::respond): Response goes to the client as the message's answer,
// and the client connection stays open if KeepAlive.
type Answered struct {
	Response  []byte
	KeepAlive bool
}

func (a *Answered) Error() string { return "mblb: answered without a member" }

// Events let the proxy keep its connection table, member states and logs in
// step with the engine. Every field may be nil. They are called from the
// engine's goroutines and must not block.
type Events struct {
	// LegOpened reports a new server connection. l.Owner is the owning
	// session's Tag, or nil for a shared OneConnect connection.
	LegOpened func(l *Leg)
	// LegClosed reports that l is gone.
	LegClosed func(l *Leg)
	// MemberFailed reports a connect failure, reset, early close or
	// response timeout, so the proxy or monitor can mark the member.
	MemberFailed func(m Member, err error)
	// Log receives messages worth a line in the ltm log.
	Log func(msg string)
}

// OneConnect is the one-connect profile: server connections pooled per
// member and shared by every client of the engine.
type OneConnect struct {
	// SourceMask groups clients that may share a connection by their
	// server-side source address; an invalid or all-zero mask (any) lets
	// every client share. It applies to IPv4; for IPv6 sources any other
	// mask means the full address.
	SourceMask netip.Addr
	// MaxSize caps the connections per member (and source group). When
	// every one is busy, messages queue on the least busy connection
	// rather than opening more (or wait for one to be free, when
	// Exclusive). Default 10000.
	MaxSize int
	// Exclusive carries one message at a time on a connection, as
	// BIG-IP's HTTP OneConnect does, for servers that cannot take
	// pipelined requests. Per-read framing always works this way: it
	// cannot tell two requests apart once they share a segment.
	Exclusive bool
	// MaxAge retires a connection this long after it opened. Default 86400 s.
	MaxAge time.Duration
	// MaxReuse retires a connection after this many reuses. Default 1000.
	MaxReuse int
	// IdleTimeoutOverride closes a pooled connection idle this long; 0
	// uses the engine's IdleTimeout, negative keeps idle ones forever
	// (`indefinite`).
	IdleTimeoutOverride time.Duration
	// MayOpen, when set, says whether a new connection to m stays within
	// its connection limit, given the idle connections to m the pool
	// holds and those it is dialling, which the member's count does not
	// hold yet (one-connect limit-type: none counts only busy ones,
	// strict and idle every one). A message that finds no room and no
	// idle connection chooses again. nil: no limit.
	MayOpen func(m Member, idle, dialing int) bool
	// Limited, when set, says whether m (or its node) has a connection
	// limit at all: without one MayOpen is not asked, and the pool's
	// connections are not counted.
	Limited func(m Member) bool
	// CloseIdle (limit-type idle): when MayOpen refuses, an idle
	// connection to the member (of another source group) is closed to
	// make room for the new one.
	CloseIdle bool
	// Idle, when set, hears that a connection to m went back to the pool
	// idle: a message waiting for room may now reuse it.
	Idle func(m Member)
	// MinConn is the mblb profile's min-conn: the pool keeps at least
	// this many connections open to each member Members lists, opened
	// ahead of need, so that a burst finds them connected (mincon.go);
	// 0 opens none ahead. It applies to the source group of source-mask
	// any and requests without a ONECONNECT::label.
	MinConn int
	// Members lists the members MinConn keeps connections to (the
	// virtual's default pool's members that may take new messages); it
	// is asked once per janitor tick, never on the message path.
	Members func() []Member
}

// Config is one virtual server's message balancing.
type Config struct {
	// Rst reports the resets sent to clients with their cause
	// (tm.rstcause.log); nil reports none.
	Rst *rstcause.Log
	// Pick chooses the member for one message. It owns load balancing,
	// member states and persistence: disabled and down members must not be
	// returned, nor any member in Choice.Exclude.
	Pick func(Choice) (Member, error)
	// Dial opens a server connection for the client at client (SNAT,
	// source binding and connect timeout are the proxy's).
	Dial func(ctx context.Context, client netip.AddrPort, m Member) (net.Conn, error)

	// ServerInit, when set, runs before each server connection a
	// client's message opens, with the client's Tag and the member: the
	// proxy's SERVER_INIT, raised only for a connection about to be made
	// (never for one OneConnect lends, nor one min-conn opened ahead of
	// any client), just before Dial or DialFD runs for it on the same
	// goroutine. An error fails that connect without blaming the member
	// (the rule ended its client).
	ServerInit func(tag any, client netip.AddrPort, m Member) error

	// DialFD, when set, opens a server connection for an event loop: a
	// non-blocking socket whose connect is under way (done false) or
	// complete, and its source when known (SNAT as for Dial). Without it
	// every session runs on goroutines.
	DialFD func(client netip.AddrPort, m Member) (fd int, done bool, local netip.AddrPort, err error)

	// Request frames what clients send; Response what servers answer
	// (its zero value, per-read, falls back to Request's framing).
	Request, Response Framing

	// MaxMessageSize bounds one message; a larger one resets the client.
	// Default 1 MiB.
	MaxMessageSize int
	// MaxInFlight bounds the requests of one client awaiting their answer
	// being written back; the client is not read beyond it. Default 64.
	MaxInFlight int
	// DisableRetry stops re-sending unanswered messages of a failed server
	// connection. Turn it off for protocols whose requests must never run
	// twice (payments, counters): a lost answer then resets the client.
	DisableRetry bool
	// MaxRetries bounds how often one message is sent again. Default 2.
	MaxRetries int
	// ShutdownTimeout is how long a server connection stays open for the
	// answers still owed on it after its client has gone (a client's own
	// connection), or after its member was drained (DrainMembers): the
	// mblb profile's shutdown-timeout; 0 closes it at once.
	ShutdownTimeout time.Duration
	// PropagateAbort is the mblb profile's isolate-abort disabled: a
	// member's reset resets the clients whose requests were on that
	// connection (and its owner) instead of sending them elsewhere, and
	// a client's reset resets its own server connections at once
	// instead of draining them (isolate.go). false (the default,
	// isolate-abort enabled) keeps each side's reset to itself.
	PropagateAbort bool
	// MinConn is the mblb profile's min-conn without OneConnect: this
	// many connections to each member MinConnMembers lists are kept open
	// ahead of need, and a client's first message to a member takes one
	// as the client's own instead of waiting for a connect (spare.go);
	// the janitor opens another in its place. 0 opens none. With
	// OneConnect, OneConnect.MinConn applies instead.
	MinConn int
	// MinConnMembers lists the members MinConn keeps connections to
	// (asked once per janitor tick, never on the message path).
	MinConnMembers func() []Member
	// PropagateServerClose is the mblb profile's isolate-server
	// disabled: a member's orderly close (FIN) ends, in order, its owner
	// and the clients whose requests were on that connection, so that a
	// protocol whose member ends a session sees its client end with it
	// (isolate.go). false (the default) keeps the close to the server
	// side: the client stays and its next message opens another
	// connection.
	PropagateServerClose bool
	// PropagateExpire is the mblb profile's isolate-expire disabled: a
	// client's idle expiry closes its own server connections at once
	// (no shutdown-timeout wait), and a client's own server connection
	// expiring idle ends that client as its own expiry would
	// (isolate.go). false (the default) lets each side expire alone.
	PropagateExpire bool
	// KeepOnClientClose is the mblb profile's isolate-client enabled: a
	// client's orderly close (FIN) is not passed on to its own server
	// connections, which stay open until the member closes them or they
	// expire idle, so that a member whose connection stands for a
	// session of its own does not see it end with each client
	// (isolate.go). false (the default) closes them with the client,
	// after the answers still owed within ShutdownTimeout.
	KeepOnClientClose bool
	// Flow is the mblb profile's ingress and egress water marks and the
	// httprouter profile's pending bounds, so that a member that stops
	// reading holds its clients back instead of filling the proxy's
	// memory (flowcontrol.go); nil: none.
	Flow *FlowControl
	// ResponseTimeout fails a server connection whose oldest request saw
	// no response byte for this long; 0 waits forever.
	ResponseTimeout time.Duration
	// IdleTimeout resets a client idle this long and closes its server
	// connections (seed §2.3); 0 leaves idle handling to the proxy, which
	// calls Session.Close.
	IdleTimeout time.Duration
	// IdleReset, when set, says at each idle timeout whether the client
	// is reset (reset-on-timeout enabled) or closed with a FIN; nil
	// resets.
	IdleReset func() bool
	// Close is the tcp profile's close timers (tcpclose.go).
	Close CloseTimers
	// ConnectTimeout bounds one Dial. Default 5 s.
	ConnectTimeout time.Duration
	// OneConnect, when set, shares server connections among clients.
	OneConnect *OneConnect

	// ObserveRequest, when set, sees each HTTP request as the client sent
	// it (b, with the framer's head h) before any edit: the proxy counts
	// who its traffic comes from. It must not keep b or h.
	ObserveRequest func(client netip.AddrPort, b []byte, h *httpx.Head)
	// ObserveResponse, when set, sees the head of each HTTP response a
	// member sent, before any edit: the proxy counts responses by status
	// class. It must not keep h.
	ObserveResponse func(h *httpx.Head)
	// Clone, when set, is given each whole request for the virtual's
	// clone pools (dataplane/clone): received as the client sent it, sent
	// as the member gets it (after rules and HTTP edits). It must copy
	// what it keeps. A streamed request body (an upload) is not given.
	Clone func(client netip.AddrPort, received, sent []byte)
	// Pipelined, when set, is told of each HTTP request that came while
	// an earlier one of the same client was still unanswered (the http
	// profile's Pipelined Requests).
	Pipelined func()
	// CookieInserted, when set, is told of each Set-Cookie that cookie
	// persistence's insert method added to a response.
	CookieInserted func()
	// Compressed, when set, is told of each response an http-compression
	// profile compressed (its coding and body bytes before and after,
	// when its body ends) or, with httpcompress.None, left uncompressed
	// for a client that accepts a coding.
	Compressed func(c httpcompress.Coding, pre, post int64)
	// CookieRecords is the persistence table for cookie persistence's
	// hash method (HTTPOptions.CookieMode); nil keeps no records.
	CookieRecords *CookieRecords

	Events Events
	// PoolPick is the member of a pool (a full path) the pool's method
	// and monitors choose now: the ICAP servers of the adapt profiles'
	// internal virtual servers. Nil: none is ever available.
	PoolPick func(pool string) (netip.AddrPort, bool)
	// RequestAdaptCounts and ResponseAdaptCounts are where the virtual
	// keeps its adapt profiles' figures (show ltm profile
	// request-adapt); nil counts in the engine's Stats only.
	RequestAdaptCounts, ResponseAdaptCounts *AdaptCounts
	// Waits: the virtual's rules suspend events (`after ms`), so its
	// clients are served on goroutines of their own, never on the event
	// loops, where a wait would hold up every client of the loop.
	Waits bool
}

const (
	defaultMaxMessage  = 1 << 20
	defaultMaxInFlight = 64
	defaultMaxRetries  = 2
	readSize           = 32 << 10
	maxPickAttempts    = 16
)

// Engine balances the messages of one virtual server.
type Engine struct {
	cfg      Config
	respMode Framing
	pool     *connPool // nil without OneConnect
	spare    *spareSet // min-conn without OneConnect; nil when off

	mu       sync.Mutex
	sessions map[*ClientConn]struct{}
	servers  map[*serverConn]struct{}
	members  map[MemberID]*memberStats
	closed   bool
	stop     chan struct{}
	done     chan struct{}

	stats engineStats
	// iiop is an IIOP virtual's persistence (iiopsession.go); nil
	// without it.
	iiop *iiopPersist
	// fc is cfg.Flow normalized, nil when off; flowQueued and flowPeak
	// are the request bytes held for members now and at most.
	fc                   *FlowControl
	flowQueued, flowPeak atomic.Int64
	// flowBytes and flowBytesPeak weigh them, under a PendingBytes
	// bound only.
	flowBytes, flowBytesPeak atomic.Int64
	// clock is the time the janitor last saw, in Unix nanoseconds: idle
	// and response timeouts need no finer grain than its tick, and the
	// message path then never reads the clock.
	clock atomic.Int64
	// tick is the janitor's period in nanoseconds: from the engine's
	// timeouts at the start, shorter once a client's own idle timeout
	// (IP::idle_timeout) needs it, since that timeout, like the clock
	// the clients' activity is stamped with, is only as fine as the tick.
	tick   atomic.Int64
	retick chan struct{} // wakes the janitor to take a shorter tick
	// ownIdle: some client has an idle timeout of its own, so the
	// janitor looks at the clients even where the engine has none.
	ownIdle atomic.Bool
	// finSeen: a member's close was passed on to some client, which
	// closes once answered (isolate.go), so the janitor looks at the
	// sessions every tick.
	finSeen atomic.Bool
	// spareLoops are the event loops min-conn opens connections on (the
	// loops its clients came in on, mincon.go); spareNext spreads them.
	spareLoops atomic.Pointer[[]*evl]
	spareNext  int
}

func (e *Engine) now() int64 { return e.clock.Load() }

// idleSince reports whether a server connection whose activity was last
// stamped at last (Unix nanoseconds, from now) has been idle for more
// than to (nanoseconds; 0: no idle timeout) at now. The stamp is the
// clock of the janitor's last tick, so the activity came up to a tick
// after it: the connection counts as idle only once a tick more than to
// has passed since, never early (a 2 s tcp-idle-timeout closed a
// connection its member had served a little over a second before, as
// the transcript snat_idle_msg saw under load), and at most about two
// ticks (half of to, the tick being a quarter of it) late.
func (e *Engine) idleSince(now, last, to int64) bool {
	return to > 0 && now-last > to+e.tick.Load()
}

// minTick is the janitor's shortest period.
const minTick = 5 * time.Millisecond

// wantTick makes the janitor tick at least every d. Shortening the tick
// also brings the clock up to date: it may be as old as the longer tick
// was, and activity stamped with it now (a connection just given an idle
// timeout of its own answering its first request) would count as idle
// that long already, so that a 2 s timeout could close a connection
// idle for little more than one second.
func (e *Engine) wantTick(d time.Duration) {
	d = max(d, minTick)
	for {
		cur := e.tick.Load()
		if cur != 0 && int64(d) >= cur {
			return
		}
		if e.tick.CompareAndSwap(cur, int64(d)) {
			e.clock.Store(time.Now().UnixNano())
			select {
			case e.retick <- struct{}{}:
			default:
			}
			return
		}
	}
}

type engineStats struct {
	messages, responses, retries, oversize, resets atomic.Uint64
	serverFailures, unsolicited, serverConns       atomic.Uint64
	flowPauses                                     atomic.Uint64
	spareConns, spareTaken, drained                atomic.Uint64
	adaptUnmodified, adaptModified, adaptAnswered  atomic.Uint64
	adaptFailed                                    atomic.Uint64
	adaptStreamed                                  atomic.Uint64
	// ntlmChallenged, ntlmBound and ntlmUnbound are the ntlm profile's
	// (ntlm.go).
	ntlmChallenged, ntlmBound, ntlmUnbound atomic.Uint64
	// iiopTimeouts counts IIOP requests unanswered within the iiop
	// profile's timeout (iiopsession.go).
	iiopTimeouts atomic.Uint64
	// iiopSlowResets counts one-connect IIOP clients reset for replies
	// unread past their queue's bound (iiopout.go).
	iiopSlowResets atomic.Uint64
	// iiopLost counts IIOP requests answered with COMM_FAILURE,
	// COMPLETED_MAYBE: their member's connection ended without
	// CloseConnection after they were sent whole (iiopsession.go).
	iiopLost atomic.Uint64
}

// Stats are the engine's counters since it started.
type Stats struct {
	// Messages and Responses count framed requests and responses.
	Messages, Responses uint64
	// Retries counts messages sent again after a member failed.
	Retries uint64
	// Oversize counts clients reset for a message above MaxMessageSize.
	Oversize uint64
	// Resets counts client connections the engine reset.
	Resets uint64
	// ServerFailures counts server connections that failed.
	ServerFailures uint64
	// Unsolicited counts server bytes framed with no request waiting.
	Unsolicited uint64
	// ServerConnsOpened counts server connections opened;
	// SpareConnsOpened those of them min-conn opened ahead of need;
	// SpareConnsTaken those a client took as its own (min-conn without
	// OneConnect, spare.go).
	ServerConnsOpened, SpareConnsOpened, SpareConnsTaken uint64
	// Drained counts server connections taken out of service because a
	// commit disabled or removed their member (DrainMembers).
	Drained uint64
	// FlowPauses counts the times a client stopped being read at a high
	// water mark; FlowQueued is the requests held for members now,
	// FlowQueuedPeak the most ever held at once (flow control only: the
	// engine does not count them without it).
	FlowPauses                 uint64
	FlowQueued, FlowQueuedPeak int64
	// FlowBytes and FlowBytesPeak are what the requests held weigh,
	// now and at most: counted under the httprouter profile's
	// max-pending-bytes only, to show that it holds.
	FlowBytes, FlowBytesPeak int64
	// AdaptUnmodified, AdaptModified and AdaptAnswered count the
	// messages ICAP left alone (204), changed, or answered in place of
	// a request (request-adapt, response-adapt); AdaptFailed those whose
	// exchange failed (service-down-action).
	AdaptUnmodified, AdaptModified, AdaptAnswered, AdaptFailed uint64
	// AdaptStreamed counts the requests over the message bound that a
	// 204 after their preview let stream on, never held whole.
	AdaptStreamed uint64
	// Sessions and ServerConns are the current client sessions and server
	// connections.
	Sessions, ServerConns int
	// NTLMChallenged counts the clients a member challenged for NTLM or
	// Negotiate whose connection the ntlm profile took out of the shared
	// pool; NTLMBound those that answered and were kept on their own
	// connections; NTLMUnbound the private groups given up (no answer to
	// the challenge, or NTLM::disable) (ntlm.go).
	NTLMChallenged, NTLMBound, NTLMUnbound uint64
	// IIOPTimeouts counts IIOP requests unanswered within the iiop
	// profile's timeout.
	IIOPTimeouts uint64
	// IIOPSlowResets counts one-connect IIOP clients reset because the
	// replies queued for them and not read passed MaxInFlight x
	// MaxMessageSize bytes (also counted in Resets).
	IIOPSlowResets uint64
	// IIOPLost counts IIOP requests sent whole to a member whose
	// connection then ended without CloseConnection before their reply:
	// each answered to its client with a COMM_FAILURE system exception,
	// COMPLETED_MAYBE (the member may have run it).
	IIOPLost uint64
}

// MemberStats are one member's counters, for `show ltm pool p members`.
type MemberStats struct {
	// Requests is Total Requests: messages sent to the member.
	Requests uint64
	// Responses counts complete responses received from it.
	Responses uint64
	// Failures counts its failed connects and connections.
	Failures uint64
	// Conns is its current server connections.
	Conns int64
}

type memberStats struct {
	requests, responses, failures atomic.Uint64
	conns                         atomic.Int64
}

// New checks cfg, fills its defaults and returns a running engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Pick == nil || cfg.Dial == nil {
		return nil, errors.New("mblb: Config needs Pick and Dial")
	}
	if err := cfg.Request.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Response.Validate(); err != nil {
		return nil, err
	}
	resp := cfg.Response
	if resp.Mode == PerRead {
		resp = cfg.Request
	}
	if (cfg.Request.Mode == Rule) != (resp.Mode == Rule) {
		return nil, errors.New("mblb: rule framing must apply to both requests and responses")
	}
	if (cfg.Request.Mode == HTTP) != (resp.Mode == HTTP) {
		return nil, errors.New("mblb: http framing must apply to both requests and responses")
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = defaultMaxMessage
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = defaultMaxInFlight
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = defaultMaxRetries
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	e := &Engine{
		cfg:      cfg,
		respMode: resp,
		fc:       flowOf(cfg.Flow),
		sessions: make(map[*ClientConn]struct{}),
		servers:  make(map[*serverConn]struct{}),
		members:  make(map[MemberID]*memberStats),
		stop:     make(chan struct{}),
		retick:   make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	e.clock.Store(time.Now().UnixNano())
	if o := cfg.Request.IIOP; cfg.Request.Mode == IIOP && (o.PersistObjectKey || o.PersistRequestID) {
		e.iiop = &iiopPersist{keys: map[string]Member{}, ids: map[uint32]Member{}}
	}
	if cfg.OneConnect != nil {
		oc := *cfg.OneConnect
		if oc.MaxSize <= 0 {
			oc.MaxSize = 10000
		}
		if oc.MaxAge <= 0 {
			oc.MaxAge = 86400 * time.Second
		}
		if oc.MaxReuse <= 0 {
			oc.MaxReuse = 1000
		}
		e.cfg.OneConnect = &oc
		e.pool = newConnPool(e, oc)
	} else if cfg.MinConn > 0 && cfg.MinConnMembers != nil {
		e.spare = newSpareSet(e) // spare.go
	}
	go e.janitor()
	return e, nil
}

// Close resets every client and closes every server connection.
func (e *Engine) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	close(e.stop)
	sessions := make([]*ClientConn, 0, len(e.sessions))
	for s := range e.sessions {
		sessions = append(sessions, s)
	}
	servers := make([]*serverConn, 0, len(e.servers))
	for sc := range e.servers {
		servers = append(servers, sc)
	}
	e.mu.Unlock()
	<-e.done
	if e.spare != nil {
		e.spare.closeAll()
	}
	for _, s := range sessions {
		s.Close(true)
	}
	for _, sc := range servers {
		sc.shutdown()
	}
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	ns, nc := len(e.sessions), len(e.servers)
	e.mu.Unlock()
	return Stats{
		Messages:          e.stats.messages.Load(),
		Responses:         e.stats.responses.Load(),
		Retries:           e.stats.retries.Load(),
		Oversize:          e.stats.oversize.Load(),
		Resets:            e.stats.resets.Load(),
		ServerFailures:    e.stats.serverFailures.Load(),
		Unsolicited:       e.stats.unsolicited.Load(),
		ServerConnsOpened: e.stats.serverConns.Load(),
		SpareConnsOpened:  e.stats.spareConns.Load(),
		SpareConnsTaken:   e.stats.spareTaken.Load(),
		Drained:           e.stats.drained.Load(),
		FlowPauses:        e.stats.flowPauses.Load(),
		FlowQueued:        e.flowQueued.Load(),
		FlowQueuedPeak:    e.flowPeak.Load(),
		FlowBytes:         e.flowBytes.Load(),
		FlowBytesPeak:     e.flowBytesPeak.Load(),
		AdaptUnmodified:   e.stats.adaptUnmodified.Load(),
		AdaptModified:     e.stats.adaptModified.Load(),
		AdaptAnswered:     e.stats.adaptAnswered.Load(),
		AdaptFailed:       e.stats.adaptFailed.Load(),
		AdaptStreamed:     e.stats.adaptStreamed.Load(),
		NTLMChallenged:    e.stats.ntlmChallenged.Load(),
		NTLMBound:         e.stats.ntlmBound.Load(),
		NTLMUnbound:       e.stats.ntlmUnbound.Load(),
		IIOPTimeouts:      e.stats.iiopTimeouts.Load(),
		IIOPSlowResets:    e.stats.iiopSlowResets.Load(),
		IIOPLost:          e.stats.iiopLost.Load(),
		Sessions:          ns,
		ServerConns:       nc,
	}
}

// MemberStats returns one member's counters (zero for a member never used).
func (e *Engine) MemberStats(id MemberID) MemberStats {
	e.mu.Lock()
	ms := e.members[id]
	e.mu.Unlock()
	if ms == nil {
		return MemberStats{}
	}
	return MemberStats{
		Requests:  ms.requests.Load(),
		Responses: ms.responses.Load(),
		Failures:  ms.failures.Load(),
		Conns:     ms.conns.Load(),
	}
}

// Legs calls fn for every open server connection, for `show sys
// connection`; fn must not call back into the engine.
func (e *Engine) Legs(fn func(*Leg) bool) {
	e.mu.Lock()
	list := make([]*serverConn, 0, len(e.servers))
	for sc := range e.servers {
		list = append(list, sc)
	}
	e.mu.Unlock()
	for _, sc := range list {
		if !fn(&sc.leg) {
			return
		}
	}
}

func (e *Engine) memberStats(id MemberID) *memberStats {
	e.mu.Lock()
	ms := e.members[id]
	if ms == nil {
		ms = &memberStats{}
		e.members[id] = ms
	}
	e.mu.Unlock()
	return ms
}

func (e *Engine) logf(format string, args ...any) {
	if e.cfg.Events.Log != nil {
		e.cfg.Events.Log(fmt.Sprintf(format, args...))
	}
}

func (e *Engine) memberFailed(m Member, ms *memberStats, err error) {
	ms.failures.Add(1)
	e.stats.serverFailures.Add(1)
	if e.cfg.Events.MemberFailed != nil {
		e.cfg.Events.MemberFailed(m, err)
	}
}

// janitor enforces the time limits: idle clients, idle per-client server
// connections, response timeouts and the OneConnect pool's ages.
func (e *Engine) janitor() {
	defer close(e.done)
	tick := time.Second
	for _, d := range []time.Duration{e.cfg.IdleTimeout, e.cfg.ResponseTimeout, e.cfg.ShutdownTimeout} {
		if d > 0 && d/4 < tick {
			tick = d / 4
		}
	}
	if oc := e.cfg.OneConnect; oc != nil && oc.IdleTimeoutOverride > 0 && oc.IdleTimeoutOverride/4 < tick {
		tick = oc.IdleTimeoutOverride / 4
	}
	ct := e.cfg.Close
	for _, d := range []time.Duration{ct.AfterFIN, ct.ZeroWindow} {
		if d > 0 {
			tick = min(tick, closeTick, d/4)
		}
	}
	e.wantTick(tick)
	tick = time.Duration(e.tick.Load())
	t := time.NewTicker(tick)
	defer t.Stop()
	var sessions []*ClientConn
	var servers []*serverConn
	if e.pool != nil && e.pool.cfg.MinConn > 0 {
		e.pool.keepMin() // mincon.go: open min-conn's at once
	}
	if e.spare != nil {
		e.spare.keep() // spare.go
	}
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		case <-e.retick:
		}
		if d := time.Duration(e.tick.Load()); d != tick {
			tick = d
			t.Reset(tick)
		}
		now := time.Now().UnixNano()
		e.clock.Store(now)
		sessions, servers = sessions[:0], servers[:0]
		e.mu.Lock()
		if e.cfg.IdleTimeout > 0 || e.ownIdle.Load() || e.finSeen.Load() || ct != (CloseTimers{}) {
			for s := range e.sessions {
				sessions = append(sessions, s)
			}
		}
		for sc := range e.servers {
			servers = append(servers, sc)
		}
		e.mu.Unlock()
		for _, s := range sessions {
			if idle := s.IdleTimeout(); idle > 0 && now-s.lastActive.Load() > int64(idle) {
				reset := e.cfg.IdleReset == nil || e.cfg.IdleReset()
				e.logf("mblb: client %s idle for %v, closed (reset %v)", s.client, idle, reset)
				if reset {
					s.rst(rstcause.IdleTimeout)
				}
				if e.cfg.PropagateExpire {
					s.expireOwn.Store(true) // isolate-expire disabled (isolate.go)
				}
				s.Close(reset)
				continue
			}
			if s.closeAnswered(now) { // isolate-server disabled (isolate.go)
				continue
			}
			if ct != (CloseTimers{}) {
				s.closeTimers(ct, now) // tcpclose.go
			}
		}
		for _, sc := range servers {
			sc.expire(now)
			if ct.ZeroWindow > 0 {
				sc.zeroWindow(ct.ZeroWindow, now)
			}
		}
		if e.pool != nil {
			e.pool.expire(now)
			if e.pool.cfg.MinConn > 0 {
				e.pool.keepMin() // mincon.go
			}
		}
		if e.spare != nil {
			e.spare.keep() // spare.go
		}
	}
}

// observeResponse shows a member's response head to ObserveResponse.
func (e *Engine) observeResponse(h *httpx.Head) {
	if obs := e.cfg.ObserveResponse; obs != nil && h != nil {
		obs(h)
	}
}
