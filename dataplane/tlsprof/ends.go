package tlsprof

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// How a TLS connection ends: BIG-IP's unclean-shutdown and strict-resume.
//
// crypto/tls reads a peer's close_notify and a bare FIN at a record
// boundary alike (io.EOF from Read for both), but after close_notify it
// never reads the socket again: the socket's own end of stream (or a
// reset) reaches the socket under the session only when the peer went
// without close_notify. WatchConn sits there and notes it.

// endRules are a profile's unclean-shutdown disabled (clean) and
// strict-resume enabled (strict); nil on a profile with neither, the
// default, where nothing is watched.
type endRules struct {
	clean, strict bool
	// revoked are the client-ssl sessions (ticket lineages) that ended
	// without close_notify, kept no longer than a ticket resumes.
	revoked lineages
}

// watches reports whether the profile watches how its connections end.
func (b *Built) watches() bool { return b != nil && b.ends != nil }

// WatchesEnds reports whether any of bs has unclean-shutdown disabled or
// strict-resume enabled, so that a virtual wraps its connections'
// sockets (WatchServer, WatchClient) only then.
func WatchesEnds(bs ...*Built) bool {
	for _, b := range bs {
		if b.watches() {
			return true
		}
	}
	return false
}

func newEndRules(clean, strict bool, life time.Duration) *endRules {
	if !clean && !strict {
		return nil
	}
	if life <= 0 {
		life = 7 * 24 * time.Hour // crypto/tls's own bound on a ticket
	}
	return &endRules{clean: clean, strict: strict, revoked: lineages{life: life, at: map[lineage]time.Time{}}}
}

// lineage names a client-ssl session across the tickets issued for it
// (a resumed connection's new tickets keep the lineage it resumed).
type lineage [16]byte

// lineageTag marks the SessionState.Extra entry carrying a lineage.
const lineageTag = "openltm-lineage:"

// maxRevoked bounds the sessions a profile remembers as revoked.
const maxRevoked = 1 << 16

// lineages is a profile's revoked sessions, each until its tickets could
// no longer resume anyway.
type lineages struct {
	life time.Duration
	mu   sync.Mutex
	at   map[lineage]time.Time // revoked at
}

func (l *lineages) revoke(id lineage, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.at) >= maxRevoked {
		for k, t := range l.at {
			if now.Sub(t) > l.life {
				delete(l.at, k)
			}
		}
		if len(l.at) >= maxRevoked { // all recent: the oldest entries are not known cheaply; drop one [M]
			for k := range l.at {
				delete(l.at, k)
				break
			}
		}
	}
	l.at[id] = now
}

func (l *lineages) revoked(id lineage, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.at[id]
	if ok && now.Sub(t) > l.life {
		delete(l.at, id)
		return false
	}
	return ok
}

// Revoked is how many sessions the profile holds as not to be resumed,
// for tests and shows.
func (b *Built) Revoked() int {
	if !b.watches() {
		return 0
	}
	b.ends.revoked.mu.Lock()
	defer b.ends.revoked.mu.Unlock()
	return len(b.ends.revoked.at)
}

// WatchConn is the socket under a TLS session whose profile watches its
// end: a peer's FIN or reset read where a record was due, once the
// handshake is done, is an unclean shutdown: it is counted, and the
// session is not resumed again (client-ssl: its ticket lineage is
// revoked; server-ssl: the member's entry leaves the session cache).
type WatchConn struct {
	net.Conn
	// server: a client-ssl connection (the TLS server's socket).
	server bool
	// up is set once the handshake is done (Up), with the counter the
	// shutdowns count at and the profile that served the connection.
	up    atomic.Bool
	count *atomic.Uint64
	b     *Built
	// cfg is a server-ssl connection's configuration (its session cache
	// and the cache key crypto/tls uses).
	cfg   *tls.Config
	line  lineage
	lined bool
	ended atomic.Bool
}

// Unwrap is the socket under the watch (tlsprof.HelloConn or the TCP
// connection), for what looks through it.
func (w *WatchConn) Unwrap() net.Conn { return w.Conn }

// NetConn is Unwrap, for the dataplane's socket look-ups (rawsock).
func (w *WatchConn) NetConn() net.Conn { return w.Conn }

// CloseWrite is the socket's FIN, after close_notify went through the
// session.
func (w *WatchConn) CloseWrite() error {
	if c, ok := w.Conn.(interface{ CloseWrite() error }); ok {
		return c.CloseWrite()
	}
	return errors.New("tlsprof: the socket has no half-close")
}

func (w *WatchConn) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	// A deadline or this side's own close is not the peer's end.
	if err != nil && n == 0 && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, net.ErrClosed) {
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			w.PeerEnded()
		}
	}
	return n, err
}

// Up tells the watch that the handshake is done: count is where an
// unclean shutdown counts (nil: nowhere).
func (w *WatchConn) Up(count *atomic.Uint64) {
	w.count = count
	w.up.Store(true)
}

// PeerEnded notes that the peer's end of stream (or a reset) was read
// where crypto/tls waited for a record: without close_notify. The event
// loops' transport calls it once the session left this socket.
func (w *WatchConn) PeerEnded() {
	if !w.up.Load() || !w.ended.CompareAndSwap(false, true) {
		return
	}
	if w.count != nil {
		w.count.Add(1)
	}
	if !w.server {
		if w.cfg != nil && w.cfg.ClientSessionCache != nil {
			w.cfg.ClientSessionCache.Put(clientCacheKey(w), nil)
		}
		return
	}
	if w.b != nil && w.lined {
		w.b.ends.revoked.revoke(w.line, now(w.b.Config))
	}
}

// clientCacheKey is the key crypto/tls keeps a member's session under:
// the server name sent, else the member's address.
func clientCacheKey(w *WatchConn) string {
	if w.cfg.ServerName != "" {
		return w.cfg.ServerName
	}
	return w.Conn.RemoteAddr().String()
}

// WatchOf is the watch under c, or nil: the dataplane marks it up once
// the handshake is done (a nil test and a type assertion per handshake).
func WatchOf(c *tls.Conn) *WatchConn {
	if c == nil {
		return nil
	}
	nc := c.NetConn()
	if u, ok := nc.(interface{ Unwrap() net.Conn }); ok && nc != nil {
		if _, isWatch := nc.(*WatchConn); !isWatch { // a session on an event loop (tlsloop)
			nc = u.Unwrap()
		}
	}
	w, _ := nc.(*WatchConn)
	return w
}

// WatchServer wraps raw, a client's socket, and cfg, the virtual's
// client-ssl configuration (bs its profiles), for a connection whose
// profile may watch its end (WatchesEnds): the profile the hello picks
// gets, when it watches and issues tickets, a configuration of the
// connection's own that tags its tickets with the session's lineage and
// refuses to resume a revoked one. Call it only for such virtuals: it
// costs a configuration per handshake.
func WatchServer(raw net.Conn, cfg *tls.Config, bs []*Built) (*WatchConn, *tls.Config) {
	w := &WatchConn{Conn: raw, server: true}
	return w, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		chosen, err := configFor(cfg, h)
		if err != nil {
			return nil, err
		}
		var b *Built
		if len(bs) > 0 {
			b = bs[Pick(bs, h.ServerName)]
		}
		if !b.watches() {
			return chosen, nil
		}
		w.b = b
		if chosen.SessionTicketsDisabled {
			return chosen, nil
		}
		return w.ticketConfig(chosen), nil
	}}
}

// ticketConfig is chosen with its tickets tagged by the connection's
// lineage: a new one at a full handshake, the resumed ticket's otherwise.
func (w *WatchConn) ticketConfig(chosen *tls.Config) *tls.Config {
	return nameTickets(chosen, lineageTag, (*[16]byte)(&w.line), &w.lined, func(id [16]byte, found bool) bool {
		// Not one of this watch's tickets, or one whose session ended
		// without close_notify: a full handshake.
		return found && !w.b.ends.revoked.revoked(lineage(id), now(chosen))
	})
}

// WatchClient wraps raw, a member's socket, for a server-ssl profile b
// that watches its end (b.WatchesEnds): cfg is the configuration the
// handshake uses, whose session cache loses the member's session when
// it ends without close_notify.
func WatchClient(raw net.Conn, cfg *tls.Config, b *Built) *WatchConn {
	return &WatchConn{Conn: raw, cfg: cfg, b: b}
}

// WatchesEnds reports whether the profile has unclean-shutdown disabled
// or strict-resume enabled.
func (b *Built) WatchesEnds() bool { return b.watches() }

// configFor is the configuration cfg gives a client's hello: its own
// GetConfigForClient's choice when it has one, else cfg itself. The
// wrappers that add a connection's own settings to the handshake
// (WatchServer, ControlSessions, WithClientChecks...) start from it.
func configFor(cfg *tls.Config, h *tls.ClientHelloInfo) (*tls.Config, error) {
	if cfg.GetConfigForClient == nil {
		return cfg, nil
	}
	c, err := cfg.GetConfigForClient(h)
	if err != nil || c == nil {
		return cfg, err
	}
	return c, nil
}
