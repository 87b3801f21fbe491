package h2gw

import (
	"bufio"
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Defaults and bounds of a client connection.
const (
	defaultMaxStreams  = 100
	defaultTableSize   = 4096
	defaultWindow      = 65535 // HTTP/2's initial window
	maxHeaderListSize  = 1 << 20
	clientBufSize      = 32 << 10
	maxWindow          = 1<<31 - 1
	defaultMaxFrame    = 16384
	pendingLimit       = 1 << 20 // response bytes held for lack of window, per connection
	drainLimit         = 256 << 10
	inflightPerStreams = 2 // engine requests not yet answered, per allowed stream
	// writeTimeout bounds a write to the client: one that takes no
	// bytes for this long is gone, and must not hold the connection's
	// lock.
	writeTimeout = 30 * time.Second
)

// conn is one client connection. Why one mutex for all of it: three
// goroutines share the streams, the flow-control windows and the output
// buffer (the reader acks, updates windows and resets; the responder
// sends responses; the writer gives back window), and each holds it only
// to update state and append frames, never across a wait for the client
// or the engine, but for the write of the output buffer to the client.
type conn struct {
	cfg  *Config
	dial Dialer
	c    net.Conn
	br   *bufio.Reader // the client's bytes: the reader's alone
	fr   *http2.Framer // reads br (the reader's), writes bw (under mu)

	maxStreams   int
	streamWindow int32 // each stream's receive window, as advertised
	connWindow   int32 // the connection's receive window, as advertised

	mu     sync.Mutex
	room   sync.Cond // the responder waits here while pendingLimit bytes wait for window
	bw     *bufio.Writer
	enc    *hpack.Encoder
	hbuf   bytes.Buffer // enc's output
	closed bool         // the client connection is done: nothing more is written
	eof    bool         // the client half-closed: the answers owed go, then the connection ends
	// draining: HTTP2::disconnect sent GOAWAY; the connection ends with
	// its last open stream (laneinfo.go).
	draining   bool
	disconnect atomic.Bool // HTTP2::disconnect asked for it (laneinfo.go)
	// nactive mirrors active and nopened counts the streams the client
	// opened, for the rules (Lane), which must not wait for mu.
	nactive atomic.Int32
	nopened atomic.Int64
	werr    error // why writing to the client failed

	streams     map[uint32]*stream
	lastID      uint32 // the highest stream the client opened
	active      int    // open streams, for the limit and the statistics
	inflight    int    // requests handed to engines and not answered, reset ones too
	sawSettings bool
	// acked: the client acknowledged the gateway's SETTINGS. Before, it
	// may send a stream HTTP/2's default window, whatever was
	// advertised (RFC 9113 section 6.9.2).
	acked bool

	// What the client lets the gateway send.
	sendWindow    int64 // the connection's window
	initialWindow int32 // each new stream's window (SETTINGS_INITIAL_WINDOW_SIZE)
	maxFrame      int   // SETTINGS_MAX_FRAME_SIZE
	pending       int   // bytes held in streams' pending
	blocked       []*stream

	// What the client may still send on the connection, and what the
	// gateway has taken and not yet given back.
	recvWindow  int32
	connUnacked int32

	// waiting holds the streams whose request waits for a free lane
	// (lanes.go), in the order they came.
	waiting []*stream
	ups     []*upstream // every engine connection (lane) not yet done
	dialing bool
	// busyResp counts the responders not waiting for their engine: the
	// last one to wait flushes what they all wrote (upstream.fill).
	// unread counts the lanes (Pipes) whose engine wrote bytes their
	// responder has not read yet: a responder is about to run.
	busyResp int
	unread   atomic.Int32
	// batching: the reader has more frames at hand; the requests it
	// hands wait for the end of them (handBytes).
	batching bool

	idle      *time.Timer
	idleSince time.Time
	settle    func() // ServeSettle's

	dec  *hpack.Decoder // the reader's
	hb   headerBlock    // the header block read last: the reader's
	head []byte         // the request head being built: the reader's
	wg   sync.WaitGroup

	// Server push (push.go). noPush: the client's SETTINGS_ENABLE_PUSH
	// is 0. pushq holds the pushes the rules asked for, not yet
	// promised (pushWaiting says whether it has any, without pushMu).
	// peerMaxStreams is the client's SETTINGS_MAX_CONCURRENT_STREAMS,
	// which bounds the pushed streams open (pushed, which active
	// counts too); lastPush is the last stream promised.
	noPush         atomic.Bool
	pushMu         sync.Mutex
	pushq          []pushReq
	pushWaiting    atomic.Bool
	peerMaxStreams uint32
	lastPush       uint32
	pushed         int
	pushHead       []byte // the promised request's head
}

func newConn(c net.Conn, cfg *Config, dial Dialer) *conn {
	g := &conn{cfg: cfg, dial: dial, c: c, streams: map[uint32]*stream{},
		maxStreams: defaultMaxStreams, streamWindow: defaultWindow,
		sendWindow: defaultWindow, initialWindow: defaultWindow, maxFrame: defaultMaxFrame,
		peerMaxStreams: maxStreamID}
	if cfg.MaxConcurrentStreams > 0 {
		g.maxStreams = int(cfg.MaxConcurrentStreams)
	}
	if cfg.ReceiveWindow > 0 {
		g.streamWindow = cfg.ReceiveWindow
	}
	// The connection's window holds every stream's: a stream waiting
	// for a lane keeps what it was sent until it is handed to the
	// engine, and must not take the window of the others.
	g.connWindow = int32(min(int64(max(g.streamWindow, defaultWindow))*int64(g.maxStreams), maxWindow))
	g.connWindow = max(g.connWindow, defaultWindow)
	g.recvWindow = g.connWindow
	table := uint32(defaultTableSize)
	if cfg.HeaderTableSize > 0 {
		table = cfg.HeaderTableSize
	}
	g.room.L = &g.mu
	g.br = bufio.NewReaderSize(c, clientBufSize)
	wsize := clientBufSize
	if cfg.WriteSize > 0 {
		wsize = cfg.WriteSize
	}
	g.bw = bufio.NewWriterSize(timedWriter{c}, wsize)
	g.fr = http2.NewFramer(g.bw, g.br)
	g.fr.SetReuseFrames()
	g.fr.SetMaxReadFrameSize(defaultMaxFrame) // as HTTP/2's default SETTINGS_MAX_FRAME_SIZE: not advertised
	g.dec = hpack.NewDecoder(table, g.emit)
	g.dec.SetMaxStringLength(maxHeaderListSize)
	g.enc = hpack.NewEncoder(&g.hbuf)
	g.enc.SetMaxDynamicTableSizeLimit(table)
	if cfg.IdleTimeout > 0 {
		g.idleSince = time.Now()
		g.idle = time.AfterFunc(cfg.IdleTimeout, g.idleFired)
	}
	return g
}

// timedWriter writes to the client within writeTimeout.
type timedWriter struct{ c net.Conn }

func (w timedWriter) Write(p []byte) (int, error) {
	w.c.SetWriteDeadline(time.Now().Add(writeTimeout))
	return w.c.Write(p)
}

// idleFired ends a connection that had no open stream for IdleTimeout.
func (g *conn) idleFired() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.active > 0 {
		return
	}
	if left := g.cfg.IdleTimeout - time.Since(g.idleSince); left > 0 {
		g.idle.Reset(left) // a stream came and went since the timer was set
		return
	}
	g.goAway(http2.ErrCodeNo)
}

// goAway tells the client the connection ends and ends it; the reader
// then returns. Under mu.
func (g *conn) goAway(code http2.ErrCode) {
	if g.closed {
		return
	}
	g.fr.WriteGoAway(g.lastID, code, nil)
	g.flush()
	g.closed = true
	g.c.Close()
}

// flush sends what the output buffer holds. Under mu.
func (g *conn) flush() {
	if g.bw.Buffered() == 0 || g.werr != nil {
		return
	}
	if err := g.bw.Flush(); err != nil {
		g.werr = err
		g.closed = true
		g.c.Close()        // the reader returns
		g.room.Broadcast() // and so do responders waiting for room, and finishOwed
	}
}

// shutdown ends what the connection started once the reader returned:
// the engine connections are closed, so their goroutines return, and
// the streams left open are counted closed.
func (g *conn) shutdown() {
	g.mu.Lock()
	if g.idle != nil {
		g.idle.Stop()
	}
	if !g.closed {
		g.flush()
	}
	g.closed = true
	for _, u := range append([]*upstream(nil), g.ups...) {
		g.failUpstream(u)
	}
	for _, s := range g.streams {
		s.reset = true
		g.closeStream(s)
	}
	g.room.Broadcast()
	g.mu.Unlock()
	if g.settle != nil && g.werr == nil {
		g.settle()
	}
	g.c.Close()
	g.wg.Wait()
}
