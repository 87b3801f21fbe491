package h2gw

// Lanes. Each engine connection of a client connection is a lane that
// carries one stream's request at a time: a stream's request goes on a
// free lane (one with no request unanswered and no request body still
// coming), or waits in conn.waiting while another lane is dialed, up to
// concurrent-streams-per-connection lanes. So no stream's response
// waits for another's, as on BIG-IP, HAProxy and Envoy, where each
// stream of an HTTP/2 connection is independent: a long gRPC stream, a
// slow member or an upload holds its own lane only.
//
// Why lanes rather than the streams pipelined on one engine connection:
// the engine answers a connection's requests in the order they came
// (HTTP/1.1), so a pipelined stream whose response never ends (a
// server-streaming call that runs for minutes) held back every later
// stream of its client. A lane is reused as soon as it is free, so a
// client whose streams are short keeps as many lanes as it has streams
// in flight, and the lanes' sessions share the client's flow record
// and rules state (internal/mblbvs/http2.go). A lane whose engine
// session ends (idle timeout, a response that closes it) is forgotten;
// the next stream that finds no free lane dials another.

// free reports whether u may take a new stream's request. Under mu.
func (u *upstream) free() bool {
	return !u.dead && !u.closing && u.resp == nil && u.body == nil && len(u.exq) == 0
}

// freeLane returns the first free lane, nil when none is. The first
// ones are preferred, so that the lanes a burst of streams opened and
// no longer needs stay idle and their sessions end with the engine's
// idle timeout. Under mu.
func (g *conn) freeLane() *upstream {
	for _, u := range g.ups {
		if u.free() {
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
		u := g.freeLane()
		if u == nil {
			if len(g.ups) < g.maxStreams {
				g.startDial()
			}
			return
		}
		s := g.waiting[0]
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
