package h2gw

import (
	"strconv"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Server push (HTTP2::push, RFC 9113 section 8.4). A rule asks for a
// push while the engine holds a request of the client (Lane.Push): the
// push waits in the connection's queue, and the gateway promises it
// (PUSH_PROMISE on the request's stream) before anything that could end
// that stream: before the HEADERS of the next answer it writes, or from
// a goroutine of its own when no answer comes first. So the rule never
// waits for the client, and the promise always goes while the stream it
// rides on is open. The promised request (GET, a safe and cacheable
// method) then goes to a lane like a client's own request: the engine
// runs HTTP_REQUEST for it, balances it, persists it, and its answer
// goes on the promised stream, which the client may reset as any other.
// A push the client does not allow (SETTINGS_ENABLE_PUSH 0), past the
// streams the client allows (its SETTINGS_MAX_CONCURRENT_STREAMS) or
// the profile's concurrent-streams-per-connection, or after the stream
// ended, is dropped [M: a push is a hint; the rule is not told].
//
// Cost when no rule pushes: one atomic load before each answer's
// HEADERS, and a compare per stream opened and closed.

// Push is a resource a rule pushes (HTTP2::push).
type Push struct {
	// Scheme and Authority are the promised request's :scheme and
	// :authority (the client's request's, or the rule's Host), Path its
	// :path.
	Scheme, Authority, Path string
	// Header is the promised request's other fields, names in lower
	// case: the PUSH_PROMISE carries them and the request to the member
	// has them.
	Header []hpack.HeaderField
	// Weight is the stream's priority weight for HTTP2::stream priority
	// (0-255, as sent), HTTP/2's default when HasWeight is false.
	Weight    uint8
	HasWeight bool
	// Local answers the promised request from the gateway, with Body
	// and RespHeader (`-content`, `-ifile`), status 200 and a
	// Content-Length; the member is not asked.
	Local      bool
	Body       []byte
	RespHeader []hpack.HeaderField
}

// pushReq is a push waiting to be promised on stream assoc.
type pushReq struct {
	assoc uint32
	p     *Push
}

// Push promises p to the client on the stream of the lane's request
// number n (as Stream numbers them), and reports whether it was taken:
// false when n is not a request the lane remembers, when that request
// is itself a pushed one (a push does not push, as on BIG-IP), or when
// the client does not allow pushes. A push taken may still be dropped
// (the package comment above). It does not wait for the client.
func (l *Lane) Push(n uint64, p *Push) bool {
	id, _, ok := l.Stream(n)
	g := l.conn()
	if !ok || g == nil || id%2 == 0 || g.noPush.Load() {
		return false
	}
	g.pushMu.Lock()
	g.pushq = append(g.pushq, pushReq{assoc: id, p: p})
	first := !g.pushWaiting.Swap(true)
	g.pushMu.Unlock()
	if first {
		// No answer may come to carry it: the promise goes from here.
		// (Not in the connection's WaitGroup: it may be called while the
		// connection shuts down; it then finds the connection closed.)
		go func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.closed {
				return
			}
			g.promisePending()
			g.pushAll()
			g.flush()
		}()
	}
	return true
}

// promisePending sends the pushes waiting. It runs before a header
// block is encoded: HPACK's state is the order blocks are written in.
// Under mu.
func (g *conn) promisePending() {
	if !g.pushWaiting.Load() {
		return
	}
	g.pushMu.Lock()
	q := g.pushq
	g.pushq = nil
	g.pushWaiting.Store(false)
	g.pushMu.Unlock()
	for _, r := range q {
		g.promise(r.assoc, r.p)
	}
}

// maxStreamID is the largest stream identifier (31 bits).
const maxStreamID = 1<<31 - 1

// promise sends p's PUSH_PROMISE on stream assoc and starts the promised
// stream: its request to a lane, or its answer from p. Under mu.
func (g *conn) promise(assoc uint32, p *Push) {
	a := g.streams[assoc]
	if g.closed || g.draining || g.noPush.Load() || a == nil || a.reset || a.respEnded || g.lastPush+2 > maxStreamID {
		return
	}
	if g.pushed >= int(min(g.peerMaxStreams, uint32(g.maxStreams))) || g.inflight >= inflightPerStreams*g.maxStreams {
		return // the client's limit, or the profile's
	}
	id := g.lastPush + 2
	g.lastPush = id
	g.hbuf.Reset()
	g.enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
	g.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: p.Scheme})
	if p.Authority != "" {
		g.enc.WriteField(hpack.HeaderField{Name: ":authority", Value: p.Authority})
	}
	g.enc.WriteField(hpack.HeaderField{Name: ":path", Value: p.Path})
	for _, f := range p.Header {
		g.enc.WriteField(f)
	}
	block := g.hbuf.Bytes()
	for first := true; first || len(block) > 0; first = false {
		frag := block[:min(len(block), g.maxFrame)]
		block = block[len(frag):]
		if first {
			g.fr.WritePushPromise(http2.PushPromiseParam{StreamID: assoc, PromiseID: id, BlockFragment: frag, EndHeaders: len(block) == 0})
		} else {
			g.fr.WriteContinuation(assoc, len(block) == 0, frag)
		}
	}
	s := g.openStream(id)
	s.reqEnded = true // reserved (local), then half-closed (remote)
	s.recv = 0
	s.weight = defaultWeight
	if p.HasWeight {
		s.weight = p.Weight
	}
	if st := g.cfg.Stats; st != nil {
		st.Pushed.Add(1)
	}
	if p.Local {
		g.answerPush(s, p)
		return
	}
	rq := request{method: "GET", path: p.Path, authority: p.Authority, length: -1}
	g.pushHead, _ = rq.appendHead(g.pushHead[:0], p.Header, g.cfg.InsertHeader, true)
	g.dispatch(s, g.pushHead)
}

// answerPush answers the promised stream s with p's own response. Under
// mu.
func (g *conn) answerPush(s *stream, p *Push) {
	g.hbuf.Reset()
	g.enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	for _, f := range p.RespHeader {
		g.enc.WriteField(f)
	}
	g.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(p.Body))})
	g.writeHeaderBlock(s, len(p.Body) == 0)
	if len(p.Body) > 0 {
		g.sendData(s, p.Body, true)
	}
}
