package h2gw

import "time"

// Lanes. Each engine connection of a client connection is a lane. A
// stream's request goes on a lane that takes it, or waits in
// conn.waiting while another lane is dialed, up to
// concurrent-streams-per-connection lanes. A long call (gRPC: `te:
// trailers` or an application/grpc body) takes a lane with nothing else
// in flight and keeps it to itself, and a lane whose request body is
// still coming takes nothing more; plain requests are pipelined on a lane
// behind other plain ones handed moments before (pipelineWindow) whose
// answers have not started, up to pipelineDepth, as HTTP/1.1 requests of
// one connection are. So a long gRPC stream or an upload holds back no
// other stream (as on BIG-IP, HAProxy and Envoy, where each stream is
// independent), while short requests keep the engine's batching: a
// session answers a pipelined batch with one wake-up, where a lane per
// request woke one session per request and halved the requests served
// per second (h2load -m10: 0.55x HAProxy against 1.06x pipelined, one
// sitting). The price: a plain request pipelined behind one that then
// turns slow (handed within pipelineWindow of it, before its answer
// began) waits for it.
//
// Why not one pipelined engine connection for every stream: the engine
// answers a connection's requests in the order they came (HTTP/1.1), so
// a pipelined stream whose response never ends (a server-streaming call
// that runs for minutes) held back every later stream of its client.
// The lanes' sessions share the client's flow record and rules state
// (internal/mblbvs/http2.go). A lane whose engine session ends (idle
// timeout, a response that closes it) is forgotten; the next stream
// that finds no lane dials another.

// pipelineDepth bounds the plain requests in flight on one lane.
const pipelineDepth = 16

// pipelineWindow is how long after its oldest request in flight a lane
// still takes plain requests behind it: a burst of streams read together
// is pipelined, while a response that has kept its lane longer (a slow
// member, an event stream) holds back nothing that came later.
const pipelineWindow = 2 * time.Millisecond

// free reports whether u has nothing in flight. Under mu.
func (u *upstream) free() bool {
	return !u.dead && !u.closing && u.resp == nil && u.body == nil && len(u.exq) == 0
}

// takes reports whether s's request may go on u now: a free lane takes
// any; a busy one a plain request behind plain ones handed within
// pipelineWindow whose answers have not started (a response under way
// may be an event stream that never ends). Under mu.
func (u *upstream) takes(s *stream) bool {
	if u.free() {
		return true
	}
	if s.long || u.dead || u.closing || u.body != nil || u.resp != nil || len(u.exq) >= pipelineDepth {
		return false // a response under way may be one that never ends
	}
	for _, x := range u.exq {
		if x.long {
			return false
		}
	}
	return time.Since(u.exq[0].handedAt) < pipelineWindow
}

// freeLane returns the first lane that takes s, nil when none does. The
// first ones are preferred, so that a client's plain requests gather on
// one lane and the lanes a burst opened and no longer needs stay idle
// and their sessions end with the engine's idle timeout. Under mu.
func (g *conn) freeLane(s *stream) *upstream {
	for _, u := range g.ups {
		if u.takes(s) {
			return u
		}
	}
	return nil
}

// advance hands the requests waiting for a lane to the free ones, in
// order, and dials another lane when none is free and the streams
// allowed have fewer lanes. Under mu.
func (g *conn) advance() {
	for len(g.waiting) > 0 && !g.closed {
		s := g.waiting[0]
		u := g.freeLane(s)
		if u == nil {
			if len(g.ups) < g.maxStreams {
				g.startDial()
			}
			return
		}
		g.waiting = append(g.waiting[:0], g.waiting[1:]...)
		req := s.req
		s.req = nil
		g.handRequest(u, s, req)
	}
}

// unwait takes s out of waiting. Under mu.
func (g *conn) unwait(s *stream) {
	for i, o := range g.waiting {
		if o == s {
			g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
			return
		}
	}
}
