// Package h2gw is BIG-IP's http2 profile on the client side: an HTTP/2
// connection (ALPN h2 over client-ssl, or cleartext with prior
// knowledge) is served by the package's own HTTP/2 server codec, and
// each of its streams goes on as an HTTP/1.1 request into the HTTP
// engine (dataplane/mblb), over one of the client's engine connections,
// its lanes (lanes.go), each carrying one stream at a time. So every
// request of an HTTP/2 client runs the same path as an HTTP/1.1
// client's (the http profile's edits, iRules, persistence, per-request
// balancing with OneConnect, compression, the cache), the client's
// sessions share one flow record and one rules state, as BIG-IP's
// HTTP/2 gateway keeps them per client connection, while members speak
// HTTP/1.1 (or HTTP/2 through dataplane/h2member), and no stream waits
// for another's response: a long gRPC stream or a slow member holds its
// own lane only.
//
// Why a codec of its own rather than net/http's HTTP/2 server: that
// server runs a goroutine per stream, a serve loop and a frame writer,
// and writes each response in system calls of its own; most of the
// gateway's time went to goroutine hand-offs and system calls. Here a
// connection has one reader and two goroutines per lane whatever its
// streams (and one while a lane is dialed): the reader (reader.go)
// decodes the client's frames and writes each stream's request, already
// HTTP/1.1, to its lane; the lane's responder (response.go) parses the
// response and encodes it as frames into the connection's one output
// buffer, which goes to the client when no responder has more at hand
// (many streams' frames in one write); the lane's writer (upstream.go)
// sends requests only when the engine is slow to take them, so that the
// reader never waits for the engine while the client waits for a
// WINDOW_UPDATE to be read.
package h2gw

import (
	"crypto/tls"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// Config is an http2 profile as the gateway applies it.
type Config struct {
	// Profile is the profile's full path, for its statistics.
	Profile string
	// MaxConcurrentStreams is concurrent-streams-per-connection; 0 is
	// 100. It bounds a connection's lanes too (lanes.go): no more
	// engine connections than streams it may have at once.
	MaxConcurrentStreams uint32
	// IdleTimeout is connection-idle-timeout: a connection without an
	// open stream for this long is closed (GOAWAY); 0 never.
	IdleTimeout time.Duration
	// HeaderTableSize is header-table-size, the HPACK table the gateway
	// keeps for decoding the client's headers and encoding its own; 0 is
	// HTTP/2's default, 4096.
	HeaderTableSize uint32
	// ReceiveWindow is receive-window in bytes: the flow-control window
	// each stream's request body gets; 0 is HTTP/2's default, 65535.
	ReceiveWindow int32
	// InsertHeader, when not "", names the field added to every request
	// the engine gets (insert-header enabled, insert-header-name), so
	// that members can tell the client spoke HTTP/2.
	InsertHeader string
	// PermitProhibitedCiphers turns off RFC 7540's TLS requirements
	// (enforce-tls-requirements disabled): the caller then serves HTTP/2
	// whatever TLSAdequate says.
	PermitProhibitedCiphers bool
	// FrameSize is frame-size: the largest DATA frame the gateway sends,
	// below the client's SETTINGS_MAX_FRAME_SIZE when smaller (smaller
	// frames let a slow link interleave streams more finely); 0 is the
	// client's maximum. It is not advertised: HTTP/2 forbids a
	// SETTINGS_MAX_FRAME_SIZE below 16384, and this bounds what the
	// gateway sends, not what it accepts.
	FrameSize int
	// WriteSize is write-size: the frames gathered for the client leave
	// in writes of about this many bytes (a frame larger than what is
	// left goes whole); 0 is 32 KiB.
	WriteSize int
	// DropContentLength (include-content-length disabled) removes the
	// member's Content-Length from the responses the gateway sends:
	// HTTP/2 ends a body with END_STREAM, and a length that a rule or a
	// filter made stale would make a client refuse the response.
	DropContentLength bool
	// Stats, when set, counts the profile's connections and streams.
	Stats *Stats
}

// Stats are an http2 profile's counters for `show ltm profile http2`.
type Stats struct {
	Connections, TotalConnections atomic.Int64
	Streams, TotalStreams         atomic.Int64
	MaxStreams                    atomic.Int64 // the most concurrent streams of one connection
	// Failed counts streams answered 502 because the engine connection
	// ended before their response.
	Failed atomic.Int64
	// Pushed counts the streams promised to clients (HTTP2::push);
	// Streams and TotalStreams count them too.
	Pushed atomic.Int64
}

// Reset zeroes the totals, keeping what is current.
func (s *Stats) Reset() {
	s.TotalConnections.Store(s.Connections.Load())
	s.TotalStreams.Store(s.Streams.Load())
	s.MaxStreams.Store(0)
	s.Failed.Store(0)
	s.Pushed.Store(0)
}

// raise makes m at least n.
func raise(m *atomic.Int64, n int64) {
	for {
		old := m.Load()
		if n <= old || m.CompareAndSwap(old, n) {
			return
		}
	}
}

// Preface is what an HTTP/2 client sends first (RFC 9113 section 3.4):
// a cleartext connection that starts with it speaks HTTP/2 with prior
// knowledge.
const Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// Dialer opens a connection into the HTTP engine for the client being
// served (a lane); the gateway writes HTTP/1.1 requests on it, one
// stream's at a time, and reads the responses. Another is opened when a
// stream finds every lane busy, up to concurrent-streams-per-connection
// lanes, or after one ended (the engine closed it); several may be open
// at once, but Dialer is called from one goroutine at a time.
type Dialer func() (net.Conn, error)

// Serve speaks HTTP/2 with c until the client or the idle timeout ends
// the connection, then closes what it dialed and returns once every
// stream is done. c is the client's TLS connection (its handshake done,
// ALPN h2, the TLS requirements checked by the caller: TLSAdequate) or a
// cleartext one whose first bytes are the Preface; either way what it
// carries is HTTP/2 with prior knowledge.
func Serve(c net.Conn, cfg *Config, dial Dialer) {
	ServeSettle(c, cfg, dial, nil)
}

// ServeSettle is Serve with settle (when not nil) run after the last
// byte for the client was written and before c is closed: closing a
// socket whose peer has not taken what it was sent leaves the bytes to
// the kernel, so the caller's close timers (the tcp profile's
// close-wait-timeout, zero-window-timeout) get their chance to reset a
// peer that never reads.
func ServeSettle(c net.Conn, cfg *Config, dial Dialer, settle func()) {
	if st := cfg.Stats; st != nil {
		st.Connections.Add(1)
		st.TotalConnections.Add(1)
		defer st.Connections.Add(-1)
	}
	g := newConn(c, cfg, dial)
	g.settle = settle
	g.serve()
	g.shutdown()
}

// TLSAdequate reports whether a TLS connection meets RFC 7540's
// requirements for HTTP/2 (section 9.2): TLS 1.2 or later, and with
// TLS 1.2 an ephemeral key exchange and an AEAD cipher. The http2
// profile's enforce-tls-requirements refuses HTTP/2 to the others.
func TLSAdequate(st tls.ConnectionState) bool {
	if st.Version >= tls.VersionTLS13 {
		return true
	}
	if st.Version < tls.VersionTLS12 {
		return false
	}
	name := tls.CipherSuiteName(st.CipherSuite)
	return (strings.HasPrefix(name, "TLS_ECDHE_") || strings.HasPrefix(name, "TLS_DHE_")) &&
		(strings.Contains(name, "_GCM_") || strings.Contains(name, "CHACHA20_POLY1305"))
}
