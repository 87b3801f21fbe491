package h2gw

import (
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// stream is one client stream: its request on the way to the engine,
// and its response on the way back. Under conn.mu.
type stream struct {
	id   uint32
	head bool // a HEAD request: its response has no body
	long bool // a call that may stay open (gRPC): a lane of its own
	// weight is the priority weight its HEADERS carried, for the rules
	// (Lane.Stream).
	weight uint8

	// The request.
	reqEnded bool      // END_STREAM came (or the stream was reset)
	req      []byte    // what waits its turn: the head, the body so far
	reqBody  int32     // body bytes in req, to give back once handed
	handed   bool      // the head went to an engine, on up
	up       *upstream // the engine connection (lane) the request went on
	handedAt time.Time // when the head went (lanes.go: pipelineWindow)
	chunked  bool      // the body goes chunked (its length not declared)
	left     int64     // the declared length left; -1 none
	discard  bool      // the body goes nowhere: the stream was answered
	recv     int32     // what the client may still send on it
	unacked  int32     // body taken and not yet given back

	// The response.
	send       int64                // what the client lets the gateway send on it
	pending    []byte               // response body held for lack of window
	trailers   *[]hpack.HeaderField // sent as HEADERS at the end, if any (a pointer: streams stay in their size class)
	pendingEnd bool                 // and the end of the stream after it
	started    bool                 // HEADERS sent
	respEnded  bool                 // END_STREAM sent
	reset      bool                 // RST_STREAM sent or received: the response is dropped
	closed     bool
}

// openStream starts stream id. Under mu.
func (g *conn) openStream(id uint32) *stream {
	s := &stream{id: id, left: -1, recv: g.streamWindow, send: int64(g.initialWindow)}
	if !g.acked {
		s.recv = max(s.recv, defaultWindow)
	}
	g.streams[id] = s
	if id%2 == 0 {
		g.pushed++ // push.go
	}
	g.active++
	g.nactive.Store(int32(g.active))
	if g.active == 1 && g.idle != nil {
		g.idle.Stop()
	}
	if st := g.cfg.Stats; st != nil {
		st.Streams.Add(1)
		st.TotalStreams.Add(1)
		raise(&st.MaxStreams, int64(g.active))
	}
	return s
}

// maybeClose closes s once both its directions ended. Under mu.
func (g *conn) maybeClose(s *stream) {
	if s.reset || s.reqEnded && s.respEnded {
		g.closeStream(s)
	}
}

// closeStream forgets s: it no longer counts against the limit. A
// request it handed may still have its response read (and dropped).
// Under mu.
func (g *conn) closeStream(s *stream) {
	if s.closed {
		return
	}
	s.closed = true
	delete(g.streams, s.id)
	if s.id%2 == 0 {
		g.pushed--
	}
	g.active--
	g.nactive.Store(int32(g.active))
	if g.draining && g.active == 0 && !g.closed {
		g.goneAway()
	}
	if st := g.cfg.Stats; st != nil {
		st.Streams.Add(-1)
	}
	if g.eof {
		g.room.Broadcast() // finishOwed counts what is still owed
	}
	if g.active == 0 && g.idle != nil && !g.closed {
		g.idleSince = time.Now()
		g.idle.Reset(g.cfg.IdleTimeout)
	}
}

// resetStream ends s at once, telling the client with code unless it
// reset the stream itself (send false). A request partly handed to an
// engine cannot be completed: its lane ends (it carries nothing else).
// Under mu.
func (g *conn) resetStream(s *stream, code http2.ErrCode, send bool) {
	if s.closed || s.reset {
		return
	}
	if send && !g.closed {
		g.fr.WriteRSTStream(s.id, code)
	}
	s.reset = true
	g.dropPending(s)
	if !s.reqEnded {
		s.reqEnded = true
		switch {
		case !s.handed:
			g.unwait(s)
			g.giveBack(nil, s.reqBody) // the connection's window only
			s.req = nil
		case !s.discard:
			g.failUpstream(s.up)
		}
	}
	g.closeStream(s)
}
