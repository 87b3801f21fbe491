package mblb

import (
	"math/bits"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
)

// Buffers come from per-size-class pools so that a message in steady state
// costs no allocation: the request copy, the response copy and the record
// that follows a request through a server connection are all recycled.
const (
	minClass = 8  // 256 bytes
	maxClass = 22 // 4 MiB; larger buffers are allocated and dropped
)

var msgPools [maxClass + 1]sync.Pool

// msg is one message: its bytes, and for a request the bookkeeping that
// follows it through a server connection's pending queue and back to its
// client.
type msg struct {
	b     []byte
	class int8
	// refs counts owners: a request is held by its pending entry and, while
	// its write is in progress, by the writer; whoever drops the last
	// reference recycles it.
	refs atomic.Int32

	sess    *ClientConn
	seq     uint64
	tries   int
	exclude []MemberID
	target  Target
	persist string
	sentAt  int64
	// started is set (under the server connection's queue lock) when the
	// first response byte for this request arrives; from then on it is
	// never sent again.
	started bool
	// crossed: the request was sent again once past the usual rules: its
	// member ended the connection without taking it (serverConn.failed),
	// or a retry that had excluded every member went back to one
	// (ClientConn.send).
	crossed bool
	// refused is the reset cause of a connect the proxy refused for its
	// source (SourceRefused: rstcause.SNATLimit, SNATPort), the client's
	// reset when no member is left; 0: none (NoServer then).
	refused rstcause.Cause

	// HTTP: the request is HEAD (its response has no body), the client
	// ends the connection after its answer, the member its persistence
	// cookie named; on a response, close the client once it is written.
	httpHead, httpClose, closeAfter bool
	// more: a part of a streamed response; the rest follows under the
	// same sequence number.
	more bool
	// ruleTarget: target is an HTTP_REQUEST rule's decision, which may
	// move a connection balanced once (no OneConnect) elsewhere.
	ruleTarget bool
	cookie     netip.AddrPort
	// ticket is the request's place in a connection queue while it is
	// parked (connqueue.go).
	ticket QueueTicket
	// hx is the rest of an HTTP request's state; zero elsewhere.
	hx httpMsg
	// flowBytes is what flow control counted of the request while it
	// is held for a member (a PendingBytes bound only).
	flowBytes int
}

// httpMsg is what an HTTP request carries beyond framing: how it may end
// in a tunnel, and what the rules asked of its server side.
type httpMsg struct {
	// tunnel: tunnelOnSwitch when a 101 (or a CONNECT's 2xx) makes the
	// connection a tunnel, tunnelNow when HTTP::disable made it one.
	tunnel uint8
	// connect: the request is CONNECT.
	connect bool
	// ws: a WebSocket upgrade on a virtual with the websocket profile.
	ws bool
	// respAdapt is what the rules' ADAPT:: commands chose for the
	// answer's RESPMOD (adapt.go); unset, the profile decides.
	respAdapt adaptSide
	// cacheKey is the URI the answer is cached by when a rule changed
	// it (CACHE::uri, CACHE::userkey; httpcache.go); "": the request's.
	cacheKey string
	// cachePrio is CACHE::priority's for the answer (0: none);
	// cacheUpdate: the client's rules have CACHE_UPDATE, which runs
	// before the answer is stored (httpcache_events.go).
	cachePrio   int8
	cacheUpdate bool
	// rewriteRule is the rewrite profile's uri-rule the request
	// matched, plus one (0: none; rewrite.go). (Here, in what was
	// padding: the message does not grow.)
	rewriteRule int16
	// rewritePost: REWRITE::post_process asked for the response's
	// REWRITE_RESPONSE_DONE (rewrite.go).
	rewritePost bool
	// logAt is when a request-log profile saw the request leave, in
	// Unix nanoseconds (0: none), for $RESPONSE_MSECS.
	logAt int64
	// continued: the proxy answered its Expect: 100-continue, so the
	// member's own interim 100 is not passed on again.
	continued bool
	// noReuse: ONECONNECT::reuse disable; the shared connection that
	// carries it closes after its response.
	noReuse bool
	// sflow: the virtual's sFlow sampler picked the request; its answer
	// is sent as a flow sample (sflow.go). (In what was padding.)
	sflow bool
	// hlen is the length of the head at the start of b.
	hlen int
	// label is the ONECONNECT::label the request's connection must carry.
	label string
	// fallback is HTTP::fallback's redirect when no member can serve it.
	fallback string
	// forceClose: the proxy ends the connection after this request
	// (max-requests); its response says Connection: close.
	forceClose bool
	// xff is the client address an accepted X-Forwarded-For gives.
	xff netip.Addr
	// reframed: a rule replaced the body, which now goes with a
	// Content-Length whatever the head the rules hold says.
	reframed bool
	// local: b is an answer the proxy made, not a request (localReply
	// on an event loop).
	local bool
	// sendPending: HTTP_REQUEST_SEND waits for the connection's connect
	// to complete (an event loop's non-blocking connect).
	sendPending bool
	// noPersist and cookie: a rule's `persist none` or `persist cookie`
	// in force for the request (ClientConn.SetPersist), in place of the
	// profiles' persistence.
	noPersist bool
	cookie    *CookieRule
	// upload: the head of a request whose body is streamed behind it
	// (upload.go); part: a piece of such a body, written but not
	// answered.
	upload, part bool
	// z is what the compression of the answer depends on (an
	// http-compression profile; httpcompress.go).
	z compressReq
	// cacheable: the answer may be stored in the virtual's cache
	// (httpcache.go).
	cacheable bool
}

func classOf(n int) int {
	if n <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(n - 1))
}

// getMsg returns a message with len(b) == n and one reference.
func getMsg(n int) *msg {
	c := classOf(n)
	if c > maxClass {
		m := &msg{b: make([]byte, n), class: -1}
		m.refs.Store(1)
		return m
	}
	m, _ := msgPools[c].Get().(*msg)
	if m == nil {
		m = &msg{b: make([]byte, 1<<c), class: int8(c)}
	}
	m.b = m.b[:n]
	m.refs.Store(1)
	return m
}

// unref drops one reference and recycles the message on the last.
func (m *msg) unref() {
	if m.refs.Add(-1) != 0 {
		return
	}
	m.sess = nil
	m.seq = 0
	m.tries = 0
	m.exclude = m.exclude[:0]
	m.target = Target{}
	m.persist = ""
	m.sentAt = 0
	m.started, m.crossed, m.refused = false, false, 0
	m.httpHead, m.httpClose, m.closeAfter, m.ruleTarget, m.more = false, false, false, false, false
	m.cookie = netip.AddrPort{}
	m.ticket = nil
	m.hx = httpMsg{}
	m.flowBytes = 0
	if m.class >= 0 {
		m.b = m.b[:cap(m.b)]
		msgPools[m.class].Put(m)
	}
}

// grow returns a buffer holding m's first n bytes with room for at least
// want bytes, recycling m when it had to move.
func (m *msg) grow(n, want int) *msg {
	if want <= cap(m.b) {
		m.b = m.b[:cap(m.b)]
		return m
	}
	g := getMsg(want)
	g.b = g.b[:cap(g.b)]
	copy(g.b, m.b[:n])
	m.unref()
	return g
}
